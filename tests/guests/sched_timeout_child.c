/* hardening guest (sched, issue 9 point 7): the shape of timeout(1). The parent arms a
 * 20 ms timer and waits; its child computes, calling only gettid now and then (a LOCAL
 * call, which never stops under detrun, with processes in parallel too; the child has no
 * timer of its own). When SIGALRM
 * comes the parent kills the child (it waits in sigsuspend, so no signal is missed). The child gives up after a bound, so the program ends
 * natively even if the signal never came. Prints how the child ended. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired = 1;
}

static void on_child(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	long bound = argc > 1 ? atol(argv[1]) : 2000000;
	/* SIGALRM and SIGCHLD are taken only inside sigsuspend: none can be missed. */
	sigset_t both, during;
	sigemptyset(&both);
	sigaddset(&both, SIGALRM);
	sigaddset(&both, SIGCHLD);
	sigprocmask(SIG_BLOCK, &both, &during);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	pid_t child = fork(); /* the child has no timer: fork does not pass it on */
	if (child == 0) {
		volatile unsigned long sink = 0;
		for (long calls = 0; calls < bound; calls++) {
			for (int i = 0; i < 200; i++)
				sink = sink * 31 + (unsigned long)i;
			syscall(SYS_gettid);
		}
		_exit(3);
	}
	int status;
	bool killed = false;
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (fired && !killed)
			killed = kill(child, SIGKILL) == 0;
		else
			sigsuspend(&during);
	}
	if (WIFSIGNALED(status))
		printf("sched_timeout_child: child killed by signal %d after the alarm\n",
		       WTERMSIG(status));
	else
		printf("sched_timeout_child: child exited %d, the alarm never came\n",
		       WEXITSTATUS(status));
	return 0;
}
