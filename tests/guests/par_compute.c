/* e2e guest: CPU-bound processes that make no calls while they compute, each then
 * reporting its result through one pipe; the parent prints the reports in the order they
 * came, which natively is the order in which the processes happened to finish.
 * usage: par_compute [PROCESSES 1..16] [ROUNDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	long rounds = argc > 2 ? atol(argv[2]) : 100000000;
	CHECK(n >= 1 && n <= 16, "usage: par_compute [PROCESSES 1..16] [ROUNDS]");
	int fd[2];
	CHECK(pipe(fd) == 0, "pipe");
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			close(fd[0]);
			uint64_t x = (uint64_t)i;
			for (long k = 0; k < rounds; k++)
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			char line[64];
			int len = snprintf(line, sizeof(line), "process %d: %016llx\n", i,
					   (unsigned long long)x);
			CHECK(write(fd[1], line, (size_t)len) == len, "report of %d", i);
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
