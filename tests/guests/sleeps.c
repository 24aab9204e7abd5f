/* e2e guest: threads sleep various short durations with nanosleep, usleep,
 * clock_nanosleep (relative) and clock_nanosleep (TIMER_ABSTIME), and log every wake-up
 * with the monotonic time since start, in wake order. main also prints the realtime
 * clocks (clock_gettime, gettimeofday, time) at start and end. Natively the readings and
 * the interleaving vary; under detrun (virtual clock) they must not.
 * usage: sleeps [THREADS 1..16] [WAKEUPS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "selfcheck.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_buf;
static size_t log_len, log_cap;
static struct timespec start;
static int wakeups;

static long long ns_since(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000000000ll + (b->tv_nsec - a->tv_nsec);
}

/* Sleeps never end early: wake-up k of a thread sleeping ms each time comes at least
 * (k + 1) * ms after the start. */
static void log_wake(int id, int k, const char *how, long ms)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(ns_since(&start, &now) >= (k + 1) * ms * 1000000ll,
	      "t%d woke #%d (%s) at +%lld ns, before its %ld ms sleeps were over", id, k, how,
	      ns_since(&start, &now), (k + 1) * ms);
	char line[128];
	int n = snprintf(line, sizeof line, "t%d woke #%d (%s) at +%lld ns\n", id, k, how,
			 ns_since(&start, &now));
	pthread_mutex_lock(&lock);
	if (log_len + (size_t)n + 1 > log_cap) {
		log_cap = (log_cap + (size_t)n + 1) * 2;
		log_buf = realloc(log_buf, log_cap);
	}
	memcpy(log_buf + log_len, line, (size_t)n + 1);
	log_len += (size_t)n;
	pthread_mutex_unlock(&lock);
}

static long long timespec_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static void *sleeper(void *arg)
{
	int id = (int)(long)arg;
	long ms = 10 * (id + 1) - 3 * (id % 3); /* 10, 17, 24, 40, 47, ... ms */
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	for (int k = 0; k < wakeups; k++) {
		struct timespec rel = { ms / 1000, (ms % 1000) * 1000000 };
		const char *how;
		switch (id % 4) {
		case 0:
			how = "nanosleep";
			CHECK(nanosleep(&rel, NULL) == 0, "nanosleep failed: %s", strerror(errno));
			break;
		case 1:
			how = "usleep";
			CHECK(usleep((useconds_t)(ms * 1000)) == 0, "usleep failed: %s",
			      strerror(errno));
			break;
		case 2:
			how = "clock_nanosleep";
			int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
			CHECK(err == 0, "clock_nanosleep failed: %s", strerror(err));
			break;
		default:
			how = "clock_nanosleep abs";
			deadline.tv_nsec += rel.tv_nsec;
			deadline.tv_sec += rel.tv_sec + deadline.tv_nsec / 1000000000;
			deadline.tv_nsec %= 1000000000;
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL))
				;
			break;
		}
		log_wake(id, k, how, ms);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	wakeups = argc > 2 ? atoi(argv[2]) : 8;
	if (n < 1 || n > 16 || wakeups < 1) {
		fprintf(stderr, "usage: sleeps [THREADS 1..16] [WAKEUPS]\n");
		return 2;
	}
	struct timespec rt0, rt1;
	struct timeval tv0, tv1;
	clock_gettime(CLOCK_REALTIME, &rt0);
	gettimeofday(&tv0, NULL);
	time_t t0 = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_t t[16];
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, sleeper, (void *)i) == 0,
		      "pthread_create failed");
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	clock_gettime(CLOCK_REALTIME, &rt1);
	gettimeofday(&tv1, NULL);
	time_t t1 = time(NULL);
	CHECK(timespec_ns(&rt1) >= timespec_ns(&rt0), "the realtime clock ran backwards");
	CHECK(t1 >= t0 && tv1.tv_sec >= tv0.tv_sec, "time or gettimeofday ran backwards");
	fwrite(log_buf, 1, log_len, stdout);
	printf("start: realtime %lld.%09ld gettimeofday %lld.%06ld time %lld\n",
	       (long long)rt0.tv_sec, rt0.tv_nsec, (long long)tv0.tv_sec, (long)tv0.tv_usec,
	       (long long)t0);
	printf("end:   realtime %lld.%09ld gettimeofday %lld.%06ld time %lld\n",
	       (long long)rt1.tv_sec, rt1.tv_nsec, (long long)tv1.tv_sec, (long)tv1.tv_usec,
	       (long long)t1);
	printf("monotonic elapsed %lld ns\n", ns_since(&start, &end));
	return 0;
}
