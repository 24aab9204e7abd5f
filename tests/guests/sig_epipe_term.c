/* Two processes. The child writes to a pipe whose reader has gone (EPIPE; SIGPIPE is
 * ignored, which a traced task still stops for, a stop that is no event), then computes,
 * over and over until SIGTERM (it says "computing" once it has begun), and prints how many
 * writes its handler saw; the parent
 * waits for it. A signal from outside, which finds the child anywhere in its round (mostly
 * computing), must reach it at the same point of its run in a replay as in the recording. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile long writes, seen;

enum {
	ROUND = 5000000 /* a few milliseconds */
};

static void on_term(int sig)
{
	(void)sig;
	seen = writes;
	stop = 1;
}

static unsigned long compute(int n)
{
	volatile unsigned long x = 1;
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1;
	return x;
}

static int child(void)
{
	signal(SIGPIPE, SIG_IGN);
	int p[2];
	if (pipe(p) != 0)
		return 1;
	close(p[0]);
	while (!stop) {
		if (write(p[1], "x", 1) >= 0)
			return 2;    /* nobody reads: EPIPE */
		if (++writes == 1) { /* the test sends its SIGTERM once it reads this */
			printf("computing\n");
			fflush(stdout);
		}
		/* Most of the run is here, between the SIGPIPE stop and the next write. */
		compute(ROUND);
	}
	printf("SIGTERM after %ld writes\n", seen);
	return 0;
}

static void on_term_parent(int sig)
{
	(void)sig; /* it waits for the child, which got its own */
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		return child();
	sa.sa_handler = on_term_parent;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
