/* Inventory: time. Every clock, the old time calls, CPU-time calls and the TSC. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "selfcheck.h"

static void show(const char *name, clockid_t id)
{
	struct timespec ts, res;
	CHECK(!clock_gettime(id, &ts) && !clock_getres(id, &res), "clock %s: %s", name,
	      strerror(errno));
	printf("%-24s %lld.%09ld (res %ld ns)\n", name, (long long)ts.tv_sec, ts.tv_nsec,
	       res.tv_nsec);
}

int main(void)
{
	show("REALTIME", CLOCK_REALTIME);
	show("REALTIME_COARSE", CLOCK_REALTIME_COARSE);
	show("MONOTONIC", CLOCK_MONOTONIC);
	show("MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE);
	show("MONOTONIC_RAW", CLOCK_MONOTONIC_RAW);
	show("BOOTTIME", CLOCK_BOOTTIME);
	show("TAI", CLOCK_TAI);
	show("PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID);
	show("THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	clockid_t other;
	CHECK(clock_getcpuclockid(child, &other) == 0, "clock_getcpuclockid of a child failed");
	show("cpu clock of a child", other);
	kill(child, 9);
	waitpid(child, NULL, 0);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	printf("gettimeofday %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);
	printf("time %lld\n", (long long)time(NULL));
	struct tms tms;
	clock_t ticks = times(&tms);
	printf("times %ld utime %ld stime %ld\n", (long)ticks, (long)tms.tms_utime,
	       (long)tms.tms_stime);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("getrusage utime %ld.%06ld stime %ld.%06ld\n", (long)ru.ru_utime.tv_sec,
	       (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	unsigned aux;
	unsigned long long t1 = __rdtsc(), t2 = __rdtscp(&aux);
	CHECK(t2 > t1, "the TSC went from %llu to %llu", t1, t2);
	printf("rdtsc %llu rdtscp %llu aux %u increasing %d\n", t1, t2, aux, t2 > t1);
	struct timespec before, after, nap = { 0, 5000000 };
	clock_gettime(CLOCK_MONOTONIC, &before);
	nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &after);
	long long slept = (after.tv_sec - before.tv_sec) * 1000000000LL + after.tv_nsec -
			  before.tv_nsec;
	CHECK(slept >= 5000000, "nanosleep of 5 ms took %lld ns", slept);
	printf("nanosleep 5ms took %lld ns, at least 5ms: %d\n", slept, slept >= 5000000);
	return 0;
}
