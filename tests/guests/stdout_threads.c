/* e2e guest: many threads write many lines to stdout, even-numbered threads with write(2),
 * odd-numbered ones with printf + fflush. Signature: the whole output, whose line order
 * varies natively; under detrun it must not.
 * usage: stdout_threads [THREADS 1..64] [LINES] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "selfcheck.h"

static int lines;

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	char buf[64];
	for (int i = 0; i < lines; i++) {
		volatile unsigned x = (unsigned)(id + i);
		for (int k = 0; k < 2000; k++)
			x = x * 1103515245u + 12345u;
		if (id % 2 == 0) {
			int n = snprintf(buf, sizeof buf, "thread %d line %d (write)\n", id, i);
			CHECK(write(1, buf, (size_t)n) == n, "thread %d: short write to stdout",
			      id);
		} else {
			printf("thread %d line %d (printf)\n", id, i);
			CHECK(fflush(stdout) == 0, "thread %d: fflush failed", id);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	lines = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1 || n > 64 || lines < 1) {
		fprintf(stderr, "usage: stdout_threads [THREADS 1..64] [LINES]\n");
		return 2;
	}
	pthread_t t[64];
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "pthread_create failed");
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("all %d threads done\n", n);
	return 0;
}
