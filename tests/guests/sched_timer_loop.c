/* hardening guest (sched, issue 9 point 7): a computation that waits for timer signals and
 * makes only calls that never stop under detrun (getppid now and then). Three timers in
 * turn: alarm-style setitimer(ITIMER_REAL), a POSIX timer (SIGUSR1) and an interval
 * ITIMER_REAL that fires three times. Each phase counts the getppid calls made before its
 * signal came: natively that count depends on the machine's speed; under detrun it must be
 * the same on every run. Ends with "sched_timer_loop: ok" if every signal came.
 * usage: sched_timer_loop [MAX_CALLS per phase] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_signal(int sig)
{
	(void)sig;
	fired++;
}

static volatile unsigned long sink;

/* Computes for a while between two getppid calls until `want` signals came; returns the
 * number of getppid calls, or -1 if the signals never came within max_calls. */
static long loop_until(int want, long max_calls)
{
	for (long calls = 0; calls < max_calls; calls++) {
		for (int i = 0; i < 2000; i++)
			sink = sink * 31 + (unsigned long)i;
		if (syscall(SYS_getppid) < 0)
			return -1;
		if (fired >= want)
			return calls + 1;
	}
	return -1;
}

static void handle(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long max_calls = argc > 1 ? atol(argv[1]) : 2000000;
	handle(SIGALRM);
	handle(SIGUSR1);

	fired = 0;
	struct itimerval once = { { 0, 0 }, { 0, 2000 } }; /* 2 ms */
	if (setitimer(ITIMER_REAL, &once, NULL)) {
		perror("setitimer");
		return 1;
	}
	long a = loop_until(1, max_calls);

	fired = 0;
	timer_t id;
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	struct itimerspec spec = { { 0, 0 }, { 0, 3000000 } }; /* 3 ms */
	if (timer_create(CLOCK_MONOTONIC, &ev, &id) || timer_settime(id, 0, &spec, NULL)) {
		perror("timer");
		return 1;
	}
	long b = loop_until(1, max_calls);
	timer_delete(id);

	fired = 0;
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } }; /* every 1 ms */
	if (setitimer(ITIMER_REAL, &every, NULL)) {
		perror("setitimer");
		return 1;
	}
	long c = loop_until(3, max_calls);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);

	printf("calls before the signals: alarm %ld, posix timer %ld, interval x3 %ld\n", a, b, c);
	if (a < 0 || b < 0 || c < 0) {
		printf("sched_timer_loop: a signal never came\n");
		return 1;
	}
	printf("sched_timer_loop: ok\n");
	return 0;
}
