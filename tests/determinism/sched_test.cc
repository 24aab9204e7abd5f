// Scheduling: time that moves for computations
// waiting on timers, seccomp strict mode, tasks never lost while they are created, CLONE_VM
// processes outliving their creator, concurrent groups spread over the CPUs, and deadlock
// reports that name each task's own wait. Guests: tests/guests/sched_*.c.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

extern "C" {
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
}

namespace
{

std::string Guest(const std::string &name)
{
	return std::string(GUEST_DIR) + "/" + name;
}

RunOptions WithTimeout(int seconds)
{
	RunOptions o;
	o.timeout_s = seconds;
	return o;
}

bool Contains(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

// Runs GUEST natively, up to 10 times, until two runs differ in the stream STREAM of their
// result (out or err); each run must exit 0. The outputs seen go to SEEN.
void NativeOutputs(const std::string &guest, int timeout_s, std::string RunResult::*stream,
		   std::set<std::string> *seen)
{
	for (int i = 0; i < 10 && seen->size() < 2; i++) {
		RunResult r = RunCommand({ Guest(guest) }, WithTimeout(timeout_s));
		ASSERT_EQ(r.code, 0) << r.Describe();
		seen->insert(r.*stream);
	}
}

// ---- point 7: time moves for a computation that waits for a timer ----------------------

// Natively the number of getppid calls made before each timer signal depends on the
// machine; under detrun every call is an event while a timer is armed, so the signals
// come (before the fix they never did: the guest gave up after its bound) and at the same
// point on every run.
TEST(TimerLoop, SignalsComeAtTheSamePointOnEveryRun)
{
	std::set<std::string> native;
	ASSERT_NO_FATAL_FAILURE(NativeOutputs("sched_timer_loop", 60, &RunResult::out, &native));
	EXPECT_EQ(native.size(), 2u) << "the guest did not vary natively";

	std::string first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_timer_loop") }),
					 WithTimeout(60));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_TRUE(Contains(r.out, "sched_timer_loop: ok")) << r.Describe();
		if (i == 0)
			first = r.out;
		EXPECT_EQ(r.out, first)
			<< FirstDifference("run 1", first, "run " + std::to_string(i + 1), r.out);
	}
}

// The events every call becomes while a timer is armed are on the recorded timeline too:
// a replay passes through the same ones.
TEST(TimerLoop, RecordingReplaysTheSame)
{
	char dir[] = "/tmp/detrun-sched-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string log = std::string(dir) + "/timer.dlog";
	RunResult rec = RunCommand({ DETRUN_PATH, "record", "-o", log, "--",
				     Guest("sched_timer_loop") },
				   WithTimeout(60));
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	RunResult rep = RunCommand({ DETRUN_PATH, "replay", log }, WithTimeout(60));
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();
	unlink(log.c_str());
	rmdir(dir);
}

// ---- lock convoys: a write under a lock keeps the writer's turn --------------------------

// Futex calls in a --trace file: each is an event, so their number is the same on every
// run; the guest makes none unless a thread waits for stdio's lock.
size_t FutexCalls(const std::string &trace_path)
{
	std::ifstream in(trace_path);
	std::string line;
	size_t n = 0;
	while (std::getline(in, line))
		n += Contains(line, "] futex(");
	return n;
}

