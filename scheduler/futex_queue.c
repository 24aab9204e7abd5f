#include "scheduler/futex_queue.h"

#include <stdlib.h>

struct waiter {
	struct task *task;
	struct futex_key key;
	uint32_t bitset;
	int index; /* in a futex_waitv's list; 0 otherwise */
	struct waiter *next;
};

static struct waiter *head, **tail = &head; /* one FIFO across all keys */

static bool same_key(struct futex_key a, struct futex_key b)
{
	return a.space == b.space && a.ino == b.ino && a.off == b.off;
}

void futex_enqueue_at(struct task *t, struct futex_key key, uint32_t bitset, int index)
{
	struct waiter *w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	*w = (struct waiter){ t, key, bitset, index, NULL };
	*tail = w;
	tail = &w->next;
}

void futex_enqueue(struct task *t, struct futex_key key, uint32_t bitset)
{
	futex_enqueue_at(t, key, bitset, 0);
}

static void unlink_waiter(struct waiter **pp)
{
	struct waiter *w = *pp;
	*pp = w->next;
	if (tail == &w->next)
		tail = pp;
	free(w);
}

void futex_dequeue(struct task *t)
{
	for (struct waiter **pp = &head; *pp;)
		if ((*pp)->task == t)
			unlink_waiter(pp);
		else
			pp = &(*pp)->next;
}

bool futex_queued(const struct task *t)
{
	for (struct waiter *w = head; w; w = w->next)
		if (w->task == t)
			return true;
	return false;
}

int futex_wake(struct futex_key key, int n, uint32_t bitset, void (*woken)(struct task *))
{
	int count = 0;
	for (struct waiter **pp = &head; *pp && count < n;) {
		struct waiter *w = *pp;
		if (same_key(w->key, key) && (w->bitset & bitset)) {
			struct task *t = w->task;
			sched_of(t)->futex_index = w->index;
			futex_dequeue(t); /* a futex_waitv's other keys too */
			woken(t);
			count++;
			pp = &head; /* the links before w may have gone with t's other keys */
		} else {
			pp = &w->next;
		}
	}
	return count;
}

int futex_requeue(struct futex_key from, struct futex_key to, int nwake, int nrequeue,
		  void (*woken)(struct task *))
{
	int count = futex_wake(from, nwake, ~0u, woken);
	int moved = 0;
	for (struct waiter *w = head; w && moved < nrequeue; w = w->next)
		if (same_key(w->key, from)) {
			w->key = to;
			moved++;
		}
	return count + moved;
}

struct task *futex_first_waiter(struct futex_key key)
{
	for (struct waiter *w = head; w; w = w->next)
		if (same_key(w->key, key))
			return w->task;
	return NULL;
}

int futex_waiter_count(struct futex_key key)
{
	int n = 0;
	for (struct waiter *w = head; w; w = w->next)
		n += same_key(w->key, key);
	return n;
}
