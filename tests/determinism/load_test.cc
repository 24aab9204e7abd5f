// Determinism under load: what a run does must not depend on how busy
// the machine is. Each test runs guests several times under detrun beside a bounded CPU hog
// (tests/guests/load_hog, which ends by itself) with a 1 ms spin budget, so the spin
// detector looks often and at points the machine's load decides, and asserts that every
// output is identical to the one of a run without the hog. Nothing here measures time.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace
{

const std::string G = std::string(GUEST_DIR) + "/";

// Two spinning threads for at most 90 s, killed when the test is done.
class Hog
{
      public:
	Hog() : child_({ G + "load_hog", "2", "90" })
	{
		started_ = child_.WaitForOutput("hogging", 30);
	}
	~Hog()
	{
		child_.Signal(SIGKILL);
		child_.Finish();
	}
	bool Started() const
	{
		return started_;
	}

      private:
	Child child_;
	bool started_ = false;
};

// The output of `argv` under detrun (1 ms spin budget) on a quiet machine, then `runs`
// times beside the hog: all must be identical and succeed.
void SameUnderLoad(const std::vector<std::string> &argv, int runs, const std::string &last_line,
		   const std::vector<std::string> &more_options = {})
{
	std::vector<std::string> options{ "--spin-budget", "1" };
	options.insert(options.end(), more_options.begin(), more_options.end());
	std::vector<std::string> cmd = UnderDetrun(options, argv);
	RunResult quiet = RunCommand(cmd);
	ASSERT_EQ(quiet.code, 0) << quiet.Describe();
	ASSERT_NE(quiet.out.find(last_line), std::string::npos) << quiet.Describe();
	ASSERT_TRUE(quiet.leftovers.empty()) << quiet.Describe();
	Hog hog;
	ASSERT_TRUE(hog.Started());
	for (int i = 0; i < runs; i++) {
		RunResult r = RunCommand(cmd);
		ASSERT_EQ(r.code, 0) << "run " << i << " beside the hog\n" << r.Describe();
		ASSERT_TRUE(r.leftovers.empty()) << r.Describe();
		ASSERT_EQ(r.out, quiet.out) << "run " << i << " beside the hog: "
					    << FirstDifference("quiet", quiet.out, "loaded", r.out);
	}
}

// A probe that cut a native fork short made the kernel's restart of it a second event, so
// every later clock reading moved by one step (the `sleeps` case differed by 1000 ns).
// load_forks spends milliseconds in each fork; its clock readings must not move.
TEST(Load, ProbeInsideANativeCallAddsNoEvent)
{
	SameUnderLoad({ G + "load_forks", "96", "12" }, 8, "load_forks done");
}

// A probe whose interrupt reached the task as it stopped at a fork lost the race to that
// stop; the kernel kept the interrupt for the task's next run, the fork, which it cut short
// with no interrupt stop after it to tell detrun, and the restart was a second event. In
// parallel mode, where the probe's timing differs, 6 runs of 6 printed different times.
TEST(Load, ProbeThatLostTheRaceToAForkAddsNoEvent)
{
	for (const char *jobs : { "1", "2" })
		SameUnderLoad({ G + "load_compute_fork", "60", "2000000" }, 6,
			      "load_compute_fork done", { "--jobs", jobs });
}

// Sleeping threads: virtual wake-up times, the case that differed by one event.
TEST(Load, SleepsBesideAHog)
{
	SameUnderLoad({ G + "sleeps" }, 10, "monotonic elapsed");
}

// Spinning threads: a computing thread that did not get a CPU between two samples looked
// like a pure spin and was descheduled mid-computation, changing the arrival order.
TEST(Load, SpinBarrierBesideAHog)
{
	SameUnderLoad({ G + "spin_barrier", "3", "5" }, 6, "checksum");
}

// LeakSanitizer's tracer stops every thread with ptrace (emulated inside the group) at exit,
// each thread waiting where detrun holds it: the report is the same beside the hog.
TEST(Load, LeakReportBesideAHog)
{
	std::vector<std::string> cmd = UnderDetrun({ "--spin-budget", "1" },
						   { G + "asan_threads_leak" });
	RunResult quiet = RunCommand(cmd);
	ASSERT_EQ(quiet.code, 1) << quiet.Describe();
	ASSERT_NE(quiet.err.find("SUMMARY: AddressSanitizer: 394 byte(s) leaked"), std::string::npos)
		<< quiet.Describe();
	Hog hog;
	ASSERT_TRUE(hog.Started());
	for (int i = 0; i < 5; i++) {
		RunResult r = RunCommand(cmd);
		ASSERT_EQ(r.code, 1) << "run " << i << " beside the hog\n" << r.Describe();
		ASSERT_EQ(r.out, quiet.out);
		ASSERT_EQ(r.err, quiet.err) << "run " << i << " beside the hog: "
					    << FirstDifference("quiet", quiet.err, "loaded", r.err);
	}
}

// strace -f of two threads inside the group: every stop of the tracees is held for the
// tracer at a point of the timeline; the trace is the same beside the hog.
TEST(Load, StraceOfTwoThreadsBesideAHog)
{
	if (access("/usr/bin/strace", X_OK) != 0)
		GTEST_SKIP() << "no /usr/bin/strace";
	TempDir dir("strace-load");
	auto trace = [&](const std::string &name) {
		RunResult r = RunCommand(
			UnderDetrun({ "--spin-budget", "1" }, { "/usr/bin/strace", "-f", "-o",
								dir / name, G + "two_threads" }));
		EXPECT_EQ(r.code, 0) << r.Describe();
		return ReadFile(dir / name);
	};
	// Names of one length: strace's argv, hence its stack and the envp pointer it
	// prints for the execve, is the same in every run.
	std::string quiet = trace("traceq");
	ASSERT_NE(quiet.find("+++ exited with 0 +++"), std::string::npos) << quiet;
	Hog hog;
	ASSERT_TRUE(hog.Started());
	for (int i = 0; i < 5; i++) {
		std::string loaded = trace("trace" + std::to_string(i));
		ASSERT_EQ(loaded, quiet)
			<< "run " << i
			<< " beside the hog: " << FirstDifference("quiet", quiet, "loaded", loaded);
	}
}

// ---- what the spin check costs (point 24) ---------------------------------------------

// The probe learns which pages were written from the kernel (userfaultfd write-protect in
// async mode + PAGEMAP_SCAN) instead of digesting all writable memory, which it gave up on
// beyond 256 MiB: a spinner in a process with a large untouched mapping was taken for a
// computation and the group hung. The spinner here writes its lock on every iteration
// without changing it: written must not count as changed.
TEST(SpinCost, SpinnerBesideALargeMappingIsDescheduled)
{
	RunOptions opt;
	opt.timeout_s = 60;
	RunResult r = RunCommand(UnderDetrun({}, { G + "load_tas_spin", "1024" }), opt);
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "load_tas_spin ok: got 1\n") << r.Describe();
	EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
}