// Four threads write 2000 single bytes each to stderr under stdio's lock (a pipe here,
// which parks each write until it has room). With a turn ending at every write the lock
// went round the threads byte by byte: two futex calls or more a byte, as -q 1 still
// shows. Now a write whose wait is over at once keeps the turn, and a thread is switched
// away from inside the lock only when its quantum ends: a few futex calls per quantum.
// Counted in events, not timed; the interleaving is the same on every run and in a replay.
TEST(LockConvoy, WritesUnderALockKeepTheTurn)
{
	const int kBytes = 4 * 2000;
	std::set<std::string> native;
	ASSERT_NO_FATAL_FAILURE(NativeOutputs("sched_lock_convoy", 30, &RunResult::err, &native));
	EXPECT_GE(native.size(), 2u) << "the letters never interleaved differently natively";

	char dir[] = "/tmp/detrun-convoy-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string trace = std::string(dir) + "/trace", log = std::string(dir) + "/convoy.dlog";
	RunResult first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({ "--trace-file", trace },
						     { Guest("sched_lock_convoy") }),
					 WithTimeout(120));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_EQ(r.err.size(), (size_t)kBytes) << r.Describe();
		size_t futexes = FutexCalls(trace);
		EXPECT_LT(futexes, (size_t)kBytes / 10) << "a convoy: the lock went round";
		if (i == 0)
			first = r;
		EXPECT_EQ(r.err, first.err) << r.Describe();
	}
	RunResult convoy = RunCommand(UnderDetrun({ "--quantum", "1", "--trace-file", trace },
						  { Guest("sched_lock_convoy") }),
				      WithTimeout(300));
	ASSERT_EQ(convoy.code, 0) << convoy.Describe();
	EXPECT_GE(FutexCalls(trace), (size_t)kBytes) << "-q 1 switches at every write";

	RunResult rec = RunCommand({ DETRUN_PATH, "record", "-o", log, "--",
				     Guest("sched_lock_convoy") },
				   WithTimeout(120));
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_EQ(rec.err, first.err) << rec.Describe();
	RunResult rep = RunCommand({ DETRUN_PATH, "replay", log }, WithTimeout(120));
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.err, first.err) << rep.Describe();
	unlink(trace.c_str());
	unlink(log.c_str());
	rmdir(dir);
}

// Lines of a --trace that match `re`.
int CountLines(const std::string &text, const std::string &re)
{
	std::regex line(re);
	return (int)std::distance(std::sregex_iterator(text.begin(), text.end(), line),
				  std::sregex_iterator());
}

// Only a timer due soon makes every call an event: with one 60 s ahead the guest's 100
// getppid calls run without stopping (before the fix each was an event, and a server that
// kept a long timeout armed, as PostgreSQL does, stopped at every call), while with one
// 2 ms ahead every getuid call is, and the signal comes at the same call on every run,
// recorded and replayed too.
TEST(TimerLoop, OnlyATimerDueSoonMakesEveryCallAnEvent)
{
	std::string first;
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({ "--trace" }, { Guest("sched_far_timer") }),
					 WithTimeout(60));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_TRUE(Contains(r.out, "sched_far_timer: ok")) << r.Describe();
		EXPECT_EQ(CountLines(r.err, "getppid = [0-9]+ \\(every call is an event\\)"), 0)
			<< r.err;
		EXPECT_GT(CountLines(r.err, "getuid = [0-9]+ \\(every call is an event\\)"), 100)
			<< r.err;
		if (i == 0)
			first = r.out;
		EXPECT_EQ(r.out, first)
			<< FirstDifference("run 1", first, "run " + std::to_string(i + 1), r.out);
	}
	char dir[] = "/tmp/detrun-sched-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string log = std::string(dir) + "/far.dlog";
	RunResult rec = RunCommand({ DETRUN_PATH, "record", "-o", log, "--",
				     Guest("sched_far_timer") },
				   WithTimeout(60));
	ASSERT_EQ(rec.code, 0) << rec.Describe();
	EXPECT_EQ(rec.out, first) << rec.Describe();
	RunResult rep = RunCommand({ DETRUN_PATH, "replay", log }, WithTimeout(60));
	EXPECT_EQ(rep.code, 0) << rep.Describe();
	EXPECT_EQ(rep.out, rec.out) << rep.Describe();
	unlink(log.c_str());
	rmdir(dir);
}

// A loop without syscalls cannot be interrupted at a deterministic point without
// instruction counters: detrun names the task and shows its stack in one hazard, then
// lets the timer fire (the program ends as it does natively). Before the fix the loop ran
// to its bound silently.
TEST(SpinAlarm, SyscallFreeLoopWithArmedTimerIsReportedAsAHazard)
{
	RunResult native = RunCommand({ Guest("sched_spin_alarm") }, WithTimeout(60));
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_TRUE(Contains(native.out, "the signal ended the loop")) << native.Describe();

	RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_spin_alarm") }), WithTimeout(60));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
	std::regex hazard("detrun: hazard: task 1 [^\n]*timer[^\n]*\n");
	EXPECT_TRUE(std::regex_search(r.err, hazard)) << r.Describe();
	EXPECT_TRUE(Contains(r.err, "main")) << "no stack in the report\n" << r.Describe();
}

