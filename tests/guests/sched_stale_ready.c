/* Readiness is judged when a call runs, not when it arrives. Eight readers and four
 * pollers, let go together, arrive at a pipe holding four bytes: all see data. The first four readers take
 * it; the other calls must then wait for the four bytes main writes once those four reads
 * are done (and a poller that comes later sees the write end closed). A call let go on the readiness it had when it arrived sleeps in the kernel
 * while detrun waits for it, and the group hangs. Prints "every call returned: 8 reads, 4
 * polls". */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	READERS = 8,
	POLLERS = 4,
	FIRST = 4
};
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t all_started;
static int reads_done, polls_done;

static void *reader(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_started);
	char c;
	CHECK(read(pipefd[0], &c, 1) == 1, "read: %m");
	pthread_mutex_lock(&lock);
	reads_done++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *poller(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_started);
	struct pollfd p = { pipefd[0], POLLIN, 0 };
	CHECK(poll(&p, 1, -1) == 1, "poll: %m");
	pthread_mutex_lock(&lock);
	polls_done++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	CHECK(pipe(pipefd) == 0, "pipe: %m");
	CHECK(write(pipefd[1], "abcd", FIRST) == FIRST, "write: %m");
	pthread_barrier_init(&all_started, NULL, READERS + POLLERS);
	pthread_t th[READERS + POLLERS];
	for (int i = 0; i < READERS + POLLERS; i++)
		CHECK(pthread_create(&th[i], NULL, i % 3 == 2 ? poller : reader, NULL) == 0,
		      "pthread_create failed");
	pthread_mutex_lock(&lock);
	while (reads_done < FIRST)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	CHECK(write(pipefd[1], "efgh", READERS - FIRST) == READERS - FIRST, "write: %m");
	close(pipefd[1]); /* a poller that comes after the last byte is gone sees the end */
	for (int i = 0; i < READERS + POLLERS; i++)
		pthread_join(th[i], NULL);
	printf("every call returned: %d reads, %d polls\n", reads_done, polls_done);
	return 0;
}
