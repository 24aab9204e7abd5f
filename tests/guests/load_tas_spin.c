/* load guest: a thread waits for a lock with a test-and-set spin (atomic_exchange on every
 * iteration: it writes the lock's page over and over without changing it) in a process
 * that also maps a large, untouched, writable region (as Go, JVMs and sanitizers do). The
 * spin detector must see that nothing changes and deschedule the spinner so that main can
 * release the lock; a detector that takes written for changed, or gives up on large
 * memory, never does and the group hangs. usage: load_tas_spin [MIB 0..4096] */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static atomic_int lock = 1, started;
static int got;

static void *waiter(void *arg)
{
	atomic_store(&started, 1);
	while (atomic_exchange(&lock, 1))
		;
	got = 1;
	atomic_store(&lock, 0);
	return arg;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 1024;
	if (mib < 0 || mib > 4096) {
		fprintf(stderr, "usage: load_tas_spin [MIB 0..4096]\n");
		return 2;
	}
	if (mib && mmap(NULL, (size_t)mib << 20, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	while (!atomic_load(&started))
		sched_yield(); /* the waiter spins from here on */
	atomic_store(&lock, 0);
	pthread_join(t, NULL);
	printf("load_tas_spin ok: got %d\n", got);
	return 0;
}
