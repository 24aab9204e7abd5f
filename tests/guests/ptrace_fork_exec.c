/* A parent seizes its child as soon as it has forked it (the child may not have run yet),
 * with the options that follow its exec and its own fork; the child execs this program
 * again, which forks a grandchild, waits for it and exits. The parent waits for each
 * stop by pid, in an order the program fixes, prints it with the call the tracee stands
 * in, and lets it go. Under --jobs 2 each of the three is a memory domain of its own until
 * the seize and the followed fork join them (vkernel/memory_domain.h): prints the same as
 * natively, and as serial mode does. With the argument `where` it also prints the call
 * the child stood in at the seize: natively a timing (not run yet, or in its read), under
 * detrun the same on every run. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_show.h"

/* Waits for the tracee's next stop and prints it, with its event's message; the caller
 * lets it go. Returns the signal of a signal-delivery stop, 0 for another. */
static int stop_of(const char *who, pid_t pid)
{
	char what[64];
	snprintf(what, sizeof(what), "parent: %s", who);
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		printf("%s: not stopped\n", what);
		exit(1);
	}
	int event = status >> 16;
	printf("%s: stopped, signal %d, event %d\n", what, WSTOPSIG(status), event);
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg);
	if (event == PTRACE_EVENT_FORK)
		printf("parent: %s's new child is a %s\n", who, msg > 0 ? "pid" : "nothing");
	if (event == PTRACE_EVENT_EXIT)
		printf("parent: %s exits with %lu\n", who, msg >> 8);
	return event ? 0 : WSTOPSIG(status);
}

static void cont(pid_t pid, int sig)
{
	if (ptrace(PTRACE_CONT, pid, 0, sig))
		printf("parent: cont of a tracee failed\n");
}

static int grandchild(void)
{
	printf("grandchild: runs\n");
	fflush(stdout);
	return 4;
}

/* The child after its exec: forks the grandchild and waits for it. */
static int child(void)
{
	printf("child: exec'd\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(grandchild());
	int status;
	waitpid(pid, &status, 0);
	printf("child: grandchild exited %d\n", WEXITSTATUS(status));
	return 3;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	bool where = argc > 1 && !strcmp(argv[1], "where");
	int go[2];
	fflush(stdout);
	pid_t pid = fork_held(go);
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	long options = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXIT;
	printf("parent: seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, options));
	printf("parent: interrupt %ld\n", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
	stop_of("child", pid);
	struct user_regs_struct r;
	if (where && ptrace(PTRACE_GETREGS, pid, 0, &r) == 0)
		printf("parent: child stands in call %lld, rax %lld\n", (long long)r.orig_rax,
		       (long long)r.rax);
	cont(pid, 0);
	let_go(go);
	stop_of("child", pid); /* its exec */
	cont(pid, 0);
	stop_of("child", pid); /* its fork */
	/* The grandchild's pid is what the fork returned: the child's event message. */
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg);
	pid_t grand = (pid_t)msg;
	stop_of("grandchild", grand); /* seized too: its first stop */
	cont(grand, 0);
	cont(pid, 0);
	stop_of("grandchild", grand); /* its exit */
	cont(grand, 0);
	show("parent: grandchild", grand);
	int sig;
	while ((sig = stop_of("child", pid)) != 0) /* SIGCHLD, passed on; then its exit */
		cont(pid, sig);
	cont(pid, 0);
	show("parent: child", pid);
	return 0;
}
