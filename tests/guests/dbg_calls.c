/* A call to step back into and out of, and a system call to step back over: reverse-step,
 * reverse-finish and reverse-stepi under gdb (tests/debugger/debug_test.cc, which names
 * lines of this file). Built without optimisation so that every line has its instructions;
 * an event at the start of main keeps the interval single-stepped from it short. */
#include <sched.h>
#include <stdio.h>

__attribute__((noinline, optimize("O0"))) static int square(int x)
{
	int y = x * x;
	y = y + 0;
	return y;
}

/* sched_yield without libc: an event, in three instructions. */
__attribute__((optimize("O0"))) static long raw_yield(void)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(24L) : "rcx", "r11", "memory");
	return r;
}

__attribute__((optimize("O0"))) int main(void)
{
	sched_yield();
	int a = 3;
	int b = square(a);
	int c = b + 1;        /* line 28 */
	long r = raw_yield(); /* line 29 */
	c = c * 2 + (r == 0 ? 0 : 1);
	printf(c == 20 ? "DBG-CALLS-OK\n" : "DBG-CALLS-FAILED\n");
	return 0;
}
