// Stops a tracer sees natively that take detrun's care: a tracee's SIGCHLD, though its
// default action ignores it (a traced task is stopped by every signal); PTRACE_TRACEME in
// a child made by a second thread (the tracer is that thread, which alone may set its
// options); the SIGTRAP after a traced exec, where execve has returned 0. Prints the same
// natively and under detrun.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_show.h"

static void sigchld_of_a_grandchild(void)
{
	int go[2];
	pid_t pid = fork_held(go);
	if (pid == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0)
			_exit(3);
		int status;
		waitpid(grandchild, &status, 0);
		_exit(WEXITSTATUS(status) + 1);
	}
	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, 0));
	let_go(go);
	show("grandchild exited", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("child", pid);
}

static void *tracer_thread(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(5);
	}
	show("traced by the thread", pid);
	printf("setoptions %ld\n", ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT));
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("exiting", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("child", pid);
	return NULL;
}

static void traceme_in_a_thread(void)
{
	pthread_t thread;
	pthread_create(&thread, NULL, tracer_thread, NULL);
	pthread_join(thread, NULL);
}

static void exec_returns_zero(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	show("exec", pid);
	struct user_regs_struct regs;
	printf("getregs %ld\n", ptrace(PTRACE_GETREGS, pid, 0, &regs));
	printf("orig_rax %lld (execve %d), rax %lld\n", (long long)regs.orig_rax, SYS_execve,
	       (long long)regs.rax);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("child", pid);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	sigchld_of_a_grandchild();
	traceme_in_a_thread();
	exec_returns_zero();
	printf("done\n");
	return 0;
}
