// syscall(-1), which is no call at all (rr's tests use it to mark a point): the kernel
// answers ENOSYS, and so does detrun, without a hazard.
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	long r = syscall(-1);
	printf("syscall(-1): %ld, %s\n", r, r < 0 && errno == ENOSYS ? "ENOSYS" : "?");
	return 0;
}
