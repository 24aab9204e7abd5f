#include "scheduler/vclock.h"

#include <errno.h>

static int64_t now_ns = VCLOCK_BOOT_NS;
static int64_t epoch_ns = 1893456000LL * 1000000000LL - VCLOCK_BOOT_NS;

void vclock_set_epoch(int64_t epoch_sec)
{
	epoch_ns = epoch_sec * 1000000000LL - VCLOCK_BOOT_NS;
}

int64_t vclock_now(void)
{
	return now_ns;
}

int64_t vclock_epoch_ns(void)
{
	return epoch_ns;
}

void vclock_step(void)
{
	now_ns += VCLOCK_STEP_NS;
}

void vclock_advance_to(int64_t mono_ns)
{
	if (mono_ns > now_ns)
		now_ns = mono_ns;
}

int vclock_read(clockid_t clk, int64_t *ns)
{
	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
	case CLOCK_REALTIME_ALARM:
		*ns = now_ns + epoch_ns;
		return 0;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		*ns = now_ns;
		return 0;
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID:
		/* CPU time is not measured; the timeline since start stands in for it. */
		*ns = now_ns - VCLOCK_BOOT_NS;
		return 0;
	default:
		/* CPU-time clocks of other processes and threads (clock_getcpuclockid) are
		 * negative ids; like the group's own CPU clocks they follow the timeline. The
		 * last kind, 3, names a dynamic (device) clock, which has no virtual version. */
		if (clk < 0 && (clk & 7) != 3) {
			*ns = now_ns - VCLOCK_BOOT_NS;
			return 0;
		}
		return -EINVAL;
	}
}

int vclock_to_monotonic(clockid_t clk, int64_t abs_ns, int64_t *mono_ns)
{
	int64_t clk_now;
	int err = vclock_read(clk, &clk_now);
	if (err)
		return err;
	*mono_ns = now_ns + (abs_ns - clk_now);
	return 0;
}
