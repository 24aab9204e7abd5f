/* The ptrace guests print each wait of a tracer as one line, the same natively and under
 * detrun, which the tests compare. */
#ifndef DETRUN_TESTS_GUESTS_PTRACE_SHOW_H
#define DETRUN_TESTS_GUESTS_PTRACE_SHOW_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>

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

#endif
