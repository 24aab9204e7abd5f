/* e2e guest: prints one line and kills itself with the given signal (default action), so
 * a shell would report 128 + SIG. Exits 99 if it somehow survives.
 * usage: kill_self SIG */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sig = argc > 1 ? atoi(argv[1]) : SIGTERM;
	printf("killing myself with signal %d\n", sig);
	fflush(stdout);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), sig);
	return 99;
}
