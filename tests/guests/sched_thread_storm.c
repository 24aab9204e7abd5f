/* hardening guest (sched, issue 9 point 8): creates many threads and processes in quick
 * succession, each doing a little work, so that detrun adopts new tasks while its own
 * timer signals arrive. Every thread adds its number to a total under a mutex; every child
 * process exits with its number. Prints the totals; the same on every run (natively too).
 * usage: sched_thread_storm [ROUNDS] [THREADS per round] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
	long n = (long)arg;
	volatile long x = 0;
	for (long i = 0; i < 20000; i++)
		x += i;
	pthread_mutex_lock(&lock);
	total += n;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	int threads = argc > 2 ? atoi(argv[2]) : 8;
	if (threads < 1 || threads > 64)
		threads = 8;
	long statuses = 0;
	for (int r = 0; r < rounds; r++) {
		pthread_t th[64];
		for (int i = 0; i < threads; i++)
			if (pthread_create(&th[i], NULL, worker, (void *)(long)(r * threads + i))) {
				perror("pthread_create");
				return 1;
			}
		pid_t pid = fork();
		if (pid == 0)
			_exit(r % 100);
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			printf("child %d lost\n", r);
			return 1;
		}
		statuses += WEXITSTATUS(status);
	}
	long n = (long)rounds * threads;
	printf("threads %ld total %ld (want %ld), child statuses %ld\n", n, total, n * (n - 1) / 2,
	       statuses);
	return total == n * (n - 1) / 2 ? 0 : 1;
}
