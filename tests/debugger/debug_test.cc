// Debugging a recording: detrun serves the GDB remote protocol on a replay and
// on a plain run, and `detrun debug LOG` starts Debian's gdb on it. Every test drives the
// real gdb in batch mode and checks what it prints.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"
#include "debugger/gdb_session.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;
const std::string kServer = std::string(EXAMPLES_DIR) + "/kvserver";
const std::string kClient = std::string(EXAMPLES_DIR) + "/kvclient";
const std::string kRacy = std::string(EXAMPLES_DIR) + "/racy_counter";

// Records examples/kvserver under kvclient's load into dir/NAME.
void RecordServer(const TempDir &dir, const std::string &name, const std::vector<std::string> &load)
{
	RunOptions opt;
	opt.cwd = dir.path;
	Child server({ kDetrun, "record", "-o", dir / name, "--", kServer, "0", "data.log" }, opt);
	ASSERT_TRUE(server.WaitForOutput("listening on port ", 60));
	std::vector<std::string> c{ kClient, std::to_string(NumberAfter(server.Out(),
									"listening on port ")) };
	c.insert(c.end(), load.begin(), load.end());
	RunResult client = RunCommand(c);
	RunResult r = server.Finish();
	ASSERT_EQ(client.code, 0) << client.Describe();
	ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
}

