// ptrace inside the group (handlers/sys_ptrace.c): a member tracing a member is emulated on
// detrun's own stops. A tracer sees what it would natively (ptrace_child prints the same
// under detrun as natively), and AddressSanitizer's LeakSanitizer, which stops the world
// with ptrace at exit, works: a program that frees its memory exits 0 with its output, and
// one that leaks prints the same report on every run (natively its pid and addresses vary).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string G = std::string(GUEST_DIR) + "/";

// The line of LeakSanitizer's report that names the process: "==PID==ERROR: ...".
std::string PidLine(const std::string &err)
{
	for (const std::string &line : SplitLines(err))
		if (line.find("ERROR: LeakSanitizer") != std::string::npos)
			return line;
	return "";
}

// `runs` runs of `guest` under detrun (with `opts`): each exits `code`, prints `line` on
// stdout and (when `leaks` is not empty) a leak report with that summary on stderr, and
// all print the same on stdout and stderr. Returns the first.
RunResult SameEveryRun(const std::vector<std::string> &opts, const std::string &guest, int runs,
		       int code, const std::string &line, const std::string &leaks)
{
	RunResult first;
	for (int i = 0; i < runs; i++) {
		RunResult r = RunCommand(UnderDetrun(opts, { G + guest }));
		EXPECT_EQ(r.code, code) << "run " << i << "\n" << r.Describe();
		EXPECT_NE(r.out.find(line), std::string::npos) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		if (leaks.empty())
			EXPECT_EQ(r.err.find("LeakSanitizer"), std::string::npos) << r.Describe();
		else
			EXPECT_NE(r.err.find("SUMMARY: AddressSanitizer: " + leaks),
				  std::string::npos)
				<< r.Describe();
		if (i == 0) {
			first = r;
			continue;
		}
		EXPECT_EQ(r.out, first.out) << FirstDifference("run 0", first.out, "run", r.out);
		EXPECT_EQ(r.err, first.err) << FirstDifference("run 0", first.err, "run", r.err);
	}
	return first;
}

// `guest` natively exits 0 and prints `native_says`; under detrun it prints the same on
// 3 runs (ending as SameEveryRun checks, with `line`), nothing on stderr, and the same as
// natively.
void SameAsNative(const std::string &guest, const std::string &native_says, const std::string &line)
{
	RunResult native = RunCommand({ G + guest });
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find(native_says), std::string::npos) << native.Describe();
	RunResult r = SameEveryRun({}, guest, 3, 0, line, "");
	EXPECT_EQ(r.out, native.out) << FirstDifference("native", native.out, "detrun", r.out);
	EXPECT_EQ(r.err, "");
}

// Natively the report names the process by its pid, different at each run (and with ASLR
// its addresses differ too); under detrun it is pid 2, every time.
void NativeReportVaries(const std::string &guest, const RunResult &under_detrun)
{
	RunResult a = RunCommand({ G + guest }), b = RunCommand({ G + guest });
	ASSERT_EQ(a.code, 1) << a.Describe();
	ASSERT_NE(PidLine(a.err), "") << a.Describe();
	EXPECT_NE(PidLine(a.err), PidLine(b.err)) << "native runs name the same pid";
	EXPECT_NE(a.err, b.err);
	EXPECT_EQ(PidLine(under_detrun.err), "==2==ERROR: LeakSanitizer: detected memory leaks");
}

// The tracer's view: attach's SIGSTOP stop reported to waitpid, a child stopped in its read
// shows orig_rax = read and rax = -ERESTARTSYS, PEEK/POKE, GETSIGINFO, a second attach
// refused, SEIZE, INTERRUPT's event stop, CONT, DETACH. Identical to the native output.
TEST(Ptrace, TracerInsideTheGroupSeesWhatItWouldNatively)
{
	SameAsNative("ptrace_child", "child: read 1 byte, value 5678", "child exited 0");
}

