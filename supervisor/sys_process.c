/* Processes and threads: creation, exec, exit, and waiting for children. */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "supervisor/report.h"
#include "supervisor/sys_common.h"

/* The tracer reads these at the clone event: exit.saved[0] = flags, [1] = child tid
 * address. CLONE_UNTRACED is removed: it would let the child escape the group. */
static void strip_untraced(struct task *t, uint64_t *flags, uint64_t args_addr)
{
	if (!(*flags & CLONE_UNTRACED))
		return;
	*flags &= ~(uint64_t)CLONE_UNTRACED;
	if (args_addr)
		remote_write(t, REMOTE(args_addr), flags, sizeof(*flags));
	else
		syscall_set_arg(t, 0, *flags);
}

/* Implements clone(2), clone3(2), fork(2), vfork(2) bookkeeping; the call runs natively. */
void sys_clone(struct task *t)
{
	uint64_t flags = 0, ctid = 0;
	if (t->syscall_nr == __NR_clone) {
		flags = syscall_arg(t, 0);
		ctid = syscall_arg(t, 3);
		strip_untraced(t, &flags, 0);
	} else if (t->syscall_nr == __NR_clone3) {
		struct clone_args args;
		uint64_t addr = syscall_arg(t, 0);
		if (remote_read(t, REMOTE(addr), &args, offsetof(struct clone_args, stack)))
			return;
		flags = args.flags;
		ctid = args.child_tid;
		strip_untraced(t, &flags, addr);
	} else if (t->syscall_nr == __NR_vfork) {
		flags = CLONE_VFORK | CLONE_VM;
	}
	t->exit.saved[0] = flags;
	t->exit.saved[1] = ctid;
}

/* Implements set_tid_address(2) bookkeeping. */
void sys_set_tid_address(struct task *t)
{
	t->clear_child_tid = syscall_arg(t, 0);
}

/* Implements execve(2), execveat(2): the tracer handles the new image at the exec stop. */
void sys_execve(struct task *t)
{
}

/* Implements exit(2), exit_group(2): the tracer handles the exit stop. */
void sys_exit(struct task *t)
{
}

static bool no_child_ready(struct task *t)
{
	if ((int64_t)t->regs.rax != 0)
		return false;
	if (t->syscall_nr == __NR_wait4)
		return true;
	uint64_t info = syscall_arg(t, 2);
	pid_t pid = 0;
	if (!info)
		return false;
	remote_read(t, REMOTE(info + offsetof(siginfo_t, si_pid)), &pid, sizeof(pid));
	return pid == 0;
}

static enum wait_result children_changed(struct task *t)
{
	return sched_children_epoch() != t->wait.arg[0] ? WAIT_READY : WAIT_NOT_READY;
}

static const struct retry wait4_retry = { "wait4", 2, no_child_ready, children_changed,
					  sched_children_epoch };
static const struct retry waitid_retry = { "waitid", 3, no_child_ready, children_changed,
					   sched_children_epoch };

/* Implements wait4(2), waitid(2): tried with WNOHANG, retried when a child changes state. */
void sys_wait(struct task *t)
{
	const struct retry *r = t->syscall_nr == __NR_wait4 ? &wait4_retry : &waitid_retry;
	uint64_t options = syscall_arg(t, r->arg);
	if (options & WNOHANG)
		return;
	retry_nonblocking(t, r, options | WNOHANG);
}
