// A parent traces its child, which waits in a read on a pipe: PTRACE_ATTACH and its
// SIGSTOP stop, the registers of a task stopped in a blocking call, PEEKDATA and POKEDATA of
// a variable, GETSIGINFO, DETACH; then PTRACE_SEIZE, INTERRUPT and CONT. The child then
// reads, prints the variable the parent changed, and exits. Prints the same natively and
// under detrun.
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static long value = 1234;

static void child(int in)
{
	char c;
	ssize_t n = read(in, &c, 1);
	printf("child: read %zd byte, value %ld\n", n, value);
	n = read(in, &c, 1);
	printf("child: read %zd byte again\n", n);
	exit(0);
}

static void show_stop(pid_t pid, const char *what)
{
	int status;
	pid_t got = waitpid(pid, &status, __WALL);
	printf("%s: waitpid %s, stopped %d, signal %d, event %d\n", what,
	       got == pid ? "is the child" : "other", WIFSTOPPED(status), WSTOPSIG(status),
	       status >> 16);
}

static void show_regs(pid_t pid)
{
	struct user_regs_struct r;
	long err = ptrace(PTRACE_GETREGS, pid, 0, &r);
	printf("getregs %ld: orig_rax %lld (read is %d), rax %lld\n", err, (long long)r.orig_rax,
	       SYS_read, (long long)r.rax);
	errno = 0;
	long rax = ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user_regs_struct, rax), 0);
	printf("peekuser rax %ld, errno %d\n", rax, errno);
}

int main(void)
{
	int p[2];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (pipe(p))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		child(p[0]);
	}
	usleep(100000); /* the child is in its read (under detrun, whatever the timing) */
	long r = ptrace(PTRACE_ATTACH, pid, 0, 0);
	printf("attach %ld\n", r);
	if (r) { /* refused (detrun's parallel mode): the child goes */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 2;
	}
	show_stop(pid, "attach");
	show_regs(pid);
	errno = 0;
	long v = ptrace(PTRACE_PEEKDATA, pid, &value, 0);
	printf("peekdata %ld, errno %d\n", v, errno);
	printf("pokedata %ld\n", ptrace(PTRACE_POKEDATA, pid, &value, (void *)5678));
	siginfo_t si;
	r = ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
	printf("getsiginfo %ld: signo %d\n", r, si.si_signo);
	r = ptrace(PTRACE_ATTACH, pid, 0, 0);
	printf("second attach %ld, errno %d\n", r, errno);
	printf("detach %ld\n", ptrace(PTRACE_DETACH, pid, 0, 0));
	struct user_regs_struct regs;
	r = ptrace(PTRACE_GETREGS, pid, 0, &regs);
	printf("getregs after detach %ld, errno %d\n", r, errno);

	printf("seize %ld\n", ptrace(PTRACE_SEIZE, pid, 0, 0));
	printf("interrupt %ld\n", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
	show_stop(pid, "interrupt");
	printf("cont %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	r = ptrace(PTRACE_DETACH, pid, 0, 0);
	printf("detach while running %ld, errno %d\n", r, errno);
	printf("interrupt %ld\n", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
	show_stop(pid, "interrupt");
	printf("detach %ld\n", ptrace(PTRACE_DETACH, pid, 0, 0));

	if (write(p[1], "x", 1) != 1)
		return 1;
	close(p[1]);
	int status;
	waitpid(pid, &status, 0);
	printf("child exited %d\n", WEXITSTATUS(status));
	return 0;
}
