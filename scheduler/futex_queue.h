/*
 * Futex wait queues. Futexes are emulated: a waiter never sleeps in the kernel (it would
 * block the whole serial group); it parks here and is woken in FIFO order by the emulated
 * FUTEX_WAKE, so wake order is part of the deterministic schedule.
 *
 * Keys: a private futex is (address space, address). A shared one is keyed by what backs
 * the page — (device, inode, offset) of a MAP_SHARED mapping — so processes that map the
 * same memory at different addresses meet on the same queue.
 */
#ifndef DETRUN_SCHEDULER_FUTEX_QUEUE_H
#define DETRUN_SCHEDULER_FUTEX_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/task.h"

struct futex_key {
	uint64_t space; /* address-space id, or device number of a shared mapping */
	uint64_t ino;   /* 0 for private keys */
	uint64_t off;   /* address, or offset in the shared object */
};

void futex_enqueue(struct task *t, struct futex_key key, uint32_t bitset);
/* futex_waitv: t waits on several keys at once, the key's position in its list being
 * `index`. The first wake on any of them takes t off all of them and sets
 * t->futex_index to the index of the one that woke it. */
void futex_enqueue_at(struct task *t, struct futex_key key, uint32_t bitset, int index);
void futex_dequeue(struct task *t); /* off every key: timeout, signal, death; or none */
bool futex_queued(const struct task *t);

/* Wakes up to n waiters on key whose bitset intersects `bitset`, oldest first; each woken
 * task gets result 0 through `woken`. Returns how many were woken. */
int futex_wake(struct futex_key key, int n, uint32_t bitset, void (*woken)(struct task *));
/* Wakes up to nwake waiters on `from`, then moves up to nrequeue others to `to`.
 * Returns woken + requeued. */
int futex_requeue(struct futex_key from, struct futex_key to, int nwake, int nrequeue,
		  void (*woken)(struct task *));
/* The oldest waiter on key, or NULL (PI futexes hand ownership to it). */
struct task *futex_first_waiter(struct futex_key key);
int futex_waiter_count(struct futex_key key);

#endif
