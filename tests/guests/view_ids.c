/* Kernel-wide ids and random views a program can read (tests/determinism/views_test.cc).
 * Each mode prints what it read; natively most differ on every run.
 *
 *   mountinfo   /proc/self/mountinfo
 *   uuid        /proc/sys/kernel/random/uuid, twice
 *   boot_id     /proc/sys/kernel/random/boot_id
 *   hwrng       16 bytes of /dev/hwrng (prints "absent" without one)
 *   links       readlink of /proc/self/fd/N for a pipe, a socket and a namespace
 *   fdinfo      /proc/self/fdinfo/N of a pipe, an eventfd and an epoll set
 *   cookie      getsockopt(SO_COOKIE) of two sockets
 *   generation  ioctl(FS_IOC_GETVERSION) of a new file in the current directory
 *   perf        perf_event_open of the software task-clock: its value, or the error
 *   maxrss      getrusage's ru_maxrss after touching 8 MiB, and its children's after a
 *               child touched 16 MiB: checked, then printed
 *   mount_ids   statx's mount ids of /proc (unique and not), and whether the plain one is
 *               the id mountinfo gives /proc */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

static void print_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("%s: %s\n", path, strerror(errno));
		return;
	}
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
}

static void print_link(int fd)
{
	char path[64], link[128];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	printf("fd -> %s\n", link);
}

static void print_fdinfo(int fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	print_file(path);
}

static int hwrng(void)
{
	int fd = open("/dev/hwrng", O_RDONLY);
	if (fd < 0) {
		printf("absent\n");
		return 0;
	}
	unsigned char b[16];
	ssize_t n = read(fd, b, sizeof(b));
	for (ssize_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
	close(fd);
	return 0;
}

static int links(void)
{
	int p[2], s[2];
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return 1;
	print_link(p[0]);
	print_link(s[0]);
	char link[128];
	ssize_t n = readlinkat(AT_FDCWD, "/proc/self/ns/pid", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	printf("ns/pid -> %s\n", link);
	return 0;
}

static int fdinfo(void)
{
	int p[2];
	if (pipe(p))
		return 1;
	int e = eventfd(0, 0), ep = epoll_create1(0);
	struct epoll_event ev = { EPOLLIN, { 0 } };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	print_fdinfo(p[0]);
	print_fdinfo(e);
	print_fdinfo(ep);
	return 0;
}

static int cookie(void)
{
	for (int i = 0; i < 2; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		unsigned long long c = 0;
		socklen_t len = sizeof(c);
		if (getsockopt(s, SOL_SOCKET, SO_COOKIE, &c, &len))
			printf("SO_COOKIE: %s\n", strerror(errno));
		else
			printf("SO_COOKIE %llu (len %u)\n", c, len);
		int dup = fcntl(s, F_DUPFD, 10);
		unsigned long long again = 0;
		len = sizeof(again);
		getsockopt(dup, SOL_SOCKET, SO_COOKIE, &again, &len);
		printf("same through a dup: %s\n", again == c ? "yes" : "no");
	}
	return 0;
}

static int generation(void)
{
	/* in the current directory: /tmp may be a tmpfs, which has no generations */
	char path[] = "view-generation-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return perror("mkstemp"), 1;
	/* The same request through its ext4 name, and with high bits the kernel ignores. */
	int gen = 0, ext4 = 0, high = 0;
	int err = ioctl(fd, FS_IOC_GETVERSION, &gen);
	int err4 = ioctl(fd, _IOR('f', 3, long), &ext4);
	int errh = (int)syscall(SYS_ioctl, fd, 0xffffffff00000000UL | FS_IOC_GETVERSION, &high);
	if (err || err4 || errh)
		printf("FS_IOC_GETVERSION: %s\n", strerror(errno));
	else
		printf("generation %u (ext4 request: %s, with high bits: %s)\n", (unsigned)gen,
		       ext4 == gen ? "same" : "differs", high == gen ? "same" : "differs");
	unlink(path);
	close(fd);
	return 0;
}

static int perf(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("task-clock: %s\n", strerror(errno));
		return 0;
	}
	volatile unsigned long x = 0;
	for (int i = 0; i < 1000000; i++)
		x += (unsigned long)i;
	unsigned long long value = 0;
	if (read(fd, &value, sizeof(value)) != sizeof(value))
		return 1;
	printf("task-clock %llu\n", value);
	return 0;
}

static int maxrss(void)
{
	size_t size = 8 << 20;
	char *p = malloc(size);
	if (!p)
		return 1;
	for (size_t i = 0; i < size; i += 4096)
		((volatile char *)p)[i] = 1;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	/* At least what was touched, and less than a plausible bound. */
	printf("maxrss plausible: %s\n",
	       ru.ru_maxrss >= (long)(size >> 10) && ru.ru_maxrss < (1L << 20) ? "yes" : "no");
	printf("maxrss %ld kB\n", ru.ru_maxrss);
	free(p);
	/* a child that touches 16 MiB: RUSAGE_CHILDREN counts it once it is waited for */
	pid_t child = fork();
	if (child == 0) {
		char *q = malloc(2 * size);
		for (size_t i = 0; q && i < 2 * size; i += 4096)
			((volatile char *)q)[i] = 1;
		_exit(0);
	}
	waitpid(child, NULL, 0);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("children's maxrss plausible: %s\n",
	       ru.ru_maxrss >= (long)(2 * size >> 10) && ru.ru_maxrss < (1L << 20) ? "yes" : "no");
	printf("children's maxrss %ld kB\n", ru.ru_maxrss);
	return 0;
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* The id mountinfo gives the mount at `point`, -1 if none. */
static long mountinfo_id(const char *point)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024], where[512];
	long id = -1, found = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%ld %*d %*s %*s %511s", &id, where) == 2 && !strcmp(where, point))
			found = id; /* the last one listed is on top */
	if (f)
		fclose(f);
	return found;
}

static int mount_ids(void)
{
	struct statx sx;
	if (statx(AT_FDCWD, "/proc", 0, STATX_MNT_ID, &sx))
		return perror("statx"), 1;
	printf("statx mnt_id of /proc is mountinfo's: %s\n",
	       (long)sx.stx_mnt_id == mountinfo_id("/proc") ? "yes" : "no");
	if (statx(AT_FDCWD, "/proc", 0, STATX_MNT_ID_UNIQUE, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID_UNIQUE))
		printf("unique mount id of /proc %llu\n", (unsigned long long)sx.stx_mnt_id);
	else
		printf("no unique mount ids\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "mountinfo"))
		return print_file("/proc/self/mountinfo"), 0;
	if (!strcmp(what, "uuid")) {
		print_file("/proc/sys/kernel/random/uuid");
		print_file("/proc/sys/kernel/random/uuid");
		return 0;
	}
	if (!strcmp(what, "boot_id"))
		return print_file("/proc/sys/kernel/random/boot_id"), 0;
	if (!strcmp(what, "hwrng"))
		return hwrng();
	if (!strcmp(what, "links"))
		return links();
	if (!strcmp(what, "fdinfo"))
		return fdinfo();
	if (!strcmp(what, "cookie"))
		return cookie();
	if (!strcmp(what, "generation"))
		return generation();
	if (!strcmp(what, "perf"))
		return perf();
	if (!strcmp(what, "maxrss"))
		return maxrss();
	if (!strcmp(what, "mount_ids"))
		return mount_ids();
	fprintf(stderr, "usage: view_ids mountinfo|uuid|boot_id|hwrng|links|fdinfo|cookie|"
			"generation|perf|maxrss|mount_ids\n");
	return 2;
}
