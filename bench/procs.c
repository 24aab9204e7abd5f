/* Processes for the parallel-mode benchmarks (detrun --jobs N):
 *   procs compute N ROUNDS      N processes compute ROUNDS steps each without a call, then
 *                               report through one pipe: what --jobs can run at once
 *   procs shared N ROUNDS       the same, each process leaving its result in its own page
 *                               of one MAP_SHARED region made before the forks (page
 *                               ownership: the processes stay apart; a first touch of a
 *                               page is an event, so it comes after the computation, or
 *                               the lower clocks hold the others back till theirs end)
 *   procs holdback ROUNDS PINGS one process computes ROUNDS steps without a call while two
 *                               others pass a byte back and forth PINGS times: how long the
 *                               talkers wait for the computer (Kendo's hold-back)
 * Prints one line of results; the times are the bench's to take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t compute(uint64_t x, long rounds)
{
	for (long k = 0; k < rounds; k++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static int run_compute(int n, long rounds)
{
	int fd[2];
	if (pipe(fd))
		return 1;
	for (int i = 0; i < n; i++)
		if (fork() == 0) {
			uint64_t x = compute((uint64_t)i, rounds);
			if (write(fd[1], &x, sizeof(x)) != sizeof(x))
				_exit(1);
			_exit(0);
		}
	close(fd[1]);
	uint64_t x, sum = 0;
	while (read(fd[0], &x, sizeof(x)) == sizeof(x))
		sum ^= x;
	while (wait(NULL) > 0)
		;
	printf("%d processes: %016llx\n", n, (unsigned long long)sum);
	return 0;
}

static int run_shared(int n, long rounds)
{
	enum {
		PAGE = 4096
	};
	volatile uint64_t *pages = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 1;
	for (int i = 0; i < n; i++)
		if (fork() == 0) {
			volatile uint64_t *mine = pages + (size_t)i * PAGE / sizeof(*pages);
			mine[1] = compute((uint64_t)i, rounds);
			_exit(0);
		}
	while (wait(NULL) > 0)
		;
	uint64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum ^= pages[(size_t)i * PAGE / sizeof(*pages) + 1];
	printf("%d processes sharing pages: %016llx\n", n, (unsigned long long)sum);
	return 0;
}

static void pinger(int in, int out, long pings, int first)
{
	char c = 'x';
	for (long i = 0; i < pings; i++) {
		if ((first || i) && read(in, &c, 1) != 1)
			_exit(1);
		if (write(out, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static int run_holdback(long rounds, long pings)
{
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		return 1;
	if (fork() == 0)
		_exit(compute(1, rounds) == 0);
	if (fork() == 0)
		pinger(ba[0], ab[1], pings, 0);
	if (fork() == 0)
		pinger(ab[0], ba[1], pings, 1);
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
	while (wait(NULL) > 0)
		;
	printf("held back: %ld pings beside %ld steps\n", pings, rounds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "compute"))
		return run_compute(atoi(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "shared"))
		return run_shared(atoi(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "holdback"))
		return run_holdback(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: procs compute|shared N ROUNDS | procs holdback ROUNDS PINGS\n");
	return 2;
}
