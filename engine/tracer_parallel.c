/*
 * Parallel mode (--jobs N > 1): memory domains run at the same time; their events are
 * handled one at a time, in an order that does not depend on timing.
 *
 * A memory domain is a set of processes that share memory (today: an address space).
 * Inside a domain one task runs at a time, as in serial mode. Across domains nothing is
 * shared but what passes through the kernel, and every call that passes something stops
 * (the filter of parallel mode), so what a domain computes between two of its events
 * depends only on its own state. The order of events is Kendo's, with events in place of
 * instruction counts: each domain counts its events (scheduler.h, sched_domain_clock),
 * and its ticks (touch_ticks.h: the calls on its own memory map, which stop only to move
 * its clock, and its first touches of fresh memory),
 * and the stop of domain D is handled only when D is the least running or stopped domain
 * by (clock, id) — no other domain can still produce an event that comes before it. A
 * domain ahead waits at its stop (it is "held") for the others to catch up; a domain
 * whose every task waits does not hold anyone back, and the event that wakes it raises
 * its clock to its own.
 *
 * One domain at a time has the timeline (the "token"): while its stop is handled, and
 * while the call of that event runs natively (resumed with PTRACE_SYSCALL up to its exit
 * stop, t->in_call), so the call's effects land where its event stands. Stops of other
 * domains that come meanwhile wait for their turn.
 *
 * Some events act on other domains at once: a signal sent, a death that signals a parent,
 * timers that fire, signals from outside, a ptrace attach (which joins the tracer's and
 * the tracee's domains into one: settle_for_attach). They are handled only when no other
 * domain is running (a barrier): each other domain is then stopped at a point of its own
 * run that timing does not choose (its next stop), where the signal reaches it when it
 * goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "syscalls/syscall_table.h"
#include "engine/debugger_hooks.h"
#include "engine/page_share.h"
#include "engine/parallel_barrier.h"
#include "engine/remote.h"
#include "engine/spin.h"
#include "engine/touch_ticks.h"
#include "engine/tracer.h"
#include "engine/tracer_internal.h"
#include "vkernel/host_status.h"
#include "vkernel/memory_domain.h"
#include "vkernel/report.h"
#include "vkernel/signal_bits.h"
#include "vkernel/task.h"
#include "vkernel/timers.h"

static int jobs;           /* 0: serial mode */
static bool one_at_a_time; /* under the debugger: see settle_others */
static int token = -1;     /* the domain that has the timeline, -1 for none */
static uint64_t woken_at;  /* sched_now() when waiting domains were last looked at */
static int woken_after;    /* ... and the last one woken then, -1 for none */

bool tracer_parallel(void)
{
	return jobs > 1;
}

int tracer_domain_of(struct task *t)
{
	return memory_domain_of(t->proc);
}

/* Two domains became one at an event of the domain that has the timeline (every other
 * domain is stopped for such a call: parallel_barrier_for): the joint domain goes on from that
 * event's clock at least. */
static void domains_merged(struct process *a, struct process *b)
{
	(void)b;
	touch_collect();
	sched_domain_raise(memory_domain_of(a), sched_front());
}

/* A stop that waits for its domain's turn. A task its tracer inside the group holds
 * (traced_stop) may have been held so when the tracer attached (settle_for_attach): its stop
 * is handled only once the tracer lets it go, at its domain's turn after that, as a stop
 * of a task that was never resumed. Until then it is neither running nor ready, and the
 * tracer's domain goes on without it. A kill takes it out of that stop, to its exit stop:
 * that one waits for its turn as any. */
static bool waits_for_turn(struct task *t)
{
	return t->held && (!sched_of(t)->traced_stop || t->proc->dying);
}

/* What a domain is doing, from its tasks. */
struct domain_view {
	int id;
	uint64_t clock;
	bool running;      /* a task of it runs (or is being created) */
	bool ready;        /* a task of it can be resumed */
	struct task *held; /* its stop waiting for its turn (the first by vtid) */
};

enum {
	MAX_VIEWS = 1024
};
static struct domain_view views[MAX_VIEWS];
static int n_views;

