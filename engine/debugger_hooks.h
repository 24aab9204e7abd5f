/*
 * Debugging a run: detrun serves the GDB remote serial protocol on a replay or a plain run.
 *
 * A debugger attaches through this table, as a scheduler does through sched_ops and a shim
 * through shim_ops: the engine holds a pointer to it (NULL: no debugger, no cost) and knows
 * nothing else of debugger/, which depends on the supervisor and never the other way.
 * debugger/ registers its table from the command line's entry (debugger_init,
 * debugger/debugger.h), only when
 * a debugger is asked for.
 *
 * The stop loop calls two hooks: on_stop for every ptrace stop (breakpoint, watchpoint
 * and single-step traps are the debugger's and never reach the scheduler: they are no
 * events and do not move logical time), and on_event at every event (where `monitor when`
 * takes its time from, where `monitor goto` and signals stop). Going back is re-execution:
 * detrun kills the group and executes itself again with the gdb connection inherited,
 * replays from the start and stops at the wanted position (debugger/travel.c). That is
 * possible only because the run is deterministic at every event.
 *
 * gdb never converses from inside the scheduler's pick: input from gdb while the group is
 * idle only wakes the pick (as a task's stop does), and the stop loop hands it to
 * idle_input once the pick has returned, every task stopped at an event or parked.
 */
#ifndef DETRUN_SUPERVISOR_DEBUGGER_HOOKS_H
#define DETRUN_SUPERVISOR_DEBUGGER_HOOKS_H

#include <stdbool.h>

struct task;

/* The stop loop looks at gdb's connection at least this often while a task runs. */
enum {
	INTERRUPT_POLL_MS = 50
};

struct debugger_ops {
	/* Every ptrace stop of a known task, before the tracer looks at it. True: the stop
	 * was the debugger's (a trap it set); it has resumed or kept the task and the tracer
	 * must not see it. */
	bool (*on_stop)(struct task *t, int status);
	/* Every event, after the scheduler counted it. */
	void (*on_event)(struct task *t);
	/* A new task was adopted (stopped, not run yet): a fork is reported to gdb. */
	void (*on_fork)(struct task *parent, struct task *child);
	/* t's process executed a new program, which is set up and about to run. */
	void (*on_exec)(struct task *t);
	/* Task t is gone with wait status `status` (the other tasks are where they stood). */
	void (*on_death)(struct task *t, int status);
	/* The stop loop woke up while t runs: takes gdb's Ctrl-C, if it came, by interrupting
	 * t (stops of other kinds meanwhile go to `handle`). True if it did: t may have
	 * stopped. Called at least every INTERRUPT_POLL_MS. */
	bool (*poll)(struct task *t, void (*handle)(int tid, int status));
	/* Is t single-stepped (gdb's stepi, an interval debugger/stepback.c counts, a step
	 * over an int3)? Each of its instructions ends in a trap that comes back to the stop
	 * loop, so it cannot spin unseen, and the spin detector keeps off it: a probe resumes
	 * its task with PTRACE_CONT, without the step, and instructions would run uncounted,
	 * as many as the wall clock let them (a busy machine changed where going back landed). */
	bool (*single_stepping)(const struct task *t);
	/* While no task runs and detrun waits for outside input: the connection to watch too
	 * (-1 for none). Its turning readable ends the wait and the pick (wakes, not talks). */
	int (*wait_fd)(void);
	/* After a pick that gdb's input woke: every task is stopped at an event or parked,
	 * and a Ctrl-C stops the group there. */
	void (*idle_input)(void);
	/* The run is over with detrun's exit code `code`: tells gdb, waits for it to go;
	 * returns the exit code. */
	int (*finish)(int code);
};

/* Attaches a debugger to the next tracer_run (NULL: none). */
void tracer_set_debugger(const struct debugger_ops *ops);

#endif
