/* Compute-bound threads: C = A x B for N x N doubles, rows split over T pthreads.
 * Usage: matmul N THREADS. Prints a checksum that does not depend on the thread count
 * (each row is computed by exactly one thread, in the same order), so the harness can
 * compare the output of every mode with the native one. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int n, nthreads;
static double *a, *b, *c;

static void *worker(void *arg)
{
	long id = (long)arg;
	int lo = (int)((long)n * id / nthreads), hi = (int)((long)n * (id + 1) / nthreads);
	for (int i = lo; i < hi; i++) {
		double *ci = c + (size_t)i * n;
		for (int j = 0; j < n; j++)
			ci[j] = 0;
		for (int k = 0; k < n; k++) { /* i-k-j order: streams through B's rows */
			double aik = a[(size_t)i * n + k];
			const double *bk = b + (size_t)k * n;
			for (int j = 0; j < n; j++)
				ci[j] += aik * bk[j];
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: matmul N THREADS\n");
		return 2;
	}
	n = atoi(argv[1]);
	nthreads = atoi(argv[2]);
	if (n <= 0 || nthreads <= 0 || nthreads > 64)
		return 2;
	size_t sz = (size_t)n * n;
	a = malloc(sz * sizeof *a);
	b = malloc(sz * sizeof *b);
	c = malloc(sz * sizeof *c);
	if (!a || !b || !c)
		return 1;
	uint64_t x = 88172645463325252ull; /* xorshift64: generated input, same every run */
	for (size_t i = 0; i < sz; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a[i] = (double)(x % 1000) / 100.0;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (double)(x % 1000) / 100.0;
	}
	pthread_t th[64];
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 1;
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	double sum = 0;
	for (size_t i = 0; i < sz; i++)
		sum += c[i] * (double)((i % 7) + 1);
	printf("matmul n=%d checksum=%.6e\n", n, sum);
	return 0;
}