static struct domain_view *view_of(int id)
{
	for (int i = 0; i < n_views; i++)
		if (views[i].id == id)
			return &views[i];
	if (n_views == MAX_VIEWS)
		die("more than %d memory domains at once", MAX_VIEWS);
	struct domain_view *v = &views[n_views++];
	*v = (struct domain_view){ .id = id, .clock = sched_domain_clock(id) };
	return v;
}

static void look_at_domains(void)
{
	touch_collect();
	n_views = 0;
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state == TASK_DEAD)
			continue;
		struct domain_view *v = view_of(tracer_domain_of(t));
		if (t->held) {
			if (!v->held && waits_for_turn(t))
				v->held = t;
		} else if (t->state == TASK_RUNNING || t->state == TASK_NEW ||
			   t->state == TASK_EXITING) {
			v->running = true;
		} else if (t->state == TASK_STOPPED && !t->parked && !t->spin_descheduled &&
			   !t->traced_stop) {
			v->ready = true;
		}
	}
}

static bool domain_waits(const struct domain_view *v)
{
	return !v->running && !v->ready && !v->held;
}

static int running_domains(void)
{
	int n = 0;
	for (int i = 0; i < n_views; i++)
		n += views[i].running;
	return n;
}

static bool before(const struct domain_view *a, const struct domain_view *b)
{
	return a->clock < b->clock || (a->clock == b->clock && a->id < b->id);
}

/* The domain whose next event comes first; NULL when every domain waits. */
static struct domain_view *first_domain(void)
{
	struct domain_view *first = NULL;
	for (int i = 0; i < n_views; i++)
		if (!domain_waits(&views[i]) && (!first || before(&views[i], first)))
			first = &views[i];
	return first;
}

/* Does the token's domain still have the timeline: a call of its event still running, or
 * a task on its way out (a death is seen by all at one logical time; an exiting process
 * has left its domain already, memory_domain_forget)? */
static bool token_busy(void)
{
	for (struct task *t = sched_first(); t; t = t->next) {
		bool runs = (t->state == TASK_RUNNING || t->state == TASK_NEW) && !t->held;
		if ((t->in_call && runs) || t->state == TASK_EXITING || (t->proc->dying && runs))
			return true;
	}
	return false;
}

/* The exit stop of a process whose going acts on other domains (parallel_exit_barrier) waits for
 * its turn and its barrier, however it came: after an exit_group whose call had the
 * timeline, or in a process that was dying. Handled at once, it would let a parent that
 * runs meanwhile take its SIGCHLD wherever the parent happened to be. */
static bool exit_waits_for_turn(struct task *t, int status)
{
	return (unsigned)status >> 16 == PTRACE_EVENT_EXIT &&
	       parallel_exit_barrier(t) != BARRIER_NONE;
}

/* Under the debugger each stop goes to it as it comes, before it is held: a trap of gdb's
 * (a breakpoint, a watchpoint, a single step) is no event and must not wait for a turn,
 * or the events of other domains handled meanwhile would move the position it is counted
 * from (the latest event) by how many stops gdb's steps made. */
bool tracer_debugger_saw(struct task *t)
{
	bool saw = t->debugger_saw;
	t->debugger_saw = false;
	return saw;
}

bool tracer_debugger_steps(const struct task *t)
{
	return tracer_debugger && tracer_debugger->single_stepping(t);
}

/* The stop of a PTRACE_INTERRUPT that came after its asker had gone: a spin probe whose
 * interrupt lost the race to another stop of the task (a tick, above all) leaves it
 * pending, and the kernel stops the task for it when it next returns to its code. No
 * event, and no point of its run that its own calls choose: held, it kept a computing task
 * stopped until its domain's turn for nothing (while a barrier could take the domain for
 * stopped there); handled at once, the task goes on to its next stop of its own. */
static bool stale_interrupt(const struct task *t, int status)
{
	return (unsigned)status >> 16 == PTRACE_EVENT_STOP && WSTOPSIG(status) == SIGTRAP &&
	       t->state == TASK_RUNNING;
}

