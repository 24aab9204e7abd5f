/* posix_spawn runs its child with vfork (the parent's memory, int3s included, shared until
 * the exec): gdb does not follow that child, and a breakpoint it meets there (execve) must
 * neither stop gdb nor kill the child. */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;

__attribute__((noinline)) int marker(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid;
	int status = -1;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return 1;
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && marker(1) == 2;
	printf(ok ? "DBG-VFORK-OK\n" : "DBG-VFORK-FAILED %d\n", status);
	return !ok;
}
