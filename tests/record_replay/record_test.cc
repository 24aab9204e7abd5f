// Record and replay. Each test records a real program while real outside input
// reaches it (a load client, curl, a terminal, a signal), then replays the log with the
// network unplugged (`unshare -n`: a fresh network namespace with no usable interface) and
// compares stdout, stderr, the files written and the exit status byte for byte. The server
// tests first show that the run being recorded varies natively, so that a faithful replay
// proves something.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kServer = std::string(EXAMPLES_DIR) + "/kvserver";
const std::string kClient = std::string(EXAMPLES_DIR) + "/kvclient";

// The number after `key` in `text` ("port 4242" -> 4242), or -1.
long NumberAfter(const std::string &text, const std::string &key)
{
	size_t at = text.find(key);
	return at == std::string::npos ? -1 : strtol(text.c_str() + at + key.size(), nullptr, 10);
}

// `detrun log --stats` figure "log bytes per byte of data read: X".
double DataRatio(const std::string &log)
{
	RunResult s = RunCommand({ kDetrun, "log", "--stats", log });
	size_t at = s.out.find("per byte of data read: ");
	return at == std::string::npos ? -1 : atof(s.out.c_str() + at + 23);
}

RunResult Replay(const std::string &log, const std::vector<std::string> &extra = {})
{
	std::vector<std::string> argv{ "unshare", "-n", kDetrun, "replay" };
	argv.insert(argv.end(), extra.begin(), extra.end());
	argv.push_back(log);
	return RunCommand(argv);
}

// The lines detrun itself wrote to stderr, without host tids (they differ between runs).
std::string DetrunLines(const std::string &err)
{
	std::string out;
	for (const std::string &l : SplitLines(err))
		if (l.rfind("detrun:", 0) == 0)
			out += std::regex_replace(l, std::regex("tid [0-9]+"), "tid N") + "\n";
	return out;
}

// ---------------------------------------------------------------------------------------
// The example key-value server (examples/kvserver.c), driven by kvclient

struct ServerRun {
	RunResult server, client;
	std::string data, snapshot; // the files it wrote
};

// Runs kvserver in `dir` (under `prefix`, e.g. detrun record) until the client is done.
ServerRun RunServer(const TempDir &dir, const std::vector<std::string> &prefix,
		    const std::vector<std::string> &client_args)
{
	std::vector<std::string> argv = prefix;
	argv.insert(argv.end(), { kServer, "0", "data.log" });
	RunOptions opt;
	opt.cwd = dir.path;
	opt.timeout_s = 120;
	ServerRun r;
	Child server(argv, opt);
	if (server.WaitForOutput("listening on port ", 60)) {
		long port = NumberAfter(server.Out(), "listening on port ");
		std::vector<std::string> c{ kClient, std::to_string(port) };
		c.insert(c.end(), client_args.begin(), client_args.end());
		r.client = RunCommand(c);
	}
	r.server = server.Finish();
	r.data = ReadFile(dir / "data.log");
	r.snapshot = ReadFile(dir / "data.log.snapshot");
	unlink((dir / "data.log").c_str());
	unlink((dir / "data.log.snapshot").c_str());
	return r;
}

TEST(RecordReplay, MultithreadedServerUnderLoadReplaysOffline)
{
	TempDir dir("record");
	const std::vector<std::string> load{ "8", "60", "1024", "--shutdown" };
	// Natively, the interleaving of the connection threads' lines varies.
	std::set<std::string> native;
	for (int i = 0; i < 10 && native.size() < 2; i++) {
		ServerRun n = RunServer(dir, {}, load);
		ASSERT_EQ(n.server.code, 0) << n.server.Describe();
		native.insert(n.server.out);
	}
	ASSERT_GE(native.size(), 2u) << "the server's output never varied natively";

	ServerRun rec = RunServer(dir, { kDetrun, "record", "-o", dir / "kv.dlog", "--" }, load);
	ASSERT_EQ(rec.client.code, 0) << rec.client.Describe();
	ASSERT_EQ(rec.server.code, 0) << rec.server.Describe();
	ASSERT_TRUE(rec.server.leftovers.empty()) << rec.server.Describe();
	ASSERT_NE(rec.server.out.find("served 481 requests, 240 keys"), std::string::npos)
		<< rec.server.Describe();

	for (int i = 0; i < 2; i++) {
		// On the real files (the files a replay writes go to a private view otherwise),
		// from the starting files the log keeps: data.log as the recording left it.
		RunResult rep = Replay(dir / "kv.dlog", { "--in-place" });
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
		EXPECT_EQ(rep.out, rec.server.out)
			<< FirstDifference("recording", rec.server.out, "replay", rep.out);
		EXPECT_EQ(rep.err, rec.server.err) << rep.Describe();
		EXPECT_EQ(ReadFile(dir / "data.log"), rec.data) << "data file differs";
		EXPECT_EQ(ReadFile(dir / "data.log.snapshot"), rec.snapshot) << "snapshot differs";
		unlink((dir / "data.log").c_str());
		unlink((dir / "data.log.snapshot").c_str());
	}

	double ratio = DataRatio(dir / "kv.dlog");
	std::cout << "[ figure ] kvserver, 8 connections x 60 requests, 1 KiB values: " << ratio
		  << " log bytes per byte of data read\n";
	EXPECT_GT(ratio, 0);
	EXPECT_LE(ratio, 1.3) << RunCommand({ kDetrun, "log", "--stats", dir / "kv.dlog" }).out;
}

