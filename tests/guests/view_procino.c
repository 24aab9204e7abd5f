/* The inode numbers of a procfs file (tests/determinism/views_test.cc, ViewsProcIno).
 * procfs makes an inode when a name is looked up and forgets it when its unused dentry is
 * dropped, so the same file can show another number later, as the host's memory and dentry
 * cache decide. Prints "ready" and waits for the end of its stdin (the test makes the kernel
 * drop its unused dentries meanwhile, or not), then one line:
 *
 *   before B after A fstat F fdinfo I next N
 *
 * B and A: lstat of /proc/self/cmdline before and after the wait; F and I: fstat of a
 * descriptor open on it and the ino: line of its /proc/self/fdinfo; N: lstat of
 * /proc/self/environ, a file first met after the wait. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long long lstat_ino(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		perror(path);
		return 0;
	}
	return (unsigned long long)st.st_ino;
}

/* The ino: line of descriptor fd's fdinfo, or 0. */
static unsigned long long fdinfo_ino(int fd)
{
	char path[64], line[256];
	unsigned long long ino = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ino: %llu", &ino) == 1)
			break;
	fclose(f);
	return ino;
}

int main(void)
{
	unsigned long long before = lstat_ino("/proc/self/cmdline");
	printf("ready\n");
	fflush(stdout);
	char buf[64];
	while (read(0, buf, sizeof(buf)) > 0)
		;
	unsigned long long after = lstat_ino("/proc/self/cmdline");
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror("/proc/self/cmdline");
		return 1;
	}
	unsigned long long in_fdinfo = fdinfo_ino(fd);
	unsigned long long next = lstat_ino("/proc/self/environ");
	printf("before %llu after %llu fstat %llu fdinfo %llu next %llu\n", before, after,
	       (unsigned long long)st.st_ino, in_fdinfo, next);
	close(fd);
	return 0;
}
