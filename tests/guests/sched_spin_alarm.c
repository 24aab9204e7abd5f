/* hardening guest (sched, issue 9 point 7): a loop without any syscall that waits for
 * SIGALRM, as in `while (!done) atomic_fetch_add(&n, 1)`. Without instruction counters
 * detrun cannot stop it at a deterministic point; it must say so (a hazard naming the task
 * and its stack) rather than hang. The loop is bounded so that it ends natively even if
 * the signal never comes; it prints only whether the signal ended it, never the count.
 * usage: sched_spin_alarm [MAX_ITERATIONS] */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t done;
static atomic_ulong n;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	unsigned long max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000000UL;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { 0, 20000 } }; /* 20 ms */
	if (setitimer(ITIMER_REAL, &it, NULL)) {
		perror("setitimer");
		return 1;
	}
	while (!done && atomic_load_explicit(&n, memory_order_relaxed) < max)
		atomic_fetch_add_explicit(&n, 1, memory_order_relaxed);
	if (!done) {
		printf("sched_spin_alarm: the loop ran to its end without the signal\n");
		return 1;
	}
	printf("sched_spin_alarm: the signal ended the loop\n");
	return 0;
}
