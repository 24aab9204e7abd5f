/* load guest: a process asks for a userfaultfd of its own (the syscall, then the device),
 * computes long enough for the spin detector to look at it (writing memory, so it runs
 * on), then registers its buffer with its userfaultfd — with no event in between. Under
 * detrun it must get no userfaultfd by either route (a fault it handles would sleep
 * unseen, and detrun's probe registers the same memory), and still compute the same sum.
 * usage: load_own_uffd [MIB 1..256] [PASSES] */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 8;
	int passes = argc > 2 ? atoi(argv[2]) : 200;
	if (mib < 1 || mib > 256 || passes < 1) {
		fprintf(stderr, "usage: load_own_uffd [MIB 1..256] [PASSES]\n");
		return 2;
	}
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int syscall_errno = uffd < 0 ? errno : 0, device_errno = 0;
	if (uffd < 0) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		uffd = dev < 0 ? -1 : ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		device_errno = uffd < 0 ? errno : 0;
	}
	struct uffdio_api api = { .api = UFFD_API };
	if (uffd >= 0 && ioctl(uffd, UFFDIO_API, &api) < 0)
		return 1;
	size_t size = (size_t)mib << 20;
	unsigned char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	uint64_t sum = 0;
	for (int p = 0; p < passes; p++) /* no syscall: the detector looks at this */
		for (size_t i = 0; i < size; i += 64)
			sum += buf[i] = (unsigned char)(buf[i] * 31 + p);
	if (uffd < 0) {
		printf("no userfaultfd: syscall %s, device %s (sum %llu)\n",
		       strerror(syscall_errno), strerror(device_errno), (unsigned long long)sum);
		return 0;
	}
	struct uffdio_register reg = { .range = { (uint64_t)(uintptr_t)buf, size },
				       .mode = UFFDIO_REGISTER_MODE_MISSING };
	int r = ioctl(uffd, UFFDIO_REGISTER, &reg);
	printf("register: %s (sum %llu)\n", r == 0 ? "ok" : strerror(errno),
	       (unsigned long long)sum);
	return 0;
}
