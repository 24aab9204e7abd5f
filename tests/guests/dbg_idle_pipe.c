/* Reads a pipe nobody writes: the group is idle with no outside input to wait for (a
 * deadlock, as detrun says), until a signal from outside interrupts the read. gdb's
 * Ctrl-C must stop it there, and gdb's continue let it go on. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void on_usr1(int sig)
{
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: the read ends */
	int fds[2];
	if (sigaction(SIGUSR1, &sa, NULL) < 0 || pipe(fds) < 0)
		return 1;
	printf("waiting\n");
	fflush(stdout);
	char c;
	ssize_t n = read(fds[0], &c, 1);
	printf(n < 0 && errno == EINTR ? "DBG-IDLE-PIPE-WOKEN\n" : "DBG-IDLE-PIPE-FAILED\n");
	return 0;
}
