// PTRACE_INTERRUPT of a seized tracee that is already stopped: the kernel keeps it, and the
// tracee stops again (PTRACE_EVENT_STOP) as soon as it is resumed, before it runs. Prints
// the same natively and under detrun.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_show.h"

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	int go[2];
	pid_t pid = fork_held(go);
	if (pid == 0)
		_exit(3);
	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, 0));
	printf("interrupt %ld\n", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
	show("interrupted", pid);
	printf("interrupt again %ld\n", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("resumed", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	let_go(go);
	show("child", pid);
	return 0;
}
