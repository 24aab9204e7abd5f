// Three threads each leak a block and then wait, each its own way (a condition variable,
// a pipe read, a long sleep), while the main thread leaks one more and returns. Built with
// AddressSanitizer: LeakSanitizer stops the world at exit, attaching to every thread
// (each stopped in a blocking call) with ptrace, and reports four leaks.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, never;
static int pipefd[2];
static char *volatile sink; /* the compiler keeps each allocation; nothing keeps it alive */

__attribute__((noinline)) static void leak(size_t size, int tag)
{
	char *p = malloc(size);
	memset(p, tag, size);
	sink = p;
	sink = NULL;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	leak(100 + 10 * id, (int)id);
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	if (id == 0)
		while (!never)
			pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	char c;
	if (id == 1)
		read(pipefd[0], &c, 1);
	struct timespec ts = { 1000, 0 };
	nanosleep(&ts, NULL);
	return NULL;
}

int main(void)
{
	pthread_t th[3];
	pipe(pipefd);
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_mutex_lock(&lock);
	while (ready < 3)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	leak(64, 'm');
	printf("asan_threads_leak: %d threads waiting\n", ready);
	fflush(stdout);
	return 0;
}
