/* e2e guest: threads meet at a hand-written sense-reversing spin barrier (C11 atomics; the
 * wait loop makes no syscall and writes no memory) and append to a per-phase log under a
 * pthread spinlock. Between barriers each thread does some private computation.
 * Signature: per phase, the order in which threads passed the spinlock (= arrival order at
 * the barrier), and a checksum of the work. Natively the orders vary; under detrun the
 * spinning waiters must be descheduled deterministically, so the orders must not.
 * usage: spin_barrier [THREADS 2..16] [PHASES 1..64] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selfcheck.h"

#define MAXT 16
#define MAXP 64

static int nthreads, nphases;
static atomic_int arrived;
static atomic_int sense;
static pthread_spinlock_t log_lock;
static char order[MAXP][MAXT + 1];
static int order_len[MAXP];
static unsigned long checksum[MAXT];

static void barrier(int *local_sense)
{
	int s = !*local_sense;
	*local_sense = s;
	if (atomic_fetch_add(&arrived, 1) == nthreads - 1) {
		atomic_store(&arrived, 0);
		atomic_store_explicit(&sense, s, memory_order_release);
	} else {
		while (atomic_load_explicit(&sense, memory_order_acquire) != s)
			__builtin_ia32_pause();
	}
}

/* The work does not depend on the schedule, so neither does the checksum; and every
 * thread passed the lock once in every phase. */
static unsigned long work(int id, int p)
{
	unsigned long x = (unsigned long)(id + 1) * 2654435761u + (unsigned long)p;
	for (int k = 0; k < 100000 + 1000 * ((id * 5 + p * 3) % 7); k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x >> 33;
}

static void check_results(unsigned long sum)
{
	unsigned long want = 0;
	for (int id = 0; id < nthreads; id++)
		for (int p = 0; p < nphases; p++)
			want += work(id, p);
	CHECK(sum == want, "checksum %lu, want %lu", sum, want);
	for (int p = 0; p < nphases; p++) {
		CHECK(order_len[p] == nthreads, "phase %d: %d arrivals, want %d", p, order_len[p],
		      nthreads);
		for (int id = 0; id < nthreads; id++)
			CHECK(strchr(order[p], 'A' + id), "phase %d: thread %d never arrived", p,
			      id);
	}
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	int local_sense = 0;
	barrier(&local_sense); /* everyone started */
	for (int p = 0; p < nphases; p++) {
		/* private work: roughly the same amount for everyone, so arrival order races */
		checksum[id] += work(id, p);
		pthread_spin_lock(&log_lock);
		order[p][order_len[p]++] = (char)('A' + id);
		pthread_spin_unlock(&log_lock);
		barrier(&local_sense);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 4;
	nphases = argc > 2 ? atoi(argv[2]) : 8;
	if (nthreads < 2 || nthreads > MAXT || nphases < 1 || nphases > MAXP) {
		fprintf(stderr, "usage: spin_barrier [THREADS 2..16] [PHASES 1..64]\n");
		return 2;
	}
	pthread_spin_init(&log_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_t t[MAXT];
	for (long i = 0; i < nthreads; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "pthread_create failed");
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	unsigned long sum = 0;
	for (int i = 0; i < nthreads; i++)
		sum += checksum[i];
	check_results(sum);
	for (int p = 0; p < nphases; p++)
		printf("phase %d order %s\n", p, order[p]);
	printf("checksum %lu\n", sum);
	return 0;
}
