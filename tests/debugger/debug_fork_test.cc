// Debugging a group of processes: gdb's multiprocess extensions on detrun's gdb
// server. A fork of a followed process is a `fork` stop (gdb keeps the child with
// detach-on-fork off, detaches it otherwise), an exec is an `exec` stop (gdb loads the new
// program's symbols and sets its breakpoints anew), and gdb's Ctrl-C stops a task that
// computes without syscalls. Every test drives Debian's real gdb in batch mode.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "harness.h"
#include "debugger/gdb_session.h"

namespace
{

const std::string kDetrun = DETRUN_PATH;

std::string Guest(const std::string &name)
{
	return std::string(GUEST_DIR) + "/" + name;
}

// Records guest `name` into dir/NAME.dlog; its output.
std::string Record(const TempDir &dir, const std::string &name)
{
	RunResult r = RecordInto(dir, name + ".dlog", { Guest(name) });
	EXPECT_EQ(r.code, 0) << r.Describe();
	return r.out;
}

// The replay under gdb reaches the end a plain replay reaches: the program's output line
// for line, no divergence, the first process exits normally.
void ExpectSameEnd(const TempDir &dir, const std::string &name, const RunResult &r)
{
	RunOptions opt;
	opt.cwd = dir.path;
	RunResult plain = RunCommand({ kDetrun, "replay", name + ".dlog" }, opt);
	ASSERT_EQ(plain.code, 0) << plain.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	EXPECT_FALSE(
		Matching(all, "^\\[Inferior 1 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< all;
	for (const std::string &line : SplitLines(plain.out))
		EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line << "\n" << r.out;
}

// set detach-on-fork off: gdb keeps the child as inferior 2 and stops where the child, not
// the parent, calls the function; back in inferior 1 the parent's breakpoint follows.
TEST(DebugFork, FollowsAForkedChildToItsBreakpoint)
{
	TempDir dir("debugfork");
	EXPECT_NE(Record(dir, "dbg_forkbp").find("DBG-FORKBP-OK"), std::string::npos);
	RunResult r = Debug(dir, "dbg_forkbp.dlog",
			    { "set detach-on-fork off", "break child_work", "break parent_work",
			      "continue", "info inferiors", "bt 1", "print x", "info proc mappings",
			      "continue", "inferior 1", "continue", "print x", "continue",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(Matching(all, "^\\[New inferior 2 \\(process [0-9]+\\)\\]$").empty()) << all;
	EXPECT_FALSE(Matching(r.out, "^Thread 2\\.1 .* hit Breakpoint 1\\.2, child_work "
				     "\\(x=x@entry=7\\) at .*dbg_forkbp.c:[0-9]+$")
			     .empty())
		<< r.out;
	EXPECT_FALSE(Matching(r.out, "^\\* 2 +process [0-9]+ ").empty()) << r.out;
	EXPECT_FALSE(Matching(r.out, "^#0  child_work \\(x=x@entry=7\\) at ").empty()) << r.out;
	EXPECT_NE(r.out.find("$1 = 7\n"), std::string::npos) << r.out;
	// gdb reads the process's /proc files through detrun (vFile), with the group's pids.
	EXPECT_FALSE(Matching(r.out, " r-xp .*/dbg_forkbp$").empty()) << r.out;
	EXPECT_EQ(all.find("unable to open /proc file"), std::string::npos) << all;
	EXPECT_FALSE(
		Matching(all, "^\\[Inferior 2 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< all;
	EXPECT_FALSE(Matching(r.out, "hit Breakpoint 2\\.1, parent_work \\(x=x@entry=1\\)").empty())
		<< r.out;
	EXPECT_NE(r.out.find("$2 = 1\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("DBG-FORKBP-OK\n"), std::string::npos) << r.out;
	ExpectSameEnd(dir, "dbg_forkbp", r);
}

// detach-on-fork on (gdb's default): gdb takes its breakpoints out of the child and
// detaches it; the child runs on, in the group, and only the parent stops.
TEST(DebugFork, DetachedChildRunsOnAndTheParentStops)
{
	TempDir dir("debugfork");
	Record(dir, "dbg_forkbp");
	RunResult r = Debug(dir, "dbg_forkbp.dlog",
			    { "break child_work", "break parent_work", "continue", "bt 1",
			      "info inferiors", "continue", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(Matching(all, "^\\[Detaching after fork from child process [0-9]+\\]$").empty())
		<< all;
	EXPECT_EQ(all.find("child_work (x="), std::string::npos) << all;
	EXPECT_FALSE(Matching(r.out, "^Breakpoint 2, parent_work \\(x=x@entry=1\\)").empty())
		<< r.out;
	EXPECT_EQ(Matching(r.out, "^  2 +").size(), 0u) << "one inferior\n" << r.out;
	ExpectSameEnd(dir, "dbg_forkbp", r);
}

// set follow-fork-mode child: gdb detaches the parent (D;pid) and stays with the child,
// which keeps the breakpoints it inherited; the parent runs on, unwatched.
TEST(DebugFork, FollowForkModeChildStaysWithTheChild)
{
	TempDir dir("debugfork");
	Record(dir, "dbg_forkbp");
	RunResult r = Debug(dir, "dbg_forkbp.dlog",
			    { "set follow-fork-mode child", "break child_work", "break parent_work",
			      "continue", "print x", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(
		Matching(all, "^\\[Detaching after fork from parent process [0-9]+\\]$").empty())
		<< all;
	EXPECT_FALSE(Matching(r.out, "hit Breakpoint 1, child_work \\(x=x@entry=7\\)").empty())
		<< r.out;
	EXPECT_NE(r.out.find("$1 = 7\n"), std::string::npos) << r.out;
	EXPECT_EQ(all.find("parent_work (x="), std::string::npos) << all;
	EXPECT_NE(r.out.find("DBG-FORKBP-OK\n"), std::string::npos) << r.out;
	EXPECT_FALSE(
		Matching(all, "^\\[Inferior 2 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< all;
}

// follow-fork-mode child, at the child's crash: reverse-stepi stays in the child (gdb's
// inferior 2) and shows the instruction before the crash; stepi goes back onto the crash.
// Before, the stop was shown in the detached parent ("Switching to Thread 2.2"). Further
// back, past the child's sched_yield, the interval before is the parent's: reverse-stepi
// goes on in the child's own interval before it.
TEST(DebugFork, ReverseStepiAtAFollowedChildsCrashStaysInTheChild)
{
	TempDir dir("debugfork");
	EXPECT_NE(Record(dir, "dbg_forkcrash").find("DBG-FORKCRASH-OK"), std::string::npos);
	std::vector<std::string> commands{ "set follow-fork-mode child",
					   "continue",
					   "set $crash = $pc",
					   "reverse-stepi",
					   "print $_inferior",
					   "print $pc != $crash",
					   "stepi",
					   "print $pc == $crash" };
	for (int i = 0; i < 16; i++) {
		commands.push_back("reverse-stepi");
		commands.push_back("printf \"inferior %d\\n\", $_inferior");
	}
	commands.push_back("info threads");
	RunResult r = Debug(dir, "dbg_forkcrash.dlog", commands);
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(Matching(r.out, "received signal SIGSEGV").empty()) << all;
	EXPECT_NE(r.out.find("$1 = 2\n$2 = 1\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("$3 = 1\n"), std::string::npos) << all;
	EXPECT_EQ(Matching(r.out, "^inferior 2$").size(), 16u) << all;
	EXPECT_FALSE(Matching(r.out, "syscall-template|sched_yield").empty()) << all;
	EXPECT_EQ(all.find("Switching to Thread 2.2"), std::string::npos) << all;
	EXPECT_EQ(all.find("No more reverse-execution history"), std::string::npos) << all;
	EXPECT_EQ(Matching(r.out, "^\\* 2\\.1 +Thread 3\\.3 ").size(), 1u) << r.out;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
}

// Both processes followed (detach-on-fork off): the child's death by its SIGSEGV is told to
// gdb, which drops the inferior as it does natively ("Program terminated with signal"),
// and the parent then runs to the end.
TEST(DebugFork, AFollowedChildKilledByASignalIsReportedGone)
{
	TempDir dir("debugfork");
	EXPECT_NE(Record(dir, "dbg_forkcrash").find("DBG-FORKCRASH-OK"), std::string::npos);
	RunResult r = Debug(dir, "dbg_forkcrash.dlog",
			    { "set detach-on-fork off", "continue", "continue", "info inferiors",
			      "inferior 1", "continue", "info inferiors" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(Matching(r.out, "received signal SIGSEGV").empty()) << all;
	EXPECT_FALSE(Matching(r.out, "^Program terminated with signal SIGSEGV").empty()) << all;
	EXPECT_FALSE(Matching(r.out, "^\\* 2 +<null> ").empty()) << all;
	EXPECT_NE(r.out.find("DBG-FORKCRASH-OK\n"), std::string::npos) << all;
	EXPECT_EQ(Matching(r.out, "^  2 +process ").size(), 0u) << all;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
}

// Breakpoints and watchpoints going back count the hits of the followed child: from the
// crash, reverse-continue stops at the child's last two calls of step, a watchpoint at the
// write before, and with no point left the history starts at the child's fork, still in
// the child; continue then goes to the crash again.
TEST(DebugFork, ReverseContinueInAFollowedChildCountsItsHits)
{
	TempDir dir("debugfork");
	Record(dir, "dbg_forkcrash");
	RunResult r = Debug(dir, "dbg_forkcrash.dlog",
			    { "set follow-fork-mode child", "continue", "break step",
			      "reverse-continue", "print i", "reverse-continue", "print i",
			      "delete", "watch -l counter", "reverse-continue", "delete",
			      "reverse-continue", "print $_inferior", "continue",
			      "print counter" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_NE(r.out.find("$1 = 5\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("$2 = 4\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("Old value = 30\nNew value = 20\n"), std::string::npos) << all;
	EXPECT_EQ(Matching(r.out, "^No more reverse-execution history").size(), 1u) << all;
	EXPECT_NE(r.out.find("$3 = 2\n"), std::string::npos) << all;
	EXPECT_EQ(Matching(r.out, "received signal SIGSEGV").size(), 2u) << all;
	EXPECT_NE(r.out.find("$4 = 50\n"), std::string::npos) << all;
	EXPECT_EQ(all.find("Switching to Thread 2.2"), std::string::npos) << all;
	EXPECT_EQ(all.find("Cannot insert breakpoint"), std::string::npos) << all;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
}

// A breakpoint set while stopped: the stop was named by the hits since its event, counted
// without it, so going back finds the stop again by its registers. In the child, stopped
// in sched_yield after step(1) (no event between), `break step` and reverse-continue stop
// at step(1) (before: no hit found, the start of the history).
TEST(DebugFork, BreakpointSetAtAStopIsFoundGoingBack)
{
	TempDir dir("debugfork");
	Record(dir, "dbg_forkcrash");
	RunResult r = Debug(dir, "dbg_forkcrash.dlog",
			    { "set follow-fork-mode child", "break sched_yield", "continue",
			      "break step", "reverse-continue", "print i", "print $_inferior",
			      "continue", "continue", "print i" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_EQ(all.find("No more reverse-execution history"), std::string::npos) << all;
	EXPECT_NE(r.out.find("$1 = 1\n$2 = 2\n"), std::string::npos) << all;
	EXPECT_NE(r.out.find("$3 = 2\n"), std::string::npos) << all;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
}

// A shell pipeline: gdb follows the child that executes seq (catch exec), stops at its
// write, and goes back: seq's history starts at its exec ("No more reverse-execution
// history" there, in seq, not in the detached shell: "Cannot insert breakpoint" before),
// and the run forward meets the write again and ends as recorded (the shell takes seq's
// SIGCHLD as in the recording).
TEST(DebugFork, ReverseContinueInAPipelinesExecutedChildStaysInIt)
{
	TempDir dir("debugfork");
	RunResult rec = RecordInto(dir, "pipe.dlog", { "/bin/sh", "-c", "seq 3 | cat" });
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult r = Debug(dir, "pipe.dlog",
			    { "set follow-fork-mode child", "catch exec", "continue", "break write",
			      "continue", "reverse-continue", "print $_inferior", "continue",
			      "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::string all = r.out + r.err;
	EXPECT_FALSE(Matching(r.out, "hit Catchpoint 1 \\(exec'd .*/seq\\)").empty()) << all;
	EXPECT_EQ(Matching(r.out, "hit Breakpoint 2(\\.[0-9]+)?, .*write").size(), 2u) << all;
	EXPECT_EQ(Matching(r.out, "^No more reverse-execution history").size(), 1u) << all;
	EXPECT_NE(r.out.find("$1 = 2\n"), std::string::npos) << all;
	EXPECT_EQ(all.find("Cannot insert breakpoint"), std::string::npos) << all;
	EXPECT_EQ(all.find("diverged"), std::string::npos) << all;
	EXPECT_FALSE(
		Matching(all, "^\\[Inferior 2 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< all;
}

// posix_spawn's vfork child runs in its parent's memory, int3s included, until its exec:
// gdb does not follow it, so its execve breakpoint is stepped over, and the parent stops.
TEST(DebugFork, VforkChildStepsOverTheBreakpointsItShares)
{
	TempDir dir("debugfork");
	EXPECT_NE(Record(dir, "dbg_vfork").find("DBG-VFORK-OK"), std::string::npos);
	RunResult r = Debug(dir, "dbg_vfork.dlog",
			    { "set breakpoint pending on", "break marker", "break execve",
			      "continue", "bt 1", "continue", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> stops = Matching(r.out, "^(Thread .* hit )?Breakpoint [0-9]+, ");
	ASSERT_EQ(stops.size(), 1u) << r.out;
	EXPECT_EQ(stops[0].find("Breakpoint 1, marker (x=x@entry=1)"), 0u) << r.out;
	EXPECT_NE(r.out.find("DBG-VFORK-OK\n"), std::string::npos) << r.out;
	ExpectSameEnd(dir, "dbg_vfork", r);
}

// An exec: gdb says the process executes a new program, loads its symbols and stops at a
// breakpoint only the new image reaches; the old image's breakpoint is set again in the
// new one by gdb, not left there by detrun.
TEST(DebugExec, NewProgramGetsItsSymbolsAndBreakpoints)
{
	TempDir dir("debugexec");
	EXPECT_NE(Record(dir, "dbg_exec").find("DBG-EXEC-OK"), std::string::npos);
	RunResult r = Debug(dir, "dbg_exec.dlog",
			    { "break before_exec", "break after_exec", "continue", "continue",
			      "bt 2", "continue", "info breakpoints", "continue", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> stops = Matching(
		r.out, "^(Breakpoint [0-9]+, [a-z_]+ \\(x=x@entry=[0-9]+\\)|process [0-9]+ "
		       "is executing new program: .*/dbg_exec$)");
	ASSERT_EQ(stops.size(), 4u) << r.out;
	EXPECT_EQ(stops[0].find("Breakpoint 1, before_exec (x=x@entry=1)"), 0u) << r.out;
	EXPECT_NE(stops[1].find(" is executing new program: "), std::string::npos) << r.out;
	EXPECT_EQ(stops[2].find("Breakpoint 2, after_exec (x=x@entry=21)"), 0u) << r.out;
	EXPECT_EQ(stops[3].find("Breakpoint 1, before_exec (x=x@entry=1)"), 0u) << r.out;
	EXPECT_FALSE(Matching(r.out, "^#1  0x[0-9a-f]+ in main \\(argc=").empty()) << r.out;
	EXPECT_NE(r.out.find("DBG-EXEC-OK\n"), std::string::npos) << r.out;
	ExpectSameEnd(dir, "dbg_exec", r);
}

// Going back from the executed program stops where gdb has known it: at after_exec, in
// the new image, then at the exec itself ("No more reverse-execution history", at the
// loader's first instruction), never in the old image's before_exec; forward again, both
// are hit and the run ends as recorded.
TEST(DebugExec, GoingBackStopsAtTheExecOfTheProgramGdbKnows)
{
	TempDir dir("debugexec");
	Record(dir, "dbg_exec");
	RunResult r = Debug(dir, "dbg_exec.dlog",
			    { "break before_exec", "break after_exec", "continue", "continue",
			      "continue", "reverse-continue", "reverse-continue", "bt 1",
			      "continue", "continue", "continue", "continue" });
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> stops =
		Matching(r.out, "^(Breakpoint [0-9]+, [a-z_]+ \\(x=|No more reverse-execution)");
	ASSERT_EQ(stops.size(), 7u) << r.out;
	EXPECT_EQ(stops[0].find("Breakpoint 1, before_exec"), 0u) << r.out;
	EXPECT_EQ(stops[1].find("Breakpoint 2, after_exec"), 0u) << r.out;
	EXPECT_EQ(stops[2].find("Breakpoint 1, before_exec"), 0u) << r.out;
	EXPECT_EQ(stops[3].find("Breakpoint 2, after_exec"), 0u) << r.out;
	EXPECT_EQ(stops[4].find("No more reverse-execution history"), 0u) << r.out;
	EXPECT_EQ(stops[5].find("Breakpoint 2, after_exec"), 0u) << r.out;
	EXPECT_EQ(stops[6].find("Breakpoint 1, before_exec"), 0u) << r.out;
	EXPECT_FALSE(Matching(r.out, "^#0 .* in _start \\(\\) from .*ld-linux").empty()) << r.out;
	ExpectSameEnd(dir, "dbg_exec", r);
}

struct Session {
	RunResult gdb, server;
};

// `detrun --gdb -- GUEST` with gdb -batch running `commands`; once the program has printed
// `ready` (after gdb's first continue resumed it: gdb waits for a stop), gdb gets the
// SIGINT that Ctrl-C in its terminal sends.
Session Interrupted(const std::string &guest, const std::string &ready,
		    const std::vector<std::string> &commands)
{
	RunOptions opt;
	opt.timeout_s = 90;
	Child server({ kDetrun, "--gdb", "--", Guest(guest) }, opt);
	Session s;
	std::string at = GdbAddress(server);
	if (at.empty())
		return { RunResult(), server.Finish() };
	std::vector<std::string> argv{ "gdb",           "-q",  "-ex",
				       "set sysroot /", "-ex", "target extended-remote " + at };
	for (const std::string &a : Batch(commands))
		argv.push_back(a);
	argv.push_back(Guest(guest));
	Child gdb(argv, opt);
	if (server.WaitForOutput(ready, 60))
		gdb.Signal(SIGINT);
	s.gdb = gdb.Finish();
	s.server = server.Finish();
	return s;
}

// gdb's Ctrl-C while the only task computes without a syscall: it stops there at once
// (SIGINT, in the loop), gdb lets it go by writing its flag, and it ends as it would.
TEST(DebugInterrupt, CtrlCStopsATaskThatMakesNoSyscalls)
{
	Session s = Interrupted("dbg_spin", "spinning\n",
				{ "continue", "bt 1", "print rounds > 0", "print stop = 1",
				  "continue", "continue" });
	const RunResult &g = s.gdb;
	EXPECT_FALSE(g.timed_out) << g.Describe();
	EXPECT_TRUE(s.server.leftovers.empty()) << s.server.Describe();
	EXPECT_NE(g.out.find("Program received signal SIGINT, Interrupt."), std::string::npos)
		<< g.out << g.Describe();
	// gdb writes "0x... in main () at" when the stop is inside a line, "main () at" when it
	// is on a line's first instruction: where Ctrl-C lands depends on the machine and load.
	EXPECT_FALSE(Matching(g.out, "(^|^#0 +| in )main \\(\\) at .*dbg_spin.c:1[34]$").empty())
		<< g.out;
	EXPECT_NE(g.out.find("$1 = 1\n$2 = 1\n"), std::string::npos) << g.out;
	EXPECT_NE(s.server.out.find("DBG-SPIN-OK\n"), std::string::npos) << s.server.Describe();
	EXPECT_NE(s.server.err.find("interrupted between events"), std::string::npos)
		<< s.server.err;
	EXPECT_FALSE(
		Matching(g.out, "^\\[Inferior 1 \\(process [0-9]+\\) exited normally\\]$").empty())
		<< g.out;
}

// gdb's Ctrl-C while no task runs (the only one waits for a connection from outside):
// the group stops at its last event, and gdb can look and kill it.
TEST(DebugInterrupt, CtrlCStopsAGroupThatWaitsForOutsideInput)
{
	Session s = Interrupted("dbg_idle", "waiting\n", { "continue", "bt", "kill" });
	const RunResult &g = s.gdb;
	EXPECT_FALSE(g.timed_out) << g.Describe();
	EXPECT_TRUE(s.server.leftovers.empty()) << s.server.Describe();
	EXPECT_NE(g.out.find("Program received signal SIGINT, Interrupt."), std::string::npos)
		<< g.out << g.Describe();
	EXPECT_FALSE(Matching(g.out, "^#[0-9]+ .*main \\(\\) at .*dbg_idle.c:[0-9]+$").empty())
		<< g.out;
	EXPECT_NE(s.server.err.find("gdb killed the program"), std::string::npos)
		<< s.server.Describe();
}

// gdb's Ctrl-C while the group is idle with nothing outside to wait for (its only task reads
// a pipe nobody writes, and detrun has said so): gdb sees the task stopped there, reads its
// registers and continues it; a signal from outside then ends the read, gdb stops at it as
// at any signal, and the program goes on to its normal end (gdb stops once more just before
// it, as at every group's end). The Ctrl-C only wakes the scheduler's pick; the stop loop
// holds the conversation after it, and the pick that follows finds the group as gdb left it.
TEST(DebugInterrupt, CtrlCOnAnIdleGroupThenContinueRunsToTheEnd)
{
	RunOptions opt;
	opt.timeout_s = 90;
	Child server({ kDetrun, "--gdb", "--", Guest("dbg_idle_pipe") }, opt);
	std::string at = GdbAddress(server);
	ASSERT_FALSE(at.empty()) << server.Finish().Describe();
	std::vector<std::string> argv{ "gdb",           "-q",  "-ex",
				       "set sysroot /", "-ex", "target extended-remote " + at };
	for (const std::string &a :
	     Batch({ "continue", "info registers rip", "continue", "continue", "continue" }))
		argv.push_back(a);
	argv.push_back(Guest("dbg_idle_pipe"));
	Child gdb(argv, opt);
	if (server.WaitForOutput("nothing outside the group can wake one", 60, true))
		gdb.Signal(SIGINT);
	if (gdb.WaitForOutput("rip ", 60))
		server.Signal(SIGUSR1);
	RunResult g = gdb.Finish(), r = server.Finish();
	EXPECT_FALSE(g.timed_out) << g.Describe();
	EXPECT_FALSE(r.timed_out) << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
	std::vector<std::string> stops = Matching(
		g.out, "^(Program received signal SIG[A-Z0-9]+|rip +0x[0-9a-f]+ |\\[Inferior "
		       "1 \\(process [0-9]+\\) exited normally\\])");
	ASSERT_EQ(stops.size(), 5u) << g.out << g.Describe();
	EXPECT_EQ(stops[0].find("Program received signal SIGINT"), 0u) << g.out;
	EXPECT_EQ(stops[1].find("rip "), 0u) << g.out;
	EXPECT_EQ(stops[2].find("Program received signal SIGUSR1"), 0u) << g.out;
	EXPECT_EQ(stops[3].find("Program received signal SIGKILL"), 0u) << g.out;
	EXPECT_EQ(stops[4].find("[Inferior 1 (process "), 0u) << g.out;
	EXPECT_NE(r.out.find("DBG-IDLE-PIPE-WOKEN\n"), std::string::npos) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
}

} // namespace