TEST(RecordReplay, CrashBugReproducesAtTheSameLogicalTime)
{
	TempDir dir("record");
	ServerRun rec = RunServer(dir, { kDetrun, "record", "-o", dir / "crash.dlog", "--" },
				  { "4", "20", "256", "--crash" });
	ASSERT_EQ(rec.client.code, 0) << rec.client.Describe();
	ASSERT_EQ(rec.server.code, 139) << "the DEL bug must kill the server with SIGSEGV\n"
					<< rec.server.Describe();
	std::string fatal = DetrunLines(rec.server.err);
	ASSERT_NE(fatal.find("fatal signal 11 at t="), std::string::npos) << rec.server.Describe();

	RunResult rep = Replay(dir / "crash.dlog", { "--in-place" });
	EXPECT_EQ(rep.code, 139) << rep.Describe();
	EXPECT_EQ(rep.out, rec.server.out)
		<< FirstDifference("recording", rec.server.out, "replay", rep.out);
	EXPECT_EQ(DetrunLines(rep.err), fatal) << "crash at another logical time or stack";
	EXPECT_EQ(ReadFile(dir / "data.log"), rec.data);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// detrun itself killed (SIGKILL) after serving a client: the log on disk is readable and
// holds everything up to the last time the group waited for outside input (blocks go out
// whole then); replay runs that far, prints what the recording printed by then, and says
// where the recording ends.
TEST(RecordReplay, RecordingCutShortStaysReadable)
{
	TempDir dir("record");
	RunOptions opt;
	opt.cwd = dir.path;
	Child rec({ kDetrun, "record", "-o", dir / "cut.dlog", "--", kServer, "0", "data.log" },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("listening on port ", 60)) << rec.Finish().Describe();
	long port = NumberAfter(rec.Out(), "listening on port ");
	RunResult client = RunCommand({ kClient, std::to_string(port), "2", "10", "64" });
	ASSERT_EQ(client.code, 0) << client.Describe();
	// Killed once idle: then the group waits for outside input and the log on disk holds
	// every line the server printed ("listening", then one a request: 1 + 2 x 10). Killed
	// sooner (a loaded machine: detrun found each request already there and never waited),
	// the log could still hold the header alone.
	bool idle = false;
	for (int i = 0; i < 1200 && !idle; i++) {
		idle = RunCommand({ kDetrun, "log", "--stats", dir / "cut.dlog" })
			       .out.find(" in 21 writes") != std::string::npos;
		if (!idle)
			usleep(50 * 1000);
	}
	ASSERT_TRUE(idle) << "the log never held the server's 21 lines";
	rec.Signal(SIGKILL);
	RunResult killed = rec.Finish();
	// (A detrun killed by SIGKILL cannot wait for its group: the kernel kills the tasks as
	// detrun dies, through PTRACE_O_EXITKILL and PR_SET_PDEATHSIG, a moment later; the
	// harness reaps them. Every other way of ending detrun is checked for leftovers.)
	ASSERT_EQ(killed.code, 128 + SIGKILL) << killed.Describe();

	RunResult listed = RunCommand({ kDetrun, "log", "--stats", dir / "cut.dlog" });
	EXPECT_EQ(listed.code, 0) << listed.Describe();
	EXPECT_NE(listed.out.find("cut short (no end record)"), std::string::npos) << listed.out;
	unlink((dir / "data.log").c_str());
	RunResult rep = Replay(dir / "cut.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_EQ(killed.out.compare(0, rep.out.size(), rep.out), 0)
		<< FirstDifference("recording", killed.out, "replay", rep.out);
	EXPECT_NE(rep.out.find("listening on port"), std::string::npos) << rep.Describe();
	EXPECT_NE(rep.err.find("the end of a recording that was cut short"), std::string::npos)
		<< rep.Describe();
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// ---------------------------------------------------------------------------------------
// python3 -m http.server, served by curl, stopped by a signal from outside

TEST(RecordReplay, PythonHttpServerWithCurl)
{
	std::string py = Python();
	ASSERT_FALSE(py.empty()) << "python3 is required";
	TempDir dir("record");
	// The server's directory holds only what it serves: Python's import machinery lists
	// its working directory, which is part of the recorded starting state.
	ASSERT_EQ(mkdir((dir / "srv").c_str(), 0755), 0);
	ASSERT_EQ(mkdir((dir / "srv/www").c_str(), 0755), 0);
	ASSERT_EQ(mkdir((dir / "srv/www/sub").c_str(), 0755), 0);
	WriteFile(dir / "srv/www/hello.txt", "hello from the recorded server\n");
	WriteFile(dir / "srv/www/sub/data.bin", std::string(20000, 'x'));

	RunOptions opt;
	opt.cwd = dir / "srv";
	Child rec({ kDetrun, "record", "-o", dir / "http.dlog", "--", py, "-u", "-m", "http.server",
		    "0", "--bind", "127.0.0.1", "--directory", "www" },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("Serving HTTP on 127.0.0.1 port ", 60))
		<< rec.Finish().Describe();
	long port = NumberAfter(rec.Out(), "Serving HTTP on 127.0.0.1 port ");
	std::string base = "http://127.0.0.1:" + std::to_string(port);
	RunResult hello = RunCommand({ "curl", "-sS", base + "/hello.txt" });
	RunResult listing = RunCommand({ "curl", "-sS", base + "/sub/" });
	RunResult big = RunCommand({ "curl", "-sS", base + "/sub/data.bin" });
	RunResult missing = RunCommand(
		{ "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", base + "/missing" });
	rec.Signal(SIGINT); // from outside, to detrun alone: passed on at a logged point
	RunResult recorded = rec.Finish();
	EXPECT_EQ(hello.out, "hello from the recorded server\n") << hello.Describe();
	EXPECT_NE(listing.out.find("data.bin"), std::string::npos) << listing.Describe();
	EXPECT_EQ(big.out.size(), 20000u) << big.Describe();
	EXPECT_EQ(missing.out, "404") << missing.Describe();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(recorded.out.find("Keyboard interrupt received"), std::string::npos)
		<< recorded.Describe();
	ASSERT_NE(recorded.err.find("\"GET /sub/data.bin HTTP/1.1\" 200"), std::string::npos)
		<< recorded.Describe();

	RunResult rep = Replay(dir / "http.dlog");
	EXPECT_EQ(rep.code, recorded.code) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out)
		<< FirstDifference("recording", recorded.out, "replay", rep.out);
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();

	RunResult listed = RunCommand({ kDetrun, "log", dir / "http.dlog" });
	EXPECT_EQ(listed.code, 0) << listed.Describe();
	EXPECT_NE(listed.out.find("signal   2 (Interrupt)"), std::string::npos) << listed.out;
	EXPECT_NE(listed.out.find("accept"), std::string::npos) << listed.out;
}

// ---------------------------------------------------------------------------------------
// A Go HTTP server (tests/go/httpserver): the Go runtime's network poller and threads

// Records the Go HTTP server serving three curl requests and ending on SIGTERM, with
// detrun's extra options `opts`, and replays it.
void RecordGoHttpServerAndReplay(const std::vector<std::string> &opts)
{
	ASSERT_STRNE(GO_HTTP_SERVER, "") << "go was not found when the tests were configured";
	TempDir dir("record");
	RunOptions opt;
	opt.cwd = dir.path;
	std::vector<std::string> argv = { kDetrun, "record", "-o", dir / "go.dlog" };
	argv.insert(argv.end(), opts.begin(), opts.end());
	argv.insert(argv.end(), { "--", GO_HTTP_SERVER });
	Child rec(argv, opt);
	ASSERT_TRUE(rec.WaitForOutput("listening on port ", 60)) << rec.Finish().Describe();
	std::string base = "http://127.0.0.1:" +
			   std::to_string(NumberAfter(rec.Out(), "listening on port "));
	std::string answers;
	for (const char *name : { "ada", "grace", "edsger" })
		answers += RunCommand({ "curl", "-sS", base + "/hello?name=" + name }).out;
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(answers.find("hello 3 edsger at 2030-01-01T00:00:00"), std::string::npos)
		<< answers;
	ASSERT_NE(recorded.out.find("served 3 requests"), std::string::npos) << recorded.Describe();

	RunResult rep = Replay(dir / "go.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out)
		<< FirstDifference("recording", recorded.out, "replay", rep.out);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

TEST(RecordReplay, GoHttpServerWithCurl)
{
	RecordGoHttpServerAndReplay({});
}

// The same with processes in parallel. A thread that is not the main one ends the process
// while the others wait in parked calls; the kill takes each out of its stop, and its exit
// stop comes when the kernel gets to it. The engine took those tasks for waiting until
// then: the group looked deadlocked, a recording hung waiting for the outside, and a replay
// diverged there (most runs on a 2-CPU machine).
TEST(RecordReplay, GoHttpServerWithCurlInParallel)
{
	for (int i = 0; i < 3 && !HasFailure(); i++)
		RecordGoHttpServerAndReplay({ "--jobs", "2" });
}

// ---------------------------------------------------------------------------------------
// nginx: a master and two workers, epoll, non-blocking sockets, sendfile

TEST(RecordReplay, NginxWithCurl)
{
	TempDir dir("record");
	int port = FreePort();
	ASSERT_GT(port, 0);
	ASSERT_TRUE(MakeNginxPrefix(SOURCE_DIR, dir.path, port));
	std::string big;
	for (int i = 0; i < 20000; i++)
		big += "line " + std::to_string(i) + "\n";
	WriteFile(dir / "html/big.txt", big);
	WriteFile(dir / "html/index.html", "<p>recorded</p>\n");

	RunOptions opt;
	opt.cwd = dir.path;
	Child rec({ kDetrun, "record", "-o", dir / "nginx.dlog", "--", "nginx", "-e", "stderr",
		    "-c", dir / "nginx.conf", "-p", dir.path + "/" },
		  opt);
	ASSERT_TRUE(rec.WaitForOutput("start worker process", 60, true)) << rec.Finish().Describe();
	std::string base = "http://127.0.0.1:" + std::to_string(port);
	RunResult index = RunCommand({ "curl", "-sS", base + "/" });
	RunResult got = RunCommand({ "curl", "-sS", base + "/big.txt", base + "/big.txt" });
	RunResult missing = RunCommand(
		{ "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", base + "/missing" });
	rec.Signal(SIGTERM);
	RunResult recorded = rec.Finish();
	EXPECT_EQ(index.out, "<p>recorded</p>\n") << index.Describe();
	EXPECT_EQ(got.out, big + big) << got.Describe();
	EXPECT_EQ(missing.out, "404") << missing.Describe();
	ASSERT_EQ(recorded.code, 0) << recorded.Describe();
	ASSERT_NE(recorded.err.find("exiting"), std::string::npos) << recorded.Describe();

	for (const char *made : { "/nginx.pid" })
		unlink((dir.path + made).c_str());
	RunCommand({ "sh", "-c", "rm -rf " + dir.path + "/tmp/*" });
	RunResult rep = Replay(dir / "nginx.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.err, recorded.err)
		<< FirstDifference("recording", recorded.err, "replay", rep.err);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// ---------------------------------------------------------------------------------------
// A program reading its terminal (a pty), replayed with no terminal at all

// A pseudo-terminal 31 rows by 97 columns; the test types at `master`, and a command run
// with options() has the other end as its stdin and controlling terminal.
struct Pty {
	int master = -1, slave = -1;
	Pty()
	{
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		struct winsize ws = { 31, 97, 0, 0 };
		if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 &&
		    ioctl(master, TIOCSWINSZ, &ws) == 0)
			slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	}
	~Pty()
	{
		close(slave);
		close(master);
	}
	bool Type(const std::string &text)
	{
		return write(master, text.data(), text.size()) == (ssize_t)text.size();
	}
	RunOptions options(const std::string &cwd) const
	{
		RunOptions opt;
		opt.cwd = cwd;
		opt.stdin_fd = slave;
		opt.controlling_tty = true;
		return opt;
	}
};

TEST(RecordReplay, TerminalInput)
{
	TempDir dir("record");
	Pty pty;
	ASSERT_GE(pty.slave, 0);
	// Typed ahead: canonical mode hands the program one line per read.
	ASSERT_TRUE(pty.Type("first line\nsecond line\nquit\n"));
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "tty.dlog", "--",
				     std::string(GUEST_DIR) + "/tty_reader" },
				   pty.options(dir.path));
	ASSERT_EQ(rec.code, 3) << rec.Describe();
	ASSERT_NE(rec.out.find("tty: yes\nsize: 31x97\ngot 1: first line at "), std::string::npos)
		<< rec.Describe();
	ASSERT_NE(rec.out.find("bye after 2 lines"), std::string::npos) << rec.Describe();

	RunResult rep = Replay(dir / "tty.dlog"); // stdin is /dev/null now
	EXPECT_EQ(rep.code, 3) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << FirstDifference("recording", rec.out, "replay", rep.out);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

// Ctrl-C typed at the terminal reaches every task wherever it runs; recorded, it reaches
// the group at one logged point, and replay delivers it there again.
TEST(RecordReplay, CtrlCFromTheTerminal)
{
	TempDir dir("record");
	Pty pty;
	ASSERT_GE(pty.slave, 0);
	Child rec({ kDetrun, "record", "-o", dir / "intr.dlog", "--",
		    std::string(GUEST_DIR) + "/tty_reader" },
		  pty.options(dir.path));
	ASSERT_TRUE(pty.Type("one line\n"));
	ASSERT_TRUE(rec.WaitForOutput("got 1: one line", 60)) << rec.Finish().Describe();
	ASSERT_TRUE(pty.Type("\x03")); // the terminal's interrupt character
	RunResult recorded = rec.Finish();
	ASSERT_EQ(recorded.code, 128 + SIGINT) << recorded.Describe();

	RunResult rep = Replay(dir / "intr.dlog");
	EXPECT_EQ(rep.code, 128 + SIGINT) << rep.Describe();
	EXPECT_EQ(rep.out, recorded.out)
		<< FirstDifference("recording", recorded.out, "replay", rep.out);
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
	RunResult listed = RunCommand({ kDetrun, "log", dir / "intr.dlog" });
	EXPECT_NE(listed.out.find("signal   2 (Interrupt)"), std::string::npos) << listed.out;
}

// --clock=real: the wall clock is outside input. Two recordings read different times;
// each replay reads what its recording read.
TEST(RecordReplay, RealClockIsOutsideInput)
{
	TempDir dir("record");
	const std::vector<std::string> prog{ "sh", "-c", "date +%s.%N; date +%s.%N" };
	std::vector<std::string> outs;
	for (const std::string name : { "c1.dlog", "c2.dlog" }) {
		std::vector<std::string> argv{ kDetrun, "record",   "--clock=real",
					       "-o",    dir / name, "--" };
		argv.insert(argv.end(), prog.begin(), prog.end());
		RunResult r = RunCommand(argv);
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_GT(atof(r.out.c_str()), 1.7e9) << "want the real time\n" << r.Describe();
		outs.push_back(r.out);
	}
	EXPECT_NE(outs[0], outs[1]) << "two recordings read the same real time";
	for (int i = 0; i < 2; i++) {
		RunResult rep = Replay(dir / (i ? "c2.dlog" : "c1.dlog"));
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, outs[i]) << rep.Describe();
	}
	RunResult virt = RunCommand(UnderDetrun({}, prog));
	ASSERT_EQ(virt.code, 0) << virt.Describe();
	EXPECT_GE(atof(virt.out.c_str()), 1893456000.0) << "virtual by default\n"
							<< virt.Describe();
	EXPECT_LT(atof(virt.out.c_str()), 1893456001.0) << "virtual by default\n"
							<< virt.Describe();
}

// An outside wait with its own signal mask (ppoll on a connection to a peer that stays
// silent) ended by a signal: the kernel's answer comes from no outside descriptor, in the
// recording as in the replay — where the connection's stand-in, a socket never connected,
// would report a hang-up if asked.
TEST(RecordReplay, OutsideWaitEndedBySignalUnderItsOwnMask)
{
	TempDir dir("record");
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	ASSERT_EQ(bind(listener, (struct sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(listen(listener, 4), 0); // never accepted: the peer stays silent
	ASSERT_EQ(getsockname(listener, (struct sockaddr *)&a, &len), 0);
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "ppoll.dlog", "--",
				     std::string(GUEST_DIR) + "/ppoll_signal",
				     std::to_string(ntohs(a.sin_port)) },
				   opt);
	close(listener);
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "ppoll=-1 Interrupted system call revents=0 alarms=1\n")
		<< rec.Describe();
	RunResult rep = Replay(dir / "ppoll.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();
}

// ---------------------------------------------------------------------------------------
// Damaged logs, a changed program, changed files

std::string RecordSmallLog(const TempDir &dir)
{
	WriteFile(dir / "input.txt", "some input\n");
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult r = RunCommand({ kDetrun, "record", "-o", dir / "good.dlog", "--", "sh", "-c",
				   "cat input.txt; echo done" },
				 opt);
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "some input\ndone\n") << r.Describe();
	return ReadFile(dir / "good.dlog");
}

// One line on stderr naming the problem, a non-zero exit, no crash, nothing left behind.
void ExpectCleanRefusal(const std::vector<std::string> &argv, const std::string &must_say)
{
	RunResult r = RunCommand(argv);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_NE(r.code, 0) << r.Describe();
	EXPECT_LT(r.code, 128) << "must exit, not crash\n" << r.Describe();
	EXPECT_EQ(SplitLines(r.err).size(), 1u) << "want a one-line error\n" << r.Describe();
	EXPECT_NE(r.err.find(must_say), std::string::npos) << r.Describe();
	EXPECT_EQ(r.out, "") << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

TEST(RecordReplay, DamagedLogsAreRefusedWithTheOffset)
{
	TempDir dir("record");
	std::string good = RecordSmallLog(dir);
	ASSERT_GT(good.size(), 100u);
	RunResult ok = Replay(dir / "good.dlog");
	ASSERT_EQ(ok.code, 0) << ok.Describe();
	ASSERT_EQ(ok.out, "some input\ndone\n") << ok.Describe();

	struct Damage {
		std::string name, bytes, must_say;
	};
	std::string flipped = good;
	flipped[good.size() / 2] ^= 0x10;
	std::vector<Damage> damages = {
		{ "empty", "", "empty file" },
		{ "truncated", good.substr(0, good.size() - 7), "truncated at offset" },
		{ "cut-in-header", good.substr(0, 12), "truncated at offset 8" },
		{ "bit-flipped", flipped, "corrupt at offset" },
		{ "not-a-log", "#!/bin/sh\necho hello\n", "not a detrun log" },
	};
	for (const Damage &d : damages) {
		SCOPED_TRACE(d.name);
		WriteFile(dir / d.name, d.bytes);
		ExpectCleanRefusal({ kDetrun, "replay", dir / d.name }, d.must_say);
		ExpectCleanRefusal({ kDetrun, "log", dir / d.name }, d.must_say);
		ExpectCleanRefusal({ kDetrun, "log", "--stats", dir / d.name }, d.must_say);
	}
	ExpectCleanRefusal({ kDetrun, "replay", dir / "no-such.dlog" }, "No such file");
}

TEST(RecordReplay, ChangedInputFileStopsTheReplayAndSaysWhich)
{
	TempDir dir("record");
	RecordSmallLog(dir);
	WriteFile(dir / "input.txt", "other input\n");
	RunResult rep = Replay(dir / "good.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_NE(rep.err.find("replay diverged"), std::string::npos) << rep.Describe();
	EXPECT_NE(rep.err.find(dir / "input.txt"), std::string::npos) << rep.Describe();
	EXPECT_NE(rep.err.find("differs from the recording"), std::string::npos) << rep.Describe();
	EXPECT_EQ(rep.out, "") << "must stop before the changed input is used\n" << rep.Describe();
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
}

TEST(RecordReplay, ChangedDirectoryStopsTheReplay)
{
	TempDir dir("record");
	ASSERT_EQ(mkdir((dir / "d").c_str(), 0755), 0);
	WriteFile(dir / "d/one", "1");
	RunResult rec = RunCommand(
		{ kDetrun, "record", "-o", dir / "ls.dlog", "--", "ls", dir / "d" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "one\n") << rec.Describe();
	WriteFile(dir / "d/two", "2");
	RunResult rep = Replay(dir / "ls.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_NE(rep.err.find(dir / "d/ differs from the recording (recorded " + dir.path +
			       "/d/, 3 entries"), // ".", ".." and one
		  std::string::npos)
		<< rep.Describe();
	EXPECT_EQ(rep.out, "") << rep.Describe();
}

// Standard input from a file is replayed from that file, and only if it is unchanged.
TEST(RecordReplay, StandardInputFromAFile)
{
	TempDir dir("record");
	std::string lines;
	for (int i = 0; i < 500; i++)
		lines += std::to_string(i) + "\n";
	WriteFile(dir / "in.txt", lines);
	int in = open((dir / "in.txt").c_str(), O_RDONLY | O_CLOEXEC);
	ASSERT_GE(in, 0);
	RunOptions opt;
	opt.stdin_fd = in;
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "in.dlog", "--", "wc", "-l" },
				   opt);
	close(in);
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "500\n") << rec.Describe();
	RunResult rep = Replay(dir / "in.dlog"); // its own stdin is /dev/null
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, "500\n") << rep.Describe();
	WriteFile(dir / "in.txt", lines + "500\n");
	ExpectCleanRefusal({ kDetrun, "replay", dir / "in.dlog" },
			   "in.txt differs from the recording");
}

TEST(RecordReplay, ChangedProgramIsRefused)
{
	TempDir dir("record");
	ASSERT_EQ(RunCommand({ "cp", std::string(GUEST_DIR) + "/exit_code", dir / "prog" }).code,
		  0);
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "p.dlog", "--", "./prog" },
				   opt);
	ASSERT_LT(rec.code, 125) << rec.Describe();
	std::ofstream(dir / "prog", std::ios::app) << "extra";
	ExpectCleanRefusal({ kDetrun, "replay", dir / "p.dlog" },
			   "differs from the recorded program");
}

