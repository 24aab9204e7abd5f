/*
 * Parallel mode's barriers (engine/tracer_parallel.c): some events act on other memory
 * domains at once (a signal sent, a death that signals a parent, a shared mapping or a
 * ptrace attach that joins two domains, a page of shared memory that moves). Such an event
 * is handled only once the domains it acts on have stopped, each at a point of its own
 * run that timing does not choose. These functions say which domains those are, from the
 * held stop alone: one domain's id, BARRIER_ALL, or BARRIER_NONE.
 */
#ifndef DETRUN_ENGINE_PARALLEL_BARRIER_H
#define DETRUN_ENGINE_PARALLEL_BARRIER_H

#include <stdbool.h>

struct task;

enum {
	BARRIER_NONE = -1,
	BARRIER_ALL = -2
};

/* Which domain must have stopped before t's held stop (t->held_status) is handled,
 * because handling it acts on that domain at once? *attach: it is a ptrace call that joins
 * that domain to t's, which must then stand where the timeline alone puts it
 * (tracer_parallel.c, settle_for_attach). */
int parallel_barrier_for(struct task *t, bool *attach);
/* The same for the exit stop of t: its process's going is seen by its parent's domain
 * (SIGCHLD caught) or by every domain (children reparented); none for a thread. */
int parallel_exit_barrier(struct task *t);

#endif
