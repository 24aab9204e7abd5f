/* scheduling guest (issue 20): a timer far ahead does not make every call an event. A
 * server often leaves a long timeout armed while it works (PostgreSQL keeps its backends'
 * alarm armed after a lock wait). The guest arms ITIMER_REAL 60 s ahead and makes CALLS
 * getppid calls, which the filter allows, then arms it 2 ms ahead and makes getuid calls
 * until the signal comes (every call there is an event, so it comes at the same call on
 * every run). Under detrun --trace the first getppid calls must not be events, the getuid
 * ones must. Prints how many getuid calls came before the signal.
 * usage: sched_far_timer [CALLS] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired = 1;
}

static volatile unsigned long sink;

static int arm(long sec, long usec)
{
	struct itimerval it = { { 0, 0 }, { sec, usec } };
	if (setitimer(ITIMER_REAL, &it, NULL)) {
		perror("setitimer");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	if (sigaction(SIGALRM, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	if (arm(60, 0))
		return 1;
	for (long i = 0; i < calls; i++)
		syscall(SYS_getppid);
	if (fired) {
		printf("sched_far_timer: the 60 s alarm came early\n");
		return 1;
	}
	if (arm(0, 2000))
		return 1;
	long near = 0;
	while (!fired && near < 50000000) {
		for (int i = 0; i < 200; i++)
			sink = sink * 31 + (unsigned long)i;
		syscall(SYS_getuid);
		near++;
	}
	printf("getuid calls before the 2 ms alarm: %ld\n", fired ? near : -1L);
	printf("sched_far_timer: %s\n", fired ? "ok" : "the alarm never came");
	return fired ? 0 : 1;
}
