// A tracer that emulates or changes its child's system calls: PTRACE_SYSEMU stops at a
// call's entry and skips it (the child gets the rax its tracer set; resumed with
// PTRACE_SYSCALL, the exit stop shows it); at a PTRACE_SYSCALL entry stop a new orig_rax
// changes the call, and -1 skips it; PTRACE_SYSEMU_SINGLESTEP steps to the next call and
// skips it too. Prints the same natively and under detrun.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int stop(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		printf("parent: the child did not stop (0x%x)\n", status);
		exit(1);
	}
	return WSTOPSIG(status);
}

static struct user_regs_struct regs_of(pid_t pid)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r))
		exit(1);
	return r;
}

static void set_regs(pid_t pid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, pid, 0, r))
		exit(1);
}

/* Resumes pid with `request` and waits for a syscall stop; prints its call and rax (or,
 * for a pid, whether it is the tracer's). */
static struct user_regs_struct at_call(pid_t pid, int request, const char *what)
{
	ptrace(request, pid, 0, 0);
	int sig = stop(pid);
	struct user_regs_struct r = regs_of(pid);
	if (r.orig_rax == SYS_getppid)
		printf("parent: %s: signal 0x%x, orig_rax %lld, rax is my pid %d\n", what, sig,
		       (long long)r.orig_rax, (pid_t)r.rax == getpid());
	else
		printf("parent: %s: signal 0x%x, orig_rax %lld, rax %lld\n", what, sig,
		       (long long)r.orig_rax, (long long)r.rax);
	return r;
}

static void child(void)
{
	pid_t me = getpid();
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	syscall(SYS_kill, me, SIGSTOP);
	long a = syscall(SYS_getuid);
	long b = syscall(SYS_getpid);
	long c = syscall(SYS_getuid);
	long d = syscall(SYS_getgid);
	long e = syscall(SYS_getuid);
	printf("child: emulated %ld; changed to getppid %d; skipped %ld; %ld; stepped to %ld\n", a,
	       b == getppid(), c, d, e);
	exit(0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t pid = fork();
	if (pid == 0)
		child();
	printf("parent: stopped by %d\n", stop(pid));
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD);

	struct user_regs_struct r = at_call(pid, PTRACE_SYSEMU, "sysemu entry");
	r.rax = 4242;
	set_regs(pid, &r);
	at_call(pid, PTRACE_SYSCALL, "its exit");

	r = at_call(pid, PTRACE_SYSCALL, "entry");
	r.orig_rax = SYS_getppid;
	set_regs(pid, &r);
	at_call(pid, PTRACE_SYSCALL, "exit, changed");

	r = at_call(pid, PTRACE_SYSCALL, "entry");
	r.orig_rax = -1;
	r.rax = 777;
	set_regs(pid, &r);
	r = at_call(pid, PTRACE_SYSEMU, "no exit stop, the next entry");
	r.rax = 888;
	set_regs(pid, &r);

	int steps = 0;
	for (;;) {
		ptrace(PTRACE_SYSEMU_SINGLESTEP, pid, 0, 0);
		int sig = stop(pid);
		if (sig == (SIGTRAP | 0x80))
			break;
		if (sig != SIGTRAP) {
			printf("parent: stopped by %d while stepping\n", sig);
			return 1;
		}
		steps++;
	}
	r = regs_of(pid);
	printf("parent: stepped to a call: steps %d, orig_rax %lld, rax %lld\n", steps > 0,
	       (long long)r.orig_rax, (long long)r.rax);
	r.rax = 999;
	set_regs(pid, &r);
	ptrace(PTRACE_CONT, pid, 0, 0);
	int status;
	waitpid(pid, &status, 0);
	printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
