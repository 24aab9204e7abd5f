/*
 * detrun's vDSO: the code page a traced program finds through AT_SYSINFO_EHDR in place of
 * the kernel's, which would read the host's clock. Clock reads are answered from the
 * virtual clock in the page before the image (engine/vdso_data.h); everything else (a
 * clock detrun does not answer here, a NULL pointer, the read after VDSO_FAST_READS)
 * makes the real syscall from here, which stops at detrun as it did without a vDSO.
 *
 * Built freestanding (no libc, no relocations: the loaders that take a vDSO do not
 * relocate it) and embedded into detrun (engine/vdso_image.c). The symbols carry version
 * LINUX_2.6, which glibc and Go ask for.
 */
#include <stddef.h>
#include <stdint.h>

#include "engine/vdso_data.h"

/* The kernel's types, without libc's headers. */
struct vdso_timespec {
	int64_t tv_sec, tv_nsec;
};
struct vdso_timeval {
	int64_t tv_sec, tv_usec;
};
struct vdso_timezone {
	int tz_minuteswest, tz_dsttime;
};

enum {
	NR_GETTIMEOFDAY = 96,
	NR_TIME = 201,
	NR_CLOCK_GETTIME = 228,
	NR_CLOCK_GETRES = 229,
	NR_GETCPU = 309
};

/* The page before the image (vdso.lds): reached relative to the code, no relocation. */
extern volatile struct vdso_data detrun_vdso_data __attribute__((visibility("hidden")));

static long syscall3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

enum base {
	BASE_NONE,
	BASE_WALL,
	BASE_REAL,
	BASE_MONO,
	BASE_CPU
};

/* What scheduler/vclock.c's vclock_read adds to the monotonic time for each clock id:
 * the wall clocks that --clock=real makes outside input (BASE_WALL, as
 * handlers/sys_time.c's real_clock_read) apart from CLOCK_REALTIME_ALARM. Other ids
 * (another process's CPU clock, a device, a bad id) go to the syscall. */
static enum base base_of(int clk)
{
	switch (clk) {
	case 0:  /* CLOCK_REALTIME */
	case 5:  /* CLOCK_REALTIME_COARSE */
	case 11: /* CLOCK_TAI */
		return BASE_WALL;
	case 8: /* CLOCK_REALTIME_ALARM */
		return BASE_REAL;
	case 1: /* CLOCK_MONOTONIC */
	case 4: /* CLOCK_MONOTONIC_RAW */
	case 6: /* CLOCK_MONOTONIC_COARSE */
	case 7: /* CLOCK_BOOTTIME */
	case 9: /* CLOCK_BOOTTIME_ALARM */
		return BASE_MONO;
	case 2: /* CLOCK_PROCESS_CPUTIME_ID */
	case 3: /* CLOCK_THREAD_CPUTIME_ID */
		return BASE_CPU;
	default:
		return BASE_NONE;
	}
}

/* One read of clock `clk` without a stop, in *ns: false when the syscall must answer. */
static int fast_read(int clk, int64_t *ns)
{
	volatile struct vdso_data *d = &detrun_vdso_data;
	uint32_t n = d->reads;
	if (n >= VDSO_FAST_READS)
		return 0;
	int64_t t = d->mono_ns;
	switch (base_of(clk)) {
	case BASE_WALL:
		if (d->flags & VDSO_REAL_CLOCK)
			return 0;
		t += d->epoch_ns;
		break;
	case BASE_REAL:
		t += d->epoch_ns;
		break;
	case BASE_MONO:
		break;
	case BASE_CPU:
		t -= d->boot_ns;
		break;
	default:
		return 0;
	}
	d->reads = n + 1;
	*ns = t + (int64_t)(n + 1) * VDSO_READ_STEP_NS;
	return 1;
}

int __vdso_clock_gettime(int clk, struct vdso_timespec *ts)
{
	int64_t ns;
	if (!ts || !fast_read(clk, &ns))
		return (int)syscall3(NR_CLOCK_GETTIME, clk, (long)ts, 0);
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

int __vdso_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz)
{
	int64_t ns = 0;
	if (tv && !fast_read(0, &ns))
		return (int)syscall3(NR_GETTIMEOFDAY, (long)tv, (long)tz, 0);
	if (tv) {
		tv->tv_sec = ns / 1000000000;
		tv->tv_usec = ns % 1000000000 / 1000;
	}
	if (tz) {
		tz->tz_minuteswest = 0;
		tz->tz_dsttime = 0;
	}
	return 0;
}

long __vdso_time(long *tloc)
{
	int64_t ns;
	if (!fast_read(0, &ns))
		return syscall3(NR_TIME, (long)tloc, 0, 0);
	if (tloc)
		*tloc = ns / 1000000000;
	return ns / 1000000000;
}

/* The virtual clocks tick in nanoseconds (handlers/sys_time.c). */
int __vdso_clock_getres(int clk, struct vdso_timespec *res)
{
	if (base_of(clk) == BASE_NONE)
		return (int)syscall3(NR_CLOCK_GETRES, clk, (long)res, 0);
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = 1;
	}
	return 0;
}

/* The virtual CPU is the task's own (its affinity): the syscall says which. */
long __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	return syscall3(NR_GETCPU, (long)cpu, (long)node, (long)cache);
}

int clock_gettime(int, struct vdso_timespec *) __attribute__((weak, alias("__vdso_clock_gettime")));
int gettimeofday(struct vdso_timeval *, struct vdso_timezone *)
	__attribute__((weak, alias("__vdso_gettimeofday")));
long time(long *) __attribute__((weak, alias("__vdso_time")));
int clock_getres(int, struct vdso_timespec *) __attribute__((weak, alias("__vdso_clock_getres")));
long getcpu(unsigned *, unsigned *, void *) __attribute__((weak, alias("__vdso_getcpu")));
