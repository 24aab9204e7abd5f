/* The lock convoy of memcached -vv: THREADS threads (default 4) each write their letter
 * BYTES times (default 2000) to stderr, one fputc at a time; stderr is unbuffered, so
 * each is a write(2) of one byte under stdio's lock. Natively the letters interleave as
 * the threads happen to run. Under a scheduler that ends a task's turn at each write,
 * the writer is switched away from while it holds the lock, every other thread then waits
 * for the lock on a futex and the lock goes round the threads byte by byte (two futex
 * calls or more a byte); sched_keep_turn lets the writer go on. Prints "wrote N bytes"
 * to stdout at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int bytes = 2000;

static void *writer(void *arg)
{
	int letter = 'a' + (int)(long)arg;
	for (int i = 0; i < bytes; i++)
		fputc(letter, stderr);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2)
		bytes = atoi(argv[2]);
	if (threads < 1 || threads > 26 || bytes < 0)
		return 2;
	pthread_t t[26];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, writer, (void *)(long)i))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("wrote %d bytes\n", threads * bytes);
	return 0;
}
