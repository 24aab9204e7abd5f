/* e2e guest: N threads increment a shared counter without any synchronisation (a data
 * race), and at regular points append their id to a shared progress log under a mutex and
 * yield (a syscall, so under detrun the threads interleave there).
 * Signature: the final counter and the progress order. Natively both vary from run to
 * run; under detrun they must be identical on every run.
 * usage: racy_counter [THREADS 1..32] [ITERS] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selfcheck.h"

#define LOG_POINTS 16 /* log entries per thread */

static volatile long counter; /* deliberately racy: no lock, no atomics */
static long iters;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char progress[32 * LOG_POINTS + 1];
static int logged;

static void *worker(void *arg)
{
	long id = (long)arg;
	long step = iters / LOG_POINTS > 0 ? iters / LOG_POINTS : 1;
	for (long i = 0; i < iters; i++) {
		counter++;
		if (i % step == 0 && logged < 32 * LOG_POINTS) {
			pthread_mutex_lock(&log_lock);
			progress[logged++] = (char)(id < 26 ? 'A' + id : 'a' + id - 26);
			pthread_mutex_unlock(&log_lock);
			sched_yield(); /* a syscall: a switch point under detrun */
		}
	}
	return NULL;
}

/* Lost updates make the counter anything from 1 to the sum; the progress log is kept
 * under a mutex, so each thread's marks are all there. */
static void check_results(int n)
{
	CHECK(counter >= 1 && counter <= (long)n * iters, "counter %ld outside 1..%ld", counter,
	      (long)n * iters);
	long step = iters / LOG_POINTS > 0 ? iters / LOG_POINTS : 1;
	long marks = (iters + step - 1) / step; /* i % step == 0 for i in 0..iters-1 */
	if (marks * n > 32 * LOG_POINTS)
		return; /* the log was full: some marks were dropped */
	CHECK(logged == marks * n, "%d progress marks, want %ld", logged, marks * n);
	for (long id = 0; id < n; id++) {
		char c = (char)(id < 26 ? 'A' + id : 'a' + id - 26);
		long seen = 0;
		for (const char *p = progress; (p = strchr(p, c)); p++)
			seen++;
		CHECK(seen == marks, "thread %ld logged %ld marks, want %ld", id, seen, marks);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atol(argv[2]) : 2000000;
	if (n < 1 || n > 32 || iters < 1) {
		fprintf(stderr, "usage: racy_counter [THREADS 1..32] [ITERS]\n");
		return 2;
	}
	pthread_t threads[32];
	for (long i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(threads[i], NULL) == 0, "pthread_join of thread %d failed", i);
	check_results(n);
	printf("counter %ld of %ld\n", counter, (long)n * iters);
	printf("progress %s\n", progress);
	return 0;
}
