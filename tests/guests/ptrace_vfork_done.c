// A seized child that vforks, traced with PTRACE_O_TRACEVFORK and _TRACEVFORKDONE: its
// vfork event stop, the new child's PTRACE_EVENT_STOP, then, once that child has exited,
// the PTRACE_EVENT_VFORK_DONE stop (GETEVENTMSG: the vfork child) and the SIGCHLD of its
// exit. Prints the same natively and under detrun.
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
	if (pid == 0) {
		pid_t child = vfork();
		if (child == 0)
			_exit(9);
		int status;
		waitpid(child, &status, 0);
		_exit(WEXITSTATUS(status) + 1);
	}
	long opts = PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE;
	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, opts));
	let_go(go);
	show("vfork", pid);
	unsigned long msg = 0, done_msg = 0;
	printf("geteventmsg %ld\n", ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg));
	pid_t grandchild = (pid_t)msg;
	show("vfork child", grandchild);
	printf("cont vfork child %ld\n", ptrace(PTRACE_CONT, grandchild, 0, 0));
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("vfork done", pid);
	long r = ptrace(PTRACE_GETEVENTMSG, pid, 0, &done_msg);
	printf("geteventmsg %ld, the vfork child %d\n", r, done_msg == msg);
	show("vfork child", grandchild);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("its exit", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("child", pid);
	return 0;
}
