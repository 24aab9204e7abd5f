/* The debugger on a recording of parallel mode: two children compute at the same time as
 * each other, each sending its results through one pipe to the parent, which adds each to
 * `total` in note(). Which child's result comes first varies natively; the total does not.
 * usage: dbg_par [ROUNDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	CHILDREN = 2,
	RESULTS = 4
};

struct result {
	int from;
	uint32_t value;
};

static long total;

static uint32_t work(uint64_t x, long rounds)
{
	for (long i = 0; i < rounds; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(x >> 48);
}

__attribute__((noinline)) static void note(const struct result *r)
{
	total += r->value;
	printf("from %d: %u (total %ld)\n", r->from, r->value, total);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3000000;
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	long want = 0;
	for (int k = 0; k < CHILDREN; k++) {
		for (int i = 0; i < RESULTS; i++)
			want += work((uint64_t)(k * RESULTS + i), rounds / (k + 1));
		if (fork() == 0) {
			for (int i = 0; i < RESULTS; i++) {
				struct result r = { k, work((uint64_t)(k * RESULTS + i),
							    rounds / (k + 1)) };
				CHECK(write(p[1], &r, sizeof(r)) == sizeof(r), "child %d", k);
			}
			_exit(0);
		}
	}
	close(p[1]);
	struct result r;
	while (read(p[0], &r, sizeof(r)) == sizeof(r))
		note(&r);
	while (wait(NULL) > 0)
		;
	CHECK(total == want, "total %ld, not %ld", total, want);
	printf("DBG-PAR-OK %ld\n", total);
	return 0;
}
