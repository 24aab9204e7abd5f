/* Time: every clock reads the virtual clock, and sleeps wait on it. */
#include <errno.h>
#include <string.h>
#include <sys/timex.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "scheduler/vclock.h"
#include "handlers/sys_common.h"
#include "handlers/sys_args.h"
#include "handlers/sys_external.h"

static void write_timespec(struct task *t, uint64_t addr, int64_t ns, int64_t *result)
{
	struct timespec ts = ns_to_timespec(ns);
	if (remote_write(t, REMOTE(addr), &ts, sizeof(ts)))
		*result = -EFAULT;
}

/* --clock=real: reads of the wall clock are outside input (recorded, replayed); the
 * monotonic clocks, sleeps and timeouts stay virtual. */
static bool real_clock_read(struct task *t, clockid_t clk)
{
	if (!tracer_opts->real_clock ||
	    (clk != CLOCK_REALTIME && clk != CLOCK_REALTIME_COARSE && clk != CLOCK_TAI))
		return false;
	external_perform(t);
	return true;
}

/* Implements clock_gettime(2). */
void sys_clock_gettime(struct task *t)
{
	if (real_clock_read(t, (clockid_t)syscall_arg(t, 0)))
		return;
	int64_t ns, result = 0;
	int err = vclock_read((clockid_t)syscall_arg(t, 0), &ns);
	if (err)
		result = err;
	else
		write_timespec(t, syscall_arg(t, 1), ns, &result);
	syscall_emulate(t, result);
}

/* Implements clock_getres(2): the virtual clock ticks in nanoseconds. */
void sys_clock_getres(struct task *t)
{
	int64_t ns, result = 0;
	int err = vclock_read((clockid_t)syscall_arg(t, 0), &ns);
	if (err)
		result = err;
	else if (syscall_arg(t, 1))
		write_timespec(t, syscall_arg(t, 1), 1, &result);
	syscall_emulate(t, result);
}

/* Implements gettimeofday(2). */
void sys_gettimeofday(struct task *t)
{
	if (real_clock_read(t, CLOCK_REALTIME))
		return;
	int64_t ns, result = 0;
	vclock_read(CLOCK_REALTIME, &ns);
	struct timeval tv = { ns / 1000000000LL, (ns % 1000000000LL) / 1000 };
	struct timezone tz = { 0, 0 };
	if (syscall_arg(t, 0) && remote_write(t, REMOTE(syscall_arg(t, 0)), &tv, sizeof(tv)))
		result = -EFAULT;
	if (syscall_arg(t, 1) && remote_write(t, REMOTE(syscall_arg(t, 1)), &tz, sizeof(tz)))
		result = -EFAULT;
	syscall_emulate(t, result);
}

/* Implements time(2). */
void sys_time(struct task *t)
{
	if (real_clock_read(t, CLOCK_REALTIME))
		return;
	int64_t ns;
	vclock_read(CLOCK_REALTIME, &ns);
	int64_t sec = ns / 1000000000LL;
	if (syscall_arg(t, 0) && remote_write(t, REMOTE(syscall_arg(t, 0)), &sec, sizeof(sec)))
		sec = -EFAULT;
	syscall_emulate(t, sec);
}

static void sleep_done(struct task *t)
{
	remote_load_regs(t);
	syscall_emulate(t, 0);
}

/* An interrupted relative sleep reports the virtual time left, like the kernel. */
static void sleep_interrupted(struct task *t)
{
	uint64_t rem = parked_state(t, PARKED_SLEEP)->rem_addr;
	int64_t left = t->wait.deadline_ns - vclock_now();
	if (rem) {
		struct timespec ts = ns_to_timespec(left > 0 ? left : 0);
		remote_write(t, REMOTE(rem), &ts, sizeof(ts));
	}
}