// The shape of timeout(1): a parent's alarm that should kill a child computing with calls
// that never stop (the child has no timer, so its calls are no events). Reported as the
// same hazard, and the parent's signal then comes; before the fix the child ran to its
// bound and the alarm never came.
TEST(SpinAlarm, ParentsAlarmEndsAChildComputingWithoutEvents)
{
	RunResult native = RunCommand({ Guest("sched_timeout_child") }, WithTimeout(60));
	ASSERT_TRUE(Contains(native.out, "killed by signal 9 after the alarm"))
		<< native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_timeout_child") }),
				 WithTimeout(60));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
	EXPECT_TRUE(std::regex_search(r.err, std::regex("detrun: hazard: task 2 [^\n]*timer")))
		<< r.Describe();
}

// Seccomp strict mode: allowed calls work, any other call kills the task with SIGKILL, as
// natively. Before the fix strict mode failed with EINVAL under detrun's own filter.
void ExpectStrictModeAsNative(const std::string &how)
{
	RunResult native = RunCommand({ Guest("sched_strict"), how }, WithTimeout(30));
	ASSERT_EQ(native.code, 0) << native.Describe();
	ASSERT_TRUE(Contains(native.out, "killed by signal 9")) << native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_strict"), how }), WithTimeout(30));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
}

TEST(StrictMode, ThroughTheSeccompSyscall)
{
	ExpectStrictModeAsNative("seccomp");
}

TEST(StrictMode, ThroughPrctl)
{
	ExpectStrictModeAsNative("prctl");
}

// ---- point 8: creation races and CLONE_VM processes -------------------------------------

// A new task's first stop was awaited by a waitpid that detrun's own timer signal could
// interrupt ("lost new task ...: Interrupted system call", exit 125). Three groups at a
// time keep the machine busy so new tasks are slow to report; --spin-budget 1 makes the
// timer fire every millisecond. Before the fix a few runs in a hundred failed.
TEST(ThreadStorm, NoNewTaskIsLost)
{
	const int kRounds = 30, kParallel = 3;
	int failures = 0;
	std::string first_failure;
	for (int round = 0; round < kRounds; round++) {
		std::vector<std::unique_ptr<Child>> runs;
		for (int i = 0; i < kParallel; i++)
			runs.emplace_back(
				new Child(UnderDetrun({ "--spin-budget", "1" },
						      { Guest("sched_thread_storm"), "20", "8" }),
					  WithTimeout(60)));
		for (auto &c : runs) {
			RunResult r = c->Finish();
			bool ok = r.code == 0 && Contains(r.out, "total 12720 (want 12720)") &&
				  r.leftovers.empty();
			if (!ok && failures++ == 0)
				first_failure = r.Describe();
		}
	}
	EXPECT_EQ(failures, 0) << "first failure:\n" << first_failure;
}

// A child made with CLONE_VM but not CLONE_THREAD is a process of its own that shares its
// creator's memory: a futex its creator wakes is its futex too, and its creator's
// exit_group does not end it. Before the fix such a child (clone with SIGCHLD reports
// PTRACE_EVENT_FORK) was given an address space of its own: the wake never reached it and
// it was left parked for ever when its creator exited (a deadlock, here the timeout).
TEST(CloneVm, ChildSharesItsCreatorsFutexesAndOutlivesIt)
{
	RunResult native = RunCommand({ Guest("sched_clone_vm") }, WithTimeout(30));
	ASSERT_TRUE(Contains(native.out, "child outlived its creator")) << native.Describe();
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_clone_vm") }),
					 WithTimeout(20));
		ASSERT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out) << r.Describe();
	}
}

// Readiness is judged when a call runs, not when it arrives: calls that found a pipe
// ready as they arrived, whose data other tasks took before their turn came, were let go
// into a kernel sleep no task could end while detrun waited for them, and the group hung
// (found with Python's multiprocessing.Pool, whose handler threads poll and read one pipe).
TEST(StaleReadiness, CallsWhoseDataOthersTookWaitForMore)
{
	RunResult native = RunCommand({ Guest("sched_stale_ready") }, WithTimeout(30));
	ASSERT_EQ(native.out, "every call returned: 8 reads, 4 polls\n") << native.Describe();
	for (int i = 0; i < 3; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_stale_ready") }),
					 WithTimeout(30));
		ASSERT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(r.out, native.out) << r.Describe();
	}
}

