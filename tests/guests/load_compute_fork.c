/* load guest: computes, then forks at once, again and again. The spin detector probes a
 * task that computes past its budget; a probe whose interrupt reaches the task just as it
 * stops at the fork's call loses the race to that stop, and the kernel keeps the interrupt
 * for the task's next run, which is the fork itself: fork finds it pending and is cut short
 * (ERESTARTNOINTR). The restart must not be a second event. Prints the virtual monotonic
 * time after every fork: any extra event shifts it.
 * usage: load_compute_fork [ROUNDS 1..1000] [WORK] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "selfcheck.h"

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	long work = argc > 2 ? atol(argv[2]) : 400000;
	CHECK(rounds >= 1 && rounds <= 1000 && work > 0,
	      "usage: load_compute_fork [ROUNDS] [WORK]");
	long long start = now_ns();
	for (int i = 0; i < rounds; i++) {
		uint64_t x = (uint64_t)i;
		/* A computation of a length that varies from round to round, so that probes
		 * fall at every point of it, the fork's stop among them. */
		for (long k = 0; k < work + (i % 7) * work / 8; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = x;
		pid_t child = fork();
		CHECK(child >= 0, "fork");
		if (child == 0)
			_exit(0);
		int status;
		CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status), "waitpid");
		printf("fork %d at %lld\n", i, now_ns() - start);
	}
	printf("load_compute_fork done\n");
	return 0;
}
