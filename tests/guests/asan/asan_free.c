// Allocates and frees on two threads and prints what it computed. Built with
// AddressSanitizer: at exit LeakSanitizer stops the world with ptrace, finds nothing, and
// the program exits 0.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *sum(void *arg)
{
	long n = (long)arg, total = 0;
	long *v = malloc(n * sizeof(*v));
	for (long i = 0; i < n; i++)
		v[i] = i * i;
	for (long i = 0; i < n; i++)
		total += v[i];
	free(v);
	return (void *)total;
}

int main(void)
{
	pthread_t th;
	void *other;
	pthread_create(&th, NULL, sum, (void *)1000);
	long mine = (long)sum((void *)2000);
	pthread_join(th, &other);
	printf("asan_free: %ld %ld\n", mine, (long)other);
	return 0;
}
