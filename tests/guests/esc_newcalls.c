/* Calls past the table of older detruns: the futex2 calls (futex_wake 454, futex_wait 455,
 * futex_requeue 456) and futex_waitv 449 really wait and wake, cachestat 451 (page cache
 * state) is refused, and numbers no kernel has yet fail with ENOSYS instead of
 * running natively. Run natively, futex_wait would sleep in the kernel with the group's
 * only turn: the group hangs. Prints one line a check. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NR_FUTEX_WAITV 449
#define NR_CACHESTAT 451
#define NR_FUTEX_WAKE 454
#define NR_FUTEX_WAIT 455
#define NR_FUTEX_REQUEUE 456
#define U32_PRIVATE (0x02 | 128) /* FUTEX2_SIZE_U32 | FUTEX2_PRIVATE */

struct waitv {
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};

static uint32_t word, other;

static const char *outcome(long r)
{
	static char buf[64];
	if (r >= 0)
		snprintf(buf, sizeof(buf), "%ld", r);
	else
		snprintf(buf, sizeof(buf), "%s", strerrorname_np(errno));
	return buf;
}

static void *waiter(void *arg)
{
	long r = syscall(NR_FUTEX_WAIT, &word, 0, 0xffffffffUL, U32_PRIVATE, NULL, 0);
	printf("waiter: futex_wait = %s, word %u\n", outcome(r), word);
	return arg;
}

/* A thread waits on `word`; the main thread wakes it once it is queued (the wake returns 1
 * then: under detrun it is the second turn, natively whenever it is asleep). */
static void wait_and_wake(void)
{
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	long r;
	do
		r = syscall(NR_FUTEX_WAKE, &word, 0xffffffffUL, 1, U32_PRIVATE);
	while (r == 0);
	pthread_join(th, NULL);
	printf("futex_wake woke %s\n", outcome(r));
}

/* A waiter on `word` is moved to `other`, then woken there. */
static void requeue(void)
{
	word = 0;
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	struct waitv pair[2] = { { 0, (uintptr_t)&word, U32_PRIVATE, 0 },
				 { 0, (uintptr_t)&other, U32_PRIVATE, 0 } };
	long r;
	do
		r = syscall(NR_FUTEX_REQUEUE, pair, 0, 0, 1);
	while (r == 0);
	printf("futex_requeue moved %s\n", outcome(r));
	r = syscall(NR_FUTEX_WAKE, &other, 0xffffffffUL, 1, U32_PRIVATE);
	pthread_join(th, NULL);
	printf("futex_wake on the second word woke %s\n", outcome(r));
}

static void *waitv_waiter(void *arg)
{
	struct waitv two[2] = { { 0, (uintptr_t)&word, U32_PRIVATE, 0 },
				{ 0, (uintptr_t)&other, U32_PRIVATE, 0 } };
	long r = syscall(NR_FUTEX_WAITV, two, 2, 0, NULL, 0);
	printf("waiter: futex_waitv = %s\n", outcome(r));
	return arg;
}

/* A thread waits on two words at once; a wake on the second ends its wait with index 1. */
static void waitv(void)
{
	struct waitv one = { 1, (uintptr_t)&word, U32_PRIVATE, 0 };
	long r = syscall(NR_FUTEX_WAITV, &one, 1, 0, NULL, 1);
	printf("futex_waitv on another value: %s\n", outcome(r));
	struct timespec past = { 0, 0 };
	one.val = 0;
	r = syscall(NR_FUTEX_WAITV, &one, 1, 0, &past, CLOCK_MONOTONIC);
	printf("futex_waitv until a time past: %s\n", outcome(r));
	pthread_t th;
	pthread_create(&th, NULL, waitv_waiter, NULL);
	do
		r = syscall(NR_FUTEX_WAKE, &other, 0xffffffffUL, 1, U32_PRIVATE);
	while (r == 0);
	pthread_join(th, NULL);
	printf("futex_wake on its second word woke %s\n", outcome(r));
}

int main(void)
{
	long r = syscall(NR_FUTEX_WAIT, &word, 7, 0xffffffffUL, U32_PRIVATE, NULL, 0);
	printf("futex_wait on another value: %s\n", outcome(r));
	r = syscall(NR_FUTEX_WAIT, &word, 0, 0xffffffffUL, 0x03, NULL,
		    0); /* 64-bit words: none yet */
	printf("futex_wait with 64-bit size: %s\n", outcome(r));
	r = syscall(NR_FUTEX_WAKE, &word, 0xffffffffUL, 1, U32_PRIVATE);
	printf("futex_wake with no waiter: %s\n", outcome(r));
	wait_and_wake();
	requeue();
	waitv();
	uint64_t range[2] = { 0, 0 }, stat[8];
	r = syscall(NR_CACHESTAT, 0, range, stat, 0);
	printf("cachestat: %s\n", outcome(r));
	const long unknown[] = { 470, 500, 1000, 470 };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		r = syscall(unknown[i], 0, 0, 0, 0, 0, 0);
		printf("syscall %ld: %s\n", unknown[i], outcome(r));
	}
	return 0;
}
