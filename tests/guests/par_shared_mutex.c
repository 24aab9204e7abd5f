/* e2e guest: two processes take turns on a process-shared mutex in anonymous shared memory
 * (futexes on a shared page: detrun's futex emulation reads the word, which page
 * ownership must hand to the caller first) and note who held it, in order. The counter
 * is exact; the order of the holders varies natively and must not under detrun.
 * usage: par_shared_mutex [ROUNDS] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	MAX_ROUNDS = 4096,
	WORK = 20000, /* stores inside the lock: holders overlap natively */
};

struct area {
	pthread_mutex_t lock;
	long counter;
	int len;
	char order[2 * MAX_ROUNDS + 1];
};

static void take_turns(struct area *a, int rounds, char mark)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(pthread_mutex_lock(&a->lock) == 0, "lock");
		for (volatile int k = 0; k < WORK; k++)
			;
		a->counter++;
		a->order[a->len++] = mark;
		CHECK(pthread_mutex_unlock(&a->lock) == 0, "unlock");
		if (i % 8 == 7)
			sched_yield();
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 64;
	CHECK(rounds > 0 && rounds <= MAX_ROUNDS, "rounds %d", rounds);
	struct area *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
	CHECK(a != MAP_FAILED, "mmap");
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	CHECK(pthread_mutex_init(&a->lock, &attr) == 0, "mutex init");
	pid_t child = fork();
	CHECK(child >= 0, "fork");
	take_turns(a, rounds, child ? 'p' : 'c');
	if (child == 0)
		_exit(0);
	int st;
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "child ended 0x%x", st);
	CHECK(a->counter == 2 * rounds, "counter %ld", a->counter);
	printf("counter %ld order %s\n", a->counter, a->order);
	return 0;
}
