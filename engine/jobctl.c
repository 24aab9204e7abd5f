#include "engine/jobctl.h"

#include <signal.h>
#include <string.h>

#include "scheduler/scheduler.h"
#include "vkernel/report.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "engine/handler_ops.h"
#include "engine/tracer_internal.h"
#include "vkernel/signal_bits.h"

#define STOP_SIGNALS (SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))

static bool in_group_stop(const struct task *t);

/* The stopped thread may go on: its process got a SIGCONT (pending until a thread takes
 * it), a sibling saw that already, or it is being killed. */
static enum wait_result continued_now(struct task *t)
{
	struct process *p = t->proc;
	if (p->dying || !p->stopped_by)
		return WAIT_READY;
	struct wait_state *s = parked_state(t, PARKED_EPOCH);
	if (s->epoch == sched_signals_epoch())
		return WAIT_NOT_READY; /* no signal was sent since the last look */
	s->epoch = sched_signals_epoch();
	uint64_t pending, blocked;
	if (read_signal_state(t, &pending, &blocked) == 0 && !(pending & SIGBIT(SIGCONT)))
		return WAIT_NOT_READY;
	trace_event(t, "  continued");
	p->stopped_by = 0;
	return WAIT_READY;
}

/* A thread its tracer inside the group listens to (PTRACE_LISTEN) does not run on: it
 * leaves the wait into a stop its tracer holds. */
static enum wait_result continued(struct task *t)
{
	if (continued_now(t) == WAIT_NOT_READY)
		return WAIT_NOT_READY;
	if (t->proc->dying || !tracer_handlers->continued(t))
		return WAIT_READY;
	sched_unpark(t);
	return WAIT_NOT_READY; /* not to run: held */
}

static bool in_group_stop(const struct task *t)
{
	return t->parked && t->wait.ready == continued;
}

bool jobctl_group_stop(struct task *t, int sig)
{
	if (sig <= 0 || sig > 64 || !(STOP_SIGNALS & SIGBIT(sig)))
		return false;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	if (!t->proc->stopped_by)
		trace_event(t, "stopped by signal %d (%s)", sig, strsignal(sig));
	t->proc->stopped_by = sig;
	t->traced.left_group_stop = false;
	struct wait w = { .what = "stopped (job control)", .deadline_ns = -1, .ready = continued };
	parked_state_new(t, PARKED_EPOCH)->epoch = sched_signals_epoch();
	sched_park(t, &w);
	/* The real parent's waitpid(WUNTRACED) and its SIGCHLD; siblings parked in calls
	 * are to join the stop (jobctl_stop_due, through the scheduler's signal check). */
	sched_children_changed();
	sched_signals_changed();
	return true;
}

int jobctl_stop_due(const struct task *t)
{
	if (!t->proc->stopped_by || in_group_stop(t) || t->traced.left_group_stop)
		return 0;
	return t->proc->stopped_by;
}

bool jobctl_in_group_stop(const struct task *t)
{
	return in_group_stop(t);
}

void jobctl_tracer_resumed(struct task *t)
{
	if (!in_group_stop(t))
		return;
	sched_unpark(t);
	t->traced.left_group_stop = true;
}

bool jobctl_stops(const struct task *t, int sig)
{
	if (sig == SIGSTOP)
		return true;
	if (!(STOP_SIGNALS & SIGBIT(sig)))
		return false;
	return !signal_is_caught(t, sig) && !(t->proc->ignored & SIGBIT(sig));
}

bool jobctl_all_stopped(void)
{
	bool any = false;
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state == TASK_DEAD || t->state == TASK_EXITING)
			continue;
		if (!in_group_stop(t))
			return false;
		any = true;
	}
	return any;
}

void jobctl_signal_sent(int sig)
{
	if (sig == SIGCONT)
		sched_children_changed();
}
