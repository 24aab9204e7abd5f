/* futex(FUTEX_WAKE) asking for 0 waiters, and for -1, with one thread waiting: the kernel
 * wakes one all the same (it counts a waiter before comparing). Prints what each wake
 * returned; natively "wake 0: 1" and "wake -1: 1". */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic unsigned word;

static long futex(unsigned op, unsigned val)
{
	return syscall(SYS_futex, &word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void *waiter(void *arg)
{
	(void)arg;
	while (atomic_load(&word) == 0)
		futex(FUTEX_WAIT, 0);
	return NULL;
}

/* Wakes with `n` until the waiter is woken (it may not be waiting yet); what woke it. */
static long wake_until_woken(int n)
{
	atomic_store(&word, 0);
	pthread_t t;
	pthread_create(&t, NULL, waiter, NULL);
	long r = 0;
	for (int i = 0; i < 2000 && r == 0; i++) {
		r = futex(FUTEX_WAKE, (unsigned)n);
		if (r == 0)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	atomic_store(&word, 1);
	futex(FUTEX_WAKE, 1);
	pthread_join(t, NULL);
	return r;
}

int main(void)
{
	printf("wake 0: %ld\n", wake_until_woken(0));
	printf("wake -1: %ld\n", wake_until_woken(-1));
	return 0;
}
