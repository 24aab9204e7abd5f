/*
 * The tracer's side of ptrace inside the group (sys_ptrace.c): its wait4 and waitid report
 * its tracees' stops from their records, and the deaths the kernel would tell it of but
 * does not, as detrun is the tracees' real tracer: a traced thread's, and a traced
 * process's that is no child of the tracer's. A wait takes the latest first (by attach,
 * stop or death order), the same on every run. The SIGCHLD of a stop, which detrun sends,
 * gets the kernel's siginfo as it is delivered.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "handlers/ptrace_wait.h"
#include "handlers/sys_common.h"
#include "handlers/sys_ptrace.h"
#include "vkernel/report.h"

/* A traced thread's death, or a traced process's that is no child of its tracer, for the
 * tracer's wait (the kernel reports it to the tracer too; its parent's wait sees it
 * natively, as the kernel's). */
struct death {
	const struct task *tracer;
	struct process *tracer_proc;
	pid_t ns_tid;
	int status;
	uint64_t seq;
};
enum {
	MAX_DEATHS = 256
};
static struct death deaths[MAX_DEATHS];
static int n_deaths;

/* Does a wait4 for `pid` select tracee u? (A process group's wait counts every tracee.) */
static bool selects(pid_t pid, const struct task *u)
{
	return pid <= 0 || u->ns_tid == pid;
}

static bool traced_by_process(const struct task *u, const struct task *t)
{
	return u->traced.tracer && u->traced.tracer->proc == t->proc;
}

/* The death of a traced thread that t's wait for `pid` selects: its index, or -1. */
static int death_of(const struct task *t, pid_t pid)
{
	int pick = -1;
	for (int i = 0; i < n_deaths; i++)
		if (deaths[i].tracer_proc == t->proc && (pid <= 0 || deaths[i].ns_tid == pid) &&
		    (pick < 0 || deaths[i].seq > deaths[pick].seq))
			pick = i;
	return pick;
}

/* What t's wait4 or waitid selects: a pid, or -1 for any child (a process group's wait
 * counts every tracee). False for another call, or a waitid by pidfd. */
static bool wait_selects(struct task *t, pid_t *pid)
{
	if (t->syscall_nr == __NR_wait4) {
		*pid = (pid_t)syscall_arg(t, 0);
		return true;
	}
	if (t->syscall_nr != __NR_waitid)
		return false;
	switch ((idtype_t)syscall_arg(t, 0)) {
	case P_PID:
		*pid = (pid_t)syscall_arg(t, 1);
		return *pid > 0;
	case P_ALL:
	case P_PGID:
		*pid = -1;
		return true;
	default:
		return false;
	}
}

/* waitid's siginfo of a report: CLD_TRAPPED for a tracee's stop (its status the stop's
 * signal and event), else how it died. */
static siginfo_t waitid_info(pid_t ns_tid, int status)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGCHLD;
	si.si_pid = ns_tid;
	si.si_uid = getuid();
	if (WIFSTOPPED(status)) {
		si.si_code = CLD_TRAPPED;
		si.si_status = status >> 8;
	} else if (WIFEXITED(status)) {
		si.si_code = CLD_EXITED;
		si.si_status = WEXITSTATUS(status);
	} else {
		si.si_code = WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED;
		si.si_status = WTERMSIG(status);
	}
	return si;
}

/* The wait's result for a report of tracee ns_tid with `status`, written where wait4 or
 * waitid wants it (and an empty rusage): 0, or -EFAULT. True in *consumed unless waitid's
 * WNOWAIT leaves it to report again. */
static int write_report(struct task *t, pid_t ns_tid, int status, bool *consumed)
{
	struct rusage none;
	memset(&none, 0, sizeof(none));
	uint64_t usage;
	*consumed = true;
	if (t->syscall_nr == __NR_wait4) {
		uint64_t status_addr = syscall_arg(t, 1);
		usage = syscall_arg(t, 3);
		if (status_addr && remote_write(t, REMOTE(status_addr), &status, sizeof(status)))
			return -EFAULT;
		syscall_emulate(t, ns_tid);
	} else {
		uint64_t info_addr = syscall_arg(t, 2);
		usage = syscall_arg(t, 4);
		siginfo_t si = waitid_info(ns_tid, status);
		if (info_addr && remote_write(t, REMOTE(info_addr), &si, sizeof(si)))
			return -EFAULT;
		*consumed = !(syscall_arg(t, 3) & WNOWAIT);
		syscall_emulate(t, 0);
	}
	if (usage && remote_write(t, REMOTE(usage), &none, sizeof(none)))
		return -EFAULT;
	return 0;
}

