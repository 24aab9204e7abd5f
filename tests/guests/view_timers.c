/* Timer semantics that must match the kernel's (tests/determinism/views_test.cc).
 *
 *   view_timers timerfd   a disarmed timerfd keeps its interval (timerfd_gettime shows it)
 *   view_timers handler   a POSIX timer whose signal stays blocked for ten periods: one
 *                         signal is queued, its si_overrun and timer_getoverrun count the
 *                         other expirations (taken by a handler)
 *   view_timers wait      the same, taken by sigtimedwait
 *   view_timers alarm     SIGALRM of an interval timer taken by sigtimedwait: from the
 *                         kernel (SI_KERNEL), once though it expired twice
 *
 * Each prints lines that are the same natively and under detrun; where the exact count
 * depends on how late a native run wakes, the guest checks it against the elapsed time
 * and prints the verdict. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static const long kPeriodNs = 100000000L; /* 100 ms */

static void print_spec(const char *what, const struct itimerspec *s)
{
	printf("%s: value %lld.%09ld interval %lld.%09ld\n", what, (long long)s->it_value.tv_sec,
	       s->it_value.tv_nsec, (long long)s->it_interval.tv_sec, s->it_interval.tv_nsec);
}

static int timerfd_case(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (fd < 0)
		return perror("timerfd_create"), 1;
	struct itimerspec set = { { 1, 500000000 }, { 0, 0 } }, got, old;
	if (timerfd_settime(fd, 0, &set, NULL) || timerfd_gettime(fd, &got))
		return perror("timerfd"), 1;
	print_spec("disarmed with an interval", &got);
	set.it_value = (struct timespec){ 30, 0 };
	set.it_interval = (struct timespec){ 2, 0 };
	timerfd_settime(fd, 0, &set, NULL);
	set.it_value = (struct timespec){ 0, 0 };
	set.it_interval = (struct timespec){ 0, 250000000 };
	timerfd_settime(fd, 0, &set, &old);
	printf("old interval %lld.%09ld\n", (long long)old.it_interval.tv_sec,
	       old.it_interval.tv_nsec);
	timerfd_gettime(fd, &got);
	print_spec("disarmed again", &got);
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile sig_atomic_t handled, handled_code, handled_overrun;

static void on_timer(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	handled++;
	handled_code = si->si_code;
	handled_overrun = si->si_overrun;
}

/* Is `overrun` what a timer started at `start` can have counted between the two readings? */
static const char *verdict(int overrun, long long start, long long before, long long after)
{
	long long lo = (before - start) / kPeriodNs - 1, hi = (after - start) / kPeriodNs - 1;
	return overrun >= lo && overrun <= hi ? "matches the elapsed periods" : "WRONG";
}

static int overrun_case(int by_handler)
{
	int sig = SIGRTMIN;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_timer;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	timer_t timer;
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer))
		return perror("timer_create"), 1;
	long long start = now_ns();
	struct itimerspec its = { { 0, kPeriodNs }, { 0, kPeriodNs } };
	timer_settime(timer, 0, &its, NULL);
	/* Ten expirations while the signal is blocked: at 100, 200, ..., 1000 ms. */
	long long until = start + 10 * kPeriodNs + kPeriodNs / 2;
	struct timespec ts = { until / 1000000000LL, until % 1000000000LL };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	int signals = 0, code = 0, overrun = -1;
	long long before = now_ns();
	if (by_handler) {
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		signals = handled, code = handled_code, overrun = handled_overrun;
	} else {
		struct timespec zero = { 0, 0 };
		siginfo_t si;
		while (sigtimedwait(&set, &si, &zero) == sig) {
			signals++;
			code = si.si_code;
			overrun = si.si_overrun;
		}
	}
	long long after = now_ns();
	int get = timer_getoverrun(timer);
	printf("signals queued: %d\n", signals);
	printf("si_code: %s\n", code == SI_TIMER ? "SI_TIMER" : "not SI_TIMER");
	printf("si_overrun: %s\n", verdict(overrun, start, before, after));
	printf("timer_getoverrun %s si_overrun\n", get == overrun ? "==" : "!=");
	timer_delete(timer);
	return 0;
}

static int alarm_case(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct itimerval it = { { 0, 100000 }, { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec ts = { 0, 250000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	int signals = 0, code = 0;
	while (sigtimedwait(&set, &si, &zero) == SIGALRM)
		signals++, code = si.si_code;
	printf("SIGALRM taken: %d, si_code %s\n", signals,
	       code == SI_KERNEL ? "SI_KERNEL"
	       : code == SI_USER ? "SI_USER"
				 : "other");
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "timerfd"))
		return timerfd_case();
	if (!strcmp(what, "handler"))
		return overrun_case(1);
	if (!strcmp(what, "wait"))
		return overrun_case(0);
	if (!strcmp(what, "alarm"))
		return alarm_case();
	fprintf(stderr, "usage: view_timers timerfd|handler|wait|alarm\n");
	return 2;
}
