/* Signals between members of the group, signal dispositions, and calls that wait for
 * signals. A signal sent to a stopped task is queued by the kernel and delivered when that
 * task next resumes — a point fixed by the schedule — so sending needs no emulation. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scheduler/vclock.h"
#include "engine/jobctl.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_args.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_timer.h"
#include "engine/trap_signals.h"
#include "syscalls/syscall_table.h"

static pid_t process_group_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *close_paren = strrchr(buf, ')');
	int pgrp = -1;
	if (close_paren && sscanf(close_paren + 2, "%*c %*d %d", &pgrp) != 1)
		pgrp = -1;
	return pgrp;
}

/* Targets arrive as the group sees pids; detrun works with host pids. */
static pid_t host_tgid_of(pid_t ns_tid)
{
	struct task *u = reach_task(ns_tid);
	return u ? u->proc->tgid : 0;
}

static pid_t pidfd_target(struct task *t, int pidfd)
{
	pid_t pid = -1;
	return fdinfo_scan(t->tid, pidfd, "Pid: %d", &pid) ? pid : -1;
}

/* Does a kill-style target, in host pids (pid > 0: a process; 0: sender's group; -1: all;
 * < -1: group), cover process `p`? */
static bool targeted(struct task *sender, pid_t target, const struct process *p)
{
	if (target > 0)
		return p->tgid == target;
	if (target == -1)
		return p != sender->proc;
	pid_t group = target == 0 ? process_group_of(sender->proc->tgid) : -target;
	return process_group_of(p->tgid) == group;
}

/* SIGKILL acts on stopped tasks at once, without passing through a signal stop: the
 * targets are marked dying so the tracer reaps them before anything else runs. A terminal
 * signal sent by a member is a real delivery, unlike a terminal's own copy. */
static void signal_sent(struct task *t)
{
	if (syscall_result(t) < 0)
		return;
	sched_signals_changed();
	long nr = t->syscall_nr;
	const struct syscall_entry *e = syscall_lookup(nr);
	int sig = (int)syscall_arg(t, syscall_signal_arg(e));
	jobctl_signal_sent(sig);
	if (sig != SIGKILL && !(sig > 0 && sig <= 64 && (TERMINAL_SIGNALS & SIGBIT(sig))))
		return;
	int target_arg = syscall_target_arg(e);
	pid_t pid = (pid_t)syscall_arg(t, target_arg), target;
	if (e->kinds[target_arg] == 'D')
		target = pidfd_target(t, (int)pid);
	else if (nr == __NR_kill && pid <= 0)
		target = pid == 0 || pid == -1 ? pid : -host_tgid_of(-pid);
	else
		target = host_tgid_of(pid);
	if (target == 0 && pid != 0)
		return; /* not a member of the group */
	if (nr != __NR_kill && target <= 0)
		return;
	for (struct task *u = sched_first(); u; u = u->next) {
		if (!targeted(t, target, u->proc))
			continue;
		if (sig == SIGKILL)
			u->proc->dying = true;
		else
			u->proc->terminal_due |= SIGBIT(sig);
	}
}

/* Implements kill(2), tkill(2), tgkill(2), rt_sigqueueinfo(2), rt_tgsigqueueinfo(2),
 * pidfd_send_signal(2). */
void sys_signal_send(struct task *t)
{
	if (reach_signal_refused(t))
		return;
	tracer_want_exit(t, signal_sent);
}

struct kernel_sigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

/* Implements rt_sigaction(2) bookkeeping: which signals are caught, ignored, SA_RESTART.
 * Recorded at entry: the kernel installs a valid action before it writes the old one
 * back, so only an invalid signal or an unreadable action leaves it unchanged. */
void sys_sigaction(struct task *t)
{
	int sig = (int)syscall_arg(t, 0);
	uint64_t act = syscall_arg(t, 1);
	struct kernel_sigaction ka;
	trap_signals_sigaction(t);
	if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP || !act ||
	    syscall_arg(t, 3) != 8 || remote_read(t, REMOTE(act), &ka, sizeof(ka)))
		return;
	struct process *p = t->proc;
	uint64_t bit = SIGBIT(sig);
	p->caught &= ~bit;
	p->ignored &= ~bit;
	p->sa_restart &= ~bit;
	if (ka.handler == (uint64_t)SIG_IGN)
		p->ignored |= bit;
	else if (ka.handler != (uint64_t)SIG_DFL)
		p->caught |= bit;
	if (ka.flags & SA_RESTART)
		p->sa_restart |= bit;
}

/* Implements pause(2). */
void sys_pause(struct task *t)
{
	struct wait w = { .what = "pause", .deadline_ns = -1, .interruptible = true };
	sched_park(t, &w);
}

/* Implements rt_sigsuspend(2). */
void sys_sigsuspend(struct task *t)
{
	struct wait w = { .what = "sigsuspend", .deadline_ns = -1, .interruptible = true };
	int err = call_sigmask(t, &w.sigmask, &w.sigmask_arg);
	if (err || !w.sigmask_arg)
		return; /* the kernel reports the bad argument */
	sched_park(t, &w);
}

static enum wait_result waited_signal_pending(struct task *t)
{
	uint64_t pending, blocked;
	if (read_signal_state(t, &pending, &blocked))
		return WAIT_READY;
	return (pending & parked_state(t, PARKED_SIGSET)->sigset) ? WAIT_READY : WAIT_NOT_READY;
}

static void sigtimedwait_timed_out(struct task *t)
{
	remote_load_regs(t);
	syscall_emulate(t, -EAGAIN);
}

/* A timer signal taken here never passes a signal stop: its siginfo (SI_TIMER, the
 * overrun) is written where the program asked for it. */
static void sigtimedwait_done(struct task *t)
{
	int64_t sig = syscall_result(t);
	if (syscall_number(t) == __NR_rt_sigtimedwait && sig > 0 && sig <= 64)
		timers_fix_waited_siginfo(t, (int)sig, syscall_arg(t, 1));
}

/* Implements rt_sigtimedwait(2). */
void sys_sigtimedwait(struct task *t)
{
	uint64_t set;
	bool present = false;
	if (call_sigmask(t, &set, &present) || !present)
		return;
	tracer_want_exit(t, sigtimedwait_done);
	struct wait w = { .what = "sigtimedwait",
			  .deadline_ns = -1,
			  .ready = waited_signal_pending,
			  .on_timeout = sigtimedwait_timed_out,
			  .interruptible = true };
	parked_state_new(t, PARKED_SIGSET)->sigset = set;
	uint64_t tsp = syscall_arg(t, 2);
	if (tsp && deadline_from_timespec(t, tsp, false, CLOCK_MONOTONIC, &w.deadline_ns))
		return;
	if (tsp && w.deadline_ns <= vclock_now())
		return; /* a poll for pending signals: never blocks */
	t->wait = w;
	if (waited_signal_pending(t) == WAIT_READY)
		return;
	sched_park(t, &w);
}
