/*
 * The spin detector: progress without instruction counters.
 *
 * A task that uses up its CPU-time budget without an event may be waiting for another
 * task by spinning on memory — which, with one task running at a time, would never end.
 * Where it is stopped is decided by timing, so descheduling it is only safe if that
 * point cannot matter:
 *
 *   1. Interrupt it and sample its registers a few times while it runs; meanwhile the
 *      kernel tracks which pages it writes (spin_watch.c), and those pages are compared
 *      by content: a page written back with what it held is not a change.
 *   2. While another task waits for the CPU it holds, single-step it: if its whole state
 *      (registers, FPU, the pages it writes) comes back, it can never leave that cycle
 *      while it runs alone; stop it at the state the cycle chooses (spin_cycle.h), the
 *      same wherever the probe came in, so a mutex spinner is stopped deterministically.
 *   3. Its memory changed: it is computing, not waiting. Let it run; the budget doubles, so
 *      a long computation is probed rarely.
 *   4. Nothing written and its registers repeat exactly at one ip: a pure spin. Memory is
 *      the same at any stop point; deschedule it silently.
 *   5. Memory unchanged but its registers change (an iteration counter, a read-only
 *      scan): its own future may depend on where it stopped. Give it a much longer budget
 *      first (it may finish); then deschedule it. The other tasks see the same memory
 *      wherever it stopped; only its own registers differ, and they matter only if it
 *      runs again: a hazard with its stack is reported then (spin_resuming), and never
 *      for a loop whose process ends first (a thread looping beside an exit_group).
 *
 * Nothing here may depend on how busy the machine is: the budget and the gaps between
 * samples are measured in the task's own CPU time (a task waiting for a CPU is not looked
 * at, and two samples with no run between them prove nothing), and a native call a probe
 * cuts short is restarted by the kernel without becoming a second event (spin_restarted).
 */
#ifndef DETRUN_SUPERVISOR_SPIN_H
#define DETRUN_SUPERVISOR_SPIN_H

#include <stdint.h>
#include <stdbool.h>

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
/* A probe's interrupt that lost the race to another stop of t (its seccomp stop, say) stays
 * pending in the kernel if t was in that stop already, and cuts t's next native call short
 * (fork's "signal pending": -ERESTARTNOINTR). With t resumed into the call by PTRACE_SYSCALL
 * the kernel reports only the call's exit stop, which clears the interrupt: no interrupt
 * stop follows to say so. True when `status` is that exit: the restart is marked (no
 * second event, spin_restarted) and t goes on into it. Any other stop ends the watch. */
bool spin_stale_interrupt_cut(struct task *t, int status);

/* `t` computes without stopping syscalls (spin_check let it run) for longer in real time
 * (ran_ms) than virtual time has left until a timer signal (of its process, or of another
 * that may act on it): natively the signal would have come by now. Without instruction counters no deterministic point
 * exists: t is stopped and descheduled here, with a hazard naming it and its stack (once
 * per task), so the scheduler moves time to the deadline instead of letting it run on. */
enum spin_verdict spin_preempt_for_timer(struct task *t, void (*handle)(int tid, int status),
					 int64_t ran_ms);
/* The running task reached an event (or was descheduled): undo what probes of this run
 * set up in its address space, before anything else can look at it. */
void spin_end(void);

/* Interrupts the running t and waits for its interrupt stop (a native call cut short goes
 * on to it); false when t reached another stop first, which went to `handle`. */
bool spin_interrupt(struct task *t, void (*handle)(int tid, int status));

/* t is about to be resumed: if a read-only loop was descheduled where timing chose, say
 * so now (its later behaviour may depend on it). */
void spin_resuming(struct task *t);

/* The budget starts now (t was just resumed, or looked at). */
void spin_start(struct task *t);
/* The budget starts at the first alarm, one budget of wall time after t was resumed: most
 * runs reach their next event long before, and reading a task's CPU time costs a read of
 * /proc at every event. A task is still never looked at before it has used a budget of
 * CPU time; a spinner is found at most a budget of wall time later. (Parallel mode marks
 * every resume so, tracer_resume.) */
void spin_start_at_alarm(struct task *t);
bool spin_started(const struct task *t);
#define SPIN_NOT_STARTED INT64_MIN /* run_cpu_ns of spin_start_at_alarm: -1 is "gone" */
/* Milliseconds of CPU time t has left of `budget_ms`; 0 when the detector should look. */
int spin_remaining_ms(struct task *t, int budget_ms);

/* At t's seccomp stop: is it the kernel restarting a native call that a probe's interrupt
 * cut short? Then it is not an event: t's resume request is set to go on as before. Any
 * stop clears the mark (pass `seccomp` false for other stops). */
bool spin_restarted(struct task *t, bool seccomp);

#endif
