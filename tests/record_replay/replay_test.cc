// Record/replay hardening: what a replay sees must not depend on
// when it runs (file timestamps) or on how the recorded events happened to interleave (a
// busy threaded server), the program must start and find its files as it did when it was
// recorded (ignored signals, unix socket files), and every byte sent outside is digested
// (sendmmsg). Replays run under `unshare -n`: no network.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

extern "C" {
#include "handlers/binding.h"
#include "syscalls/syscall_table.h"
}

namespace
{

// DETRUN_UNDER_TEST runs the suite against another build (to show a test failing before
// its fix).
const std::string kDetrun = getenv("DETRUN_UNDER_TEST") ? getenv("DETRUN_UNDER_TEST") : DETRUN_PATH;
const std::string kGuests = GUEST_DIR;

void WriteFile(const std::string &path, const std::string &text)
{
	std::ofstream(path, std::ios::binary) << text;
}

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/detrun-replay-XXXXXX";
		path = mkdtemp(tmpl);
	}
	~TempDir()
	{
		RunCommand({ "rm", "-rf", path });
	}
	std::string operator/(const std::string &name) const
	{
		return path + "/" + name;
	}
};

std::vector<std::string> Det(const std::vector<std::string> &argv)
{
	std::vector<std::string> all{ kDetrun, "--" };
	all.insert(all.end(), argv.begin(), argv.end());
	return all;
}

RunResult Replay(const std::string &log)
{
	return RunCommand({ "unshare", "-n", kDetrun, "replay", log });
}

long NumberAfter(const std::string &text, const std::string &key)
{
	size_t at = text.find(key);
	return at == std::string::npos ? -1 : strtol(text.c_str() + at + key.size(), nullptr, 10);
}

// ---------------------------------------------------------------------------------------
// 13. What a run sees of a file it did not change depends on the file alone.