/* A stop is held for its turn unless it belongs to the event that has the timeline, or is
 * no event at all: a signal the program ignores (a SIGPIPE from a send to a peer that has
 * gone), the kernel's copy of a terminal signal. Such a stop is no point of the task's
 * run that a barrier may stop it at: held, the outside signal passed on meanwhile reached
 * the task there or at its next stop, as detrun read that signal before or after the stop
 * had been handled, while a replay, which has the signal at that logical time from the
 * start, always found the task there (or has no such stop: its stand-in socket raises no
 * SIGPIPE). Dropped at once, as serial mode does, the task goes on to its own stop. */
void parallel_note_stop(pid_t tid, int status)
{
	touch_collect(); /* the first touches before this stop are on its domain's clock */
	struct task *t = sched_find(tid);
	if (t && one_at_a_time && WIFSTOPPED(status) && !t->proc->dying) {
		t->regs_valid = false;
		if (tracer_debugger->on_stop(t, status))
			return;
		remote_store_regs(t);   /* what it changed (a trap flag) outlives the wait */
		t->debugger_saw = true; /* not again when handled: tracer_debugger_saw */
	}
	if (t && t->fault_held) { /* it left its fault (a signal): it comes again if it must */
		t->fault_held = t->fault_stopped = t->held = false;
	}
	/* At a call's stop (the exit of one that faulted in the kernel, above all), before
	 * the program's code can run: not at a signal's, whose signal an injection drops. */
	if (t && WIFSTOPPED(status) &&
	    ((unsigned)status >> 16 == PTRACE_EVENT_SECCOMP ||
	     WSTOPSIG(status) == (SIGTRAP | 0x80)))
		page_share_stopped(t);
	if (t && WIFSTOPPED(status) && touch_tick_stop(t, status))
		return;
	bool now = !t || !WIFSTOPPED(status) ||
		   ((t->in_call || t->proc->dying ||
		     (token >= 0 && tracer_domain_of(t) == token)) &&
		    !exit_waits_for_turn(t, status)) ||
		   tracer_signal_stop_is_no_event(t, status) || stale_interrupt(t, status);
	if (now) {
		tracer_handle_stop_now(tid, status);
		return;
	}
	t->held = true;
	t->held_status = status;
}

static bool barrier_holds(int barrier, int self)
{
	for (int i = 0; i < n_views; i++)
		if (views[i].running && views[i].id != self &&
		    (barrier == BARRIER_ALL || views[i].id == barrier))
			return true;
	return false;
}

static void look_at_runners(void);

/* A task that runs now, outside domain `except` (-1: any), not held, not on its way out. */
static struct task *running_task(int except)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (tracer_domain_of(t) != except && !t->held && t->state == TASK_RUNNING &&
		    !t->proc->dying)
			return t;
	return NULL;
}

/* gdb's Ctrl-C, taken by interrupting the one task that runs (one_at_a_time). */
static bool debugger_interrupts(void)
{
	struct task *t = one_at_a_time ? running_task(-1) : NULL;
	return t && tracer_debugger->poll(t, tracer_handle_status);
}

/* Waits for the next stop and handles it; at the alarm instead, takes gdb's Ctrl-C or has
 * the spin detector look at the runners (*alarm: the latter). False: no task to wait for. */
static bool handle_next_stop(bool *alarm)
{
	int status;
	pid_t got = tracer_wait_any(&status);
	*alarm = false;
	if (got < 0)
		return false;
	if (got > 0) {
		tracer_handle_status(got, status);
	} else if (touch_woke()) {
		/* first touches moved clocks: order() looks again (the spin alarm, if it came
		 * too, is looked at with the next one) */
	} else if (!debugger_interrupts()) {
		look_at_runners();
		*alarm = true;
	}
	return true;
}

/* Under the debugger a recording of parallel mode runs one domain at a time, so that gdb
 * sees the whole group stopped wherever one task stops, as in serial mode. Before a domain
 * starts or its event is handled, every other domain that runs is let go on to its next
 * stop, where it is held: the stop it would reach had they all run at once, since what a
 * domain computes between two of its events depends on nothing another domain does (the
 * module comment). So the events come in the recording's order, and a barrier finds each
 * domain where it found it in the recording. */