// PTRACE_TRACEME: the child's signals stop it for its parent, which passes SIGUSR1 on (the
// handler runs) and drops SIGSTOP; its exec stops it with SIGTRAP. The siginfo of each
// names the child as the sender, as natively. Identical to the native output.
TEST(Ptrace, TracemeChildStopsAtItsSignalsAndItsExec)
{
	RunResult native = RunCommand({ G + "ptrace_traceme" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult r = SameEveryRun({}, "ptrace_traceme", 3, 0, "child exited 0", "");
	EXPECT_EQ(r.out, native.out) << FirstDifference("native", native.out, "detrun", r.out);
	EXPECT_EQ(r.err, "");
}

// Group stops of tracees: a seized child's SIGSTOP passed into a group stop
// (PTRACE_EVENT_STOP), PTRACE_LISTEN until a SIGCONT (PTRACE_EVENT_STOP with SIGTRAP, then
// SIGCONT's own stop), and a process that stopped itself: seized, it reports its stop, and
// PTRACE_CONT lets it run while its process stays stopped. Identical to the native output.
TEST(Ptrace, GroupStopsOfTraceesAndListenAreReportedAsNatively)
{
	SameAsNative("ptrace_group_stop", "group stop: stopped, signal 19, event 128", "done");
}

// A tracee's SIGCHLD stops it though its default action ignores it; PTRACE_TRACEME in a
// child of a second thread makes that thread the tracer (it sets the options, and sees the
// exit event); the SIGTRAP after a traced exec shows execve's result, 0. Identical to the
// native output.
TEST(Ptrace, SigchldTracemeFromAThreadAndExecResultAsNatively)
{
	SameAsNative("ptrace_stops_misc", "orig_rax 59 (execve 59), rax 0", "done");
}

// The user area's two words past the debug registers read 0 and the next is refused,
// PTRACE_ARCH_PRCTL reads the fs base and sets the gs base (the child sees it), and a
// resume with an invalid signal is refused with EIO. Identical to the native output.
TEST(Ptrace, UserAreaArchPrctlAndInvalidSignalAsNatively)
{
	SameAsNative("ptrace_user_area", "child: gs base 0x12340000", "child exited 0");
}

// PTRACE_O_TRACEVFORKDONE: a seized child's vfork event, the vfork child's event stop,
// then the vfork-done stop once that child exits (GETEVENTMSG names it), and the SIGCHLD
// of its exit. Identical to the native output.
TEST(Ptrace, VforkDoneStopsTheParentForItsTracer)
{
	SameAsNative("ptrace_vfork_done", "vfork done: stopped, signal 5, event 5",
		     "child: exited 10");
}

// A tracer emulating and changing its child's calls: PTRACE_SYSEMU skips the call (the
// child gets the tracer's rax; PTRACE_SYSCALL then shows its exit stop), a new orig_rax at
// an entry stop changes the call and -1 skips it, and PTRACE_SYSEMU_SINGLESTEP steps to
// the next call and skips it. Identical to the native output.
TEST(Ptrace, SysemuAndAChangedOrigRaxEmulateOrChangeTheCall)
{
	SameAsNative("ptrace_sysemu",
		     "child: emulated 4242; changed to getppid 1; skipped 777; 888; "
		     "stepped to 999",
		     "child exited 0");
}

// waitid(2) by a tracer: a tracee's stop comes as CLD_TRAPPED with its signal (without
// WSTOPPED), WNOWAIT leaves it to report again, the exit comes as CLD_EXITED. Identical to
// the native output.
TEST(Ptrace, WaitidReportsATraceesStopAsCldTrapped)
{
	SameAsNative("ptrace_waitid", "stop: waitid 0, signo 17, code 4, status 0x13, the child 1",
		     "exit: waitid 0");
}

// The SIGCHLD of a tracee's stop carries CLD_TRAPPED, the tracee and its stop signal in
// its siginfo, as the kernel's does (detrun sends it, and sets its siginfo at delivery).
// Identical to the native output.
TEST(Ptrace, SigchldOfATraceeStopIsCldTrapped)
{
	SameAsNative("ptrace_sigchld_info",
		     "SIGCHLD: code 4 (CLD_TRAPPED 4), from the child 1, status 12", "exited 0");
}

// PTRACE_SETSIGINFO at a signal-delivery stop: the signal goes in with the tracer's
// siginfo (SI_QUEUE and a value), which the child's handler sees. Identical to the native
// output.
TEST(Ptrace, SetsiginfoChangesTheSiginfoDelivered)
{
	SameAsNative("ptrace_setsiginfo", "value 1234", "child exited 0");
}

// PTRACE_INTERRUPT of a tracee already stopped is kept, as the kernel keeps it: the
// tracee stops again (PTRACE_EVENT_STOP) when resumed. Identical to the native output.
TEST(Ptrace, InterruptOfAStoppedTraceeStopsItAgainWhenResumed)
{
	SameAsNative("ptrace_interrupt_stopped", "resumed: stopped, signal 5, event 128",
		     "child: exited 3");
}

// gdb inside the group: fork, TRACEME, exec's SIGTRAP, breakpoints poked into the text,
// PTRACE_SINGLESTEP over them, SIGCHLD for each stop. The transcript is the same on every
// run, and the same as natively (gdb turns ASLR off itself).
TEST(Ptrace, GdbBatchInsideTheGroupPrintsTheSameTranscript)
{
	if (access("/usr/bin/gdb", X_OK) != 0)
		GTEST_SKIP() << "no /usr/bin/gdb";
	std::vector<std::string> gdb = { "/usr/bin/gdb",
					 "-batch",
					 "-nx",
					 "-ex",
					 "set startup-with-shell off",
					 "-ex",
					 "break square",
					 "-ex",
					 "run",
					 "-ex",
					 "bt",
					 "-ex",
					 "continue",
					 G + "gdb_target" };
	RunResult first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, gdb));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		if (i == 0) {
			first = r;
			continue;
		}
		EXPECT_EQ(r.out, first.out) << FirstDifference("run 0", first.out, "run", r.out);
		EXPECT_EQ(r.err, first.err) << FirstDifference("run 0", first.err, "run", r.err);
	}
	EXPECT_NE(first.out.find("Breakpoint 1, square (x=1)"), std::string::npos)
		<< first.Describe();
	EXPECT_NE(first.out.find("#1  0x"), std::string::npos) << first.Describe();
	EXPECT_NE(first.out.find("in sum_of_squares (n=3)"), std::string::npos) << first.Describe();
	EXPECT_NE(first.out.find("Breakpoint 1, square (x=2)"), std::string::npos)
		<< first.Describe();
	RunResult native = RunCommand(gdb);
	ASSERT_EQ(native.code, 0) << native.Describe();
	EXPECT_EQ(first.out, native.out)
		<< FirstDifference("native", native.out, "detrun", first.out);
}

