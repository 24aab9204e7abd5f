/* The ptrace guests print each wait of a tracer as one line, the same natively and under
 * detrun, which the tests compare; most hold their child until the tracer has seized it. */
#ifndef DETRUN_TESTS_GUESTS_PTRACE_SHOW_H
#define DETRUN_TESTS_GUESTS_PTRACE_SHOW_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Waits for pid and prints what it became: exited, stopped (signal and ptrace event), or
 * the raw status. A failed wait ends the guest. */
__attribute__((unused)) static void show(const char *what, pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		printf("%s: waitpid failed\n", what);
		exit(1);
	}
	if (WIFEXITED(status))
		printf("%s: exited %d\n", what, WEXITSTATUS(status));
	else if (WIFSTOPPED(status))
		printf("%s: stopped, signal %d, event %d\n", what, WSTOPSIG(status), status >> 16);
	else
		printf("%s: status 0x%x\n", what, status);
}

/* Forks a child that waits, before it goes on from here (0 returned), until the parent
 * calls let_go(go); in the parent, the child's pid. A pipe that cannot be made ends the
 * guest. */
__attribute__((unused)) static pid_t fork_held(int go[2])
{
	if (pipe(go))
		exit(1);
	pid_t pid = fork();
	char c;
	if (pid == 0 && read(go[0], &c, 1) != 1)
		_exit(1);
	return pid;
}

__attribute__((unused)) static void let_go(int go[2])
{
	if (write(go[1], "g", 1) != 1)
		exit(1);
}

#endif