// The verdict decides the schedule: every spinner descheduled with the page tracking must
// be descheduled at the same logical time and in the same task as with the full digest
// (DETRUN_SPIN_WATCH=digest), and the outputs must agree.
std::vector<std::string> SpinVerdicts(const std::string &err)
{
	std::vector<std::string> v;
	for (const auto &line : SplitLines(err)) {
		size_t spin = line.find("] spin:"), close = line.find(']');
		if (line.find("spin:") != std::string::npos ||
		    line.find("hazard") != std::string::npos)
			v.push_back(line.substr(0, close == std::string::npos ? 0 : close + 1) +
				    (spin == std::string::npos ? " other" : " spin"));
	}
	return v;
}

TEST(SpinCost, VerdictsAsWithTheFullDigest)
{
	const std::vector<std::vector<std::string>> guests = { { G + "spin_barrier", "3", "5" },
							       { G + "atomic_flag_wait" },
							       { G + "racy_counter", "2",
								 "500000" },
							       { G + "load_tas_spin", "0" } };
	for (const auto &argv : guests) {
		RunResult pages = RunCommand(UnderDetrun({ "--trace" }, argv));
		std::vector<std::string> digest_cmd = { "env", "DETRUN_SPIN_WATCH=digest" };
		for (const auto &a : UnderDetrun({ "--trace" }, argv))
			digest_cmd.push_back(a);
		RunResult digest = RunCommand(digest_cmd);
		ASSERT_EQ(pages.code, 0) << pages.Describe();
		ASSERT_EQ(digest.code, 0) << digest.Describe();
		EXPECT_EQ(pages.out, digest.out) << argv[0];
		EXPECT_EQ(SpinVerdicts(pages.err), SpinVerdicts(digest.err)) << argv[0];
	}
}

// A program gets no userfaultfd of its own, by the syscall or by /dev/userfaultfd: a fault
// it handles would sleep in the kernel unseen, and the spin probe registers the same
// memory (EBUSY). It computes the same sum under a probe all the same.
TEST(SpinCost, ProgramsGetNoUserfaultfdAndComputeAsNative)
{
	RunResult native = RunCommand({ G + "load_own_uffd" });
	ASSERT_EQ(native.code, 0) << native.Describe();
	RunResult r = RunCommand(UnderDetrun({ "--spin-budget", "1" }, { G + "load_own_uffd" }));
	EXPECT_EQ(r.code, 0) << r.Describe();
	std::string sum = native.out.substr(native.out.find("(sum"));
	EXPECT_EQ(r.out, "no userfaultfd: syscall Function not implemented, device Inappropriate "
			 "ioctl for device " +
				 sum)
		<< r.Describe();
	EXPECT_NE(r.err.find("userfaultfd is not supported"), std::string::npos) << r.Describe();
}