static void settle_others(int id)
{
	bool alarm;
	while (one_at_a_time && running_task(id) && handle_next_stop(&alarm))
		;
}

/* Resumes t of domain `id` under the token: a call that has yet to run runs now. */
static void start_task(struct task *t)
{
	settle_others(tracer_domain_of(t));
	token = tracer_domain_of(t);
	tracer_resume(t);
}

/* After an event of domain id, the domain goes on with its next task, unless a task of
 * it already runs (the handler resumed it) or waits for its turn. */
static void go_on_in_domain(int id)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (tracer_domain_of(t) == id &&
		    (t->held ? waits_for_turn(t) : t->state == TASK_RUNNING))
			return;
	struct task *next = sched_pick_in(id);
	if (next)
		start_task(next);
}

/* The runner the spin detector has set up to watch (spin_watch.c keeps one), by tid. */
static pid_t probed;

static void end_probe(void)
{
	spin_end();
	probed = 0;
}

static void handle_held(struct task *t)
{
	int id = tracer_domain_of(t);
	pid_t tid = t->tid;
	if (tid == probed)
		end_probe(); /* before a handler looks at its memory */
	token = id;
	t->held = false;
	if (t->fault_held) { /* an event: the page moves, the task goes on in its fault */
		settle_others(id);
		page_share_transfer(t);
		return;
	}
	settle_others(id);
	remote_store_regs(t); /* what its tracer inside the group wrote while it was held */
	uint64_t events = sched_now();
	if ((unsigned)t->held_status >> 16 == PTRACE_EVENT_SECCOMP)
		page_share_call_pages(t); /* its barrier has stopped their holders */
	tracer_handle_stop_now(tid, t->held_status);
	if (sched_now() == events)
		return; /* not an event: the task went on, or waits for its next stop */
	if (sched_find(tid) == t && t->state == TASK_STOPPED)
		tracer_spin_event_done(t);
	go_on_in_domain(id);
}

/* Domains whose every task waits: an event may have made one ready. Looked at once per
 * event, in id order, so what wakes when is a function of the timeline. */
static void wake_waiting_domains(void)
{
	if (woken_at != sched_now()) {
		woken_at = sched_now();
		woken_after = -1;
	} else if (woken_after == INT_MAX) {
		return;
	}
	look_at_domains();
	for (;;) {
		struct domain_view *next = NULL;
		for (int i = 0; i < n_views; i++)
			if (domain_waits(&views[i]) && views[i].id > woken_after &&
			    (!next || views[i].id < next->id))
				next = &views[i];
		if (!next) {
			woken_after = INT_MAX;
			return;
		}
		woken_after = next->id;
		struct task *t = sched_pick_in(next->id);
		if (t) {
			touch_collect();
			sched_domain_raise(next->id, sched_front());
			start_task(t);
			return; /* its call runs now: the others are looked at after it */
		}
	}
}

/* A process began to die (exit_group, a fatal signal) while stops of its other threads
 * waited for their turn: those threads are on their way out now (the kill wakes a stopped
 * task), and each will report its exit stop; one that already did is handled at once,
 * unless its going acts on other domains (exit_waits_for_turn). */
static void release_dying(void)
{
	for (struct task *t = sched_first(); t; t = t->next) {
		if (!t->held || !t->proc->dying || exit_waits_for_turn(t, t->held_status))
			continue;
		t->held = false;
		if (t->fault_held) { /* the kill ends its fault */
			t->fault_held = false;
			if (t->fault_stopped)
				tracer_resume(t);
			t->fault_stopped = false;
			continue;
		}
		if ((unsigned)t->held_status >> 16 == PTRACE_EVENT_EXIT)
			tracer_handle_stop_now(t->tid, t->held_status);
		else
			t->state = TASK_RUNNING;
	}
}

