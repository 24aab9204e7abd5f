/*
 * Spins that write memory: a loop whose every state comes back.
 *
 * A waiter that loops lock / look / unlock on a mutex writes memory on every round (the
 * lock word goes 0 -> 1 -> 0, its owner field is set and cleared), so samples of it look
 * like a computation, and one stopped where the wall clock found it may hold the lock:
 * the other tasks then see a state that depends on timing. Running alone, a task's next
 * instruction is a function of its registers and memory; if the whole state (registers,
 * the FPU, every written page) comes back to what it was, the task is in a cycle it can
 * never leave while it runs alone, and every state of that cycle recurs. The cycle is
 * found by single-stepping, and the task is stopped at the state of the cycle with the
 * fewest non-zero words in the memory it writes (locks free), then the lowest hash of its
 * registers: a point chosen by the cycle alone, the same however long it spun and wherever
 * the probe came in, so the other tasks see the same memory on every run.
 */
#ifndef DETRUN_SUPERVISOR_SPIN_CYCLE_H
#define DETRUN_SUPERVISOR_SPIN_CYCLE_H

#include <stdbool.h>
#include <stdint.h>

struct task;

/* The memory watch of the probe that calls: `mark` hashes the pages the loop writes and
 * starts a new watch (false: it cannot), `unchanged` says whether every page written
 * since is one it hashed and still hashes the same. */
struct cycle_memory {
	void *ctx;
	bool (*mark)(void *ctx);
	bool (*unchanged)(void *ctx);
	/* Non-zero words in the pages it hashed, those of the stack around `sp` aside. */
	uint64_t (*weight)(void *ctx, uint64_t sp);
};

enum cycle_verdict {
	CYCLE_NONE,    /* no cycle within the steps allowed: t is stopped where it was found */
	CYCLE_STOPPED, /* t is stopped at its cycle's chosen state */
	CYCLE_EVENT,   /* t reached an event while stepped; the stop went to `handle` */
};

/* t is stopped (by a probe); step it looking for a cycle, for about limit_ns of wall time
 * at most. Where a cycle is found, the state chosen does not depend on the limit: a longer
 * one only finds longer cycles, so a spinner is stopped at the same state, later. */
enum cycle_verdict spin_cycle_stop(struct task *t, void (*handle)(int tid, int status),
				   const struct cycle_memory *mem, int64_t limit_ns);

#endif
