// syscall(-1), which is no call at all (rr's tests use it to mark a point), and other
// negative numbers: the kernel answers ENOSYS, and so does detrun, without a hazard (a
// negative number has the x32 bit set, but is no x32 call).
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	static const long numbers[] = { -1, -38, -2147483647L };
	for (unsigned i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		errno = 0;
		long r = syscall(numbers[i]);
		printf("syscall(%ld): %ld, %s\n", numbers[i], r,
		       r < 0 && errno == ENOSYS ? "ENOSYS" : "?");
	}
	return 0;
}