// strace -f inside the group: PTRACE_SYSCALL's entry and exit stops (what the program
// calls and gets, not detrun's injected calls), GET_SYSCALL_INFO, the clone and exit event
// stops, the new threads traced too and their deaths reported. The trace is the same on
// every run; natively the pids in it differ at each run.
TEST(Ptrace, StraceOfTwoThreadsIsTheSameOnEveryRun)
{
	if (access("/usr/bin/strace", X_OK) != 0)
		GTEST_SKIP() << "no /usr/bin/strace";
	TempDir dir("strace");
	std::string first;
	for (int i = 0; i < 5; i++) {
		std::string out = dir / ("trace" + std::to_string(i));
		RunResult r = RunCommand(
			UnderDetrun({}, { "/usr/bin/strace", "-f", "-o", out, G + "two_threads" }));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.err, "") << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		std::string trace = ReadFile(out);
		if (i == 0) {
			first = trace;
			continue;
		}
		EXPECT_EQ(trace, first) << FirstDifference("run 0", first, "run", trace);
	}
	for (const char *line :
	     { "execve(\"", "clone3(", "write(1, \"thread a\\n\", 9", "write(1, \"thread b\\n\", 9",
	       "exit(0)", "+++ exited with 0 +++", "exit_group(0)                     = ?" })
		EXPECT_NE(first.find(line), std::string::npos) << line << "\n" << first;
	RunCommand({ "/usr/bin/strace", "-f", "-o", dir / "native0", G + "two_threads" });
	RunCommand({ "/usr/bin/strace", "-f", "-o", dir / "native1", G + "two_threads" });
	EXPECT_NE(ReadFile(dir / "native0"), ReadFile(dir / "native1"));
}

// strace -f of a shell pipeline: forks and a vfork followed (the children traced too),
// their execs, and the deaths of processes that are no children of strace's reported to
// its wait. The same trace on every run.
TEST(Ptrace, StraceOfAShellPipelineIsTheSameOnEveryRun)
{
	if (access("/usr/bin/strace", X_OK) != 0)
		GTEST_SKIP() << "no /usr/bin/strace";
	TempDir dir("strace-sh");
	std::string first;
	for (int i = 0; i < 3; i++) {
		std::string out = dir / ("trace" + std::to_string(i));
		RunResult r = RunCommand(UnderDetrun({}, { "/usr/bin/strace", "-f", "-o", out, "sh",
							   "-c", "echo hi | cat; /bin/true" }));
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, "hi\n") << r.Describe();
		EXPECT_EQ(r.err, "") << r.Describe();
		std::string trace = ReadFile(out);
		if (i == 0) {
			first = trace;
			continue;
		}
		EXPECT_EQ(trace, first) << FirstDifference("run 0", first, "run", trace);
	}
	size_t exits = 0;
	for (const std::string &line : SplitLines(first))
		exits += line.find("+++ exited with 0 +++") != std::string::npos;
	EXPECT_EQ(exits, 4u) << first;
	EXPECT_NE(first.find("execve(\"/usr/bin/cat\""), std::string::npos) << first;
}