// The program prints where its initial stack put things: natively that depends on the
// path it was started by (AT_EXECFN, argv[0] and everything below them move). A replay
// starts it as recorded, from anywhere, whatever path names the log.
TEST(RecordReplay, ReplayStartsTheProgramAsRecorded)
{
	TempDir dir("record");
	ASSERT_EQ(mkdir((dir / "work").c_str(), 0755), 0);
	ASSERT_EQ(RunCommand({ "cp", std::string(GUEST_DIR) + "/rep_stack_addresses",
			       dir / "work/prog" })
			  .code,
		  0);
	RunOptions in_work;
	in_work.cwd = dir / "work";
	RunResult relative = RunCommand({ kDetrun, "--", "./prog" }, in_work);
	RunResult absolute = RunCommand({ kDetrun, "--", dir / "work/prog" }, in_work);
	ASSERT_EQ(relative.code, 0) << relative.Describe();
	ASSERT_NE(relative.out, absolute.out) << "the path it is started by shows natively";
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "run.dlog", "--", "./prog" },
				   in_work);
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, relative.out) << rec.Describe();
	RunOptions elsewhere;
	elsewhere.cwd = "/";
	RunOptions above;
	above.cwd = dir.path;
	const std::vector<std::pair<RunOptions, std::string>> replays = {
		{ elsewhere, dir / "run.dlog" },
		{ above, "./run.dlog" },
		{ in_work, "../work/../run.dlog" },
	};
	for (const auto &[opt, log] : replays) {
		RunResult rep = RunCommand({ "unshare", "-n", kDetrun, "replay", log }, opt);
		EXPECT_EQ(rep.code, 0) << rep.Describe();
		EXPECT_EQ(rep.out, rec.out)
			<< FirstDifference("recorded", rec.out, "replayed", rep.out);
	}
	ASSERT_EQ(rename((dir / "work").c_str(), (dir / "gone").c_str()), 0);
	ExpectCleanRefusal({ kDetrun, "replay", dir / "run.dlog" },
			   "cannot replay: the recording ran in " + dir / "work");
}