// The program that found it: a multiprocessing pool maps work over four processes.
TEST(StaleReadiness, PythonMultiprocessingPoolFinishes)
{
	const char *program = "import multiprocessing as mp, os\n"
			      "def f(x): return (x * x, os.getpid())\n"
			      "if __name__ == '__main__':\n"
			      "    with mp.Pool(4) as p: print(p.map(f, range(12)))\n";
	RunResult first;
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { DEBIAN_PYTHON, "-c", program }),
					 WithTimeout(120));
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_TRUE(Contains(r.out, "[(0, ")) << r.Describe();
		if (i == 0)
			first = r;
		EXPECT_EQ(r.out, first.out) << r.Describe();
	}
}

// A futex wake asking for 0 waiters (or fewer) wakes one, as the kernel counts a waiter
// before it compares: before, detrun woke none, and a program that wakes with 0 waited.
TEST(FutexWake, OfZeroOrFewerWakesOneAsNatively)
{
	RunResult native = RunCommand({ Guest("sched_futex_wake_zero") }, WithTimeout(30));
	ASSERT_EQ(native.out, "wake 0: 1\nwake -1: 1\n") << native.Describe();
	RunResult r = RunCommand(UnderDetrun({}, { Guest("sched_futex_wake_zero") }),
				 WithTimeout(30));
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, native.out) << r.Describe();
}

// ---- point 9: concurrent groups spread over the CPUs ----------------------------------------

struct Tracee {
	pid_t pid;
	std::string tracer, cpus;
};

std::string StatusField(const std::string &status, const std::string &name)
{
	size_t at = status.find("\n" + name + ":");
	if (at == std::string::npos)
		return "";
	at += name.size() + 2;
	size_t end = status.find('\n', at);
	std::string v = status.substr(at, end - at);
	v.erase(0, v.find_first_not_of(" \t"));
	return v;
}

// The processes running `comm`, with their tracer and the CPUs they may run on.
std::vector<Tracee> FindTracees(const std::string &comm)
{
	std::vector<Tracee> found;
	DIR *d = opendir("/proc");
	if (!d)
		return found;
	while (struct dirent *de = readdir(d)) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		std::string base = std::string("/proc/") + de->d_name;
		char buf[8192];
		int fd = open((base + "/status").c_str(), O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		std::string status(buf, n > 0 ? (size_t)n : 0);
		if (StatusField("\n" + status, "Name") != comm)
			continue;
		found.push_back({ (pid_t)pid, StatusField(status, "TracerPid"),
				  StatusField(status, "Cpus_allowed_list") });
	}
	closedir(d);
	return found;
}

// Two groups started one after the other while neither ends: each is pinned to a CPU of
// its own (read from the kernel, not inferred from timing), and what each program sees of
// "its" CPU is the same. Before the fix both were pinned to the first CPU. The test runs
// in a network namespace of its own so that groups other suites run meanwhile (which
// claim CPUs the same way) do not count.
TEST(CpuChoice, ConcurrentGroupsRunOnDifferentCpusAndSeeTheSame)
{
	cpu_set_t allowed;
	ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	if (CPU_COUNT(&allowed) < 2)
		GTEST_SKIP() << "one CPU only";
	ASSERT_EQ(unshare(CLONE_NEWNET), 0) << strerror(errno);

	int hold[2][2];
	std::vector<std::unique_ptr<Child>> groups;
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(pipe2(hold[i], O_CLOEXEC), 0);
		RunOptions o = WithTimeout(60);
		o.stdin_fd = hold[i][0];
		groups.emplace_back(new Child(UnderDetrun({}, { Guest("sched_cpu_hold") }), o));
		close(hold[i][0]);
		ASSERT_TRUE(groups.back()->WaitForOutput("Cpus_allowed_list", 30))
			<< groups.back()->Out() << groups.back()->Err();
	}
	std::vector<Tracee> tracees = FindTracees("sched_cpu_hold");
	for (int i = 0; i < 2; i++)
		close(hold[i][1]);
	std::vector<RunResult> results;
	for (auto &g : groups)
		results.push_back(g->Finish());

	ASSERT_EQ(tracees.size(), 2u);
	EXPECT_NE(tracees[0].tracer, tracees[1].tracer);
	EXPECT_NE(tracees[0].cpus, tracees[1].cpus) << "both groups on CPU " << tracees[0].cpus;
	for (const Tracee &t : tracees)
		EXPECT_EQ(t.cpus.find_first_of(",-"), std::string::npos)
			<< "pid " << t.pid << " not pinned to one CPU: " << t.cpus;
	for (const RunResult &r : results) {
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_TRUE(Contains(r.out, "sched_cpu_hold: done")) << r.Describe();
	}
	EXPECT_EQ(results[0].out, results[1].out)
		<< FirstDifference("group 1", results[0].out, "group 2", results[1].out);
}