// A file written just before the run shows its own times, as it does natively and as it
// does when the same run starts later (a replay): before, a change within about a second
// of the start looked like the run's own and got a virtual time.
TEST(ReplayHardening, FileChangedJustBeforeTheRunShowsItsOwnTimes)
{
	TempDir dir;
	WriteFile(dir / "fresh", "written just now\n");
	std::vector<std::string> argv{ kGuests + "/rep_mtime", dir / "fresh" };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult plain = RunCommand(Det(argv));
	EXPECT_EQ(plain.code, 0) << plain.Describe();
	EXPECT_EQ(plain.out, native.out) << plain.Describe();

	WriteFile(dir / "fresh2", "written just now too\n");
	argv.push_back(dir / "fresh2");
	RunResult native2 = RunCommand(argv);
	RunResult rec = RunCommand(
		{ kDetrun, "record", "-o", dir / "t.dlog", "--", argv[0], argv[1], argv[2] });
	EXPECT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_EQ(rec.out, native2.out) << rec.Describe();
	RunResult rep = Replay(dir / "t.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();
}

// A file the run writes carries virtual time, the same in every run and in its replay.
TEST(ReplayHardening, FileTheRunWritesShowsVirtualTime)
{
	TempDir dir;
	std::vector<std::string> argv{ "sh", "-c", "echo x > \"$0\"/made && \"$1\" \"$0\"/made",
				       dir.path, kGuests + "/rep_mtime" };
	RunResult a = RunCommand(Det(argv));
	RunCommand({ "rm", "-f", dir / "made" });
	RunResult b = RunCommand(Det(argv));
	ASSERT_EQ(a.code, 0) << a.Describe();
	EXPECT_EQ(a.out, b.out);
	// 2030-01-01, the default virtual epoch, and a little later.
	EXPECT_NE(a.out.find(" mtime 18934560"), std::string::npos) << a.out;
}

// ---------------------------------------------------------------------------------------
// 14. Whether a recording replays must not depend on how its events happened to interleave
// with the supervisor's own doings. A busy threaded server is recorded many times with real
// clients, each recording replayed. The spin detector's interrupts (a wall-clock budget,
// here its shortest, 1 ms, so they come often) used to cut a clone3 short: the kernel
// restarted it and the recording had one event more than any replay.

const std::string kServer = std::string(EXAMPLES_DIR) + "/kvserver";
const std::string kClient = std::string(EXAMPLES_DIR) + "/kvclient";

// A busy loop on CPU 0, where the recordings run too (taskset): the recorded tasks then
// wait for the CPU at random moments, as on a loaded machine, and the spin detector's
// wall-clock budget runs out in the middle of calls.
struct CpuHog {
	Child loop{ { "taskset", "-c", "0", "sh", "-c", "while :; do :; done" } };
	~CpuHog()
	{
		loop.Signal(SIGKILL);
		loop.Finish();
	}
};

struct Recorded {
	RunResult server, client;
};

// One recording of kvserver under `connections` concurrent clients.
Recorded RecordKv(const TempDir &dir, const std::string &log, int connections)
{
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 60;
	Recorded r;
	Child server({ "taskset", "-c", "0", kDetrun, "record", "-o", log, "--spin-budget", "1",
		       "--", kServer, "0", "data.log" },
		     opt);
	if (server.WaitForOutput("listening on port ", 30)) {
		long port = NumberAfter(server.Out(), "listening on port ");
		r.client = RunCommand({ kClient, std::to_string(port), std::to_string(connections),
					"8", "200", "--shutdown" });
	}
	r.server = server.Finish();
	unlink((dir / "data.log").c_str());
	unlink((dir / "data.log.snapshot").c_str());
	return r;
}

TEST(ReplayHardening, BusyThreadedServerRecordingsAllReplay)
{
	TempDir dir;
	const int kRecordings = 3; // ~15 s each beside the hog: before the fix, all diverged
	int replayed = 0, diverged = 0;
	std::string first_divergence;
	CpuHog hog;
	for (int i = 0; i < kRecordings; i++) {
		std::string log = dir / ("kv" + std::to_string(i) + ".dlog");
		Recorded rec = RecordKv(dir, log, 48);
		ASSERT_EQ(rec.client.code, 0) << rec.client.Describe();
		ASSERT_EQ(rec.server.code, 0) << rec.server.Describe();
		RunOptions opt;
		opt.cwd = dir.path;
		opt.timeout_s = 60;
		RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", log }, opt);
		unlink((dir / "data.log").c_str());
		unlink((dir / "data.log.snapshot").c_str());
		replayed++;
		if (rep.code != rec.server.code || rep.out != rec.server.out) {
			diverged++;
			if (first_divergence.empty())
				first_divergence = rep.Describe();
		}
	}
	std::cout << "[ figure ] kvserver, 48 connections: " << replayed << " recordings replayed, "
		  << diverged << " diverged\n";
	EXPECT_EQ(diverged, 0) << first_divergence;
}

// The threaded http.server (ThreadingHTTPServer: a thread per connection) under 20
// concurrent curl clients, recorded and replayed (one recording: Python's memory makes
// each spin probe slow; before the fix it diverged).
TEST(ReplayHardening, ThreadedHttpServerUnderConcurrentCurlsReplays)
{
	std::string py = DEBIAN_PYTHON;
	ASSERT_FALSE(py.empty()) << "python3 is required";
	TempDir dir;
	ASSERT_EQ(mkdir((dir / "www").c_str(), 0755), 0);
	WriteFile(dir / "www/a.txt", "hello\n");
	WriteFile(dir / "www/b.bin", std::string(30000, 'x'));
	int replayed = 0, diverged = 0;
	std::string first_divergence;
	for (int i = 0; i < 1; i++) {
		std::string log = dir / ("http" + std::to_string(i) + ".dlog");
		RunOptions opt;
		opt.cwd = dir.path;
		opt.timeout_s = 60;
		// -I -S: the server's imports do not depend on site-packages or the directory.
		CpuHog hog;
		Child rec({ "taskset", "-c",     "0",         kDetrun,
			    "record",  "-o",     log,         "--spin-budget",
			    "1",       "--",     py,          "-I",
			    "-S",      "-u",     "-m",        "http.server",
			    "0",       "--bind", "127.0.0.1", "--directory",
			    "www" },
			  opt);
		ASSERT_TRUE(rec.WaitForOutput("Serving HTTP on 127.0.0.1 port ", 60))
			<< rec.Finish().Describe();
		std::string base = "http://127.0.0.1:" +
				   std::to_string(NumberAfter(rec.Out(),
							      "Serving HTTP on 127.0.0.1 port "));
		RunResult clients = RunCommand(
			{ "sh", "-c",
			  "for i in 1 2 3 4 5 6 7 8 9 10; do curl -sS -o /dev/null \"$0/a.txt\" & "
			  "curl -sS -o /dev/null \"$0/b.bin\" & done; wait",
			  base });
		rec.Signal(SIGTERM);
		RunResult recorded = rec.Finish();
		ASSERT_EQ(clients.code, 0) << clients.Describe();
		ASSERT_EQ(recorded.code, 128 + SIGTERM) << recorded.Describe();
		RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", log }, opt);
		replayed++;
		if (rep.code != recorded.code || rep.out != recorded.out ||
		    rep.err != recorded.err) {
			diverged++;
			if (first_divergence.empty())
				first_divergence = rep.Describe();
		}
	}
	std::cout << "[ figure ] http.server, 20 concurrent curls: " << replayed
		  << " recordings replayed, " << diverged << " diverged\n";
	EXPECT_EQ(diverged, 0) << first_divergence;
}

// ---------------------------------------------------------------------------------------
// 15. The replayed program starts and finds its files as the recorded one did.

// A unix socket bound to a path is a file the program may chmod, stat and unlink.
TEST(ReplayHardening, UnixSocketFileExistsInReplay)
{
	TempDir dir;
	std::vector<std::string> argv{ kGuests + "/rep_unix_bind", dir.path };
	RunResult native = RunCommand(argv);
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find("chmod: ok\nstat: ok\nsocket file: yes, mode 777\nunlink: ok"),
		  std::string::npos)
		<< native.Describe();
	RunResult rec = RunCommand(
		{ kDetrun, "record", "-o", dir / "u.dlog", "--", argv[0], argv[1] });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_EQ(rec.out, native.out) << rec.Describe();
	RunResult rep = Replay(dir / "u.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();
	struct stat st;
	EXPECT_NE(stat((dir / "sock").c_str(), &st), 0) << "the program unlinked it";
}

// Issue 17 point 6: what sockets show (ports, autobind names, receive timestamps, TCP_INFO)
// is recorded as it came and replayed offline; SIOCGSTAMP's time (a request older than
// ioctl numbers with sizes) was not recorded, and a replay showed other bytes.
TEST(ReplayHardening, SocketViewsReplayOffline)
{
	TempDir dir;
	for (const char *mode : { "ports", "autobind", "stamps", "tcpinfo" }) {
		SCOPED_TRACE(mode);
		RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "s.dlog", "--",
					     kGuests + "/view_holes", mode });
		ASSERT_EQ(rec.code, 0) << rec.Describe();
		RunResult rep = Replay(dir / "s.dlog");
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, rec.out)
			<< FirstDifference("recorded", rec.out, "replayed", rep.out);
	}
}