/* waitid reports deaths only with WEXITED; wait4 always. */
static bool deaths_wanted(struct task *t)
{
	return t->syscall_nr == __NR_wait4 || (syscall_arg(t, 3) & WEXITED);
}

static bool report_death(struct task *t, int i)
{
	struct death d = deaths[i];
	bool consumed;
	if (write_report(t, d.ns_tid, d.status, &consumed)) {
		syscall_emulate(t, -EFAULT);
		return true;
	}
	if (consumed)
		deaths[i] = deaths[--n_deaths];
	trace_event(t, "  ptrace: death of task %d reported, status 0x%x", (int)d.ns_tid, d.status);
	return true;
}

bool ptrace_wait_report(struct task *t)
{
	pid_t pid;
	if (!wait_selects(t, &pid))
		return false;
	struct task *pick = NULL;
	for (struct task *u = sched_first(); u; u = u->next)
		if (traced_by_process(u, t) && u->traced.report && selects(pid, u) &&
		    (!pick || u->traced.seq > pick->traced.seq))
			pick = u;
	int death = deaths_wanted(t) ? death_of(t, pid) : -1;
	if (death >= 0 && (!pick || deaths[death].seq > pick->traced.seq))
		return report_death(t, death);
	if (!pick)
		return false;
	int status = pick->traced.report;
	bool consumed;
	if (write_report(t, pick->ns_tid, status, &consumed)) {
		syscall_emulate(t, -EFAULT);
		return true;
	}
	if (consumed)
		pick->traced.report = 0;
	trace_event(t, "  ptrace: stop of task %d reported, status 0x%x", pick->vtid, status);
	return true;
}

bool ptrace_waits_for_tracee(struct task *t)
{
	pid_t pid;
	if (!wait_selects(t, &pid))
		return false;
	for (struct task *u = sched_first(); u; u = u->next)
		if (traced_by_process(u, t) && selects(pid, u))
			return true;
	return death_of(t, pid) >= 0;
}

/* Does another live thread of t's process remain (to wait for a death t was told)? */
static bool any_thread_left(const struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->proc == t->proc && u->state != TASK_DEAD)
			return true;
	return false;
}

/* t is dead: the deaths its process was to be told of go (no one is left to wait), and its
 * own death is kept for its tracer when the kernel tells that tracer nothing (a thread, or
 * a process that is no child of the tracer's). */
void ptrace_wait_task_gone(struct task *t)
{
	for (int i = 0; i < n_deaths; i++)
		if (deaths[i].tracer_proc == t->proc && !any_thread_left(t))
			deaths[i--] = deaths[--n_deaths];
	struct task *tracer = t->traced.tracer;
	if (tracer && (t->tid != t->proc->tgid || t->traced.not_child) &&
	    tracer->state != TASK_DEAD && n_deaths < MAX_DEATHS) {
		deaths[n_deaths++] = (struct death){ tracer, tracer->proc, t->ns_tid,
						     t->exit_status, ptrace_next_seq() };
		sched_children_changed();
	}
}

void ptrace_sigchld_siginfo(struct task *t)
{
	struct process *p = t->proc;
	siginfo_t si;
	if (!p->trapped_ns_tid || ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0)
		return;
	/* detrun's kill: from outside the group's PID namespace (pid 0), or its own pid */
	if (si.si_code != SI_USER || (si.si_pid != 0 && si.si_pid != getpid()))
		return;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGCHLD;
	si.si_code = CLD_TRAPPED;
	si.si_pid = p->trapped_ns_tid;
	si.si_uid = getuid();
	si.si_status = p->trapped_sig & 0x7f;
	p->trapped_ns_tid = 0;
	ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
}
