/* e2e guest: a parent that catches SIGCHLD computes, with a call now and then, while its
 * children exit. Each delivery notes how far the parent had got; natively where (and how
 * often, as SIGCHLDs coalesce) the handler runs is up to the kernel's timing. Each child
 * waits for a byte the parent sends at some point of its computation, then exits.
 * usage: par_sigchld [CHILDREN 1..16] */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	MAX_NOTES = 64
};
static volatile long progress;
static volatile long notes[MAX_NOTES];
static volatile int n_notes;

static void on_child(int sig)
{
	(void)sig;
	if (n_notes < MAX_NOTES)
		notes[n_notes++] = progress;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	CHECK(n >= 1 && n <= 16, "usage: par_sigchld [CHILDREN 1..16]");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0, "sigaction");
	int go[2];
	CHECK(pipe(go) == 0, "pipe");
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			/* its byte, a little work of its own, then gone, while the parent
			 * computes */
			char byte;
			CHECK(read(go[0], &byte, 1) == 1, "child %d: read", i);
			uint64_t x = (uint64_t)i;
			for (long k = 0; k < 200000L * (i + 1); k++)
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			_exit((int)(x & 7));
		}
	}
	uint64_t x = 1;
	for (long k = 0; k < 4000; k++) {
		for (int j = 0; j < 2000; j++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		progress = k;
		if (k % 16 == 0)
			(void)getppid(); /* a call: a point where the group's order can act */
		if (k % 256 == 0 && k / 256 < n)
			CHECK(write(go[1], "g", 1) == 1, "write");
	}
	int status, codes = 0;
	while (wait(&status) > 0)
		codes += WEXITSTATUS(status);
	printf("%d deliveries of SIGCHLD at progress:", n_notes);
	for (int i = 0; i < n_notes; i++)
		printf(" %ld", notes[i]);
	printf("\nexit codes sum %d, x %016llx\n", codes, (unsigned long long)x);
	return 0;
}