// In parallel mode a tracer and a tracee of another memory domain become one domain at
// the attach (vkernel/memory_domain.h): ptrace_child's tracer sees what it would natively.
TEST(Ptrace, ParallelModeTracesATaskOfAnotherDomain)
{
	RunResult native = RunCommand({ G + "ptrace_child" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult r = SameEveryRun({ "--jobs", "2" }, "ptrace_child", 3, 0, "child exited 0", "");
	EXPECT_EQ(r.out, native.out) << FirstDifference("native", native.out, "jobs 2", r.out);
	EXPECT_EQ(r.err, "");
}

// A parent seizes a child it has just forked (which may not have run yet), follows its
// exec and its fork of a grandchild: under --jobs 2 the three join one domain at the seize
// and the fork, and the parent prints the same as natively and as serial mode does. Where
// the child stood at the seize is a timing natively; under detrun it is the same on every
// run, however loaded the machine (engine/tracer_parallel.c, ptrace_barrier).
TEST(Ptrace, ParallelModeFollowsASeizedChildThroughExecAndFork)
{
	RunResult native = RunCommand({ G + "ptrace_fork_exec" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_NE(native.out.find("parent: child exits with 3"), std::string::npos)
		<< native.Describe();
	RunResult serial = SameEveryRun({}, "ptrace_fork_exec", 2, 0, "child: exited 3", "");
	RunResult jobs2 = SameEveryRun({ "--jobs", "2" }, "ptrace_fork_exec", 3, 0,
				       "child: exited 3", "");
	EXPECT_EQ(serial.out, native.out)
		<< FirstDifference("native", native.out, "serial", serial.out);
	EXPECT_EQ(jobs2.out, serial.out)
		<< FirstDifference("serial", serial.out, "jobs 2", jobs2.out);
	EXPECT_EQ(jobs2.err, "");
	RunResult where;
	for (int i = 0; i < 4; i++) {
		RunResult r = RunCommand(
			UnderDetrun({ "--jobs", "2" }, { G + "ptrace_fork_exec", "where" }));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_NE(r.out.find("parent: child stands in call"), std::string::npos)
			<< r.Describe();
		if (i == 0)
			where = r;
		else
			EXPECT_EQ(r.out, where.out)
				<< FirstDifference("run 0", where.out, "run", r.out);
	}
}

TEST(Ptrace, AsanProgramThatFreesItsMemoryExitsWithItsOutput)
{
	RunResult native = RunCommand({ G + "asan_free" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult r = SameEveryRun({}, "asan_free", 3, 0, "asan_free:", "");
	EXPECT_EQ(r.out, native.out);
	EXPECT_EQ(r.err, "");
}

TEST(Ptrace, LeakReportIsTheSameOnEveryRun)
{
	RunResult r = SameEveryRun({}, "asan_leak", 5, 1, "asan_leak: list of 3",
				   "96 byte(s) leaked in 3 allocation(s)");
	NativeReportVaries("asan_leak", r);
}

// Four threads, three of them waiting in a futex, a pipe read and a sleep, each stopped by
// LeakSanitizer's tracer where detrun holds it.
TEST(Ptrace, ThreadedLeakReportIsTheSameOnEveryRun)
{
	RunResult r = SameEveryRun({}, "asan_threads_leak", 5, 1, "3 threads waiting",
				   "394 byte(s) leaked in 4 allocation(s)");
	NativeReportVaries("asan_threads_leak", r);
}

// The tracer shares its memory with the threads it stops: one memory domain, so parallel
// mode runs it as serial mode does.
TEST(Ptrace, ThreadedLeakReportWithJobsTwo)
{
	SameEveryRun({ "--jobs", "2" }, "asan_threads_leak", 3, 1, "3 threads waiting",
		     "394 byte(s) leaked in 4 allocation(s)");
}

// The tracer's stops are events like any other: a recording replays to the same report.
TEST(Ptrace, LeakReportReplays)
{
	char dir[] = "/tmp/detrun-ptrace-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string log = std::string(dir) + "/leak.dlog";
	RunResult rec = RunCommand(
		{ DETRUN_PATH, "record", "-o", log, "--", G + "asan_threads_leak" });
	RunResult rep = RunCommand({ DETRUN_PATH, "replay", log });
	RunCommand({ "rm", "-rf", dir });
	ASSERT_EQ(rec.code, 1) << rec.Describe();
	EXPECT_NE(rec.err.find("394 byte(s) leaked"), std::string::npos) << rec.Describe();
	EXPECT_EQ(rep.code, 1) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out);
	EXPECT_EQ(rep.err, rec.err) << FirstDifference("record", rec.err, "replay", rep.err);
}

} // namespace