// A recvmmsg of more messages than a call's record holds (8) is given 8 in record and
// replay alike, and the program takes the rest with further calls: before, the recording
// warned and its replay stopped at the call (view_mmsg asks for 20).
TEST(ReplayHardening, RecvmmsgOfManyMessagesReplays)
{
	TempDir dir;
	RunResult rec = RunCommand(
		{ kDetrun, "record", "-o", dir / "mm.dlog", "--", kGuests + "/view_mmsg" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_EQ(rec.err.find("hazard"), std::string::npos) << rec.Describe();
	EXPECT_NE(rec.out.find("recvmmsg of sendto's: 8 8 4 datagrams"), std::string::npos)
		<< rec.Describe();
	EXPECT_NE(rec.out.find("every reply reached its sender"), std::string::npos)
		<< rec.Describe();
	RunResult rep = Replay(dir / "mm.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << FirstDifference("recorded", rec.out, "replayed", rep.out);
}

// A socket file the recording left behind makes the replayed bind fail: said, not ignored.
TEST(ReplayHardening, LeftoverSocketFileStopsTheReplay)
{
	TempDir dir;
	std::string sh = "\"$0\" \"$1\" && touch \"$1\"/sock";
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "u.dlog", "--", "sh", "-c", sh,
				     kGuests + "/rep_unix_bind", dir.path });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult rep = Replay(dir / "u.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_NE(rep.err.find("bind to " + dir.path +
			       "/sock succeeded in the recording, now "
			       "fails: Address already in use"),
		  std::string::npos)
		<< rep.Describe();
}