// ---- spins that write memory (issue 17, points 9 and 10) ------------------------------

// The events of a --trace run, with the host's thread ids (which vary) and the first exec
// (its arguments are addresses in detrun's launcher) left out.
std::string TracedEvents(const std::string &err)
{
	std::string out;
	for (const auto &line : SplitLines(err)) {
		if (line.rfind("[t=", 0) != 0 || line.rfind("[t=1 ", 0) == 0)
			continue;
		std::string kept = line;
		size_t tid = kept.find("(tid ");
		if (tid != std::string::npos)
			kept.erase(tid, kept.find(')', tid) - tid + 1);
		out += kept + "\n";
	}
	return out;
}

// A waiter that loops lock / look / unlock on a mutex (Splash-3's VOLREND on its work
// queues) writes the lock word on every round, so it was taken for a computation and held
// its workers back for ever, or, when two samples happened to fall alike, was stopped
// where the wall clock found it, sometimes holding the lock: the workers then waited on
// the futex in some runs and not in others. Its whole state comes back every round, so
// it is stopped at the point its cycle chooses: every run has the same events, beside a
// hog too.
TEST(SpinCycle, MutexSpinnerStopsAtThePointItsCycleChooses)
{
	RunOptions opt;
	opt.timeout_s = 60;
	std::vector<std::string> cmd = UnderDetrun({ "--trace", "--spin-budget", "1" },
						   { G + "spin_mutex_queue", "2" });
	std::string events;
	for (int i = 0; i < 6; i++) {
		std::unique_ptr<Hog> hog;
		if (i >= 3)
			hog = std::make_unique<Hog>();
		RunResult r = RunCommand(cmd, opt);
		ASSERT_FALSE(r.timed_out) << "run " << i << "\n" << r.Describe();
		ASSERT_EQ(r.code, 0) << r.Describe();
		ASSERT_NE(r.out.find("spin_mutex_queue: 2 results, total 250000\n"),
			  std::string::npos)
			<< r.Describe();
		std::string e = TracedEvents(r.err);
		if (i == 0)
			events = e;
		else
			ASSERT_EQ(e, events) << "run " << i << ": "
					     << FirstDifference("first", events, "this", e);
	}
	EXPECT_NE(events.find("state its cycle chooses"), std::string::npos) << events;
}

// A thread writes to a pipe and then loops for ever calling a function whose inner loop
// only counts a register down (rr's unexpected_exit_pid_ns); main reads the pipe and
// calls _exit(7). Each call writes the same return address to the stack, but seldom: a
// probe whose verdict window saw it written, not knowing what the page held before, took
// the loop for a computation and started its patience over, so main never got its turn.
TEST(SpinCycle, ExitBesideALoopThatCallsEndsTheGroup)
{
	RunOptions opt;
	opt.timeout_s = 90;
	for (int i = 0; i < 2; i++) {
		RunResult r = RunCommand(UnderDetrun({}, { G + "exit_beside_loop" }), opt);
		ASSERT_FALSE(r.timed_out) << r.Describe();
		EXPECT_EQ(r.code, 7) << r.Describe();
		EXPECT_EQ(r.out, "exit_beside_loop: main read x, exits 7\n") << r.Describe();
		EXPECT_TRUE(r.leftovers.empty()) << r.Describe();
		// Stopped where timing chose, but it never runs again: nothing can vary.
		EXPECT_EQ(r.err.find("hazard"), std::string::npos) << r.Describe();
	}
}

// The same kind of loop (registers change, memory does not) that does run again, with
// a count that depends on where it was stopped: the hazard comes when it resumes.
TEST(SpinCycle, ReadOnlyLoopThatRunsAgainIsAHazard)
{
	RunOptions opt;
	opt.timeout_s = 90;
	RunResult r = RunCommand(UnderDetrun({}, { G + "spin_count_wait" }), opt);
	ASSERT_FALSE(r.timed_out) << r.Describe();
	EXPECT_EQ(r.code, 0) << r.Describe();
	EXPECT_EQ(r.out, "spin_count_wait: main sets the flag\nspin_count_wait: counted some\n")
		<< r.Describe();
	EXPECT_NE(r.err.find("hazard: task 2"), std::string::npos) << r.Describe();
	EXPECT_NE(r.err.find("resumes a loop that changed no memory"), std::string::npos)
		<< r.Describe();
}

} // namespace
