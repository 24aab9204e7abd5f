// A program for gdb inside the group (built with -g -O0): a breakpoint on square, a
// backtrace through sum_of_squares, and a run to the end.
#include <stdio.h>

int square(int x)
{
	return x * x;
}

int sum_of_squares(int n)
{
	int total = 0;
	for (int i = 1; i <= n; i++)
		total += square(i);
	return total;
}

int main(void)
{
	printf("gdb_target: %d\n", sum_of_squares(3));
	return 0;
}
