/*
 * The virtual clock. Time is a function of the logical timeline, never of the machine:
 * every event advances it by a fixed step, and when every task waits on a deadline it jumps
 * to the earliest one. It never runs backwards. CLOCK_MONOTONIC reads it directly;
 * CLOCK_REALTIME adds the epoch (--epoch, default a fixed date).
 */
#ifndef DETRUN_SCHEDULER_VCLOCK_H
#define DETRUN_SCHEDULER_VCLOCK_H

#include <stdint.h>
#include <time.h>

#define VCLOCK_STEP_NS 1000                    /* virtual time per event */
#define VCLOCK_BOOT_NS (3600LL * 1000000000LL) /* monotonic clock at the group's start */

void vclock_set_epoch(int64_t epoch_sec);
int64_t vclock_now(void);      /* monotonic virtual nanoseconds */
int64_t vclock_epoch_ns(void); /* realtime = monotonic + this */
void vclock_step(void);        /* one event */
void vclock_advance_to(int64_t mono_ns);

/* Virtual time for clock id `clk`; -EINVAL for clocks detrun does not know. */
int vclock_read(clockid_t clk, int64_t *ns);
/* An absolute deadline on clock `clk`, converted to monotonic virtual ns. */
int vclock_to_monotonic(clockid_t clk, int64_t abs_ns, int64_t *mono_ns);

static inline struct timespec ns_to_timespec(int64_t ns)
{
	return (struct timespec){ ns / 1000000000LL, ns % 1000000000LL };
}
static inline int64_t timespec_to_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
