/* load guest: a process with a large touched heap forks and creates threads again and again,
 * so that each fork spends milliseconds in the kernel copying page tables. A spin-detector
 * probe that lands inside such a native call cuts it short (the kernel restarts fork with
 * ERESTARTNOINTR); the restart must not become a second event. Prints the virtual monotonic
 * time after every fork and thread: any extra event shifts it.
 * usage: load_forks [MIB 1..1024] [ROUNDS 1..200] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *thread_main(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 96;
	int rounds = argc > 2 ? atoi(argv[2]) : 12;
	if (mib < 1 || mib > 1024 || rounds < 1 || rounds > 200) {
		fprintf(stderr, "usage: load_forks [MIB 1..1024] [ROUNDS 1..200]\n");
		return 2;
	}
	size_t size = (size_t)mib << 20;
	char *heap = malloc(size);
	if (!heap)
		return 1;
	memset(heap, 1, size); /* every page present: fork copies every entry */
	long long start = now_ns();
	for (int r = 0; r < rounds; r++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(heap[(size_t)r << 12] + r);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 1 + r) {
			fprintf(stderr, "round %d: child status %#x\n", r, status);
			return 1;
		}
		pthread_t th;
		if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
			return 1;
		printf("round %d at +%lld ns\n", r, now_ns() - start);
	}
	printf("load_forks done\n");
	return 0;
}