// Where `needle` is in `log`, with the CRC-32 of the block holding it made right again
// after `change` alters it there: a log that only a record's content tells apart.
bool TamperRecord(std::string &log, const std::string &needle,
		  const std::function<void(char *)> &change)
{
	size_t at = log.find(needle);
	if (at == std::string::npos || log.find(needle, at + 1) != std::string::npos)
		return false;
	change(&log[at]);
	for (size_t off = 8; off + 8 <= log.size();) {
		uint32_t len;
		memcpy(&len, &log[off], 4);
		if (at < off + 8 + len) {
			uint32_t crc = ~0u;
			for (size_t i = off + 8; i < off + 8 + len; i++) {
				crc ^= (uint8_t)log[i];
				for (int k = 0; k < 8; k++)
					crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
			}
			crc = ~crc;
			memcpy(&log[off + 4], &crc, 4);
			return true;
		}
		off += 8 + len;
	}
	return false;
}

uint32_t Fnv32(const std::string &s)
{
	uint32_t h = 0x811c9dc5u;
	for (unsigned char c : s)
		h = (h ^ c) * 0x01000193u;
	return h;
}

// A replay checks what it writes where the user sees it against the digests the recording
// kept: one whose output differs (here: the log says the recorded bytes were others) stops
// before the write runs and names the logical time, the task, the descriptor and the byte.
TEST(RecordReplay, OutputThatDiffersStopsTheReplay)
{
	TempDir dir("record");
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "out.dlog", "--",
				     std::string(GUEST_DIR) + "/rep_stack_addresses" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult listing = RunCommand({ kDetrun, "log", dir / "out.dlog" });
	char digest[16];
	snprintf(digest, sizeof(digest), "%08x", Fnv32(rec.out)); // stdio writes it at once
	std::smatch m;
	ASSERT_TRUE(std::regex_search(listing.out, m,
				      std::regex("t=([0-9]+) +task 1 +output +fd 1, " +
						 std::to_string(rec.out.size()) +
						 " bytes at byte 0, digest " + digest + "\n")))
		<< listing.out;
	std::string at = m[1];
	std::string size = std::to_string(rec.out.size());
	RunResult json = RunCommand({ kDetrun, "log", "--json", dir / "out.dlog" });
	EXPECT_NE(json.out.find("\"kind\":\"output\",\"fd\":1,\"bytes\":" + size +
				",\"offset\":0,\"digest\":\"" + digest + "\"}"),
		  std::string::npos)
		<< json.out;
	RunResult stats = RunCommand({ kDetrun, "log", "--stats", dir / "out.dlog" });
	EXPECT_NE(stats.out.find("output checked: " + size + " bytes in 1 writes"),
		  std::string::npos)
		<< stats.out;
	std::string log = ReadFile(dir / "out.dlog");
	uint32_t d = Fnv32(rec.out);
	std::string needle = std::string("\x1d") + std::string((const char *)&d, 4);
	ASSERT_TRUE(TamperRecord(log, needle, [](char *p) { p[1] ^= 1; }));
	WriteFile(dir / "tampered.dlog", log);
	RunResult rep = Replay(dir / "tampered.dlog");
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_EQ(rep.out, "") << "the replay's other output is not written";
	std::string line = "replay diverged at t=" + at +
			   ": task 1 would write other output to descriptor 1 (standard output) "
			   "at byte 0";
	EXPECT_NE(DetrunLines(rep.err).find(line), std::string::npos) << rep.Describe();
	EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
	RunResult same = Replay(dir / "out.dlog");
	EXPECT_EQ(same.code, 0) << same.Describe();
	EXPECT_EQ(same.out, rec.out) << same.Describe();
}

