/* A long recording for checkpoints (tests/debugger/debug_test.cc, README's measures): N
 * turns of a loop (2000 unless argv[1] says), each an event (sched_yield) and a write of
 * `counter`. `ahead` is called once, at turn 4N/5, `late` once, at turn 9N/10: from a
 * checkpoint at ahead, a reverse-continue from the end onto late runs over a fifth and a
 * tenth of the recording, from the start over all of it and nine tenths. `ahead` prints a
 * line: runs parked ahead of time pass it and must not show it. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

long counter;

__attribute__((noinline)) void ahead(int i)
{
	counter += i;
	printf("ahead %d\n", i);
	fflush(stdout);
}

__attribute__((noinline)) void late(int i)
{
	counter -= i;
}

__attribute__((noinline)) void done(long c)
{
	printf("counter %ld\n", c);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	for (int i = 0; i < n; i++) {
		sched_yield();
		counter += i & 7;
		if (i == 4 * n / 5)
			ahead(i);
		if (i == 9 * n / 10)
			late(i);
	}
	done(counter);
	return 0;
}