// Whether detrun (pid) holds a CPU latency request open: /proc/PID/fd, read from the kernel.
bool HoldsLatencyRequest(pid_t pid)
{
	std::string dir = "/proc/" + std::to_string(pid) + "/fd";
	DIR *d = opendir(dir.c_str());
	bool found = false;
	for (struct dirent *e; d && (e = readdir(d));) {
		char target[256];
		ssize_t n = readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
		if (n > 0 && std::string(target, (size_t)n) == "/dev/cpu_dma_latency")
			found = true;
	}
	if (d)
		closedir(d);
	return found;
}

// Parallel mode keeps idle CPUs polling while the group runs (a stop handed to a sleeping
// CPU costs several times more on a virtual machine), and only then: not in serial mode,
// where one CPU does everything, nor when DETRUN_IDLE_POLL=0 says no. The request is a
// descriptor detrun holds open, so it ends with detrun.
TEST(CpuChoice, ParallelRunsKeepIdleCpusPollingWhileTheyRun)
{
	if (access("/dev/cpu_dma_latency", W_OK) != 0)
		GTEST_SKIP() << "no /dev/cpu_dma_latency to write here";
	struct Case {
		std::vector<std::string> env, opts;
		bool holds;
	};
	const Case cases[] = { { {}, { "--jobs", "2" }, true },
			       { {}, { "--jobs", "1" }, false },
			       { { "DETRUN_IDLE_POLL=0" }, { "--jobs", "2" }, false } };
	for (const Case &c : cases) {
		int hold[2];
		ASSERT_EQ(pipe2(hold, O_CLOEXEC), 0);
		RunOptions o = WithTimeout(60);
		o.stdin_fd = hold[0];
		std::vector<std::string> argv = { "env" };
		argv.insert(argv.end(), c.env.begin(), c.env.end());
		// Not sched_cpu_hold: ConcurrentGroupsRunOnDifferentCpusAndSeeTheSame counts the
		// tracees of that name on the whole machine, and may run meanwhile.
		std::vector<std::string> run = UnderDetrun(c.opts, { "sh", "-c",
								     "echo waiting; exec cat" });
		argv.insert(argv.end(), run.begin(), run.end());
		Child group(argv, o);
		close(hold[0]);
		ASSERT_TRUE(group.WaitForOutput("waiting", 30)) << group.Err();
		bool holds = HoldsLatencyRequest(group.Pid());
		close(hold[1]);
		RunResult r = group.Finish();
		EXPECT_EQ(r.code, 0) << r.Describe();
		EXPECT_EQ(holds, c.holds)
			<< c.opts[1] << " jobs, " << (c.env.empty() ? "" : c.env[0]);
	}
}

// First-touch ticks (engine/touch_ticks.h): a process computing over fresh memory without a
// call moves its clock as it touches pages, so the writes of a process whose clock is just
// ahead of it go while it computes: it finds them all in the pipe at its end, on every run.
// Without them (DETRUN_TOUCH_TICKS=0) each write waits for the computer's next event, its
// count at the end, which finds none. The outcome is a function of the clocks, not of timing.
TEST(TouchTicks, ParallelWritesGoWhileAnotherProcessComputesOverFreshMemory)
{
	struct Case {
		std::string env, expect;
	};
	const Case cases[] = {
		{ "DETRUN_TOUCH_TICKS=1", "64 of 64 bytes were written while it computed" },
		{ "DETRUN_TOUCH_TICKS=0", ": 0 of 64 bytes were written while it computed" },
	};
	for (const Case &c : cases) {
		std::string first;
		for (int i = 0; i < 3; i++) {
			std::vector<std::string> argv = { "env", c.env };
			std::vector<std::string> run = UnderDetrun({ "--jobs", "2" },
								   { Guest("par_touch"), "64",
								     "64" });
			argv.insert(argv.end(), run.begin(), run.end());
			RunResult r = RunCommand(argv, WithTimeout(120));
			ASSERT_EQ(r.code, 0) << r.Describe();
			EXPECT_TRUE(Contains(r.out, c.expect)) << c.env << "\n" << r.out;
			EXPECT_TRUE(Contains(r.out, "par_touch: ok")) << r.Describe();
			if (i == 0)
				first = r.out;
			EXPECT_EQ(r.out, first)
				<< c.env << ": "
				<< FirstDifference("run 1", first, "run " + std::to_string(i + 1),
						   r.out);
		}
	}
}

