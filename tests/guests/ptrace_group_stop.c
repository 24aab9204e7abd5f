// Group stops of tracees: a seized child stopped by SIGSTOP (its signal-delivery stop, then
// the group stop its tracer passes the signal into, PTRACE_EVENT_STOP); PTRACE_LISTEN
// keeps it stopped until a SIGCONT, which stops it once more (PTRACE_EVENT_STOP, SIGTRAP)
// before its SIGCONT's own stop. A process that stopped itself, seized, reports the stop
// it is in, and PTRACE_CONT lets it run though its process stays stopped. Prints the same
// natively and under detrun.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_show.h"

static void listen_until_continued(void)
{
	int go[2], ready[2];
	char c;
	if (pipe(go) || pipe(ready))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(7);
	}
	if (read(ready[0], &c, 1) != 1)
		exit(1);
	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, 0));
	kill(pid, SIGSTOP);
	show("SIGSTOP sent", pid);
	printf("cont with SIGSTOP %ld\n", ptrace(PTRACE_CONT, pid, 0, SIGSTOP));
	show("group stop", pid);
	printf("listen %ld\n", ptrace(PTRACE_LISTEN, pid, 0, 0));
	kill(pid, SIGCONT);
	show("SIGCONT sent", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	show("SIGCONT's stop", pid);
	printf("cont with SIGCONT %ld\n", ptrace(PTRACE_CONT, pid, 0, SIGCONT));
	if (write(go[1], "g", 1) != 1)
		exit(1);
	show("child", pid);
}

static void seize_a_stopped_process(void)
{
	int ran[2];
	char c;
	if (pipe(ran))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		raise(SIGSTOP);
		if (write(ran[1], "a", 1) != 1)
			_exit(1);
		_exit(8);
	}
	int status;
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
		exit(1);
	printf("stopped itself, signal %d\n", WSTOPSIG(status));
	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, 0));
	show("seized", pid);
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	if (read(ran[0], &c, 1) != 1)
		exit(1);
	printf("ran while its process is stopped: %c\n", c);
	show("child", pid);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	listen_until_continued();
	seize_a_stopped_process();
	printf("done\n");
	return 0;
}
