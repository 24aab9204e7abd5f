/* Parallel mode's barriers (parallel_barrier.h): which domains an event acts on at once. */
#include "engine/parallel_barrier.h"

#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <linux/ptrace.h>

#include "engine/page_share.h"
#include "engine/tracer_internal.h"
#include "scheduler/scheduler.h"
#include "vkernel/host_status.h"
#include "vkernel/signal_bits.h"
#include "vkernel/task.h"

static bool is_signal_call(long nr)
{
	return nr == SYS_kill || nr == SYS_tkill || nr == SYS_tgkill || nr == SYS_rt_sigqueueinfo ||
	       nr == SYS_rt_tgsigqueueinfo || nr == SYS_pidfd_send_signal;
}

static int domain_of_tgid(pid_t tgid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->proc->tgid == tgid && u->state != TASK_DEAD)
			return tracer_domain_of(u);
	return BARRIER_NONE; /* not in the group */
}

static int domain_of_vpid(pid_t vpid, bool thread)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if ((thread ? u->ns_tid : u->proc->ns_tgid) == vpid && u->state != TASK_DEAD)
			return tracer_domain_of(u);
	return BARRIER_NONE;
}

static bool has_children(pid_t tgid)
{
	char path[64], c;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", tgid, tgid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true; /* cannot tell: assume so */
	bool any = fread(&c, 1, 1, f) == 1;
	fclose(f);
	return any;
}

/* The last thread of t's process is leaving: its children are reparented (their parent
 * changes, a PR_SET_PDEATHSIG signal comes) and its parent gets SIGCHLD. */
int parallel_exit_barrier(struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->proc == t->proc && u->state != TASK_DEAD &&
		    u->state != TASK_EXITING)
			return BARRIER_NONE; /* a thread: only its own domain sees it go */
	if (has_children(t->proc->tgid))
		return BARRIER_ALL;
	char buf[4096];
	if (proc_status_read(t->proc->tgid, buf, sizeof(buf)))
		return BARRIER_ALL;
	int parent = domain_of_tgid((pid_t)proc_status_field(buf, "\nPPid:", 10, 0));
	if (parent == BARRIER_NONE)
		return BARRIER_NONE;
	for (struct task *u = sched_first(); u; u = u->next)
		if (tracer_domain_of(u) == parent && (u->proc->caught & SIGBIT(SIGCHLD)))
			return parent;
	return BARRIER_NONE; /* SIGCHLD is discarded; the parent's wait4 is an event */
}

/* A mapping that other processes may share: its call may merge memory domains. */
static bool shares_memory_call(long nr, const uint64_t *a)
{
	if (nr == SYS_shmat)
		return true;
	if (nr == SYS_mmap)
		return (a[3] & (MAP_SHARED | MAP_SHARED_VALIDATE)) != 0;
	return false;
}

/* The domain a signal call reaches at once. */
static int signal_barrier(const struct __ptrace_syscall_info *info)
{
	long nr = (long)info->seccomp.nr;
	const uint64_t *a = info->seccomp.args;
	int sig = (int)(nr == SYS_tgkill || nr == SYS_rt_tgsigqueueinfo ? a[2] : a[1]);
	if (nr == SYS_pidfd_send_signal)
		return BARRIER_ALL;
	if (sig == 0)
		return BARRIER_NONE; /* a probe: nothing is sent */
	if (nr == SYS_tkill)
		return domain_of_vpid((pid_t)a[0], true);
	if (nr == SYS_tgkill || nr == SYS_rt_tgsigqueueinfo)
		return domain_of_vpid((pid_t)a[1], true);
	if ((pid_t)a[0] <= 0)
		return BARRIER_ALL; /* a process group, or everyone */
	return domain_of_vpid((pid_t)a[0], false);
}

/* The domain a ptrace call of t's joins to t's own (handlers/sys_ptrace.c, join_domains):
 * the tracee's at PTRACE_ATTACH or SEIZE, the parent's at PTRACE_TRACEME. */
static int ptrace_barrier(struct task *t, const struct __ptrace_syscall_info *info)
{
	long request = (long)info->seccomp.args[0];
	int target = BARRIER_NONE;
	if (request == PTRACE_ATTACH || request == PTRACE_SEIZE) {
		target = domain_of_vpid((pid_t)info->seccomp.args[1], true);
	} else if (request == PTRACE_TRACEME) {
		char buf[4096];
		if (proc_status_read(t->tid, buf, sizeof(buf)))
			return BARRIER_NONE; /* gone: its call fails */
		target = domain_of_tgid((pid_t)proc_status_field(buf, "\nPPid:", 10, 0));
	}
	return target == tracer_domain_of(t) ? BARRIER_NONE : target;
}

int parallel_barrier_for(struct task *t, bool *attach)
{
	*attach = false;
	if (t->fault_held)
		return page_share_barrier(t); /* the domains that hold its page */
	int event = (unsigned)t->held_status >> 16;
	if (event == PTRACE_EVENT_EXIT)
		return parallel_exit_barrier(t);
	if (event != PTRACE_EVENT_SECCOMP)
		return BARRIER_NONE;
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0)
		return BARRIER_ALL;
	if (info.op != PTRACE_SYSCALL_INFO_SECCOMP)
		return BARRIER_NONE;
	long nr = (long)info.seccomp.nr;
	if (shares_memory_call(nr, info.seccomp.args))
		return BARRIER_ALL; /* it may join t's domain to another one that runs */
	*attach = nr == SYS_ptrace;
	int barrier = is_signal_call(nr) ? signal_barrier(&info)
		      : nr == SYS_ptrace ? ptrace_barrier(t, &info)
					 : BARRIER_NONE;
	int pages = page_share_call_barrier(t); /* shared memory its handler may touch */
	if (pages == BARRIER_NONE || pages == barrier)
		return barrier;
	return barrier == BARRIER_NONE ? pages : BARRIER_ALL;
}
