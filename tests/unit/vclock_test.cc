// Unit tests of the virtual clock (scheduler/vclock.c), linked from its C source: steps,
// jumps that never run backwards, what each clock id reads, deadlines on other clocks.
// The clock is one static that only grows: tests compare with what it was at the start.
#include <gtest/gtest.h>

#include <errno.h>
#include <time.h>

extern "C" {
#include "scheduler/vclock.h"
}

namespace
{

constexpr int64_t kSec = 1000000000LL;

// The kernel's encoding of CPU-time clocks of other processes and threads, and of
// dynamic (device) clocks: clock_getcpuclockid(3), pthread_getcpuclockid(3), FD_TO_CLOCKID.
clockid_t ProcessCpuClock(pid_t pid)
{
	return (clockid_t)(((unsigned)~pid << 3) | 2);
}
clockid_t ThreadCpuClock(pid_t tid)
{
	return (clockid_t)(((unsigned)~tid << 3) | 6);
}
clockid_t FdClock(int fd)
{
	return (clockid_t)(((unsigned)~fd << 3) | 3);
}

// Restores the default epoch however a test ends.
struct EpochGuard {
	~EpochGuard()
	{
		vclock_set_epoch(1893456000);
	}
};

TEST(VClock, StartsAfterBootAndEachStepIsOneEventsWorth)
{
	EXPECT_GE(vclock_now(), VCLOCK_BOOT_NS);
	int64_t t0 = vclock_now();
	vclock_step();
	EXPECT_EQ(vclock_now(), t0 + VCLOCK_STEP_NS);
	vclock_step();
	vclock_step();
	EXPECT_EQ(vclock_now(), t0 + 3 * VCLOCK_STEP_NS);
}

TEST(VClock, AdvanceNeverRunsBackwards)
{
	int64_t t0 = vclock_now();
	vclock_advance_to(t0 - 1);
	EXPECT_EQ(vclock_now(), t0);
	vclock_advance_to(0);
	EXPECT_EQ(vclock_now(), t0);
	vclock_advance_to(t0);
	EXPECT_EQ(vclock_now(), t0);
	vclock_advance_to(t0 + 5 * kSec + 1);
	EXPECT_EQ(vclock_now(), t0 + 5 * kSec + 1) << "to the nanosecond";
}

TEST(VClock, MonotonicFamilyReadsTheClockItself)
{
	for (clockid_t clk : { CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_RAW,
			       CLOCK_BOOTTIME, CLOCK_BOOTTIME_ALARM }) {
		int64_t ns = -1;
		ASSERT_EQ(vclock_read(clk, &ns), 0) << "clock " << clk;
		EXPECT_EQ(ns, vclock_now()) << "clock " << clk;
	}
}

TEST(VClock, RealtimeFamilyIsMonotonicPlusTheEpoch)
{
	EpochGuard guard;
	vclock_set_epoch(1000);
	EXPECT_EQ(vclock_epoch_ns(), 1000 * kSec - VCLOCK_BOOT_NS);
	for (clockid_t clk :
	     { CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_TAI, CLOCK_REALTIME_ALARM }) {
		int64_t ns = -1;
		ASSERT_EQ(vclock_read(clk, &ns), 0) << "clock " << clk;
		// at boot the realtime clock shows the epoch; it moves with the monotonic clock
		EXPECT_EQ(ns, 1000 * kSec + (vclock_now() - VCLOCK_BOOT_NS)) << "clock " << clk;
	}
	int64_t before = 0, after = 0;
	vclock_read(CLOCK_REALTIME, &before);
	vclock_step();
	vclock_read(CLOCK_REALTIME, &after);
	EXPECT_EQ(after - before, VCLOCK_STEP_NS);
}

TEST(VClock, CpuClocksFollowTheTimelineSinceStart)
{
	int64_t want = vclock_now() - VCLOCK_BOOT_NS;
	for (clockid_t clk :
	     { (clockid_t)CLOCK_PROCESS_CPUTIME_ID, (clockid_t)CLOCK_THREAD_CPUTIME_ID,
	       ProcessCpuClock(1234), ThreadCpuClock(1235), ProcessCpuClock(0) }) {
		int64_t ns = -1;
		ASSERT_EQ(vclock_read(clk, &ns), 0) << "clock " << clk;
		EXPECT_EQ(ns, want) << "clock " << clk;
	}
}

TEST(VClock, UnknownAndDeviceClocksAreInvalidAndLeaveTheResultAlone)
{
	for (clockid_t clk : { (clockid_t)12, (clockid_t)16, (clockid_t)1000, FdClock(3) }) {
		int64_t ns = 42;
		EXPECT_EQ(vclock_read(clk, &ns), -EINVAL) << "clock " << clk;
		EXPECT_EQ(ns, 42) << "clock " << clk;
		int64_t mono = 43;
		EXPECT_EQ(vclock_to_monotonic(clk, 5 * kSec, &mono), -EINVAL) << "clock " << clk;
		EXPECT_EQ(mono, 43) << "clock " << clk;
	}
}

TEST(VClock, DeadlinesOnOtherClocksBecomeMonotonicOnes)
{
	EpochGuard guard;
	vclock_set_epoch(2000000000);
	int64_t real = 0, mono = 0;
	ASSERT_EQ(vclock_read(CLOCK_REALTIME, &real), 0);
	ASSERT_EQ(vclock_to_monotonic(CLOCK_REALTIME, real + 3 * kSec, &mono), 0);
	EXPECT_EQ(mono, vclock_now() + 3 * kSec);
	ASSERT_EQ(vclock_to_monotonic(CLOCK_MONOTONIC, vclock_now() + 7, &mono), 0);
	EXPECT_EQ(mono, vclock_now() + 7) << "monotonic deadlines are already monotonic";
	ASSERT_EQ(vclock_to_monotonic(CLOCK_REALTIME, real - kSec, &mono), 0);
	EXPECT_EQ(mono, vclock_now() - kSec) << "a deadline in the past stays in the past";
	int64_t cpu = 0;
	ASSERT_EQ(vclock_read(CLOCK_PROCESS_CPUTIME_ID, &cpu), 0);
	ASSERT_EQ(vclock_to_monotonic(CLOCK_PROCESS_CPUTIME_ID, cpu + 2 * kSec, &mono), 0);
	EXPECT_EQ(mono, vclock_now() + 2 * kSec);
	// the epoch moves realtime deadlines, not the clock
	int64_t now = vclock_now();
	vclock_set_epoch(2000000010);
	ASSERT_EQ(vclock_to_monotonic(CLOCK_REALTIME, real + 3 * kSec, &mono), 0);
	EXPECT_EQ(mono, now + 3 * kSec - 10 * kSec);
	EXPECT_EQ(vclock_now(), now);
}

TEST(VClock, TimespecConversionsRoundTrip)
{
	for (int64_t ns : std::initializer_list<int64_t>{ 0, 1, 999999999, kSec, 2 * kSec - 1,
							  VCLOCK_BOOT_NS + 123456789 }) {
		struct timespec ts = ns_to_timespec(ns);
		EXPECT_GE(ts.tv_nsec, 0);
		EXPECT_LT(ts.tv_nsec, kSec);
		EXPECT_EQ(timespec_to_ns(ts), ns);
	}
	struct timespec ts = ns_to_timespec(2 * kSec + 5);
	EXPECT_EQ(ts.tv_sec, 2);
	EXPECT_EQ(ts.tv_nsec, 5);
}

} // namespace
