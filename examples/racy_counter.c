/* The headline demo: threads race on an unprotected counter and on the order in which they
 * log their progress. Natively the total and the order change from run to run; under
 * detrun they are the same on every run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long counter; /* deliberately racy: no lock, no atomics */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char progress[256];
static int logged;
static long iterations = 1000000;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < iterations; i++) {
		counter++;
		if (i % (iterations / 4 ? iterations / 4 : 1) == 0) {
			pthread_mutex_lock(&log_lock);
			progress[logged++] = (char)('A' + id);
			pthread_mutex_unlock(&log_lock);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2) /* fewer writes: a watchpoint on the counter stops at each */
		iterations = atol(argv[2]);
	if (n < 1 || n > 32 || iterations < 1 || iterations > 1000000) {
		fprintf(stderr, "usage: racy_counter [THREADS 1..32 [ITERATIONS 1..1000000]]\n");
		return 2;
	}
	pthread_t threads[32];
	for (long i = 0; i < n; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	printf("counter = %-8ld (expected %ld)  progress order = %s\n", counter, n * iterations,
	       progress);
	return 0;
}
