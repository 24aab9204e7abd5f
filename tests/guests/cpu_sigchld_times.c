/* A child computes, then exits; the parent's SIGCHLD handler prints the CPU time the
 * kernel reports for it in the siginfo (si_utime + si_stime, in clock ticks). Natively
 * that is the child's real CPU time, which varies from run to run; the group's children
 * show none (as getrusage(RUSAGE_CHILDREN) and times(2) say under detrun). */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile long ticks = -1;

static void on_child(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	ticks = (long)(si->si_utime + si->si_stime);
	got = 1;
}

int main(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_child;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 150000000UL; i++)
			x += i;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	while (!got)
		pause();
	printf("child CPU time in SIGCHLD: %ld ticks\n", ticks);
	return 0;
}
