/* e2e guest: a three-stage pipeline of processes that compute between their messages, so
 * the stages run at the same time: the first makes numbers, the second transforms each, the
 * third sums them. Every stage also reports its progress on the shared standard output,
 * so the interleaving of their lines varies natively; the sum never does.
 * usage: par_pipeline [ITEMS] [WORK] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

static uint64_t work(uint64_t x, long rounds)
{
	for (long i = 0; i < rounds; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void say(const char *fmt, int stage, int item)
{
	char line[64];
	int n = snprintf(line, sizeof(line), fmt, stage, item);
	CHECK(write(1, line, (size_t)n) == n, "stage %d cannot write its progress", stage);
}

static void stage(int k, int in, int out, int items, long rounds)
{
	uint64_t sum = 0;
	for (int i = 0; i < items; i++) {
		uint64_t v = (uint64_t)i;
		if (in >= 0)
			CHECK(read(in, &v, sizeof(v)) == sizeof(v), "stage %d lost item %d", k, i);
		v = work(v, rounds);
		say("stage %d item %d\n", k, i);
		if (out >= 0)
			CHECK(write(out, &v, sizeof(v)) == sizeof(v), "stage %d cannot pass on %d",
			      k, i);
		sum += v >> 32;
	}
	if (out < 0)
		printf("sum %llu\n", (unsigned long long)sum);
	exit(0);
}

int main(int argc, char **argv)
{
	int items = argc > 1 ? atoi(argv[1]) : 20;
	long rounds = argc > 2 ? atol(argv[2]) : 2000000;
	int a[2], b[2];
	CHECK(pipe(a) == 0 && pipe(b) == 0, "pipe");
	if (fork() == 0) {
		close(a[0]), close(b[0]), close(b[1]);
		stage(1, -1, a[1], items, rounds);
	}
	if (fork() == 0) {
		close(a[1]), close(b[0]);
		stage(2, a[0], b[1], items, rounds);
	}
	if (fork() == 0) {
		close(a[0]), close(a[1]), close(b[1]);
		stage(3, b[0], -1, items, rounds);
	}
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
	int status, ok = 0;
	while (wait(&status) > 0)
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("%d stages done\n", ok);
	return ok == 3 ? 0 : 1;
}
