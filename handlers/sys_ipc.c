/* System V messages and semaphores, POSIX message queues: calls that sleep in the kernel
 * until another task sends, receives or changes a semaphore.
 *
 * A POSIX message queue descriptor can be polled (POLLIN: a message; POLLOUT: room), so
 * mq_timedsend and mq_timedreceive park like read and write, with their timeout on the
 * virtual clock. System V objects have no descriptor: the call runs in its non-blocking
 * form (IPC_NOWAIT; for semop a zero timeout), and if it would have slept it is rewound
 * and parked until some System V operation of the group has succeeded since, then tried
 * again. With namespaces (the default as root) the group has its own IPC namespace, so
 * only members change them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/vclock.h"
#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_args.h"
#include "syscalls/syscall_table.h"

/* System V operations that succeeded: a parked call retries when this moved. */
static uint64_t ipc_changes;

static void count_success(struct task *t)
{
	if (syscall_result(t) >= 0)
		ipc_changes++;
}

static enum wait_result ipc_changed(struct task *t)
{
	return ipc_changes != parked_state(t, PARKED_EPOCH)->epoch ? WAIT_READY : WAIT_NOT_READY;
}

/* Implements semctl(2), msgctl(2): a change of value, limits or removal may end a wait. */
void sys_ipc_ctl(struct task *t)
{
	tracer_want_exit(t, count_success);
}

/* ---- retrying in the non-blocking form --------------------------------------------------------
 *
 * State in t->exit.call.ipc (CALL_IPC_RETRY, vkernel/task.h); exit.rip marks the call,
 * so its re-execution after a retry is known and keeps its deadline. */

static bool retrying(const struct task *t)
{
	return t->exit.kind == CALL_IPC_RETRY && t->exit.rip == syscall_insn_addr(t) &&
	       t->exit.call.ipc.nr == t->syscall_nr;
}

static void retry_timed_out(struct task *t)
{
	remote_load_regs(t);
	syscall_unrewind(t, -EAGAIN); /* the rewound call returns as the kernel's timeout */
	t->exit.kind = CALL_NONE;
}

static void retry_exit(struct task *t)
{
	syscall_set_number(t, t->exit.call.ipc.nr); /* semop ran as semtimedop */
	syscall_set_arg(t, t->exit.call.ipc.arg, t->exit.call.ipc.value);
	if (syscall_result(t) == -EINVAL && t->exit.call.ipc.waited)
		syscall_set_result(t,
				   -EIDRM); /* removed while it waited: the kernel wakes with that */
	if (syscall_result(t) != -t->exit.call.ipc.would_block) {
		t->exit.kind = CALL_NONE;
		count_success(t);
		return;
	}
	syscall_rewind(t);
	t->exit.rip = task_ip(t); /* the syscall instruction */
	struct wait w = {
		.what = syscall_name(t->syscall_nr),
		.deadline_ns = t->exit.call.ipc.deadline,
		.ready = ipc_changed,
		.on_timeout = retry_timed_out,
		.interruptible = true,
		.restartable = false, /* System V IPC calls end with EINTR even after SA_RESTART */
	};
	parked_state_new(t, PARKED_EPOCH)->epoch = ipc_changes;
	t->exit.call.ipc.waited = true;
	sched_park(t, &w);
}

/* Runs t's call with argument `arg` set to `value` (its non-blocking form); on
 * `would_block` it parks and retries. */
static void run_nonblocking(struct task *t, int arg, uint64_t value, int would_block,
			    int64_t deadline)
{
	bool again = retrying(t);
	if (again)
		deadline = t->exit.call.ipc.deadline;
	t->exit.call.ipc.waited = again && t->exit.call.ipc.waited;
	t->exit.kind = CALL_IPC_RETRY;
	t->exit.call.ipc.nr = t->syscall_nr;
	t->exit.call.ipc.arg = arg;
	t->exit.call.ipc.value = syscall_arg(t, arg);
	t->exit.call.ipc.would_block = would_block;
	t->exit.call.ipc.deadline = deadline;
	t->exit.rip = syscall_insn_addr(t);
	syscall_set_arg(t, arg, value);
	tracer_want_exit(t, retry_exit);
}

