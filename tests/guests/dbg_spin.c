/* Computes without a syscall until gdb, having interrupted it, sets `stop`: gdb's Ctrl-C
 * must stop it promptly. The loop writes memory, so the spin detector lets it run. */
#include <stdio.h>
#include <unistd.h>

volatile int stop;
volatile unsigned long rounds;

int main(void)
{
	printf("spinning\n");
	fflush(stdout);
	while (!stop)
		rounds++;
	printf(rounds > 0 ? "DBG-SPIN-OK\n" : "DBG-SPIN-FAILED\n");
	return 0;
}
