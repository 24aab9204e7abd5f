// Children that ask their parent to trace them (PTRACE_TRACEME): each signal they get
// stops them for the parent, which passes it on (SIGUSR1: the child's handler runs) or
// drops it (SIGSTOP); an exec stops the child with SIGTRAP; a fault stops it with SIGSEGV,
// and PTRACE_KILL ends it. Prints the same natively and
// under detrun.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_usr1(int sig)
{
	printf("child: handler for signal %d\n", sig);
}

static int next_stop(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		printf("parent: child exited %d, killed by %d\n", WEXITSTATUS(status),
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		return 0;
	}
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	long r = ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
	printf("parent: child stopped by %s, siginfo %ld: signo %d, code %d, from the child %d\n",
	       strsignal(WSTOPSIG(status)), r, si.si_signo, si.si_code, si.si_pid == pid);
	return WSTOPSIG(status);
}

static void signals(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr1);
		printf("child: traceme %ld\n", ptrace(PTRACE_TRACEME, 0, 0, 0));
		kill(getpid(), SIGUSR1);
		printf("child: after SIGUSR1\n");
		raise(SIGSTOP);
		printf("child: SIGSTOP dropped\n");
		exit(3);
	}
	int sig;
	while ((sig = next_stop(pid)) > 0)
		ptrace(PTRACE_CONT, pid, 0, sig == SIGSTOP ? 0 : sig);
}

static void exec(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int sig;
	while ((sig = next_stop(pid)) > 0)
		ptrace(PTRACE_CONT, pid, 0, sig == SIGTRAP ? 0 : sig);
}

static void fault(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		int *volatile bad = (int *)8;
		*bad = 1;
		_exit(127);
	}
	if (next_stop(pid) == SIGSEGV)
		printf("parent: kill %ld\n", ptrace(PTRACE_KILL, pid, 0, 0));
	next_stop(pid);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	signals();
	exec();
	fault();
	return 0;
}
