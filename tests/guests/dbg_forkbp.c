/* gdb follows a forked child to its breakpoint (set detach-on-fork off): only the child
 * calls child_work(), only the parent parent_work(). The child's result is checked by the
 * parent through its exit status. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int child_work(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3;
}

__attribute__((noinline)) int parent_work(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		return child_work(7) == 21 ? 0 : 1;
	int status = -1;
	waitpid(pid, &status, 0);
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && parent_work(1) == 2;
	printf(ok ? "DBG-FORKBP-OK\n" : "DBG-FORKBP-FAILED\n");
	return !ok;
}