// ---- point 19: deadlock reports and the scheduler's pick -----------------------------------

// Each reader waits on its own descriptor; the report must say which. Before the fix the
// descriptions shared one buffer and every task showed the last one parked.
TEST(Deadlock, ReportNamesEachTasksOwnDescriptor)
{
	Child c(UnderDetrun({}, { Guest("sched_deadlock_fds") }), WithTimeout(60));
	bool reported = c.WaitForOutput("waiting for a signal from outside", 30, true);
	std::string err = c.Err();
	c.Signal(SIGTERM);
	RunResult r = c.Finish();
	ASSERT_TRUE(reported) << r.Describe();
	int fds[3];
	ASSERT_EQ(sscanf(r.out.c_str(), "readers on fds %d %d %d", &fds[0], &fds[1], &fds[2]), 3)
		<< r.Describe();
	std::map<int, int> fd_of_task;
	std::regex line("task ([0-9]+) [^\n]*: read fd ([0-9]+)");
	for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it)
		fd_of_task[std::stoi((*it)[1])] = std::stoi((*it)[2]);
	std::map<int, int> want = { { 2, fds[0] }, { 3, fds[1] }, { 4, fds[2] } };
	EXPECT_EQ(fd_of_task, want) << err;
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

} // namespace

// The scheduler needs no supervisor type: a task is anything that begins with its
// scheduling part (scheduler/task.h), as this test's own is.
struct task {
	struct sched_task s;
	int test_data;
};

namespace
{

static struct task *fake_task(pid_t tid)
{
	struct task *t = (struct task *)calloc(1, sizeof(struct task));
	t->s.tid = tid;
	sched_add(t);
	return t;
}

// The scheduler with fake supervisor services: a task removed while the supervisor waits
// for outside input (a SIGCHLD reaped it) must never be returned by that pick. Before the
// fix the spinner chosen before the wait was returned after it, already freed.
struct FakeSupervisor {
	static struct task *victim;
	static int waits;
	static int interrupt_wait(struct task *)
	{
		return 0;
	}
	static int wait_outside(struct pollfd *, int, int)
	{
		waits++;
		if (victim) {
			sched_remove(victim); // what reaping a task killed from outside does
			free(victim);
			victim = nullptr;
		}
		return 0;
	}
	static void nothing()
	{
	}
	static int64_t no_timer()
	{
		return -1;
	}
	// The reader's input comes with the first outside wait.
	static enum wait_result input_came(struct task *)
	{
		return waits ? WAIT_READY : WAIT_NOT_READY;
	}
};
struct task *FakeSupervisor::victim;
int FakeSupervisor::waits;

TEST(SchedPick, NeverReturnsATaskRemovedDuringAnOutsideWait)
{
	static struct sched_ops ops;
	ops.interrupt_wait = FakeSupervisor::interrupt_wait;
	ops.wait_outside = FakeSupervisor::wait_outside;
	ops.report_deadlock = ops.between_events = ops.fire_timers = FakeSupervisor::nothing;
	ops.next_timer = FakeSupervisor::no_timer;
	sched_init(1);
	sched_set_ops(&ops);
	struct task *reader = fake_task(1001);
	struct task *spinner = fake_task(1002);
	// The reader waits for outside input; the spinner was descheduled by the detector.
	struct pollfd *fds = (struct pollfd *)malloc(sizeof(struct pollfd));
	fds[0] = { dup(0), POLLIN, 0 };
	struct wait w = {};
	w.what = "read fd 0";
	w.deadline_ns = -1;
	w.ready = FakeSupervisor::input_came;
	w.fds = fds;
	w.nfds = 1;
	w.external = true;
	reader->s.state = TASK_STOPPED;
	sched_park(reader, &w);
	spinner->s.state = TASK_STOPPED;
	spinner->s.spin_descheduled = true;
	FakeSupervisor::victim = spinner;

	struct task *picked = sched_pick();
	EXPECT_GE(FakeSupervisor::waits, 1);
	bool listed = false;
	for (struct task *t = sched_first(); t; t = sched_of(t)->next)
		listed |= t == picked;
	EXPECT_TRUE(picked == nullptr || listed) << "sched_pick returned a removed task";
	while (struct task *t = sched_first()) {
		sched_remove(t);
		free(t);
	}
}

} // namespace
