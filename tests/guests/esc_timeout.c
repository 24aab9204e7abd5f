/* pselect6 and ppoll with their timeout in read-only memory (a const, in .rodata; and a
 * read-only MAP_SHARED mapping): the kernel never writes such a timeout back, so it must
 * still say 1 s after each wait, and each wait must last it. Prints what each wait saw.
 * Raw system calls: libc's wrappers pass the kernel a copy. */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const struct timespec one_second = { 1, 0 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_on(const char *what, int fd, const struct timespec *timeout, bool use_ppoll)
{
	double start = now();
	int r;
	if (use_ppoll) {
		struct pollfd p = { fd, POLLIN, 0 };
		r = (int)syscall(SYS_ppoll, &p, 1, timeout, NULL, 8);
	} else {
		fd_set set;
		FD_ZERO(&set);
		FD_SET(fd, &set);
		r = (int)syscall(SYS_pselect6, fd + 1, &set, NULL, NULL, timeout, NULL);
	}
	double waited = now() - start;
	printf("%s: result %d, waited %s, timeout now %ld.%09ld\n", what, r,
	       waited >= 0.99 && waited < 1.5 ? "about 1 s" : "NOT 1 s", (long)timeout->tv_sec,
	       timeout->tv_nsec);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int p[2];
	if (pipe(p) < 0)
		return 2;
	int mfd = memfd_create("esc_timeout", 0);
	if (mfd < 0 || write(mfd, &one_second, sizeof(one_second)) != sizeof(one_second))
		return 2;
	const struct timespec *shared = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mfd, 0);
	if (shared == MAP_FAILED)
		return 2;
	for (int i = 0; i < 2; i++) {
		wait_on("pselect, const timeout", p[0], &one_second, false);
		wait_on("ppoll, const timeout", p[0], &one_second, true);
		wait_on("pselect, shared read-only timeout", p[0], shared, false);
		wait_on("ppoll, shared read-only timeout", p[0], shared, true);
	}
	return 0;
}