// A replay checks each write where the user sees it at the call's entry, before it runs.
// Given other input (the log's copy of what it read, changed), the program would write
// another second line: the replay stops before that write, with exit 125 and one line
// naming the task, the call's logical time and where the output differs, and the line is
// in neither the file nor the pipe the output goes to, straight or through a stand-in's
// relay (cli/replay_stdio.c). Lines before it are there; a file keeps what it held. The
// write is checked against its task's next record, which other tasks' come before (a
// child's open here): it is logged at the write's exit.
TEST(RecordReplay, OutputThatWouldDifferIsNeverWritten)
{
	struct Case {
		bool record_to_file, replay_to_file;
	};
	const std::string guest = std::string(GUEST_DIR) + "/rep_echo_input";
	for (Case c : { Case{ true, true }, Case{ false, false }, Case{ true, false },
			Case{ false, true } }) {
		SCOPED_TRACE(std::string("recorded into a ") +
			     (c.record_to_file ? "file" : "pipe") + ", replayed into a " +
			     (c.replay_to_file ? "file" : "pipe"));
		TempDir dir("record");
		RunResult rec = RunCommand(
			{ "sh", "-c",
			  "printf 'tomato\\n' | exec \"$0\" record -o \"$1\" -- \"$2\"" +
				  std::string(c.record_to_file ? " > \"$3\"" : ""),
			  kDetrun, dir / "run.dlog", guest, dir / "rec.txt" });
		ASSERT_EQ(rec.code, 0) << rec.Describe();
		const std::string printed = "first\ngot: tomato\nlast\n";
		ASSERT_EQ(c.record_to_file ? ReadFile(dir / "rec.txt") : rec.out, printed);
		std::string log = ReadFile(dir / "run.dlog");
		ASSERT_TRUE(TamperRecord(log, "tomato\n", [](char *p) { p[0] = 'p'; }));
		WriteFile(dir / "potato.dlog", log);
		const std::string kept = "kept from before\n";
		WriteFile(dir / "rep.txt", kept);
		const std::string replay_to = "exec unshare -n \"$0\" replay \"$1\"" +
					      std::string(c.replay_to_file ? " >> \"$2\"" : "");
		RunResult rep = RunCommand(
			{ "sh", "-c", replay_to, kDetrun, dir / "potato.dlog", dir / "rep.txt" });
		EXPECT_EQ(rep.code, 125) << rep.Describe();
		std::string shown = c.replay_to_file ? ReadFile(dir / "rep.txt") : rep.out;
		EXPECT_EQ(shown, (c.replay_to_file ? kept : "") + "first\n") << rep.Describe();
		EXPECT_EQ(shown.find("potato"), std::string::npos) << shown;
		EXPECT_TRUE(std::regex_search(
			DetrunLines(rep.err),
			std::regex("detrun: task 1 \\(tid N\\) in write at t=([0-9]+): replay "
				   "diverged at t=\\1: task 1 would write other output to "
				   "descriptor 1 \\(standard output\\) at byte 6 \\(12 bytes, "
				   "digest [0-9a-f]{8}\\) than the recording \\(12 bytes to "
				   "descriptor 1, digest [0-9a-f]{8}\\)\n")))
			<< rep.Describe();
		EXPECT_TRUE(rep.leftovers.empty()) << rep.Describe();
		RunResult same = RunCommand(
			{ "sh", "-c", replay_to, kDetrun, dir / "run.dlog", dir / "rep.txt" });
		EXPECT_EQ(same.code, 0) << same.Describe();
		EXPECT_EQ(c.replay_to_file ? ReadFile(dir / "rep.txt") : same.out,
			  (c.replay_to_file ? kept + "first\n" : "") + printed);
	}
}

