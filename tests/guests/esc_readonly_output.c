/* Calls whose output detrun writes for the kernel (emulated clocks, random bytes, names)
 * given read-only memory for their output: natively each fails with EFAULT and the memory
 * keeps its bytes; detrun must not write through the protection either. Raw syscalls:
 * glibc's vDSO clock would fault in the program itself. Prints one line per call. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(page, 0xa5, 4096);
	mprotect(page, 4096, PROT_READ);
	struct {
		const char *name;
		long nr, a0, a1, a2;
	} calls[] = {
		{ "clock_gettime", SYS_clock_gettime, 0, (long)page, 0 },
		{ "gettimeofday", SYS_gettimeofday, (long)page, 0, 0 },
		{ "time", SYS_time, (long)page, 0, 0 },
		{ "getrandom", SYS_getrandom, (long)page, 16, 0 },
		{ "uname", SYS_uname, (long)page, 0, 0 },
		{ "sysinfo", SYS_sysinfo, (long)page, 0, 0 },
		{ "getcpu", SYS_getcpu, (long)page, 0, 0 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		long r = syscall(calls[i].nr, calls[i].a0, calls[i].a1, calls[i].a2);
		int err = r < 0 ? errno : 0;
		int kept = 1;
		for (int b = 0; b < 4096; b++)
			kept &= page[b] == 0xa5;
		printf("%s: %s, memory %s\n", calls[i].name, err ? strerror(err) : "succeeded",
		       kept ? "unchanged" : "CHANGED");
		bad |= !kept;
	}
	return bad;
}
