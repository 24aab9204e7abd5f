/* load guest: a bounded CPU hog for the determinism-under-load tests. THREADS threads spin
 * until the process is killed or SECONDS have passed (it always ends by itself).
 * Prints "hogging" once all threads run. usage: load_hog [THREADS 1..16] [SECONDS 1..600] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_ulong spins;

static void *spin(void *arg)
{
	for (;;)
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
	return arg;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	int seconds = argc > 2 ? atoi(argv[2]) : 60;
	if (threads < 1 || threads > 16 || seconds < 1 || seconds > 600) {
		fprintf(stderr, "usage: load_hog [THREADS 1..16] [SECONDS 1..600]\n");
		return 2;
	}
	alarm((unsigned)seconds); /* SIGALRM's default action ends the hog */
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, NULL))
			return 1;
	}
	printf("hogging\n");
	fflush(stdout);
	for (;;)
		pause();
}
