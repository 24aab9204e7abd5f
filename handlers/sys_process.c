/* Processes and threads: creation, exec, exit, and waiting for children. */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_identity.h"
#include "handlers/sys_ptrace.h"
#include "handlers/sys_park.h"

/* The tracer reads t->exit.clone at the clone event (tracer_tasks.c): the flags, the child
 * tid address, and clone3's own argument address when the call reads a copy (below).
 * CLONE_UNTRACED is removed: it would let the child escape the group. */
static void strip_untraced(struct task *t, uint64_t *flags)
{
	if (!(*flags & CLONE_UNTRACED))
		return;
	*flags &= ~(uint64_t)CLONE_UNTRACED;
	syscall_set_arg(t, 0, *flags);
}

/* At the exit of a clone3 that read a copy and failed: the program's own argument
 * register comes back. (When a child is created, the clone event does it instead, in
 * parent and child: tracer.c.) */
static void clone3_restore_arg(struct task *t)
{
	if (!t->exit.clone.clone3_args)
		return;
	syscall_set_arg(t, 0, t->exit.clone.clone3_args);
	t->exit.clone.clone3_args = 0;
}

/* clone3 reads its flags from the program's memory, which detrun must not write: it may
 * be read-only or shared (where a failed write used to leave CLONE_UNTRACED in place), or
 * a MAP_SHARED file mapping (where the write would change the file). The stripped copy
 * goes to scratch memory and the argument points there; the serial schedule keeps every
 * other task of the group stopped until the kernel has read it. Without scratch memory
 * the call fails with ENOSYS, on which libc falls back to clone(2), whose flags are in a
 * register. Returns false when the call was refused. */
static bool strip_untraced_clone3(struct task *t, uint64_t addr, uint64_t *flags)
{
	uint64_t size = syscall_arg(t, 1);
	if (!(*flags & CLONE_UNTRACED) || size < CLONE_ARGS_SIZE_VER0 || size > 4096)
		return true; /* nothing to strip, or the kernel refuses the size itself */
	unsigned char copy[4096];
	uint64_t scratch = 0;
	if (!remote_read(t, REMOTE(addr), copy, size)) {
		uint64_t stripped = *flags & ~(uint64_t)CLONE_UNTRACED;
		memcpy(copy, &stripped, sizeof(stripped));
		scratch = remote_scratch(t, copy, size);
	}
	if (!scratch) {
		task_warn(t, "clone3 with CLONE_UNTRACED whose arguments detrun cannot rewrite "
			     "safely: refused with ENOSYS");
		syscall_emulate(t, -ENOSYS);
		return false;
	}
	*flags &= ~(uint64_t)CLONE_UNTRACED;
	t->exit.clone.clone3_args = addr;
	syscall_set_arg(t, 0, scratch);
	tracer_want_exit(t, clone3_restore_arg);
	return true;
}

/* Implements clone(2), clone3(2), fork(2), vfork(2) bookkeeping; the call runs natively. */
void sys_clone(struct task *t)
{
	uint64_t flags = 0, ctid = 0;
	t->exit.clone.clone3_args = 0;
	if (t->syscall_nr == __NR_clone) {
		flags = syscall_arg(t, 0);
		ctid = syscall_arg(t, 3);
		strip_untraced(t, &flags);
	} else if (t->syscall_nr == __NR_clone3) {
		struct clone_args args;
		uint64_t addr = syscall_arg(t, 0);
		if (remote_read(t, REMOTE(addr), &args, offsetof(struct clone_args, stack)))
			return; /* unreadable for the kernel too: EFAULT */
		flags = args.flags;
		ctid = args.child_tid;
		if (!strip_untraced_clone3(t, addr, &flags))
			return;
	} else if (t->syscall_nr == __NR_vfork) {
		flags = CLONE_VFORK | CLONE_VM;
	}
	t->exit.clone.flags = flags;
	t->exit.clone.child_tid = ctid;
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
	ptrace_exiting(t);
}

static bool child_not_ready(struct task *t)
{
	/* A tracee that stopped while the call ran (another task's event came first): its
	 * stop is the result, or the wait would park past the change it waits for. */
	if (syscall_result(t) <= 0 && ptrace_wait_report(t))
		return false;
	if (syscall_result(t) == -ECHILD && ptrace_waits_for_tracee(t))
		return true; /* a tracee that is no child of t's: its stop may come */
	if (syscall_result(t) != 0)
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

/* At the wait's exit: true to wait on; else it reported, and its usage is the group's. */
static bool no_child_ready(struct task *t)
{
	if (child_not_ready(t))
		return true;
	rusage_wait_written(t);
	return false;
}

static enum wait_result children_changed(struct task *t)
{
	return sched_children_epoch() != parked_state(t, PARKED_EPOCH)->epoch ? WAIT_READY
									      : WAIT_NOT_READY;
}

static const struct retry wait4_retry = { "wait4", 2, no_child_ready, children_changed,
					  sched_children_epoch };
static const struct retry waitid_retry = { "waitid", 3, no_child_ready, children_changed,
					   sched_children_epoch };

/* A WNOHANG wait4 for a tracee that is no child: nothing to report yet. */
static void no_stop_yet(struct task *t)
{
	if (syscall_result(t) == -ECHILD)
		syscall_set_result(t, 0);
	rusage_wait_written(t);
}

/* Implements wait4(2), waitid(2): tried with WNOHANG, retried when a child changes state.
 * A stop of a tracee of the caller's (ptrace inside the group, sys_ptrace.c) comes first. */
void sys_wait(struct task *t)
{
	const struct retry *r = t->syscall_nr == __NR_wait4 ? &wait4_retry : &waitid_retry;
	uint64_t options = syscall_arg(t, r->arg);
	if (ptrace_wait_report(t))
		return;
	if (options & WNOHANG) {
		if (ptrace_waits_for_tracee(t))
			tracer_want_exit(t, no_stop_yet);
		else if (syscall_arg(t, r->arg + 1))
			tracer_want_exit(t, rusage_wait_written);
		return;
	}
	retry_nonblocking(t, r, options | WNOHANG);
}
