/* A process that executes itself again: gdb must learn of the exec (new symbols, new
 * breakpoints) and no int3 of the first image may be left in the second. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int before_exec(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int after_exec(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "again")) {
		int ok = after_exec(21) == 42 && before_exec(1) == 2;
		printf(ok ? "DBG-EXEC-OK\n" : "DBG-EXEC-FAILED\n");
		return !ok;
	}
	printf("first image %d\n", before_exec(1));
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	perror("execl");
	return 1;
}
