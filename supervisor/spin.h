/*
 * The spin detector: progress without instruction counters.
 *
 * A task that runs past its wall-clock budget without an event may be waiting for another
 * task by spinning on memory — which, with one task running at a time, would never end.
 * Where it is stopped is decided by the wall clock, so descheduling it is only safe if that
 * point cannot matter:
 *
 *   1. Interrupt it, take a digest of all its writable memory, and sample its registers a
 *      few times while it runs; then compare the memory. (userfaultfd write-protection
 *      was tried first and dropped: a writer blocked on its write fault looks exactly
 *      like a spinner whose registers repeat, and private file-backed pages cannot be
 *      protected at all. A digest compares the state the other tasks would see at the
 *      point where the task is stopped, which is what has to be invariant.)
 *   2. Its memory changed: it is computing, not waiting. Let it run; the budget doubles, so
 *      a long computation is probed rarely.
 *   3. Memory unchanged and its registers repeat exactly at one ip: a pure spin. Its
 *      state at any stop point is the same; deschedule it silently.
 *   4. Memory unchanged but its registers change (an iteration counter, a read-only
 *      scan): its own future may depend on where it stopped. Give it a much longer budget
 *      first (it may finish); then deschedule it and report a hazard with its stack.
 */
#ifndef DETRUN_SUPERVISOR_SPIN_H
#define DETRUN_SUPERVISOR_SPIN_H

struct task;

enum spin_verdict {
	SPIN_KEEP_RUNNING, /* resumed, with t->run_budget_ms set for the next look */
	SPIN_DESCHEDULE,   /* stopped and marked spin_descheduled */
	SPIN_EVENT,        /* it reached a real event meanwhile; the status was handled */
};

/* `t` is running past its budget. `handle` processes a stop that is not the detector's. */
enum spin_verdict spin_check(struct task *t, void (*handle)(int tid, int status));
/* t stopped for an interrupt of the spin detector (a late one, maybe, that came after the
 * probe gave up): if the interrupt cut a syscall short, its restart is no new event. */
void spin_note_interrupted_call(struct task *t);

#endif