// A program recorded as a background job (SIGINT and SIGQUIT ignored) or under nohup
// (SIGHUP) starts the same way in a replay from a foreground shell, and the other way
// round.
TEST(ReplayHardening, SignalsIgnoredAtStartAreReplayed)
{
	TempDir dir;
	std::string guest = kGuests + "/rep_sigign";
	RunResult rec = RunCommand({ "sh", "-c",
				     "trap '' INT QUIT HUP; exec \"$0\" record -o \"$1\" -- \"$2\"",
				     kDetrun, dir / "bg.dlog", guest });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "SIGHUP ignored\nSIGINT ignored\nSIGQUIT ignored\nSIGPIPE default\n"
			   "SIGTERM default\nSIGUSR1 default\n")
		<< rec.Describe();
	RunResult rep = Replay(dir / "bg.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();

	RunResult fg = RunCommand({ kDetrun, "record", "-o", dir / "fg.dlog", "--", guest });
	ASSERT_EQ(fg.code, 0) << fg.Describe();
	RunResult rep_bg = RunCommand(
		{ "sh", "-c", "trap '' INT QUIT TERM; exec unshare -n \"$0\" replay \"$1\"",
		  kDetrun, dir / "fg.dlog" });
	EXPECT_EQ(rep_bg.code, 0) << rep_bg.Describe();
	EXPECT_EQ(rep_bg.out, fg.out) << rep_bg.Describe();
}

// ---------------------------------------------------------------------------------------
// 16. Every call that sends bytes outside is digested, whatever list it is in.

// sendmmsg hands its messages to the kernel like sendmsg: a replay that sends other bytes
// must stop there. The guest sends the size of a file it only stats (no fingerprint).
TEST(ReplayHardening, SendmmsgOfOtherBytesIsADivergence)
{
	TempDir dir;
	WriteFile(dir / "input", "abc");
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "mm.dlog", "--",
				     kGuests + "/rep_sendmmsg", dir / "input" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "sent 2 messages: size=3 (6 and 5 bytes)\n") << rec.Describe();

	RunResult same = Replay(dir / "mm.dlog");
	EXPECT_EQ(same.code, 0) << same.Describe();
	EXPECT_EQ(same.out, rec.out) << same.Describe();

	WriteFile(dir / "input", "abcdefghijkl"); // size=12: other bytes in the first message
	RunResult other = Replay(dir / "mm.dlog");
	EXPECT_EQ(other.code, 125) << other.Describe();
	// (The descriptor number depends on what the test runner leaves open.)
	EXPECT_NE(other.err.find("replay diverged at t="), std::string::npos) << other.Describe();
	EXPECT_NE(other.err.find(") sends other bytes than the recording did"), std::string::npos)
		<< other.Describe();
	EXPECT_NE(other.err.find("in sendmmsg"), std::string::npos) << other.Describe();
	EXPECT_EQ(other.out, "") << "must stop at the send\n" << other.Describe();
}

// The send facts (the data column of syscalls.def) agree with the handlers: every row whose
// handler is the write handler sends bytes from the caller's memory and is digested; every
// row that sends is such a row (or sendfile); every receive reads data; message calls name
// their flags argument.
TEST(ReplayHardening, SendFactsAgreeWithTheSyscallTable)
{
	size_t writers = 0;
	for (size_t i = 0; i < syscall_table_len; i++) {
		const syscall_entry &e = syscall_table[i];
		if (handler_of(e.nr) == &sys_fd_write) {
			writers++;
			EXPECT_TRUE(syscall_sends_memory(&e))
				<< e.name << " sends but is not digested";
		} else if (e.nr == __NR_sendfile) {
			EXPECT_EQ(e.data, DATA_SEND_FILE) << e.name;
		} else {
			EXPECT_FALSE(syscall_sends(&e))
				<< e.name << " sends but is not a write row";
		}
		EXPECT_EQ(syscall_reads_data(&e), handler_of(e.nr) == &sys_fd_read) << e.name;
	}
	EXPECT_GE(writers, 5u);
	// Socket calls with MSG_* flags say where they are (MSG_DONTWAIT, MSG_NOSIGNAL).
	for (long nr : { __NR_sendto, __NR_sendmsg, __NR_sendmmsg, __NR_recvfrom, __NR_recvmsg,
			 __NR_recvmmsg }) {
		EXPECT_EQ(syscall_msg_flags_arg(syscall_lookup(nr)),
			  nr == __NR_sendmsg || nr == __NR_recvmsg ? 2 : 3)
			<< syscall_name(nr);
	}
}

