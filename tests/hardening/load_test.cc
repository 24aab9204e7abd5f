// Determinism under load (issue 9, point 18): what a run does must not depend on how busy
// the machine is. Each test runs guests several times under detrun beside a bounded CPU hog
// (tests/guests/load_hog, which ends by itself) with a 1 ms spin budget, so the spin
// detector looks often and at points the machine's load decides, and asserts that every
// output is identical to the one of a run without the hog. Nothing here measures time.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "harness.h"

namespace {

const std::string G = std::string(GUEST_DIR) + "/";

// Two spinning threads for at most 90 s, killed when the test is done.
class Hog {
 public:
	Hog() : child_({G + "load_hog", "2", "90"})
	{
		started_ = child_.WaitForOutput("hogging", 30);
	}
	~Hog()
	{
		child_.Signal(SIGKILL);
		child_.Finish();
	}
	bool Started() const { return started_; }

 private:
	Child child_;
	bool started_ = false;
};

// The output of `argv` under detrun (1 ms spin budget) on a quiet machine, then `runs`
// times beside the hog: all must be identical and succeed.
void SameUnderLoad(const std::vector<std::string> &argv, int runs, const std::string &last_line)
{
	std::vector<std::string> cmd = UnderDetrun({"--spin-budget", "1"}, argv);
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
	SameUnderLoad({G + "load_forks", "96", "12"}, 8, "load_forks done");
}

// Sleeping threads: virtual wake-up times, the case that differed by one event.
TEST(Load, SleepsBesideAHog)
{
	SameUnderLoad({G + "sleeps"}, 10, "monotonic elapsed");
}

// Spinning threads: a computing thread that did not get a CPU between two samples looked
// like a pure spin and was descheduled mid-computation, changing the arrival order.
TEST(Load, SpinBarrierBesideAHog)
{
	SameUnderLoad({G + "spin_barrier", "3", "5"}, 6, "checksum");
}

} // namespace
