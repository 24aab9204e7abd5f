/* The init (pid 1) of a nested PID namespace dies of a fault like any process: the kernel
 * forces the signal through init's protection. Its parent sees it killed by SIGSEGV.
 * Needs root. Prints "sig_nested_init: init killed by signal 11". */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	if (unshare(CLONE_NEWPID) < 0) {
		perror("unshare");
		return 1;
	}
	pid_t child = fork();
	if (child == 0) {
		if (getpid() != 1)
			_exit(2);
		*(volatile int *)0 = 1;
		_exit(3);
	}
	int st;
	if (waitpid(child, &st, 0) != child)
		return 1;
	if (WIFSIGNALED(st))
		printf("sig_nested_init: init killed by signal %d\n", WTERMSIG(st));
	else
		printf("sig_nested_init: init exited with %d\n", WEXITSTATUS(st));
	return 0;
}