// ---------------------------------------------------------------------------------------
// Outside input found at a later look of the scheduler at one logical time.

// Accepts one connection on `listener` and reads it to its end (the peer's exit closes it).
bool WaitForPeerToClose(int listener)
{
	struct pollfd p = { listener, POLLIN, 0 };
	if (poll(&p, 1, 60000) != 1)
		return false;
	int c = accept(listener, nullptr, nullptr);
	if (c < 0)
		return false;
	char buf[64];
	for (;;) {
		struct pollfd q = { c, POLLIN, 0 };
		if (poll(&q, 1, 60000) != 1)
			break;
		if (read(c, buf, sizeof(buf)) <= 0)
			break;
	}
	close(c);
	return true;
}

std::string AskOnce(int port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	std::string reply;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 && write(s, "x", 1) == 1) {
		char buf[128];
		ssize_t n;
		struct pollfd q = { s, POLLIN, 0 };
		while (poll(&q, 1, 60000) == 1 && (n = read(s, buf, sizeof(buf))) > 0)
			reply.append(buf, n);
	}
	close(s);
	return reply;
}

// The server's client arrives only after its child's exit, which detrun runs after it
// first looked at the waiting server: the recording finds the client at a later look of
// the same logical time. Before, a replay admitted the client at the first look, ran the
// server before the child's exit and diverged (PostgreSQL's postmaster, between a backend's
// exit and the next client's connection, 3 recordings in 5).
TEST(ReplayHardening, InputFoundAtALaterLookIsReplayedThere)
{
	TempDir dir;
	int tester = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	ASSERT_EQ(bind(tester, (struct sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(listen(tester, 4), 0);
	ASSERT_EQ(getsockname(tester, (struct sockaddr *)&a, &len), 0);
	int server_port = FreePort();
	std::string log = dir / "look.dlog";
	Child rec({ kDetrun, "record", "-o", log, "--", kGuests + "/rep_exit_then_accept",
		    std::to_string(server_port), std::to_string(ntohs(a.sin_port)) });
	bool closed = WaitForPeerToClose(tester);
	close(tester);
	std::string reply = closed ? AskOnce(server_port) : "";
	RunResult recorded = rec.Finish();
	ASSERT_TRUE(closed) << recorded.Describe();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_EQ(reply, "sigchld pending at accept: yes\n") << recorded.Describe();
	ASSERT_EQ(recorded.out, reply + "child status 0\n") << recorded.Describe();
	RunResult rep = Replay(log);
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out) << rep.Describe();
}

// ---------------------------------------------------------------------------------------
// 17. A replay gives the program the standard output, error and terminal it was recorded
// with, wherever this replay's output goes: programs look at them (stdio buffers a file or
// a pipe and not a terminal; bash opens /dev/tty), and a replay printed elsewhere than the
// recording diverged at the first difference.

// What a command run on a terminal (script(1)) printed, its line ends the terminal's.
std::string OnATerminal(const RunResult &r)
{
	std::string s;
	for (char c : r.out)
		if (c != '\r')
			s += c;
	return s;
}

std::vector<std::string> InScript(const std::string &command)
{
	return { "script", "-qec", command, "/dev/null" };
}

// Recorded into files, without a controlling terminal; replayed into pipes, into other
// files, onto a terminal and into a reader that stops early: the program sees files and no
// terminal every time, and every byte reaches the replay's output.
TEST(ReplayHardening, OutputRecordedIntoFilesReplaysAnywhere)
{
	TempDir dir;
	std::string guest = kGuests + "/rep_stdkinds";
	// Natively the answers follow the redirections.
	RunResult piped = RunCommand({ guest });
	RunResult on_tty = RunCommand(InScript(guest));
	ASSERT_EQ(piped.out.rfind("stdout is a pipe\n", 0), 0u) << piped.Describe();
	ASSERT_NE(OnATerminal(on_tty).find("stdout is a terminal\n"), std::string::npos)
		<< on_tty.Describe();

	RunResult rec = RunCommand({ "setsid", "-w", "sh", "-c",
				     "exec \"$0\" record -o \"$1\" -- \"$2\" > \"$3\" 2> \"$4\"",
				     kDetrun, dir / "f.dlog", guest, dir / "out.txt",
				     dir / "err.txt" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	std::string out = ReadFile(dir / "out.txt"), err = ReadFile(dir / "err.txt");
	ASSERT_EQ(out,
		  "stdout is a file\ncontrolling terminal: none\nsession leader: outside\nline 1\nline "
		  "2\nline 3\n");
	ASSERT_EQ(err, "stderr is a file\n");

	RunResult into_pipes = Replay(dir / "f.dlog");
	EXPECT_EQ(into_pipes.code, 0) << into_pipes.Describe();
	EXPECT_EQ(into_pipes.out, out) << into_pipes.Describe();
	EXPECT_EQ(into_pipes.err, err) << into_pipes.Describe();

	RunResult into_files = RunCommand(
		{ "sh", "-c", "unshare -n \"$0\" replay \"$1\" > \"$2\" 2> \"$3\"", kDetrun,
		  dir / "f.dlog", dir / "out2.txt", dir / "err2.txt" });
	EXPECT_EQ(into_files.code, 0) << into_files.Describe();
	EXPECT_EQ(ReadFile(dir / "out2.txt"), out);
	EXPECT_EQ(ReadFile(dir / "err2.txt"), err);

	// The two files' bytes reach one terminal, each in its own order.
	RunResult terminal = RunCommand(
		InScript("unshare -n " + kDetrun + " replay " + dir / "f.dlog"));
	EXPECT_EQ(terminal.code, 0) << terminal.Describe();
	std::string shown = OnATerminal(terminal);
	size_t err_at = shown.find(err);
	ASSERT_NE(err_at, std::string::npos) << terminal.Describe();
	EXPECT_EQ(shown.erase(err_at, err.size()), out) << terminal.Describe();

	// A reader that stops early: the replay goes on to its end all the same.
	RunResult head = RunCommand(
		{ "bash", "-c",
		  "unshare -n \"$0\" replay \"$1\" | head -1; echo status ${PIPESTATUS[0]}",
		  kDetrun, dir / "f.dlog" });
	EXPECT_EQ(head.out, "stdout is a file\nstatus 0\n") << head.Describe();
}

// Recorded into pipes, replayed into files: the program sees pipes.
TEST(ReplayHardening, OutputRecordedIntoPipesReplaysIntoFiles)
{
	TempDir dir;
	std::string guest = kGuests + "/rep_stdkinds";
	RunResult rec = RunCommand(
		{ "setsid", "-w", kDetrun, "record", "-o", dir / "p.dlog", "--", guest });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out,
		  "stdout is a pipe\ncontrolling terminal: none\nsession leader: outside\nline 1\nline "
		  "2\nline 3\n");
	RunResult rep = RunCommand({ "sh", "-c",
				     "unshare -n \"$0\" replay \"$1\" > \"$2\" 2> \"$3\"", kDetrun,
				     dir / "p.dlog", dir / "out.txt", dir / "err.txt" });
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(ReadFile(dir / "out.txt"), rec.out);
	EXPECT_EQ(ReadFile(dir / "err.txt"), rec.err);
}

// Recorded on a terminal, the program opened /dev/tty. Replayed on a terminal, it does
// again; replayed where there is none, detrun says so first, and the replay stops at the
// open that fails, never printing something else with status 0.
TEST(ReplayHardening, ControllingTerminalIsTheRecordings)
{
	TempDir dir;
	std::string guest = kGuests + "/rep_stdkinds";
	RunResult rec = RunCommand(
		InScript(kDetrun + " record -o " + dir / "t.dlog" + " -- " + guest));
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(OnATerminal(rec),
		  "stderr is a terminal\nstdout is a terminal\ncontrolling "
		  "terminal: yes\nsession leader: outside\nline 1\nline 2\nline 3\n")
		<< rec.Describe();
	RunResult again = RunCommand(
		InScript("unshare -n " + kDetrun + " replay " + dir / "t.dlog"));
	EXPECT_EQ(again.code, 0) << again.Describe();
	EXPECT_EQ(OnATerminal(again), OnATerminal(rec)) << again.Describe();
	RunResult none = RunCommand(
		{ "setsid", "-w", "unshare", "-n", kDetrun, "replay", dir / "t.dlog" });
	EXPECT_NE(none.code, 0) << none.Describe();
	EXPECT_NE(none.err.find(
			  "detrun: warning: the recording had a controlling terminal and this "
			  "replay has none"),
		  std::string::npos)
		<< none.Describe();
	EXPECT_NE(none.err.find("replay diverged"), std::string::npos) << none.Describe();
}

} // namespace