/* Implements nanosleep(2), clock_nanosleep(2). */
void sys_nanosleep(struct task *t)
{
	bool clock_variant = t->syscall_nr == __NR_clock_nanosleep;
	clockid_t clk = clock_variant ? (clockid_t)syscall_arg(t, 0) : CLOCK_MONOTONIC;
	bool absolute = clock_variant && (syscall_arg(t, 1) & TIMER_ABSTIME);
	uint64_t req = syscall_arg(t, clock_variant ? 2 : 0);
	uint64_t rem = syscall_arg(t, clock_variant ? 3 : 1);
	int64_t ns;
	if (clk == CLOCK_THREAD_CPUTIME_ID || vclock_read(clk, &ns)) {
		syscall_emulate(t, clock_variant ? -EINVAL : -EINVAL);
		return;
	}
	struct wait w = { .what = "sleep",
			  .on_timeout = sleep_done,
			  .on_interrupt = absolute ? NULL : sleep_interrupted,
			  .interruptible = true };
	parked_state_new(t, PARKED_SLEEP)->rem_addr = rem;
	int err = deadline_from_timespec(t, req, absolute, clk, &w.deadline_ns);
	if (err) {
		syscall_emulate(t, err);
		return;
	}
	if (w.deadline_ns <= vclock_now()) {
		syscall_emulate(t, 0);
		return;
	}
	sched_park(t, &w);
}

/* adjtimex(2)'s answer for the virtual clock: synchronised, no offset, no frequency
 * correction, the kernel's default constants, and the virtual wall-clock time. */
static void virtual_timex(struct timex *tx)
{
	int64_t ns;
	vclock_read(CLOCK_REALTIME, &ns);
	int modes = tx->modes;
	memset(tx, 0, sizeof(*tx));
	tx->modes = modes;
	tx->maxerror = 0;
	tx->esterror = 0;
	tx->status = 0;
	tx->constant = 2;
	tx->precision = 1;
	tx->tolerance = 500 << 16; /* 500 ppm, as the kernel reports it */
	tx->tick = 10000;          /* microseconds per USER_HZ tick */
	tx->time.tv_sec = ns / 1000000000LL;
	tx->time.tv_usec = (ns % 1000000000LL) / 1000;
}

/* Reads are answered from the virtual clock; any change (modes other than 0, or
 * ADJ_OFFSET_SS_READ alone, which only reads) fails with EPERM, as for an unprivileged
 * program: the group's clock is virtual, and the host's clock is not the group's to set. */
static void adjust_clock(struct task *t, uint64_t buf)
{
	struct timex tx;
	if (remote_read(t, REMOTE(buf), &tx, sizeof(tx))) {
		syscall_emulate(t, -EFAULT);
		return;
	}
	if (tx.modes != 0 && tx.modes != ADJ_OFFSET_SS_READ) {
		syscall_emulate(t, -EPERM);
		return;
	}
	virtual_timex(&tx);
	syscall_emulate(t, remote_write(t, REMOTE(buf), &tx, sizeof(tx)) ? -EFAULT : TIME_OK);
}

/* Implements adjtimex(2). */
void sys_adjtimex(struct task *t)
{
	if (real_clock_read(t, CLOCK_REALTIME))
		return;
	adjust_clock(t, syscall_arg(t, 0));
}

/* Implements clock_adjtime(2): CLOCK_REALTIME as adjtimex; the other system clocks cannot
 * be adjusted (EOPNOTSUPP, as the kernel says); a dynamic clock (a PTP device given as a
 * descriptor) is outside the group and refused the same way. */
void sys_clock_adjtime(struct task *t)
{
	clockid_t clk = (clockid_t)syscall_arg(t, 0);
	if (clk != CLOCK_REALTIME) {
		int64_t ns;
		syscall_emulate(t, clk >= 0 && vclock_read(clk, &ns) ? -EINVAL : -EOPNOTSUPP);
		return;
	}
	if (real_clock_read(t, CLOCK_REALTIME))
		return;
	adjust_clock(t, syscall_arg(t, 1));
}