// A write that failed in the recording left no record. Where nobody sees it (a device
// other than a terminal: /dev/full here) it is checked after the call only, and fails
// there again as recorded: the replay goes on. Checked at the entry, it stopped.
TEST(RecordReplay, WriteThatFailedOnADeviceFailsThereAgain)
{
	TempDir dir("record");
	const std::string to_full = "exec \"$0\" \"$@\" 2>/dev/full";
	RunResult rec = RunCommand({ "sh", "-c", to_full, kDetrun, "record", "-o",
				     dir / "full.dlog", "--", "sh", "-c", "echo hi >&2; echo ok" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_EQ(rec.out, "ok\n");
	RunResult rep = RunCommand(
		{ "sh", "-c", to_full, "unshare", "-n", kDetrun, "replay", dir / "full.dlog" });
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, "ok\n") << rep.Describe();
}

// Standard output given as a regular file is output as much as a pipe or terminal is: the
// writes to it are logged and checked, though the file is not outside the group.
TEST(RecordReplay, OutputToAFileIsCheckedToo)
{
	TempDir dir("record");
	std::string guest = std::string(GUEST_DIR) + "/rep_stack_addresses";
	RunResult rec = RunCommand({ "sh", "-c", "exec \"$0\" record -o \"$1\" -- \"$2\" > \"$3\"",
				     kDetrun, dir / "f.dlog", guest, dir / "rec.txt" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	std::string printed = ReadFile(dir / "rec.txt");
	ASSERT_FALSE(printed.empty());
	uint32_t d = Fnv32(printed);
	std::string log = ReadFile(dir / "f.dlog");
	ASSERT_TRUE(TamperRecord(log, std::string("\x1d") + std::string((const char *)&d, 4),
				 [](char *p) { p[2] ^= 4; }));
	WriteFile(dir / "tampered.dlog", log);
	const std::string replay_to = "exec unshare -n \"$0\" replay \"$1\" > \"$2\"";
	RunResult same = RunCommand(
		{ "sh", "-c", replay_to, kDetrun, dir / "f.dlog", dir / "same.txt" });
	EXPECT_EQ(same.code, 0) << same.Describe();
	EXPECT_EQ(ReadFile(dir / "same.txt"), printed);
	RunResult rep = RunCommand(
		{ "sh", "-c", replay_to, kDetrun, dir / "tampered.dlog", dir / "rep.txt" });
	EXPECT_EQ(rep.code, 125) << rep.Describe();
	EXPECT_NE(rep.err.find("task 1 would write other output to descriptor 1 (standard "
			       "output) at byte 0"),
		  std::string::npos)
		<< rep.Describe();
	EXPECT_EQ(ReadFile(dir / "rep.txt"), "") << "the replay's other output is not written";
}

// A log of format 3 (before Header.exec_path and Output records) is still replayed, with a
// warning that its program starts by its absolute path and its output goes unchecked.
TEST(RecordReplay, OlderLogFormatReplaysWithAWarning)
{
	TempDir dir("record");
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "true.dlog", "--", "true" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	std::string log = ReadFile(dir / "true.dlog");
	// Header.format_version 7, then the detrun_version field: made 3.
	ASSERT_TRUE(TamperRecord(log, std::string("\x08\x07\x12", 3), [](char *p) { p[1] = 3; }));
	WriteFile(dir / "old.dlog", log);
	RunResult rep = Replay(dir / "old.dlog");
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_NE(rep.err.find("warning: a log of format 3 keeps neither the path the program "
			       "was started by nor digests of its output"),
		  std::string::npos)
		<< rep.Describe();
	RunResult text = RunCommand({ kDetrun, "log", dir / "old.dlog" });
	EXPECT_EQ(text.out.rfind("log format 3,", 0), 0u) << text.out;
}

TEST(RecordReplay, LogListingsDescribeEveryRecord)
{
	TempDir dir("record");
	RecordSmallLog(dir);
	RunResult text = RunCommand({ kDetrun, "log", dir / "good.dlog" });
	ASSERT_EQ(text.code, 0) << text.Describe();
	EXPECT_NE(text.out.find("): sh -c cat input.txt; echo done\n"), std::string::npos)
		<< text.out;
	EXPECT_NE(text.out.find(dir / "input.txt"), std::string::npos) << text.out;
	EXPECT_NE(text.out.find("end      exit code 0"), std::string::npos) << text.out;
	RunResult json = RunCommand({ kDetrun, "log", "--json", dir / "good.dlog" });
	ASSERT_EQ(json.code, 0) << json.Describe();
	std::vector<std::string> lines = SplitLines(json.out);
	ASSERT_GE(lines.size(), 3u) << json.out;
	for (const std::string &l : lines)
		EXPECT_TRUE(l.front() == '{' && l.back() == '}') << l;
	EXPECT_NE(json.out.find("\"kind\":\"end\",\"exit_code\":0"), std::string::npos) << json.out;
	RunResult stats = RunCommand({ kDetrun, "log", "--stats", dir / "good.dlog" });
	ASSERT_EQ(stats.code, 0) << stats.Describe();
	EXPECT_NE(stats.out.find("complete"), std::string::npos) << stats.out;
}

// Arguments are bytes: `detrun log --json` keeps well-formed UTF-8 as it is and writes
// any other byte as \udcXX (Python's surrogateescape), control characters escaped, so
// every line is JSON and the bytes come back (issue 17: 0xff went out raw).
TEST(RecordReplay, JsonLogEscapesBytesThatAreNotUtf8)
{
	TempDir dir("record");
	const std::string odd = "\xff\xfe", accented = "\xc3\xa9", overlong = "\xc0\xaf\x7f\x01";
	RunResult rec = RunCommand({ kDetrun, "record", "-o", dir / "odd.dlog", "--", "/bin/echo",
				     odd, accented, overlong });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult json = RunCommand({ kDetrun, "log", "--json", dir / "odd.dlog" });
	ASSERT_EQ(json.code, 0) << json.Describe();
	WriteFile(dir / "log.json", json.out);
	const std::string check =
		"import json, sys\n"
		"lines = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]\n"
		"argv = [a.encode('utf-8', 'surrogateescape') for a in lines[0]['argv']]\n"
		"print(argv[1:] == [b'\\xff\\xfe', 'é'.encode(), b'\\xc0\\xaf\\x7f\\x01'])\n";
	RunResult parsed = RunCommand({ Python(), "-c", check, dir / "log.json" });
	EXPECT_EQ(parsed.out, "True\n") << parsed.Describe() << json.out;
	EXPECT_NE(json.out.find(R"(,"\udcff\udcfe","é","\udcc0\udcaf\u007f\u0001"])"),
		  std::string::npos)
		<< json.out;
}

TEST(RecordReplay, CommandLineMistakes)
{
	ExpectCleanRefusal({ kDetrun, "record", "--", "true" }, "record needs -o LOG");
	ExpectCleanRefusal({ kDetrun, "record", "-o", "/tmp/x.dlog" }, "no program given");
	ExpectCleanRefusal({ kDetrun, "replay" }, "replay takes one LOG");
	ExpectCleanRefusal({ kDetrun, "log", "--json", "--stats", "x" }, "do not go together");
	ExpectCleanRefusal({ kDetrun, "replay", "--seed", "4", "x.dlog" }, "--seed cannot change");
	ExpectCleanRefusal({ kDetrun, "replay", "--cpus=2", "x.dlog" }, "--cpus cannot change");
	ExpectCleanRefusal({ kDetrun, "log", "-q", "3", "x.dlog" }, "--quantum is for running");
	ExpectCleanRefusal({ kDetrun, "replay", "-o", "x.dlog", "x.dlog" }, "-o is not an option");
	ExpectCleanRefusal({ kDetrun, "record", "-o", "/nonexistent-dir/x.dlog", "--", "true" },
			   "cannot create the log");
	ExpectCleanRefusal({ kDetrun, "replay", "--jobs=2", "x.dlog" }, "--jobs cannot change");
}

TEST(RecordReplay, JobsOutOfRangeAreRefusedInOneLine)
{
	for (const char *jobs : { "0", "abc", "65", "-1", "" })
		for (const char *cmd : { "run", "record" }) {
			std::vector<std::string> argv = { kDetrun };
			if (!strcmp(cmd, "record"))
				argv.insert(argv.end(), { "record", "-o", "/tmp/never.dlog" });
			argv.insert(argv.end(), { "--jobs", jobs, "--", "true" });
			RunResult r = RunCommand(argv);
			EXPECT_EQ(r.code, 125) << r.Describe();
			EXPECT_NE(r.err.find("invalid value for --jobs"), std::string::npos)
				<< r.Describe();
			EXPECT_NE(r.err.find("1..64"), std::string::npos) << r.Describe();
			ExpectCleanRefusal(argv, "--jobs");
		}
	RunResult help = RunCommand({ kDetrun, "--help" });
	EXPECT_NE(help.out.find("--jobs N"), std::string::npos) << help.Describe();
}

TEST(RecordReplay, TheLogSaysHowManyJobsRan)
{
	// The header carries --jobs; `detrun log` shows it in both forms, and a log recorded
	// without the option says 1 (one task at a time).
	TempDir dir("record");
	RunOptions opt;
	opt.cwd = dir.path;
	for (const char *jobs : { "1", "3" }) {
		std::string log = dir / (std::string("j") + jobs + ".dlog");
		RunResult r = RunCommand({ kDetrun, "record", "-o", log, "--jobs", jobs, "--",
					   "echo", "hi" },
					 opt);
		ASSERT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "hi\n") << r.Describe();
		RunResult text = RunCommand({ kDetrun, "log", log });
		EXPECT_NE(text.out.find(std::string(", jobs ") + jobs + ","), std::string::npos)
			<< text.Describe();
		RunResult json = RunCommand({ kDetrun, "log", "--json", log });
		EXPECT_NE(json.out.find(std::string("\"jobs\":") + jobs + ","), std::string::npos)
			<< json.Describe();
	}
	RecordSmallLog(dir);
	RunResult text = RunCommand({ kDetrun, "log", dir / "good.dlog" });
	EXPECT_NE(text.out.find(", jobs 1,"), std::string::npos) << text.Describe();
}

} // namespace
