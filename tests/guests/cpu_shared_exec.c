/* Maps a file (a copy of this very program, which contains CPUID) executable, writable
 * and MAP_SHARED, as a JIT cache or a self-modifying loader might, and calls CPUID in it.
 * detrun must not patch that mapping: the patch would be written into the file. */
#include <cpuid.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((noinline)) unsigned leaf0_max(void)
{
	unsigned a = 0, b, c, d;
	__cpuid(0, a, b, c, d);
	return a;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cpu_shared_exec FILE\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, fd,
		       0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("mapped %s shared: leaf 0 max %s\n", argv[1], leaf0_max() > 0 ? "ok" : "zero");
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}
