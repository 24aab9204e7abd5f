/* e2e guest: one process computes over fresh memory without a call while another writes
 * to a pipe (parallel mode's hold-back, bench/README.md). The parent maps the memory
 * (untouched) and forks the computer, then the writer; the computer touches every page,
 * computing between touches, and at its end counts the bytes waiting in the pipe. The
 * writer's clock starts just after the computer's, so in parallel mode each write waits
 * until the computer's clock has passed it: with its first touches moving its clock
 * (engine/touch_ticks.h) the writes go while it computes and it finds them all; without,
 * none of them went before its count. Natively the writes are done long before.
 * usage: par_touch [MEGABYTES] [WRITES] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	PAGE = 4096
};

static uint64_t compute(volatile uint8_t *mem, size_t len)
{
	uint64_t x = 1;
	for (size_t at = 0; at < len; at += PAGE) {
		for (int r = 0; r < 200; r++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		mem[at] = (uint8_t)x; /* the page's first touch */
	}
	return x;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20;
	int writes = argc > 2 ? atoi(argv[2]) : 64;
	int fd[2];
	CHECK(pipe(fd) == 0, "pipe");
	uint8_t *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED, "mmap");
	pid_t computer = fork();
	CHECK(computer >= 0, "fork");
	if (computer == 0) {
		uint64_t x = compute(mem, len);
		int waiting = -1;
		CHECK(ioctl(fd[0], FIONREAD, &waiting) == 0, "FIONREAD");
		printf("computer (%llx): %d of %d bytes were written while it computed\n",
		       (unsigned long long)(x & 0xff), waiting, writes);
		fflush(stdout);
		_exit(0);
	}
	pid_t writer = fork();
	CHECK(writer >= 0, "fork");
	if (writer == 0) {
		for (int i = 0; i < writes; i++)
			CHECK(write(fd[1], "w", 1) == 1, "write");
		_exit(0);
	}
	close(fd[1]);
	int status;
	CHECK(waitpid(computer, &status, 0) == computer && status == 0, "the computer");
	CHECK(waitpid(writer, &status, 0) == writer && status == 0, "the writer");
	printf("par_touch: ok\n");
	return 0;
}