/* Implements msgsnd(2) and msgrcv(2). */
void sys_msg(struct task *t)
{
	bool send = t->syscall_nr == __NR_msgsnd;
	int arg = send ? 3 : 4;
	uint64_t flags = syscall_arg(t, arg);
	if ((flags & IPC_NOWAIT) || (!send && (flags & MSG_COPY)))
		tracer_want_exit(t, count_success); /* MSG_COPY without IPC_NOWAIT: EINVAL */
	else
		run_nonblocking(t, arg, flags | IPC_NOWAIT, send ? EAGAIN : ENOMSG, -1);
}

#define MAX_SOPS 1024

/* Does any operation of the set carry IPC_NOWAIT? Then it runs as the program asked: the
 * kernel's EAGAIN could not be told from "would sleep". */
static bool some_nowait(struct task *t, int *err)
{
	uint64_t n = syscall_arg(t, 2);
	*err = 0;
	if (n == 0 || n > MAX_SOPS)
		return *err = -1, false;
	struct sembuf *ops = malloc(n * sizeof(*ops));
	if (!ops)
		abort();
	bool nowait = false;
	if (remote_read(t, REMOTE(syscall_arg(t, 1)), ops, n * sizeof(*ops)))
		*err = -1;
	for (uint64_t i = 0; !*err && i < n && !nowait; i++)
		nowait = ops[i].sem_flg & IPC_NOWAIT;
	free(ops);
	return nowait;
}

/* A zero timespec just below the task's red zone, where a signal frame would go. */
static uint64_t zero_timeout_on_stack(struct task *t)
{
	static const struct timespec zero;
	uint64_t addr = ((task_sp(t) - 128 - sizeof(zero)) & ~(uint64_t)15);
	return remote_write(t, REMOTE(addr), &zero, sizeof(zero)) ? 0 : addr;
}

/* Implements semop(2) and semtimedop(2). */
void sys_semop(struct task *t)
{
	int err;
	if (some_nowait(t, &err) || err) {
		tracer_want_exit(t, count_success);
		return;
	}
	int64_t deadline = -1;
	uint64_t timeout = t->syscall_nr == __NR_semtimedop ? syscall_arg(t, 3) : 0;
	if (timeout && !retrying(t) &&
	    deadline_from_timespec(t, timeout, false, CLOCK_MONOTONIC, &deadline)) {
		tracer_want_exit(t, count_success); /* the kernel reports the bad timeout */
		return;
	}
	uint64_t zero = zero_timeout_on_stack(t);
	if (!zero) {
		tracer_want_exit(t, count_success);
		return;
	}
	run_nonblocking(t, 3, zero, EAGAIN, deadline);
	syscall_set_number(t, __NR_semtimedop);
}

/* ---- POSIX message queues ----------------------------------------------------------------- */

static void mq_timed_out(struct task *t)
{
	syscall_emulate(t, -ETIMEDOUT);
}

/* Implements mq_timedsend(2) and mq_timedreceive(2). */
void sys_mq_timed(struct task *t)
{
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd < 0)
		return;
	short events = t->syscall_nr == __NR_mq_timedsend ? POLLOUT : POLLIN;
	int fl = fcntl(fd, F_GETFL);
	struct pollfd p = { fd, events, 0 };
	int64_t deadline = -1;
	uint64_t timeout = syscall_arg(t, 4);
	if (fl < 0 || (fl & O_NONBLOCK) ||
	    (timeout && deadline_from_timespec(t, timeout, true, CLOCK_REALTIME, &deadline))) {
		close(fd);
		return;
	}
	struct pollfd *fds = malloc(sizeof(*fds));
	if (!fds)
		abort();
	*fds = p;
	park_on_fds(t, syscall_name(t->syscall_nr), fds, 1, deadline, mq_timed_out, true);
}
