/* Computes, with a sched_yield now and then, until Ctrl-C, then prints how many rounds it
 * made: the terminal's SIGINT must reach the group only through detrun, at a logged
 * logical time, so that a replay of a recording prints the same count. The kernel's own
 * copy of the signal reaches the program wherever it computes. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_int(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	long rounds = 0;
	volatile unsigned long x = 1;
	while (!stop) {
		for (int i = 0; i < 100000; i++) /* most of the time goes here, between calls */
			x = x * 6364136223846793005UL + 1;
		sched_yield();
		rounds++;
	}
	printf("count %ld\n", rounds);
	return 0;
}