/* Timers due and signals from outside reach the group only while no domain runs. */
static bool barrier_work(void)
{
	int64_t due = timers_next_deadline();
	bool timers_due = due >= 0 && due <= vclock_now();
	const struct shim_ops *shim = shim_get();
	bool outside = shim_intercepts() && (outside_signals_queued() ||
					     (shim->signals_due && shim->signals_due(sched_now())));
	if (!timers_due && !outside)
		return false;
	if (running_domains())
		return true; /* wait until each has stopped */
	if (timers_due)
		timers_fire();
	if (outside)
		pass_outside_signals();
	/* A SIGKILL from outside: the stops held then are not events any more. Handled as
	 * events, each would count or not depending on whether the kernel had taken the
	 * killed task out of its stop by then (ptrace fails once it has). */
	release_dying();
	look_at_domains();
	return false;
}

/* The one task of a domain that can start at any moment: its resume runs no call (a new
 * process at its first stop, a task past its call's exit), and no other task of its domain
 * could be picked instead. Its domain need not wait for its turn, only for a CPU. */
static struct task *free_to_start(int id)
{
	struct task *only = NULL;
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state == TASK_DEAD || tracer_domain_of(t) != id)
			continue;
		if (only)
			return NULL;
		only = t;
	}
	return only && only->state == TASK_STOPPED && !only->parked && !only->at_entry &&
			       !only->spin_descheduled && !only->held && !only->traced_stop
		       ? only
		       : NULL;
}

static void start_free_domains(void)
{
	for (int i = 0; i < n_views && running_domains() < jobs; i++) {
		struct task *t = views[i].ready && !views[i].running && !views[i].held
					 ? free_to_start(views[i].id)
					 : NULL;
		if (t) {
			settle_others(views[i].id);
			tracer_resume(t);
			views[i].running = true;
			if (one_at_a_time) { /* settle_others held the others */
				look_at_domains();
				i = -1;
			}
		}
	}
}

/* A ptrace attach joins the tracee's domain to its tracer's (parallel_barrier.h): from
 * then on the tracer sees the tracee where it stands (its registers), and the joint domain
 * runs its tasks in an order that starts from where each stands. A domain stopped at its
 * next stop (held), parked in a call, or waiting for its turn to run a call stands where
 * its events left it; but the one task of a domain that is free to start (free_to_start:
 * a new process at its first stop above all) starts whenever a CPU is free, a timing. So
 * it starts now, whatever the --jobs cap: the barrier then waits for its next stop, where
 * it is held, as if it had had a CPU at once. No word in the trace: whether it had started
 * already is a timing too. */
static void settle_for_attach(int id)
{
	struct domain_view *v = view_of(id);
	struct task *start = v->ready && !v->running && !v->held ? free_to_start(id) : NULL;
	if (start) {
		tracer_resume(start);
		v->running = true;
	}
}

/* Handles every stop whose turn has come, and starts domains that may run. */
static void order(void)
{
	release_dying();
	while (token < 0 || !token_busy()) {
		token = -1;
		wake_waiting_domains();
		if (token >= 0)
			continue;
		look_at_domains();
		if (barrier_work())
			return;
		start_free_domains();
		struct domain_view *first = first_domain();
		if (!first || first->running)
			return; /* nothing to do, or the first domain has yet to reach its stop */
		if (first->held) {
			bool attach;
			int barrier = parallel_barrier_for(first->held, &attach);
			if (attach && barrier >= 0)
				settle_for_attach(barrier);
			if (barrier_holds(barrier, first->id))
				return;
			handle_held(first->held);
		} else {
			if (running_domains() >= jobs)
				return;
			go_on_in_domain(first->id);
		}
	}
}

/* A task of a dying process runs too, whatever its state says: the kill takes it out of
 * its stop (a parked call's included) and its exit stop is on its way. Taken for waiting,
 * the group could look deadlocked until that stop came, a timing a replay does not
 * share (serial mode reaps such tasks first: tracer_quiesce). */
static bool anything_runs(void)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->held ? waits_for_turn(t)
			    : t->state == TASK_RUNNING || t->state == TASK_NEW ||
				      t->state == TASK_EXITING ||
				      (t->proc->dying && t->state != TASK_DEAD))
			return true;
	return false;
}

/* Runners past their budget go to the spin detector, one at a time. Their CPU time is
 * read only here, at the alarm: a resume only marks the budget as not started. */
