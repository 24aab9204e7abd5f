/* A breakpoint set in the parent must not reach a forked child: the child's copy of the
 * memory has the int3 in it until the debugger takes it out. Both call work(). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2;
}

int main(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		printf("child %d\n", work(1));
		return 0;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("parent %d child status %d\n", work(2), status);
	printf(status == 0 ? "DBG-FORK-OK\n" : "DBG-FORK-FAILED\n");
	return 0;
}
