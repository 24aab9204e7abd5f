/* e2e guest: processes that allocate as they compute, as a compiler does, each reporting
 * every step through one pipe; the parent prints the reports in the order they came,
 * which natively is the order the steps happened to end in. In parallel mode the heap's
 * growth (brk) and the anonymous mappings are ticks that move each process's clock
 * (scheduler.h): the order must still be the same on every run.
 * usage: par_alloc [PROCESSES 1..16] [STEPS] [ROUNDS a step] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

/* One step: fresh heap memory (brk grows) and every other step an anonymous mapping, both
 * written through, with a computation over them. */
static uint64_t step(int k, long rounds, uint64_t x)
{
	size_t size = 48 * 1024;
	uint64_t *heap = malloc(size); /* kept: the break only grows */
	CHECK(heap, "malloc");
	uint64_t *map = NULL;
	if (k % 2) {
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(map != MAP_FAILED, "mmap");
	}
	for (long r = 0; r < rounds; r++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		heap[r % (size / 8)] ^= x;
		if (map)
			map[(r * 7) % (size / 8)] += x;
	}
	if (map)
		munmap(map, size);
	return x ^ heap[k];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int steps = argc > 2 ? atoi(argv[2]) : 20;
	long rounds = argc > 3 ? atol(argv[3]) : 200000;
	CHECK(n >= 1 && n <= 16 && steps >= 1,
	      "usage: par_alloc [PROCESSES 1..16] [STEPS] [ROUNDS]");
	int fd[2];
	CHECK(pipe(fd) == 0, "pipe");
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			close(fd[0]);
			uint64_t x = (uint64_t)i;
			for (int k = 0; k < steps; k++) {
				x = step(k, rounds, x);
				char line[64];
				int len = snprintf(line, sizeof(line), "process %d step %d\n", i,
						   k);
				CHECK(write(fd[1], line, (size_t)len) == len, "report of %d", i);
			}
			_exit(0);
		}
	}
	close(fd[1]);
	char buf[4096];
	ssize_t got;
	size_t total = 0;
	while ((got = read(fd[0], buf, sizeof(buf))) > 0) {
		CHECK(fwrite(buf, 1, (size_t)got, stdout) == (size_t)got, "stdout");
		total += (size_t)got;
	}
	while (wait(NULL) > 0)
		;
	printf("%zu bytes from %d processes\n", total, n);
	return 0;
}
