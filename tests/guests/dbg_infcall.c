/* gdb's inferior calls on a replay: add() computes without a system call, so gdb may run
 * it; fflush(0) writes the buffered output, a system call that detrun refuses. The
 * program's own lines must come out once each, as recorded. */
#include <stdio.h>

int counter;

__attribute__((noinline)) int add(int a, int b)
{
	return a + b + counter;
}

__attribute__((noinline)) void tick(int i)
{
	counter += i;
}

int main(void)
{
	for (int i = 0; i < 5; i++) {
		tick(i);
		printf("counter %d\n", counter);
	}
	puts("DBG-INFCALL-OK");
	return 0;
}
