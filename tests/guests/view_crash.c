/* detrun's own reports must not vary between runs (tests/determinism/views_test.cc).
 *
 *   view_crash segv       a thread dies of SIGSEGV: detrun prints the crash report
 *   view_crash deadlock   the program reads a pipe only it could fill: detrun warns of a
 *                         deadlock and waits for a signal from outside */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *crash(void *arg)
{
	(void)arg;
	*(volatile int *)16 = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "segv")) {
		pthread_t t;
		pthread_create(&t, NULL, crash, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(what, "deadlock")) {
		int p[2];
		char c;
		if (pipe(p))
			return 1;
		printf("reading\n");
		fflush(stdout);
		return (int)read(p[0], &c, 1);
	}
	fprintf(stderr, "usage: view_crash segv|deadlock\n");
	return 2;
}
