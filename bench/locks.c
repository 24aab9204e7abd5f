/* Lock-heavy threads: THREADS pthreads each enter ITERS short critical sections guarded by
 * one pthread mutex (a counter and a small shared array), with a little private work
 * between them so the lock changes hands often. Usage: locks THREADS ITERS.
 * Prints the totals, which are the same in every mode. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t counter, slots[16];
static long iters;

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, private_sum = 0;
	for (long i = 0; i < iters; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* private work outside the lock */
		private_sum += x & 0xff;
		pthread_mutex_lock(&lock);
		counter++;
		slots[x & 15] += 1;
		pthread_mutex_unlock(&lock);
	}
	return (void *)(uintptr_t)private_sum;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: locks THREADS ITERS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	iters = atol(argv[2]);
	if (nthreads <= 0 || nthreads > 64 || iters < 0)
		return 2;
	pthread_t th[64];
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 1;
	uint64_t private_total = 0;
	for (int t = 0; t < nthreads; t++) {
		void *r;
		pthread_join(th[t], &r);
		private_total += (uintptr_t)r;
	}
	uint64_t slot_total = 0;
	for (int i = 0; i < 16; i++)
		slot_total += slots[i];
	printf("locks counter=%llu slots=%llu private=%llu\n", (unsigned long long)counter,
	       (unsigned long long)slot_total, (unsigned long long)private_total);
	return counter == (uint64_t)nthreads * iters && slot_total == counter ? 0 : 1;
}
