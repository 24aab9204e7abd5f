/* Counts sched_yield calls until SIGTERM arrives, then prints the count: a signal from
 * outside must reach the group only through detrun, at a logged logical time, so that a
 * replay of a recording prints the same count. With "keep", it says so at SIGTERM and
 * goes on yielding (the run ends only when detrun is asked again). */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	int keep = argc > 1 && !strcmp(argv[1], "keep");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	long n = 0;
	while (!stop || keep) {
		n += sched_yield() == 0;
		if (stop && keep) {
			printf("got SIGTERM, going on\n");
			fflush(stdout);
			stop = 0;
		}
	}
	printf("count %ld\n", n);
	return 0;
}
