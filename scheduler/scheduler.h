/*
 * The serial scheduler and the logical timeline.
 *
 * One task runs at a time. It runs freely until its next event (an intercepted syscall, a
 * signal, an exit, a spin-detector interrupt); each event takes the next logical time. At an
 * event the scheduler decides who runs next by one deterministic rule:
 *
 *   round-robin in vtid order; the running task keeps the CPU for `quantum` events, and a
 *   task that parks, yields (sched_yield) or is descheduled as a spinner ends its turn.
 *   With sched_keep_turn, a park ends the turn only if the wait is not over at the next
 *   look: a write to /dev/null, to a terminal or to a pipe with room, a read of a pipe
 *   with data, go on in the turn. (A task that switched at each such call, holding a
 *   lock, handed the lock on to every waiter in turn: a lock convoy.) A signal sent
 *   (sched_signals_changed) then ends the turn, as it acts on its target at once.
 *
 * A parked task is resumed only when its wait's predicate holds, evaluated just before the
 * resume. Predicates look only at state inside the group (pipe contents, futex words, child
 * states), so readiness — and therefore the whole schedule — is a function of the program's
 * inputs. When nothing can run:
 *   - tasks waiting on virtual-time deadlines and none on outside input: the virtual clock
 *     jumps to the earliest deadline (sleep-heavy programs finish fast);
 *   - tasks waiting on outside input (terminal, sockets to peers outside): the supervisor
 *     waits in real time, paced so virtual deadlines fall due in step with real time;
 *   - neither: the group is deadlocked; every task's wait is reported and detrun waits for a
 *     signal from outside, as the program would natively.
 */
#ifndef DETRUN_SCHEDULER_SCHEDULER_H
#define DETRUN_SCHEDULER_SCHEDULER_H

#include <poll.h>
#include <stdint.h>

#include "scheduler/task.h"

void sched_init(int quantum);
/* Whether a park whose wait is over at the next look keeps the task's turn (off: every
 * park ends it, as in logs from before the rule; the log's header says which). */
void sched_keep_turn(bool on);
/* Adds t (allocated by the supervisor, tid set, the rest of its sched part zero): it takes
 * the next vtid and goes last in the round-robin. */
void sched_add(struct task *t);
void sched_remove(struct task *t); /* unlinks t (closing its wait's fds); the caller frees */
struct task *sched_find(pid_t tid);
struct task *sched_first(void); /* all tasks in vtid order, through sched_of(t)->next */
int sched_live_count(void);

uint64_t sched_now(void); /* logical time of the latest event */
/* How many times, since the latest event, the scheduler has looked for a task to run.
 * Several looks can fall at one logical time (all tasks parked, a wait for the outside in
 * between); outside input found at a look is logged with its number, so a replay admits
 * it at the same look and not at an earlier one. */
uint32_t sched_look(void);
void sched_event(struct task *t); /* an event of task t: advances the timeline */

/* Parks t on w (copied). It stays stopped until w.ready() or w.on_timeout() prepares it. */
void sched_park(struct task *t, const struct wait *w);
void sched_unpark(struct task *t); /* prepared by someone else (a futex wake) */
void sched_end_turn(void);         /* the current task gives up the rest of its quantum */
/* t's call must complete before anything else happens (an external call: its result is
 * logged at the logical time of the call): the next pick is t, whoever's turn it is. */
void sched_continue(struct task *t);

/* Bumped by events that may make a signal pending somewhere (kill, child exit, outside
 * signals); parked tasks are checked for deliverable signals only when it changed. */
void sched_signals_changed(void);
/* Bumped when a child changes state (exit, stop, exec), for retried wait4/waitid. */
void sched_children_changed(void);
uint64_t sched_children_epoch(void);
uint64_t sched_signals_epoch(void);

/* Supervisor services the scheduler calls while picking. */
struct sched_ops {
	/* Is a signal deliverable to parked t that should end its wait? If so, prepare t's
	 * resume (EINTR, restart or native run) and return 1. */
	int (*interrupt_wait)(struct task *t);
	/* Wait in real time for outside input on the given descriptors, at most timeout_ms
	 * (-1: forever), also returning early when the supervisor got a signal. Returns the
	 * number of ready descriptors, 0 on timeout, -1 when interrupted by a signal. */
	int (*wait_outside)(struct pollfd *fds, int nfds, int timeout_ms);
	/* Describe every task's wait when the group is deadlocked. */
	void (*report_deadlock)(void);
	/* Between events, all tasks stopped: outside signals reach the group here. */
	void (*between_events)(void);
	/* Timers: fire those due at the current virtual time; the earliest armed deadline. */
	void (*fire_timers)(void);
	int64_t (*next_timer)(void);
	/* Did something come during wait_outside that the supervisor handles itself: a task
	 * changed state (handling it may free tasks), or a debugger's input (a conversation
	 * that may change any task)? Then sched_pick returns NULL at once and the supervisor
	 * handles it before picking again. Optional. */
	bool (*stops_pending)(void);
	/* Parallel mode (--jobs N > 1): the memory domain of a task (processes that share no
	 * memory are in different domains). NULL in serial mode. */
	int (*domain_of)(struct task *t);
	/* Parked t's wait ended (its resume is prepared), at a pick: a point of the timeline
	 * that is the same on every run. Optional. */
	void (*woken)(struct task *t);
};
void sched_set_ops(const struct sched_ops *ops);

/* The next task to resume, with its resume prepared; NULL when no task is left, or when
 * ops->stops_pending() said something came during an outside wait. */
struct task *sched_pick(void);

/*
 * Parallel mode. Each memory domain runs one task at a time, round-robin among its own
 * tasks with the same quantum, and counts its events on a clock of its own (Kendo's
 * deterministic logical clocks, with events in place of instruction counts). The engine
 * handles a domain's next event only when no other domain could still come before it:
 * order is (clock, domain id). A parked task of a domain with nothing runnable is woken
 * by an event of another domain; its clock is then raised to that event's (sched_front),
 * so its next event comes after the one that woke it.
 *
 * Events alone leave a computing domain's clock still, and it holds back every domain
 * whose next event has a later clock. Ticks move it too: calls a process makes on its own
 * memory map (syscalls.def, TICK) stop only to add a weight to the clock, a function of
 * the call (engine/tracer_parallel.c), and run on without waiting for a turn. A tick
 * touches nothing another domain sees, so it needs no place in the order; a domain's
 * clock stays a function of its own run (its events, its ticks, the raises of the events
 * that woke it), and the order of events by (clock, id) the same on every run.
 */
struct task *sched_pick_in(int domain); /* like sched_pick, within one domain; NULL: none */
uint64_t sched_domain_clock(int domain);
void sched_domain_raise(int domain, uint64_t clock);
void sched_domain_tick(int domain, uint64_t weight); /* a tick: the clock moves by weight */
/* The clock of the latest event, as it stood at that event: ticks of its domain since
 * (at times no run shares) do not move it. */
uint64_t sched_front(void);

#endif
