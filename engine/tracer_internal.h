/*
 * The tracer's three parts and what they share (private to engine/tracer*.c):
 *   tracer.c          the stop loop: turns each ptrace stop into an event, serves the
 *                     scheduler (interrupted waits) and resumes the task it picks;
 *   tracer_tasks.c    task lifecycle: processes and tasks created, exec'd, exiting, reaped;
 *   tracer_outside.c  detrun's own signals: from outside the group (passed on between
 *                     events), SIGCHLD while waiting for outside input, the spin alarm;
 *                     the CPU a serial group claims among concurrent detruns.
 * Nothing here runs the scheduler, or a debugger's conversation, from inside sched_pick:
 * while the scheduler waits for outside input, signals and gdb's input are only noted,
 * and handled between events or by the main loop.
 */
#ifndef DETRUN_SUPERVISOR_TRACER_INTERNAL_H
#define DETRUN_SUPERVISOR_TRACER_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "engine/spin.h"
#include "vkernel/task.h"

struct debugger_ops;
struct launch;

/* The handlers' room, as the composition root installed it (engine/handler_ops.h). */
extern const struct handler_ops *tracer_handlers;

/* tracer.c */
extern const struct debugger_ops *tracer_debugger; /* NULL: no debugger */
void tracer_resume(struct task *t);
/* Every stop goes through tracer_handle_status; in parallel mode it may hold the stop
 * until its domain's turn, when tracer_handle_stop_now handles it. */
void tracer_handle_status(pid_t tid, int status);
void tracer_handle_stop_now(pid_t tid, int status);
bool woken_from_outside_wait(void);
void tracer_spin_event_done(struct task *t);
/* A signal-delivery stop that is no event: the kernel's copy of a terminal signal that
 * detrun passes on itself (from_terminal), or a signal the program ignores
 * (discarded_natively). Either is dropped and the task goes on. */
bool tracer_signal_stop_is_no_event(const struct task *t, int status);
/* In serial mode: the group runs on one CPU, the one fewest concurrent detruns claim
 * (tracer_outside.c). */
void tracer_pin_to_one_cpu(void);
/* A fault on a page of shared memory is an event of t (page_share.h). */
void tracer_page_event(struct task *t);
/* A stop of t held for its tracer inside the group (sys_ptrace.c) is an event of t: its
 * tracer's wait looks again. */
void tracer_held_event(struct task *t);
int64_t monotonic_ms(void);
/* The spin detector's look at t, which has run since `since` (CLOCK_MONOTONIC ms) without
 * an event and used up its budget: spin_check's verdict, with a task that outran a timer
 * signal preempted and a long computation that holds others back reported (both modes). */
enum spin_verdict tracer_spin_look(struct task *t, int64_t since, void (*handle)(int, int));

/* tracer_parallel.c */
bool tracer_parallel(void);
int tracer_domain_of(struct task *t);
void parallel_note_stop(pid_t tid, int status);
/* Did the debugger take its look at t's stop as it came (true once, then false)? */
bool tracer_debugger_saw(struct task *t);
/* Does the debugger single-step t (debugger_ops.single_stepping)? Not looked at then. */
bool tracer_debugger_steps(const struct task *t);
void parallel_init(int jobs);
void parallel_run(struct task *first);
void parallel_forked(struct task *parent, struct task *child); /* at the clone event */
bool outside_signals_queued(void);                             /* tracer_outside.c */

/* tracer_tasks.c */
struct task *tracer_first_task(const struct launch *launched);
void tracer_note_early_stop(pid_t tid, int status); /* a stop of a task not yet known */
void tracer_task_died(struct task *t, int status);
void on_exit_event(struct task *t);
void on_clone_event(struct task *parent, int event);
void on_exec_event(struct task *reported);
void tracer_report_deadlock(void);
void tracer_quiesce(void); /* reaps every task on its way out */
void tracer_kill_group(void);
int tracer_exit_code(int status);
int tracer_group_status(int if_unknown); /* the first process's wait status */
/* A live task of address space `aspace`, the first by vtid, of a process other than
 * `except` (NULL: any); NULL if there is none: the space is gone. */
struct task *tracer_task_in_aspace(int aspace, const struct process *except);

/* tracer_outside.c */
void install_supervisor_signals(void);
void restore_given_signals(void); /* in the program's process, before exec */
/* Notes a signal from outside for the loop (in a signal handler: async-signal-safe); the
 * foreground sentinel's reports come here too. */
struct outside_signal_msg;
void outside_report(const struct outside_signal_msg *msg);
void queue_outside_signal(int sig); /* passed on at the next pass_outside_signals */
void pass_outside_signals(void);
int wait_outside(struct pollfd *fds, int nfds, int timeout_ms);
bool take_waiting_stops(void);    /* a SIGCHLD came during wait_outside (and clears it) */
bool take_debugger_input(void);   /* gdb's input came during wait_outside (and clears it) */
bool waiting_stops_pending(void); /* either of the two: the pick ends (sched_ops) */
/* waitpid(-1) for any task; 0 when the spin alarm fired, -1 when no child is left. */
pid_t tracer_wait_any(int *status);
void tracer_arm_alarm(int ms);
/* The same, unless the alarm runs with that period already (from an earlier run): its
 * first SIGALRM then comes at most ms later, not ms later. */
void tracer_keep_alarm(int ms);

#endif
