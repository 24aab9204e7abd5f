// A tracer's reads and writes of a stopped child's registers: the two words the kernel's
// struct user has past the debug registers (error_code, fault_address) read as 0 and the
// next word is refused; PTRACE_ARCH_PRCTL reads the fs base and sets the gs base, which the
// child then sees; a resume with no valid signal is refused. Prints the same natively and
// under detrun.
#include <asm/prctl.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void stopped(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		printf("parent: the child did not stop\n");
		exit(1);
	}
	printf("parent: stopped by signal %d\n", WSTOPSIG(status));
}

static void peek(pid_t pid, const char *what, size_t off)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, pid, (void *)off, 0);
	printf("parent: peekuser %s: %ld, errno %d\n", what, v, errno);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		unsigned long gs = 0;
		syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
		printf("child: gs base 0x%lx\n", gs);
		_exit(0);
	}
	stopped(pid);
	size_t dr7 = offsetof(struct user, u_debugreg) + 7 * sizeof(long);
	peek(pid, "dr7", dr7);
	peek(pid, "error_code", sizeof(struct user));
	peek(pid, "fault_address", sizeof(struct user) + sizeof(long));
	peek(pid, "past the end", sizeof(struct user) + 2 * sizeof(long));
	uintptr_t fs = 0;
	long r = ptrace(PTRACE_ARCH_PRCTL, pid, &fs, ARCH_GET_FS);
	printf("parent: get fs %ld, nonzero %d\n", r, fs != 0);
	r = ptrace(PTRACE_ARCH_PRCTL, pid, (void *)0x12340000, ARCH_SET_GS);
	printf("parent: set gs %ld\n", r);
	errno = 0;
	r = ptrace(PTRACE_CONT, pid, 0, (void *)-1L);
	printf("parent: cont with signal -1: %ld, errno %d\n", r, errno);
	r = ptrace(PTRACE_CONT, pid, 0, 0);
	int status;
	waitpid(pid, &status, 0);
	printf("parent: cont %ld, child exited %d\n", r,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
