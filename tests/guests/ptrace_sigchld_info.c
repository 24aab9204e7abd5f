// The SIGCHLD a tracer gets for its tracee's stop carries the kernel's siginfo:
// CLD_TRAPPED, the tracee's pid, its stop signal. Prints the same natively and under
// detrun.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t code, from, status, got;

static void on_chld(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	code = si->si_code;
	from = si->si_pid;
	status = si->si_status;
	got = 1;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid_t pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGUSR2);
		_exit(0);
	}
	while (!got)
		sigsuspend(&old);
	printf("SIGCHLD: code %d (CLD_TRAPPED %d), from the child %d, status %d\n", code,
	       CLD_TRAPPED, from == pid, status);
	int st;
	waitpid(pid, &st, 0);
	printf("stopped by %d\n", WSTOPSIG(st));
	got = 0;
	ptrace(PTRACE_CONT, pid, 0, 0);
	while (!got)
		sigsuspend(&old);
	waitpid(pid, &st, 0);
	printf("SIGCHLD: code %d (CLD_EXITED %d), exited %d\n", code, CLD_EXITED,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
