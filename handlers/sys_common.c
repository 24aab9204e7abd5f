#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_args.h"

#include <errno.h>

#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "syscalls/syscall_table.h"

static void retry_exit(struct task *t)
{
	const struct retry *r = t->exit.retry.how;
	syscall_set_arg(t, r->arg, t->exit.retry.value);
	if (!r->would_block(t))
		return;
	syscall_rewind(t);
	struct wait w = {
		.what = r->what,
		.deadline_ns = -1,
		.ready = r->changed,
		.interruptible = true,
		.restartable = true,
	};
	/* The epoch of the call's entry: a change while the call ran (in parallel mode a
	 * death of the same domain, reaped meanwhile) wakes it at once, where the epoch of
	 * its exit would have parked it for good. */
	parked_state_new(t, PARKED_EPOCH)->epoch = t->exit.retry.epoch;
	sched_park(t, &w);
}

void retry_nonblocking(struct task *t, const struct retry *r, uint64_t nonblocking)
{
	t->exit.retry.how = r;
	t->exit.retry.value = syscall_arg(t, r->arg);
	t->exit.retry.epoch = r->epoch();
	syscall_set_arg(t, r->arg, nonblocking);
	tracer_want_exit(t, retry_exit);
}

int deadline_from_timespec(struct task *t, uint64_t addr, bool absolute, clockid_t clk,
			   int64_t *deadline)
{
	struct timespec ts;
	if (remote_read(t, REMOTE(addr), &ts, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		return -EINVAL;
	if (!absolute) {
		*deadline = vclock_now() + timespec_to_ns(ts);
		return 0;
	}
	return vclock_to_monotonic(clk, timespec_to_ns(ts), deadline);
}

int read_sigmask(struct task *t, uint64_t addr, uint64_t size, uint64_t *mask, bool *present)
{
	if (!addr)
		return 0;
	if (size != 8)
		return -EINVAL;
	if (remote_read(t, REMOTE(addr), mask, sizeof(*mask)))
		return -EFAULT;
	*present = true;
	return 0;
}

int call_sigmask_at(struct task *t, uint64_t *addr, uint64_t *size)
{
	struct syscall_sigset s = syscall_sigset(syscall_lookup(t->syscall_nr));
	*addr = s.arg < 0 ? 0 : syscall_arg(t, s.arg);
	*size = s.size_arg < 0 ? 8 : syscall_arg(t, s.size_arg);
	if (!s.indirect || !*addr)
		return 0;
	uint64_t pair[2];
	if (remote_read(t, REMOTE(*addr), pair, sizeof(pair)))
		return -EFAULT;
	*addr = pair[0], *size = pair[1];
	return 0;
}

int call_sigmask(struct task *t, uint64_t *mask, bool *present)
{
	uint64_t addr, size;
	int err = call_sigmask_at(t, &addr, &size);
	return err ? err : read_sigmask(t, addr, size, mask, present);
}
