/* Makes three stopping calls with 0, 4 and 6 arguments whose values are fixed, so
 * `detrun --trace` can be checked to show each call's own arguments, formatted by kind.
 * Prints "table_trace: ok" when every call gave the result it must. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	if (syscall(SYS_sched_yield) != 0) {
		perror("sched_yield");
		return 1;
	}
	errno = 0;
	if (syscall(SYS_openat, AT_FDCWD, "/nonexistent/table-trace", O_RDONLY, 0) != -1 ||
	    errno != ENOENT) {
		fprintf(stderr, "openat of a missing path: errno %d, not ENOENT\n", errno);
		return 1;
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("table_trace: ok\n");
	return 0;
}
