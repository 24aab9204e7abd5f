/* Reads the clocks many times, as a program that times itself does: every clock id detrun
 * answers, gettimeofday, time, clock_getres, another process's CPU clock and a bad id,
 * then waits for a deadline 3 ms ahead by reading the clock in a loop. Under detrun the
 * reads go through detrun's vDSO (no stop for most of them).
 *
 *   clock_reads main     in the one thread
 *   clock_reads fork     in the parent and in a fork child at the same time
 *   clock_reads thread   in the main thread and in a second thread at the same time
 *   clock_reads vfork    a vfork child reads the monotonic clock 300 times (in its
 *                        parent's memory, through its parent's vDSO page), then the parent
 *                        reads on from there: it must not go back either
 *
 * Prints, per reader, the first and last value of each clock, how many reads went
 * backwards (none may), and how many reads the wait took. Each reader writes its lines at
 * its end in one write: which reader comes first is up to the run (under detrun, the same
 * every time). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READS 1000

struct text {
	char buf[8192];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void say(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0 && t->len + (size_t)n < sizeof(t->buf))
		t->len += (size_t)n;
}

static long long ns_of(struct timespec ts)
{
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const struct {
	clockid_t id;
	const char *name;
} clocks[] = {
	{ CLOCK_REALTIME, "realtime" },
	{ CLOCK_MONOTONIC, "monotonic" },
	{ CLOCK_BOOTTIME, "boottime" },
	{ CLOCK_MONOTONIC_COARSE, "monotonic_coarse" },
	{ CLOCK_MONOTONIC_RAW, "monotonic_raw" },
	{ CLOCK_REALTIME_COARSE, "realtime_coarse" },
	{ CLOCK_TAI, "tai" },
	{ CLOCK_PROCESS_CPUTIME_ID, "process_cputime" },
	{ CLOCK_THREAD_CPUTIME_ID, "thread_cputime" },
};

static void read_clock(struct text *t, clockid_t id, const char *name)
{
	struct timespec ts;
	long long first = 0, last = 0;
	int backwards = 0;
	for (int i = 0; i < READS; i++) {
		if (clock_gettime(id, &ts) != 0) {
			say(t, "%s: %s\n", name, strerror(errno));
			return;
		}
		long long v = ns_of(ts);
		if (i == 0)
			first = v;
		else if (v < last)
			backwards++;
		last = v;
	}
	say(t, "%s %lld..%lld backwards %d\n", name, first, last, backwards);
}

static void read_others(struct text *t)
{
	struct timeval tv, prev = { 0, 0 };
	int backwards = 0;
	for (int i = 0; i < READS; i++) {
		gettimeofday(&tv, NULL);
		backwards += timercmp(&tv, &prev, <);
		prev = tv;
	}
	say(t, "gettimeofday %lld.%06ld backwards %d\n", (long long)tv.tv_sec, (long)tv.tv_usec,
	    backwards);
	time_t now, stored = 0;
	now = time(&stored);
	say(t, "time %lld stored %lld\n", (long long)now, (long long)stored);
	struct timespec res;
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (clock_getres(clocks[i].id, &res) == 0)
			say(t, "%s res %lld\n", clocks[i].name, ns_of(res));
	clockid_t parent_cpu;
	struct timespec ts;
	if (clock_getcpuclockid(getppid(), &parent_cpu) == 0 && clock_gettime(parent_cpu, &ts) == 0)
		say(t, "parent's cpu clock %lld\n", ns_of(ts));
	int r = clock_gettime(1234, &ts);
	say(t, "clock 1234: %d %s\n", r, r ? strerror(errno) : "read");
}

/* A wait on the clock: it must end, reads alone moving time. */
static void wait_deadline(struct text *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long long deadline = ns_of(ts) + 3000000, reads = 0;
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		reads++;
	} while (ns_of(ts) < deadline);
	say(t, "deadline reached after %lld reads at %lld\n", reads, ns_of(ts));
}

static void reader(const char *who)
{
	static __thread struct text t;
	t.len = 0;
	say(&t, "-- %s\n", who);
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		read_clock(&t, clocks[i].id, clocks[i].name);
	read_others(&t);
	wait_deadline(&t);
	if (write(1, t.buf, t.len) < 0)
		exit(1);
}

static void *thread_reader(void *arg)
{
	(void)arg;
	reader("thread");
	return NULL;
}

/* What the vfork child read, for its parent to print: the child shares its memory. */
static long long vfork_reads[300];

static void vfork_then_read(void)
{
	pid_t child = vfork();
	if (child == 0) {
		struct timespec ts;
		for (int i = 0; i < 300; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			vfork_reads[i] = ns_of(ts);
		}
		_exit(0);
	}
	int status, backwards = 0;
	waitpid(child, &status, 0);
	for (int i = 1; i < 300; i++)
		backwards += vfork_reads[i] < vfork_reads[i - 1];
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("vfork child %lld..%lld backwards %d, then parent %lld: %s\n", vfork_reads[0],
	       vfork_reads[299], backwards, ns_of(ts),
	       ns_of(ts) > vfork_reads[299] ? "later" : "NOT LATER");
	fflush(stdout);
	reader("parent");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	if (!strcmp(mode, "vfork")) {
		vfork_then_read();
	} else if (!strcmp(mode, "fork")) {
		pid_t child = fork();
		if (child == 0) {
			reader("child");
			_exit(0);
		}
		reader("parent");
		int status;
		waitpid(child, &status, 0);
	} else if (!strcmp(mode, "thread")) {
		pthread_t th;
		pthread_create(&th, NULL, thread_reader, NULL);
		reader("main thread");
		pthread_join(th, NULL);
	} else {
		reader("main");
	}
	return 0;
}
