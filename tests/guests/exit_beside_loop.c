/* A thread writes to a pipe, then loops for ever without a call (rr's
 * unexpected_exit_pid_ns: a delay function called over and over, whose inner loop only
 * counts down a register; each call writes the same return address to the stack). Main
 * reads the pipe and ends the process with _exit(7): natively that ends the thread too. The
 * looping thread must not hold main back for ever. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "selfcheck.h"

static int to_main[2];

static __attribute__((noinline)) void delay(void)
{
	__asm__ volatile("mov $10000000, %%ecx\n1: loop 1b\n" ::: "ecx", "memory");
}

static void *looper(void *arg)
{
	CHECK(write(to_main[1], "x", 1) == 1, "write to the pipe");
	for (;;)
		delay();
	return arg;
}

int main(void)
{
	CHECK(pipe(to_main) == 0, "pipe");
	pthread_t t;
	CHECK(pthread_create(&t, NULL, looper, NULL) == 0, "pthread_create");
	char c;
	CHECK(read(to_main[0], &c, 1) == 1 && c == 'x', "read from the pipe");
	printf("exit_beside_loop: main read %c, exits 7\n", c);
	fflush(stdout);
	_exit(7);
}