TEST(Debug, CrashRecordingStopsAtTheSegvAndGoesBackToTheHandler)
{
	TempDir dir("debug");
	RecordServer(dir, "crash.dlog", { "4", "20", "256", "--crash" });
	RunResult r = Debug(dir, "crash.dlog",
			    { "continue", "bt", "info locals", "monitor when", "break handle_del",
			      "reverse-continue", "bt", "print key", "monitor when" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	// The stop at the crash, with the handler's frames and the recorded request.
	EXPECT_NE(r.out.find("received signal SIGSEGV, Segmentation fault."), std::string::npos)
		<< r.out << r.Describe();
	std::string all = r.out + r.err; // gdb -batch prints some answers on stderr
	EXPECT_FALSE(Matching(r.out, "^#0  serve_connection \\(fd=fd@entry=[0-9]+, "
				     "conn_id=conn_id@entry=5\\) at .*kvserver.c:[0-9]+$")
			     .empty())
		<< r.out;
	EXPECT_FALSE(
		Matching(r.out, "^#1 .* in connection \\(.*\\) at .*kvserver.c:[0-9]+$").empty())
		<< r.out;
	EXPECT_NE(r.out.find("buf = \"DEL\\000no_such_key\""), std::string::npos) << r.out;
	// reverse-continue: the handler of the request that crashed it.
	EXPECT_NE(r.out.find("hit Breakpoint 1, handle_del (key=0x"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("$1 = 0x"), std::string::npos) << r.out;
	EXPECT_FALSE(Matching(r.out, "^\\$1 = 0x[0-9a-f]+ \"no_such_key\"$").empty()) << r.out;
	std::vector<std::string> when = Matching(all, "^logical time ");
	ASSERT_EQ(when.size(), 2u) << all;
	EXPECT_EQ(NumberAfter(when[1], "logical time "), NumberAfter(when[0], "logical time ") - 1)
		<< "the handler runs right after the crashing request's read\n"
		<< r.out;
}

TEST(Debug, PlainRunBreakpointBacktraceAndThreads)
{
	RunOptions opt;
	opt.timeout_s = 120;
	Child server({ kDetrun, "--gdb", "--", kRacy, "3" }, opt);
	std::string at = GdbAddress(server);
	ASSERT_NE(at.find("/detrun-gdb-"), std::string::npos) << server.Err();
	std::vector<std::string> argv{ "gdb",           "-q",  "-ex",
				       "set sysroot /", "-ex", "target extended-remote " + at };
	for (const std::string &a :
	     Batch({ "break worker", "continue", "bt", "print arg", "print $mxcsr",
		     "print $fs_base != 0", "print sizeof($ymm0)", "info threads", "continue",
		     "thread 1", "bt", "thread apply all bt", "info sharedlibrary", "kill" }))
		argv.push_back(a);
	argv.push_back(kRacy);
	RunResult g = RunCommand(argv, opt);
	RunResult s = server.Finish();
	EXPECT_TRUE(s.leftovers.empty()) << s.Describe();
	EXPECT_FALSE(g.timed_out) << g.Describe();
	EXPECT_NE(g.out.find("hit Breakpoint 1, worker (arg=0x0) at "), std::string::npos) << g.out;
	EXPECT_FALSE(
		Matching(g.out, "^#0  worker \\(arg=0x0\\) at .*racy_counter.c:[0-9]+$").empty())
		<< g.out;
	EXPECT_NE(g.out.find("$1 = (void *) 0x0"), std::string::npos) << g.out;
	// The target description: SSE's control word, the thread pointer, AVX.
	EXPECT_NE(g.out.find("$2 = 8064\n$3 = 1\n$4 = 32\n"), std::string::npos) << g.out;
	// Thread ids are p<pid>.<tid> as the group sees them (gdb's multiprocess extensions).
	EXPECT_FALSE(
		Matching(g.out, "^\\* 2 +Thread [0-9]+\\.[0-9]+ \"racy_counter\" worker").empty())
		<< g.out;
	EXPECT_NE(g.out.find("hit Breakpoint 1, worker (arg=0x1) at "), std::string::npos) << g.out;
	EXPECT_FALSE(
		Matching(g.out, "^\\[Switching to thread 1 \\(Thread ([0-9]+)\\.\\1\\)\\]$").empty())
		<< g.out;
	EXPECT_FALSE(Matching(g.out, "in main \\(.*\\) at .*racy_counter.c:[0-9]+$").empty())
		<< g.out;
	// thread apply all bt: main in pthread_join and the second worker.
	EXPECT_GE(Matching(g.out, "^Thread [0-9]+ \\(Thread [0-9.]+ \"racy_counter\"\\):$").size(),
		  2u)
		<< g.out;
	EXPECT_FALSE(Matching(g.out, "^#0  worker \\(arg=0x1\\) at ").empty()) << g.out;
	EXPECT_FALSE(Matching(g.out, "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes .*/libc\\.so\\.6$").empty())
		<< g.out;
}

// A breakpoint in code a forked child runs too: the child's copy of the int3 is taken
// out (it would die of SIGTRAP), the parent stops.
TEST(Debug, ForkedChildDoesNotInheritBreakpoints)
{
	TempDir dir("debug");
	std::string guest = std::string(GUEST_DIR) + "/dbg_fork";
	ASSERT_EQ(RecordInto(dir, "fork.dlog", { guest }).code, 0);
	RunResult r = Debug(dir, "fork.dlog", { "break work", "continue", "print x", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_NE(r.out.find("child 2\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("DBG-FORK-OK\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("Breakpoint 1, work (x=x@entry=2)"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("$1 = 2\n"), std::string::npos) << r.out;
}

// A breakpoint on an instruction detrun emulates (rdtsc): the step over it, gdb's and
// detrun's own, goes through the emulation, and the breakpoint stays for the next call.
TEST(Debug, BreakpointOnAnEmulatedInstruction)
{
	TempDir dir("debug");
	std::string guest = std::string(GUEST_DIR) + "/dbg_rdtsc";
	ASSERT_EQ(RecordInto(dir, "rdtsc.dlog", { guest }).code, 0);
	RunResult r = Debug(dir, "rdtsc.dlog",
			    { "break *tick", "continue", "continue", "stepi", "continue",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(Matching(r.out, "^Breakpoint 1, tick \\(\\) at ").size(), 3u) << r.out;
	EXPECT_NE(r.out.find("DBG-RDTSC-OK\n"), std::string::npos) << r.out;
	EXPECT_EQ((r.out + r.err).find("diverged"), std::string::npos) << r.out << r.err;
}

// Single steps (vCont;s) over lines, into a call and out of it, on a replay.
TEST(Debug, SteppingOnAReplay)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "racy.dlog", { kRacy, "2", "10" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult r = Debug(dir, "racy.dlog",
			    { "break main", "continue", "next", "next", "stepi", "step", "bt 1",
			      "finish", "monitor when", "info symbol clock_gettime" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	// gdb finds the vDSO the program was given (detrun's, in place of the host's).
	EXPECT_EQ((r.out + r.err).find("Failed to read a valid object file image"),
		  std::string::npos)
		<< r.out << r.err;
	EXPECT_FALSE(
		Matching(r.out, "^clock_gettime in section \\.text of system-supplied DSO").empty())
		<< r.out;
	EXPECT_FALSE(Matching(r.out, "^33\t\t*iterations = atol\\(argv\\[2\\]\\);").empty())
		<< r.out;
	EXPECT_FALSE(Matching(r.out, "^#0  .*strtol \\(nptr=0x[0-9a-f]+ \"10\"").empty()) << r.out;
	EXPECT_NE(r.out.find("Value returned is $1 = 10"), std::string::npos) << r.out;
}

// The replay under gdb stops for every breakpoint hit in a handler called for every
// request and still takes the recorded events (a divergence stops a replay with "replay
// diverged"; the end is checked too: exit code and logical time): same output, exit 0.
TEST(Debug, ReplayWithBreakpointsInHotCodeEndsLikeAPlainReplay)
{
	TempDir dir("debug");
	RecordServer(dir, "kv.dlog", { "8", "40", "256", "--shutdown" });
	RunOptions opt;
	opt.cwd = dir.path;
	// Long enough for digests of the event stream (one every 1024 events) to be checked.
	RunResult stats = RunCommand({ kDetrun, "log", "--stats", "kv.dlog" }, opt);
	EXPECT_GE(NumberAfter(stats.out, "ready, "), 0) << stats.out;
	EXPECT_EQ(stats.out.find(" 0 digest"), std::string::npos) << stats.out;
	RunResult plain = RunCommand({ kDetrun, "replay", "kv.dlog" }, opt);
	ASSERT_EQ(plain.code, 0) << plain.Describe();
	RunResult r = Debug(dir, "kv.dlog",
			    { "break handle_set", "break handle_get", "break put_all",
			      "ignore 1 100000", "ignore 2 100000", "ignore 3 100000", "continue",
			      "monitor when", "info breakpoints", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	EXPECT_FALSE(
		Matching(all, "^\\[Inferior 1 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< all;
	std::vector<std::string> hits = Matching(all, "breakpoint already hit [0-9]+ times");
	ASSERT_EQ(hits.size(), 3u) << all;
	EXPECT_GE(NumberAfter(hits[0], "already hit "), 100) << all;
	EXPECT_GE(NumberAfter(hits[2], "already hit "), 300) << all;
	// The program's own output, line for line as the plain replay's.
	for (const std::string &line : SplitLines(plain.out))
		EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line;
}

// A watchpoint on the racy counter stops at the same logical times, with the same values,
// in two sessions; from the end, reverse-continue returns to the last write (150 writes:
// each stop of gdb costs several packets, and this machine is slow).
TEST(Debug, WatchpointOnTheRacyCounterIsReproducibleAndReversible)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "racy.dlog", { kRacy, "3", "50" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_NE(rec.out.find("counter = 150 "), std::string::npos) << rec.Describe();
	WriteFile(dir / "watch.gdb", "watch counter\ncommands\nsilent\nmonitor when\n"
				     "print counter\ncontinue\nend\ncontinue\ndelete\n"
				     "echo at-the-end\\n\nmonitor when\nwatch counter\n"
				     "reverse-continue\nmonitor when\nprint counter\n");
	// gdb -batch prints the values on stdout and what `monitor` says on stderr.
	std::vector<std::string> values[2], times[2];
	for (int i = 0; i < 2; i++) {
		RunResult r = Debug(dir, "racy.dlog", { "source watch.gdb" });
		EXPECT_FALSE(r.timed_out) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		values[i] = Matching(r.out, "^(\\$[0-9]+ = |at-the-end)");
		times[i] = Matching(r.err, "^logical time ");
	}
	EXPECT_EQ(values[0], values[1]);
	EXPECT_EQ(times[0], times[1]);
	// 150 writes, each seen once, then the end, then the last write again.
	ASSERT_EQ(values[0].size(), 152u) << Head(ReadFile(dir / "watch.gdb"));
	EXPECT_EQ(values[0][149], "$150 = 150");
	EXPECT_EQ(values[0][150], "at-the-end");
	// reverse-continue stops just before the last write (gdb: "Old value = 150, New value
	// = 149"): no hit comes between write 149's stop and there, so `monitor when` says the
	// same as at write 149.
	EXPECT_EQ(values[0][151], "$151 = 149");
	ASSERT_EQ(times[0].size(), 152u);
	EXPECT_EQ(times[0][151], times[0][148]) << "reverse-continue from the end: the last write";
	EXPECT_NE(times[0][150], times[0][149]);
}

// The logical time of the first event of the replay's --trace that starts with `call`.
long TimeOfFirst(const std::string &trace, const std::string &call)
{
	std::smatch m;
	std::regex line("\\[t=([0-9]+) task [0-9]+\\] " + call);
	return std::regex_search(trace, m, line) ? atol(m[1].str().c_str()) : -1;
}

// `monitor goto T` sets where the next resume stops: forward in the same run, backward by
// running again from the start. The targets are calls of the main thread (starting the
// first thread, then waiting to join one): where they fall depends on the CPU, since
// glibc's start-up asks CPUID as often as the CPU's answers call for (68 events on one
// machine here, fewer elsewhere), and an emulated instruction's event is no place to stop.
TEST(Debug, MonitorGotoRunsForwardAndBack)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "racy.dlog", { kRacy, "3", "50" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult traced = RunCommand(
		{ kDetrun, "replay", "--trace-file", dir / "racy.trace", dir / "racy.dlog" });
	ASSERT_EQ(traced.code, 0) << traced.Describe();
	std::string trace = ReadFile(dir / "racy.trace");
	long earlier = TimeOfFirst(trace, "clone3\\("), later = TimeOfFirst(trace, "futex\\(");
	ASSERT_GT(earlier, 0) << trace;
	ASSERT_GT(later, earlier) << trace;
	RunResult r = Debug(dir, "racy.dlog",
			    { "monitor when", "monitor goto " + std::to_string(later), "continue",
			      "monitor when", "monitor goto " + std::to_string(earlier), "continue",
			      "monitor when", "bt 1", "print/x $pc", "stepi", "print/x $pc" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> when = Matching(r.err, "^logical time ");
	ASSERT_EQ(when.size(), 3u) << r.err;
	EXPECT_LT(NumberAfter(when[0], "logical time "), earlier) << r.err;
	EXPECT_EQ(NumberAfter(when[1], "logical time "), later) << r.err;
	EXPECT_EQ(NumberAfter(when[2], "logical time "), earlier) << r.err;
	EXPECT_NE(r.err.find("running again from the start"), std::string::npos) << r.err;
	EXPECT_FALSE(Matching(r.out, "^#0  ").empty()) << r.out;
	// A single step from a stop at an event (the trap flag, set as the task next runs).
	std::vector<std::string> pcs = Matching(r.out, "^\\$[0-9]+ = 0x");
	ASSERT_EQ(pcs.size(), 2u) << r.out;
	long before = strtol(pcs[0].c_str() + pcs[0].find("0x"), nullptr, 16);
	long after = strtol(pcs[1].c_str() + pcs[1].find("0x"), nullptr, 16);
	EXPECT_GT(after, before) << r.out;
	EXPECT_LE(after - before, 15) << "one instruction\n" << r.out;
}

// Bad input: one line from detrun, a non-zero exit, nothing left running.
void ExpectOneLine(const RunResult &r, const std::string &must_say)
{
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_NE(r.code, 0) << r.Describe();
	EXPECT_EQ(Matching(r.err, "^detrun: ").size(), 1u) << r.Describe();
	EXPECT_NE(r.err.find(must_say), std::string::npos) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

TEST(Debug, ErrorsAreOneLineAndLeaveNothingRunning)
{
	TempDir dir("debug");
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult help = RunCommand({ kDetrun, "debug", "--help" });
	EXPECT_EQ(help.code, 0) << help.Describe();
	EXPECT_EQ(help.out.rfind("usage: detrun debug LOG [GDB ARGS...]\n", 0), 0u)
		<< help.Describe();
	ExpectOneLine(RunCommand({ kDetrun, "debug" }), "debug takes a LOG");
	// A log of another binary: the program was rebuilt since.
	std::string copy = dir / "racy_copy";
	ASSERT_EQ(RunCommand({ "cp", kRacy, copy }).code, 0);
	ASSERT_EQ(RecordInto(dir, "r.dlog", { copy, "1", "5" }).code, 0);
	ASSERT_EQ(RunCommand({ "sh", "-c", "echo >> " + copy }).code, 0);
	ExpectOneLine(RunCommand({ kDetrun, "debug", "r.dlog", "-batch" }, opt),
		      "is not the recorded program");
	ExpectOneLine(RunCommand({ kDetrun, "replay", "--gdb", "r.dlog" }, opt),
		      "differs from the recorded program");
	// gdb missing.
	ASSERT_EQ(RecordInto(dir, "ok.dlog", { kRacy, "1", "5" }).code, 0);
	ExpectOneLine(RunCommand({ "env", "DETRUN_GDB=/nonexistent/gdb", kDetrun, "debug",
				   "ok.dlog", "-batch" },
				 opt),
		      "cannot run /nonexistent/gdb");
	// A port in use.
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(listen(fd, 1), 0);
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	std::string port = std::to_string(ntohs(a.sin_port));
	ExpectOneLine(RunCommand({ kDetrun, "--gdb=" + port, "--", kRacy, "1", "5" }),
		      "cannot serve gdb on port " + port + ": Address already in use");
	close(fd);
	// A gdb that goes away while the group is stopped.
	Child server({ kDetrun, "--gdb", "--", kRacy, "1", "5" }, opt);
	std::string at = GdbAddress(server);
	struct sockaddr_un u = {};
	u.sun_family = AF_UNIX;
	ASSERT_LT(at.size(), sizeof(u.sun_path)) << server.Err();
	memcpy(u.sun_path, at.c_str(), at.size());
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_EQ(connect(fd, (struct sockaddr *)&u, sizeof(u)), 0) << at;
	ASSERT_EQ(write(fd, "$?#3f", 5), 5);
	char reply[64];
	ASSERT_GT(read(fd, reply, sizeof(reply)), 0); // its stop: the group is stopped
	close(fd);
	RunResult r = server.Finish();
	EXPECT_EQ(r.err, "detrun: waiting for gdb on " + at +
				 " (in gdb: set sysroot / then target extended-remote " + at +
				 ")\n"
				 "detrun: gdb disconnected: the group is ended\n")
		<< r.Describe();
	EXPECT_NE(access(at.c_str(), F_OK), 0) << "the socket is removed once gdb connected";
	EXPECT_NE(r.code, 0) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.out, "") << "the program must not have gone on";
}

// Records tests/guests/dbg_calls (a call, and a system call between two lines) into dir.
void RecordCalls(const TempDir &dir)
{
	RunResult rec = RecordInto(dir, "calls.dlog", { std::string(GUEST_DIR) + "/dbg_calls" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	ASSERT_NE(rec.out.find("DBG-CALLS-OK"), std::string::npos) << rec.Describe();
}

// What gdb printed after the line "MARK": the source lines and frames it stopped at.
std::vector<std::string> StopsAfterMark(const std::string &out)
{
	size_t at = out.find("MARK\n");
	std::vector<std::string> stops;
	if (at != std::string::npos)
		for (const std::string &l : Matching(out.substr(at), "^([0-9]+\t|main |square |0x"
								     "[0-9a-f]+ in |Run back)"))
			stops.push_back(l);
	return stops;
}

// reverse-stepi (gdb's bs) walks back through the instructions a forward stepi walked,
// across a system call (an event), with the same pc and rax at each one. The first stop
// is a breakpoint's: its instruction count is found again by a re-execution.
TEST(Debug, ReverseStepiRetracesForwardStepsAcrossASystemCall)
{
	TempDir dir("debug");
	RecordCalls(dir);
	std::vector<std::string> cmds{ "break dbg_calls.c:29", "continue", "echo MARK\\n",
				       "print/x $pc", "print/x $rax" };
	const int kSteps = 7; // into raw_yield, over its syscall, and on
	for (int i = 0; i < kSteps; i++)
		cmds.insert(cmds.end(), { "stepi", "print/x $pc", "print/x $rax" });
	for (int i = 0; i < kSteps; i++)
		cmds.insert(cmds.end(), { "reverse-stepi", "print/x $pc", "print/x $rax" });
	RunResult r = Debug(dir, "calls.dlog", cmds);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> values = Matching(r.out, "^\\$[0-9]+ = 0x");
	ASSERT_EQ(values.size(), 4u * kSteps + 2) << r.out << r.err;
	for (std::string &v : values)
		v = v.substr(v.find(" = ") + 3);
	// Forward positions 0..kSteps, then back kSteps-1..0: pc and rax pairwise.
	for (int i = 0; i < kSteps; i++) {
		int back = kSteps + 1 + i, forward = kSteps - 1 - i;
		EXPECT_EQ(values[2 * back], values[2 * forward]) << "pc, step back " << i + 1;
		EXPECT_EQ(values[2 * back + 1], values[2 * forward + 1])
			<< "rax, step back " << i + 1;
	}
	EXPECT_NE(values[2], values[0]) << "stepi moved";
	EXPECT_EQ((r.out + r.err).find("not supported"), std::string::npos) << r.out << r.err;
}

// reverse-step, reverse-finish and reverse-next (gdb builds them from bs and bc with its
// own breakpoints) stop where gdb's own `record full` stops on the same program natively.
TEST(Debug, ReverseStepAndFinishStopWhereRecordFullDoes)
{
	TempDir dir("debug");
	RecordCalls(dir);
	// From the line after the system call: back over it, into the callee, out of it.
	std::vector<std::string> walk{ "echo MARK\\n",   "reverse-next",  "reverse-next",
				       "reverse-step",   "reverse-step",  "reverse-step",
				       "reverse-finish", "next",          "next",
				       "reverse-step",   "reverse-stepi", "reverse-stepi",
				       "reverse-next",   "reverse-next" };
	std::vector<std::string> cmds{ "break dbg_calls.c:30", "continue" };
	cmds.insert(cmds.end(), walk.begin(), walk.end());
	RunResult r = Debug(dir, "calls.dlog", cmds);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> native{
		"gdb", "-batch",      "-ex", "break main",           "-ex", "run",
		"-ex", "record full", "-ex", "break dbg_calls.c:30", "-ex", "continue"
	};
	for (const std::string &c : walk)
		native.insert(native.end(), { "-ex", c });
	native.push_back(std::string(GUEST_DIR) + "/dbg_calls");
	RunOptions opt;
	opt.timeout_s = 120;
	RunResult n = RunCommand(native, opt);
	std::vector<std::string> want = StopsAfterMark(n.out);
	ASSERT_GE(want.size(), 14u) << n.Describe();
	EXPECT_EQ(StopsAfterMark(r.out), want) << r.out << r.err;
	// reverse-step from the line after a call goes into the callee's last line;
	// reverse-finish comes back to the call.
	EXPECT_FALSE(Matching(r.out, "^square \\(x=3\\) at .*dbg_calls.c:13$").empty()) << r.out;
	EXPECT_FALSE(Matching(r.out, "^0x[0-9a-f]+ in main \\(\\) at .*dbg_calls.c:27$").empty())
		<< r.out;
}

// A watchpoint on the racy counter, from the end: reverse-continue stops on the last write
// itself (gdb: "Old value = 150, New value = 149", as under `record full`), with the pc on
// the writing instruction: the next stepi performs the write again.
TEST(Debug, ReverseWatchpointStopsBeforeTheWrite)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "racy.dlog", { kRacy, "3", "50" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult r = Debug(dir, "racy.dlog",
			    { "continue", "watch counter", "reverse-continue", "print counter",
			      "x/i $pc", "stepi", "print counter", "reverse-continue",
			      "print counter", "reverse-continue", "print counter" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_NE(r.out.find("Old value = 150\nNew value = 149\n"), std::string::npos) << r.out;
	EXPECT_FALSE(Matching(r.out, "^=> 0x[0-9a-f]+ <worker\\+[0-9]+>:\tmov +%[a-z0-9]+,"
				     "0x[0-9a-f]+\\(%rip\\) +# 0x[0-9a-f]+ <counter>$")
			     .empty())
		<< r.out;
	std::vector<std::string> values = Matching(r.out, "^\\$[0-9]+ = ");
	std::vector<std::string> want{ "$1 = 149", "$2 = 150", "$3 = 149", "$4 = 148" };
	EXPECT_EQ(values, want) << r.out << r.err;
}

// The files a recording changed are what its replay starts from, on a view of its own:
// gdb runs the program forward to the end, back (a run again from the start) and forward
// again in the directory the recording left, with no divergence (before, the replay found
// the recording's `db`, its O_CREAT|O_EXCL failed and the program took another path
// unreported), and the directory is as the recording left it.
TEST(Debug, ARecordingThatChangedItsFilesIsDebuggedOnItsStartingFiles)
{
	TempDir dir("debug");
	for (const auto &[name, text] :
	     std::vector<std::pair<std::string, std::string>>{ { "journal", "start\n" },
							       { "old", "old\n" },
							       { "gone", "gone\n" } })
		RunCommand({ "sh", "-c", "printf '%s' \"$1\" > \"$0\"", dir / name, text });
	RunResult rec = RecordInto(dir, "f.dlog", { std::string(GUEST_DIR) + "/rep_filedb" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunOptions opt;
	opt.cwd = dir.path;
	const std::vector<std::string> snapshot{
		"sh", "-c",
		"find . -printf '%p %y %m %s %T@\\n' | sort && find . -type f -exec sha256sum {} + | "
		"sort"
	};
	std::string after = RunCommand(snapshot, opt).out;
	RunResult r = Debug(dir, "f.dlog",
			    { "break print_file", "continue", "continue", "reverse-continue",
			      "monitor when", "delete", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	EXPECT_EQ(all.find("File exists"), std::string::npos) << all;
	EXPECT_EQ(Matching(all, "^Breakpoint 1, print_file \\(name=.*\"db\"\\)").size(), 2u) << all;
	// The run forward to the end printed what the recording printed, to its last line.
	EXPECT_NE(all.find("journal: start\nappended\nrenamed: old\ngone: No such file or "
			   "directory\nsub/x: x\ndone\n"),
		  std::string::npos)
		<< all;
	EXPECT_EQ(RunCommand(snapshot, opt).out, after) << "debugging changed the files";
}

} // namespace

// gdb's `run` starts the replay again from the beginning, as in rr (before: "Remote
// connection closed"), at the first stop, with the breakpoints gdb has; `kill` ends the
// group and the session goes on (a later `run`, or gdb's end: status 0, not 125). rr's
// `when` is defined in the gdb `detrun debug` starts.
TEST(Debug, RunStartsTheReplayAgainAndKillEndsNormally)
{
	TempDir dir("debug");
	RecordCalls(dir);
	RunResult r = Debug(dir, "calls.dlog",
			    { "break square", "continue", "when", "echo MARK1\\n", "kill",
			      "echo MARK2\\n", "run", "bt 1", "continue", "echo MARK3\\n", "run",
			      "when" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.out.find("Remote connection closed"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("[Inferior 1 (process 2) killed]"), std::string::npos) << r.out;
	// The first `when` and the last one: the same hit, in the first run and the third.
	// (gdb prints what the target says on its standard error)
	std::vector<std::string> whens = Matching(r.err, "^logical time [0-9]+, ");
	ASSERT_EQ(whens.size(), 2u) << r.out << r.err;
	EXPECT_EQ(whens[0], whens[1]);
	// Each run reaches the breakpoint: before the kill, after the first `run` (then on to
	// the program's end: its output), after the second.
	EXPECT_EQ(Matching(r.out, "^Breakpoint 1, square ").size(), 3u) << r.out;
	size_t m2 = r.out.find("MARK2"), m3 = r.out.find("MARK3");
	ASSERT_NE(m3, std::string::npos) << r.out;
	EXPECT_NE(r.out.find("DBG-CALLS-OK", m2), std::string::npos) << r.out;
	EXPECT_LT(r.out.find("DBG-CALLS-OK", m2), m3) << r.out;
	EXPECT_EQ(r.out.find("DBG-CALLS-OK", m3), std::string::npos) << r.out;
	EXPECT_EQ(Matching(r.err, "^detrun: gdb killed the program").size(), 3u) << r.err;
	EXPECT_EQ(r.err.find("diverged"), std::string::npos) << r.err;
}

// A recording made with a controlling terminal, debugged where there is none (the
// harness runs each command in a session of its own), draws a warning; a session that goes
// back (two reverse-continues: four re-executions) says it once, not once per run of detrun.
TEST(Debug, WarningsAreSaidOncePerSession)
{
	TempDir dir("debug");
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult rec = RunCommand({ "script", "-qec",
				     std::string(DETRUN_PATH) + " record -o calls.dlog -- " +
					     GUEST_DIR + "/dbg_calls > /dev/null",
				     "/dev/null" },
				   opt);
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult r = Debug(dir, "calls.dlog",
			    { "break square", "continue", "reverse-continue", "reverse-continue",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(Matching(r.out + r.err, "warning: the recording had a controlling terminal")
			  .size(),
		  1u)
		<< r.out << r.err;
	EXPECT_EQ(Matching(r.out, "^Breakpoint 1, square ").size(), 2u) << r.out;
}

// A watchpoint on a variable the initial thread writes: reverse-continue from the crash
// stops at the last write, every time. Before, the initial thread's debug registers,
// cleared by its execve, were never set again in a re-execution, and the run went back to
// the start of the recording ("No more reverse-execution history", 8-48 s).
TEST(Debug, WatchpointInTheInitialThreadStopsAtTheLastWriteGoingBack)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "w.dlog", { std::string(GUEST_DIR) + "/dbg_mainwatch" });
	ASSERT_EQ(rec.code, 128 + SIGSEGV) << rec.Describe();
	for (int session = 0; session < 2; session++) {
		RunResult r = Debug(dir, "w.dlog",
				    { "continue", "watch -l counter", "reverse-continue",
				      "print counter", "print i" });
		EXPECT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.out.find("No more reverse-execution history"), std::string::npos)
			<< r.out;
		EXPECT_NE(r.out.find("Old value = 4950\nNew value = 4851\n"), std::string::npos)
			<< r.out << r.err;
		EXPECT_NE(r.out.find("$1 = 4851\n$2 = 99\n"), std::string::npos) << r.out;
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	}
}

// The same with the spin detector's budget at 1 ms, as a busy machine makes it: the task a
// re-execution single-steps to count the interval before the write must never be probed
// (a probe resumed it without its step, the count lost as many instructions as the wall
// clock let it run, and going back stopped in ld.so's relocation, or "past a signal's
// delivery", in a program without signals).
TEST(Debug, TheSpinDetectorKeepsOffASingleSteppedInterval)
{
	TempDir dir("debug");
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult rec = RunCommand({ DETRUN_PATH, "record", "--spin-budget", "1", "-o",
				     dir / "w.dlog", "--",
				     std::string(GUEST_DIR) + "/dbg_mainwatch" },
				   opt);
	ASSERT_EQ(rec.code, 128 + SIGSEGV) << rec.Describe();
	RunResult r = Debug(dir, "w.dlog",
			    { "continue", "watch -l counter", "reverse-continue", "print counter",
			      "print i" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.err.find("past a signal's delivery"), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("Old value = 4950\nNew value = 4851\n"), std::string::npos)
		<< r.out << r.err;
	EXPECT_NE(r.out.find("$1 = 4851\n$2 = 99\n"), std::string::npos) << r.out;
}

// The values gdb printed ($N = ...), without their numbers: equal lists, equal states.
std::vector<std::string> Values(const std::string &out)
{
	std::vector<std::string> values;
	for (const std::string &l : Matching(out, "^\\$[0-9]+ = "))
		values.push_back(l.substr(l.find(" = ")));
	return values;
}

// gdb's `checkpoint` parks runs of the replay at this stop (debugger/checkpoints.c);
// `restart 1` lands on the same state every time: from the first parked run, the second,
// and, once both are used, from the start, with the breakpoint that named the position
// deleted (found by its registers then, and shown as a plain stop, as in rr). A position
// reached by a step is restarted to as well. A checkpoint that does not exist is refused
// without moving; `run` starts from the beginning again, and the session ends normally.
TEST(Debug, CheckpointAndRestartLandOnTheSameState)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "long.dlog", { std::string(GUEST_DIR) + "/dbg_long" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	const std::vector<std::string> look{ "print $pc", "print i", "print counter", "print $sp",
					     "monitor when" };
	std::vector<std::string> cmds{ "break ahead", "continue", "checkpoint" };
	cmds.insert(cmds.end(), look.begin(), look.end());
	cmds.insert(cmds.end(), { "break done", "continue", "print counter" });
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			cmds.push_back("delete");
		cmds.push_back("restart 1");
		cmds.insert(cmds.end(), look.begin(), look.end());
	}
	cmds.insert(cmds.end(),
		    { "stepi", "stepi", "checkpoint", "print $pc", "continue", "restart 7",
		      "print $pc", "info checkpoints", "delete checkpoint 1", "info checkpoints",
		      "restart 2", "print $pc", "break ahead", "break done", "run", "print i",
		      "continue", "continue", "continue" });
	RunResult r = Debug(dir, "long.dlog", cmds);
	std::string all = r.out + r.err;
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_NE(r.err.find("Checkpoint 1 at logical time "), std::string::npos) << all;
	EXPECT_NE(r.err.find("Checkpoint 2 at logical time "), std::string::npos) << all;
	std::vector<std::string> values = Values(r.out);
	ASSERT_EQ(values.size(), 4u + 1u + 4u * 3u + 4u) << all;
	std::vector<std::string> first(values.begin(), values.begin() + 4);
	EXPECT_EQ(first[1], " = 1600") << all;
	EXPECT_EQ(values[4], " = 6800") << all; // at done
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(std::vector<std::string>(values.begin() + 5 + 4 * i,
						   values.begin() + 9 + 4 * i),
			  first)
			<< "restart " << i + 1 << "\n"
			<< all;
	std::vector<std::string> when = Matching(r.err, "^logical time ");
	ASSERT_EQ(when.size(), 4u) << all;
	EXPECT_EQ(when[1], when[0]) << all;
	EXPECT_EQ(when[2], when[0]) << all;
	EXPECT_EQ(NumberAfter(when[3], "logical time "), NumberAfter(when[0], "logical time "))
		<< all;
	EXPECT_NE(r.out.find("Program stopped."), std::string::npos) << all;
	// Two steps on, checkpoint 2; restart 7 is refused and nothing moves; restart 2 after
	// the end comes back to the same instruction.
	EXPECT_NE(values[17], first[0]) << all;
	EXPECT_NE(r.err.find("Checkpoint 7 not found."), std::string::npos) << all;
	EXPECT_NE(values[18], values[17]) << all; // continue went to the end: the pc moved
	EXPECT_EQ(values[19], values[17]) << all;
	EXPECT_EQ(Matching(r.err, "^[12] logical time ").size(), 3u) << all;
	EXPECT_EQ(Matching(r.err, "^2 logical time ").size(), 2u) << all;
	// run: from the start, on to the breakpoint at ahead, then done, the last exit (gdb
	// sees the group end there), then the end.
	EXPECT_EQ(values[20], " = 1600") << all;
	EXPECT_NE(r.out.find("counter 6800\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("exited normally"), std::string::npos) << all;
	EXPECT_EQ(r.err.find("diverged"), std::string::npos) << all;
}

// A reverse-continue with a checkpoint behind it starts from the checkpoint's parked run,
// and stops where one from the start stops: onto a breakpoint after the checkpoint, onto a
// watched write (its Old value), one instruction back, and onto a breakpoint before the
// checkpoint (the run from the checkpoint finds no hit, and the scan starts earlier).
TEST(Debug, ReverseContinueFromACheckpointStopsWhereOneFromTheStartDoes)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "long.dlog", { std::string(GUEST_DIR) + "/dbg_long" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	const std::string shown = "^(\\$[0-9]+ = |logical time |Old value|New value|Breakpoint "
				  "[0-9]+, |Hardware watchpoint [0-9]+: )";
	std::vector<std::string> seen[2];
	for (int with = 0; with < 2; with++) {
		// Two checkpoints at ahead: four parked runs, for the two runs of the first
		// reverse-continue and the first two of the watchpoint's.
		std::string cp = with ? "checkpoint" : "echo";
		std::vector<std::string> cmds{ "break ahead",
					       "continue",
					       cp,
					       cp,
					       "break done",
					       "continue",
					       "break late",
					       "reverse-continue",
					       "print i",
					       "monitor when",
					       "delete",
					       "watch -l counter",
					       "reverse-continue",
					       "print counter",
					       "reverse-stepi",
					       "print $pc",
					       "monitor when",
					       "delete",
					       cp,
					       "break main",
					       "reverse-continue",
					       "monitor when",
					       "print $pc" };
		RunResult r = Debug(dir, "long.dlog", cmds);
		std::string all = r.out + r.err;
		EXPECT_FALSE(r.timed_out) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		EXPECT_EQ(r.err.find("diverged"), std::string::npos) << all;
		EXPECT_NE(r.out.find("Breakpoint 3, late (i=i@entry=1800)"), std::string::npos)
			<< all;
		EXPECT_NE(r.out.find("Old value = 7900\nNew value = 7893\n"), std::string::npos)
			<< all;
		for (const std::string &l : Matching(r.out, shown))
			seen[with].push_back(l);
		for (const std::string &l : Matching(r.err, "^logical time "))
			seen[with].push_back(l);
	}
	EXPECT_EQ(seen[1], seen[0]);
	EXPECT_GE(seen[0].size(), 10u);
}

// gdb shows a watchpoint's hit with the value it last saw as "Old value". After `monitor
// goto` (or any stop reached by running again) that value is the one of before the jump:
// the gdb `detrun debug` starts reads it anew at such a stop (issue 21, point 7).
TEST(Debug, WatchpointHitAfterMonitorGotoShowsTheOldValueThere)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "long.dlog", { std::string(GUEST_DIR) + "/dbg_long" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult r = Debug(dir, "long.dlog",
			    { "break late", "continue", "print counter", "watch -l counter",
			      "monitor goto 1000", "continue", "print counter", "continue",
			      "print counter" });
	std::string all = r.out + r.err;
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> values = Values(r.out);
	ASSERT_EQ(values.size(), 3u) << all;
	std::vector<std::string> old = Matching(r.out, "^Old value = ");
	std::vector<std::string> now = Matching(r.out, "^New value = ");
	ASSERT_EQ(old.size(), 1u) << all;
	ASSERT_EQ(now.size(), 1u) << all;
	// The value at logical time 1000, not the one at late (7900), then the next write's.
	EXPECT_NE(values[1], values[0]) << all;
	EXPECT_EQ(old[0].substr(old[0].find(" = ")), values[1]) << all;
	EXPECT_EQ(now[0].substr(now[0].find(" = ")), values[2]) << all;
}

// Going back with no checkpoint asked for starts from a run parked automatically as the
// replay went ahead (debugger/checkpoints.c), shown by `info checkpoints`: which parked run
// this run went on from. That choice depends on the session's commands only, never on how
// fast the parked runs got there, so it is the same line every time; a second
// reverse-continue is served the same way (the used run was replaced), and both stop where
// a run from the start stops.
TEST(Debug, ReverseContinueWithoutCheckpointsGoesOnFromAnAutomaticOne)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "long.dlog", { std::string(GUEST_DIR) + "/dbg_long" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	std::vector<std::string> origins[2];
	for (int session = 0; session < 2; session++) {
		RunResult r = Debug(dir, "long.dlog",
				    { "break done", "continue", "info checkpoints", "break late",
				      "reverse-continue", "print i", "monitor when",
				      "info checkpoints", "continue", "reverse-continue", "print i",
				      "monitor when", "info checkpoints", "delete 1", "continue" });
		std::string all = r.out + r.err;
		EXPECT_FALSE(r.timed_out) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.err.find("diverged"), std::string::npos) << all;
		EXPECT_EQ(Matching(r.out, "^Breakpoint 2, late \\(i=i@entry=1800\\)").size(), 2u)
			<< all;
		std::vector<std::string> values = Values(r.out);
		ASSERT_EQ(values.size(), 2u) << all;
		EXPECT_EQ(values[0], " = 1800") << all;
		EXPECT_EQ(values[1], " = 1800") << all;
		std::vector<std::string> when = Matching(r.err, "^logical time ");
		ASSERT_EQ(when.size(), 2u) << all;
		EXPECT_EQ(when[1], when[0]) << all;
		// The first run of the session is its own; both reverse-continues end in a run
		// that went on from an automatic parked run, after the start, before late.
		origins[session] = Matching(r.err, "^This run ");
		ASSERT_EQ(origins[session].size(), 3u) << all;
		EXPECT_EQ(origins[session][0], "This run started from the start of the recording.")
			<< all;
		for (int i = 1; i < 3; i++) {
			EXPECT_NE(origins[session][i].find("(kept automatically)"),
				  std::string::npos)
				<< all;
			long at = NumberAfter(origins[session][i], "logical time ");
			EXPECT_GT(at, 0) << all;
			EXPECT_LE(at, NumberAfter(when[0], "logical time ")) << all;
		}
		EXPECT_EQ(origins[session][2], origins[session][1]) << all;
		// The program's lines, once each: `ahead` from the first run (parked runs pass
		// it, and show nothing), the end from the last continue.
		EXPECT_EQ(Matching(r.out, "^ahead 1600$").size(), 1u) << all;
		EXPECT_EQ(Matching(r.out, "^counter 6800$").size(), 1u) << all;
	}
	EXPECT_EQ(origins[1], origins[0]);
}

// `restart 1` twice lands on the same state both times, each from a parked run of the
// checkpoint (the one used is replaced at once, in the background), and so does a third
// after the session went on past it.
TEST(Debug, RestartTwiceGoesOnFromAParkedRunBothTimes)
{
	TempDir dir("debug");
	RunResult rec = RecordInto(dir, "long.dlog", { std::string(GUEST_DIR) + "/dbg_long" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	const std::vector<std::string> look{ "print i", "print counter", "print $pc",
					     "monitor when", "info checkpoints" };
	std::vector<std::string> cmds{ "break ahead", "continue", "checkpoint" };
	cmds.insert(cmds.end(), look.begin(), look.end());
	for (const char *c : { "restart 1", "restart 1", "continue", "restart 1" }) {
		cmds.push_back(c);
		if (strcmp(c, "continue"))
			cmds.insert(cmds.end(), look.begin(), look.end());
	}
	RunResult r = Debug(dir, "long.dlog", cmds);
	std::string all = r.out + r.err;
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.err.find("diverged"), std::string::npos) << all;
	std::vector<std::string> values = Values(r.out);
	ASSERT_EQ(values.size(), 3u * 4u) << all;
	EXPECT_EQ(values[0], " = 1600") << all;
	for (int i = 1; i < 4; i++)
		EXPECT_EQ(std::vector<std::string>(values.begin() + 3 * i,
						   values.begin() + 3 * i + 3),
			  std::vector<std::string>(values.begin(), values.begin() + 3))
			<< "restart " << i << "\n"
			<< all;
	std::vector<std::string> when = Matching(r.err, "^logical time ");
	ASSERT_EQ(when.size(), 4u) << all;
	for (int i = 1; i < 4; i++)
		EXPECT_EQ(when[i], when[0]) << all;
	// `ahead` prints once: from the run that continued from the third stop (the parked
	// runs show nothing, nor the automatic ones past it).
	EXPECT_EQ(Matching(r.out, "^ahead 1600$").size(), 1u) << all;
	std::vector<std::string> origins = Matching(r.err, "^This run ");
	ASSERT_EQ(origins.size(), 4u) << all;
	for (int i = 1; i < 4; i++)
		EXPECT_NE(origins[i].find("(a checkpoint's)"), std::string::npos) << all;
}
