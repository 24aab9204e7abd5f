/* Writes a counter from the initial thread only (a loop in main calling step), then
 * crashes: `watch -l counter` and reverse-continue from the crash must stop at the last
 * write (tests/debugger/debug_test.cc). The initial thread's debug registers are cleared
 * by its execve, unlike those of a thread made later. */
#include <stdio.h>

int counter;

__attribute__((noinline)) void step(int i)
{
	counter += i;
}

int main(void)
{
	for (int i = 0; i < 100; i++)
		step(i);
	printf("counter %d\n", counter);
	fflush(stdout);
	*(volatile int *)0 = counter;
	return 0;
}