static void look_at_runners(void)
{
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state != TASK_RUNNING || t->held || t->in_call)
			continue;
		if (tracer_debugger_steps(t)) {
			t->run_cpu_ns = -1; /* its budget starts at the look after its steps */
			continue;
		}
		if (t->run_cpu_ns < 0) {
			spin_start(t);
			continue;
		}
		int budget = t->run_budget_ms ? (int)t->run_budget_ms : tracer_opts->spin_budget_ms;
		if (spin_remaining_ms(t, budget) > 0)
			continue;
		if (probed && probed != t->tid)
			end_probe();
		probed = t->tid;
		enum spin_verdict v = tracer_spin_look(t, t->resumed_ms, tracer_handle_status);
		if (v == SPIN_KEEP_RUNNING) {
			spin_start(t);
			continue;
		}
		end_probe();
		return; /* tasks changed: the others wait for the next alarm */
	}
}

/* Nothing runs and no stop waits: every task waits. The serial pick decides, as there:
 * time jumps, waits for the outside, deadlock. */
static bool pick_when_all_wait(void)
{
	for (;;) {
		struct task *t = sched_pick();
		if (!t && woken_from_outside_wait())
			continue;
		if (!t)
			return false;
		touch_collect();
		sched_domain_raise(tracer_domain_of(t), sched_front());
		start_task(t);
		return true;
	}
}

void parallel_run(struct task *first)
{
	(void)first; /* running: its first stop comes through the loop */
	int period = tracer_opts->spin_budget_ms;
	if (one_at_a_time && period > INTERRUPT_POLL_MS)
		period = INTERRUPT_POLL_MS;
	tracer_arm_alarm(period); /* every period: look_at_runners */
	for (;;) {
		page_share_drain();
		order();
		if (!sched_first())
			break;
		if (!anything_runs()) {
			if (!pick_when_all_wait())
				break;
			continue;
		}
		bool alarm;
		if (!handle_next_stop(&alarm))
			break;
		if (alarm && !shim_intercepts())
			pass_outside_signals();
	}
	tracer_arm_alarm(0);
	page_share_report();
	touch_report();
}

/* How far ahead of its parent a new domain's clock starts. A child that starts level with
 * its parent holds the parent back as soon as it computes: the parent's next event (the
 * next fork of a fork-join, a write to the pipe the child reads) comes after the child's
 * clock, and waits for the child's first event. Started ahead, the child waits instead,
 * and only when it has something to say while its parent still runs: a parent typically
 * starts its children, then waits for them, which holds nobody back. Any deterministic
 * lead keeps the order deterministic; this one is more events than a parent makes between
 * two forks in practice. */
enum {
	FORK_LEAD = 1 << 20
};

void parallel_forked(struct task *parent, struct task *child)
{
	int from = tracer_domain_of(parent), to = tracer_domain_of(child);
	touch_collect();
	if (to != from)
		sched_domain_raise(to, sched_domain_clock(from) + FORK_LEAD);
}

/* Every event of a domain hands its task between CPUs twice (the stop wakes detrun, the
 * resume wakes the task), and a CPU that went idle meanwhile sleeps in the hypervisor's
 * halt on a virtual machine: waking it cost 140 µs a stop here, against 15 µs when both
 * stay on one CPU. A latency request of 0 µs (PM QoS, held while the descriptor stays open,
 * so it ends with detrun) keeps idle CPUs polling, and the same stop costs 20 µs. It is a
 * request for speed only: without root, or with DETRUN_IDLE_POLL=0, the group runs the
 * same, slower. */
static void keep_idle_cpus_polling(void)
{
	const char *want = getenv("DETRUN_IDLE_POLL");
	if (want && !strcmp(want, "0"))
		return;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	int32_t latency_us = 0;
	if (write(fd, &latency_us, sizeof(latency_us)) != (ssize_t)sizeof(latency_us))
		close(fd);
}

void parallel_init(int n)
{
	jobs = n > 1 ? n : 0;

	if (jobs)
		memory_domain_set_merge_hook(domains_merged);
	if (jobs)
		keep_idle_cpus_polling();
	one_at_a_time = jobs && tracer_debugger;
}
