/* A waiter that spins on a pthread mutex (as Splash-3's VOLREND does on its work queues):
 * main loops lock / look at the queue / unlock until a worker has put its result there.
 * Each round writes the mutex word (0 -> 1 -> 0) and its owner, so memory is written on
 * every round yet comes back to the same contents at the same instruction. The worker
 * makes calls before it publishes, so under a serial scheduler it waits for its turn
 * while main spins: the spin detector must deschedule main. usage: spin_mutex_queue
 * [WORKERS 1..8] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "selfcheck.h"

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static long queue[8];
static int queued;

static void *worker(void *arg)
{
	long id = (long)arg, sum = 0;
	for (long i = 1; i <= 100000; i++)
		sum += i % (id + 3);
	char line[64];
	int n = snprintf(line, sizeof(line), "worker %ld computed %ld\n", id, sum);
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		return NULL;
	pthread_mutex_lock(&queue_lock);
	queue[queued++] = sum;
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 1;
	CHECK(workers >= 1 && workers <= 8, "usage: spin_mutex_queue [WORKERS 1..8]");
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_t t[8];
	for (long i = 0; i < workers; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "pthread_create");
	long total = 0;
	for (int taken = 0; taken < workers;) {
		pthread_mutex_lock(&queue_lock);
		if (queued > taken)
			total += queue[taken++];
		pthread_mutex_unlock(&queue_lock);
	}
	for (int i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	printf("spin_mutex_queue: %d results, total %ld\n", workers, total);
	return 0;
}
