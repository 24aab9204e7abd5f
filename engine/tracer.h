/*
 * The ptrace engine: starts the program, follows every task it creates, turns ptrace stops
 * into events for the scheduler and resumes whichever task the scheduler picks.
 *
 * Invariants the rest of detrun relies on:
 *   - at most one task is running; every other live task sits in a ptrace stop;
 *   - before the scheduler picks, every exiting task has been reaped (quiesced), so a
 *     parent's wait4 and a joiner's futex see a child's death at one fixed logical time;
 *   - PTRACE_O_EXITKILL and PR_SET_PDEATHSIG: if detrun dies, the whole group dies.
 */
#ifndef DETRUN_SUPERVISOR_TRACER_H
#define DETRUN_SUPERVISOR_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/options.h"

/* Runs argv[0] (already resolved to an executable path `path`) in a deterministic process
 * group. Returns detrun's exit code: the program's exit status, or 128+N if it was killed
 * by signal N. */
int tracer_run(const char *path, char **argv, const struct tracer_options *opt);

/* Handlers use these to continue a task past a syscall-exit stop. */
struct task;
void tracer_want_exit(struct task *t, void (*on_exit)(struct task *t));
/* `view` runs at the exit of the call once it is complete (after any on_exit, and only
 * at the last piece of a call done in pieces): it rewrites what the call left for the
 * program. */
void tracer_want_view(struct task *t, void (*view)(struct task *t));
/* The ptrace request that resumes t without losing a stop detrun needs: PTRACE_SYSCALL
 * while a handler waits for its exit stop or every call of t must stop, else PTRACE_CONT. */
int tracer_resume_request(const struct task *t);

/* Signal-disposition helpers shared with handlers. */
bool signal_is_caught(const struct task *t, int sig);
/* Pending signals (thread and process), and the blocked mask, from /proc. */
int read_signal_state(const struct task *t, uint64_t *pending, uint64_t *blocked);

/* An ending signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) sent to detrun from outside so far:
 * its number, or 0. For a wait that does not return between events (a replica waiting
 * on its cluster), which would otherwise pass the signal on only after the wait. */
int outside_end_requested(void);
/* Whether a signal from outside is one of those that end a run (the list above). */
bool outside_signal_ends_run(int sig);
/* Signals sent to detrun from now on are the group's, held until it runs (tracer_run
 * holds them as it starts; a command holds them earlier when it has said the group
 * starts, so that a signal sent right after that is not lost). */
void hold_outside_signals(void);

extern const struct tracer_options *tracer_opts;

#endif
