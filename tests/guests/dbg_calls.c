/* A call to step back into and out of: reverse-step, reverse-finish and reverse-stepi under
 * gdb (tests/hardening/debug_test.cc). Built without optimisation so that every line has
 * its instructions. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline, optimize("O0"))) static int square(int x)
{
	int y = x * x;
	y = y + 0;
	return y;
}

__attribute__((optimize("O0"))) int main(void)
{
	int a = 3;
	int b = square(a);
	int c = b + 1;
	getpid(); /* an event between two lines */
	c = c * 2;
	printf(c == 20 ? "DBG-CALLS-OK\n" : "DBG-CALLS-FAILED\n");
	return 0;
}
