// PTRACE_SETSIGINFO at a signal-delivery stop: the child's SIGUSR1 goes in with the
// siginfo its tracer wrote (SI_QUEUE, a value), which its SA_SIGINFO handler sees.
// Prints the same natively and under detrun.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	printf("child: signal %d, code %d (SI_QUEUE %d), value %d\n", sig, si->si_code, SI_QUEUE,
	       si->si_value.sival_int);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_usr1;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGUSR1, &sa, NULL);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGUSR1);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("parent: stopped by %d\n", WSTOPSIG(st));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	printf("parent: getsiginfo %ld\n", ptrace(PTRACE_GETSIGINFO, pid, 0, &si));
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = 1234;
	printf("parent: setsiginfo %ld\n", ptrace(PTRACE_SETSIGINFO, pid, 0, &si));
	ptrace(PTRACE_CONT, pid, 0, SIGUSR1);
	waitpid(pid, &st, 0);
	printf("parent: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
