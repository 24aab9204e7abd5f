/* e2e guest: a thread waits for another thread's atomic flag store with a busy loop that
 * makes no syscall and writes no memory, then the two ping-pong a few rounds the same way.
 * Under detrun the waiter can only make progress if the spin detector deschedules it.
 * Output does not depend on the schedule: it must be the same natively and under detrun.
 * usage: atomic_flag_wait [ROUNDS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "selfcheck.h"

static atomic_int flag;            /* whose turn: odd = worker, even = main */
static unsigned long shared_value; /* written before the flag is released */
static int rounds;

static void *worker(void *arg)
{
	(void)arg;
	/* computation first, so the main thread spins on the initial flag */
	unsigned long x = 1;
	for (int k = 0; k < 3000000; k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	shared_value = x >> 40;
	atomic_store_explicit(&flag, 1, memory_order_release);
	for (int r = 1; r < rounds; r++) {
		while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * r)
			; /* pure spin: no syscall, no store */
		shared_value = shared_value * 3 + (unsigned long)r;
		atomic_store_explicit(&flag, 2 * r + 1, memory_order_release);
	}
	return NULL;
}

/* What the worker publishes does not depend on the schedule: main computes it too. */
static unsigned long first_value;

static unsigned long want_published(int r)
{
	unsigned long v = first_value;
	for (int i = 1; i <= r; i++)
		v = (v + 7) * 3 + (unsigned long)i;
	return v;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 5;
	if (rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: atomic_flag_wait [ROUNDS 1..1000]\n");
		return 2;
	}
	pthread_t t;
	unsigned long x = 1;
	for (int k = 0; k < 3000000; k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	first_value = x >> 40;
	CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create failed");
	for (int r = 0; r < rounds; r++) {
		while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * r + 1)
			__builtin_ia32_pause(); /* pure spin: no syscall, no store */
		CHECK(shared_value == want_published(r), "round %d: worker published %lu, want %lu",
		      r, shared_value, want_published(r));
		printf("round %d: worker published %lu\n", r, shared_value);
		shared_value += 7;
		atomic_store_explicit(&flag, 2 * r + 2, memory_order_release);
	}
	pthread_join(t, NULL);
	printf("done after %d rounds\n", rounds);
	return 0;
}
