/*
 * Debugging a run: detrun serves the GDB remote serial protocol on a replay or a plain run.
 *
 * The supervisor declares these hooks and debugger/ implements them, so the supervisor
 * depends on no header of the debugger's (tests/check_includes.py). The stop loop calls two
 * hooks: debugger_on_stop for every ptrace stop (breakpoint, watchpoint and single-step
 * traps are the debugger's and never reach the scheduler: they are no events and do not
 * move logical time), and debugger_on_event at every event (where `monitor when` takes its
 * time from, where `monitor goto` and signals stop). Going back is re-execution: detrun
 * kills the group and executes itself again with the gdb connection inherited, replays
 * from the start and stops at the wanted position (debugger/travel.c). That is possible
 * only because the run is deterministic at every event.
 */
#ifndef DETRUN_SUPERVISOR_DEBUGGER_HOOKS_H
#define DETRUN_SUPERVISOR_DEBUGGER_HOOKS_H

#include <stdbool.h>

struct task;

/* Called first in main: takes detrun's own debugging arguments (--gdb[=PORT], the
 * `debug` subcommand, the hidden re-execution state) out of argv. For `detrun debug`
 * it starts gdb. Exits with a one-line message on bad input. */
void debugger_init(int *argc, char ***argv);

/* Is a gdb (or a re-execution on its way to one) attached? */
bool debugger_active(void);

/* Every ptrace stop of a known task, before the tracer looks at it. True: the stop was
 * the debugger's (a trap it set); it has resumed or kept the task and the tracer must not
 * see it. */
bool debugger_on_stop(struct task *t, int status);

/* Every event, after the scheduler counted it. */
void debugger_on_event(struct task *t);

/* A new task was adopted (stopped, not run yet): a fork is reported to gdb. */
void debugger_on_fork(struct task *parent, struct task *child);
/* t's process executed a new program, which is set up and about to run. */
void debugger_on_exec(struct task *t);

/* The stop loop woke up while t runs: takes gdb's Ctrl-C, if it came, by interrupting t
 * (stops of other kinds meanwhile go to `handle`). True if it did: t may have stopped. It
 * is called at least every INTERRUPT_POLL_MS while a debugger is active. */
enum {
	INTERRUPT_POLL_MS = 50
};
bool debugger_poll(struct task *t, void (*handle)(int tid, int status));
/* While no task runs and detrun waits for outside input: the connection to watch too (-1
 * for none), and what to do when it is readable (a Ctrl-C stops the group there). */
int debugger_wait_fd(void);
void debugger_idle_input(void);

/* The run is over with detrun's exit code `code`: tells gdb, waits for it to go. */
int debugger_finish(int code);

#endif
