/* Reads rewritten /proc views (stat, status, maps, the fdinfo of a pipe) every way a
 * program can: read(2) from the start, then pread64 and preadv at offset 0, a pread of a
 * dup'ed descriptor and one in a forked child. Prints each view's pread text once, then
 * whether every other way read the same bytes, what readlink of /proc/self/fd/N and fstat
 * show, and whether stat's first field is getpid(). Natively the texts carry the host's
 * figures (times, inode numbers); under detrun every run prints the same lines, and no
 * form may get other bytes than read(2): pread64 and preadv do not stop, so before they
 * got the kernel's text. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX (1 << 20)

static char a[MAX], b[MAX], c[MAX];

static size_t read_whole(int fd, char *buf)
{
	size_t n = 0;
	ssize_t got;
	while ((got = read(fd, buf + n, MAX - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = 0;
	return n;
}

/* pread in small steps, so that offsets past 0 are read too. */
static size_t pread_whole(int fd, char *buf)
{
	size_t n = 0;
	ssize_t got;
	while ((got = pread(fd, buf + n, 100, (off_t)n)) > 0)
		n += (size_t)got;
	buf[n] = 0;
	return n;
}

static size_t preadv_whole(int fd, char *buf)
{
	size_t n = 0;
	ssize_t got;
	for (;;) {
		struct iovec v[2] = { { buf + n, 50 }, { buf + n + 50, 70 } };
		if ((got = preadv(fd, v, 2, (off_t)n)) <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = 0;
	return n;
}

static const char *same(const char *x, const char *y)
{
	return strcmp(x, y) ? "differs" : "same";
}

static void view(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("%s: cannot open\n", path);
		return;
	}
	read_whole(fd, a);
	pread_whole(fd, b);
	printf("== %s (pread)\n%s", path, b);
	printf("%s: read and pread %s\n", path, same(a, b));
	preadv_whole(fd, c);
	printf("%s: read and preadv %s\n", path, same(a, c));
	int copy = dup(fd);
	pread_whole(copy, c);
	printf("%s: pread of a dup %s\n", path, same(a, c));
	close(copy);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		pread_whole(fd, c);
		printf("%s: pread in a child %s\n", path, same(a, c));
		fflush(stdout);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	char self[64], link[256];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	struct stat st;
	fstat(fd, &st);
	printf("%s: link %s, size %lld, mode %o, flags %o\n", path, link, (long long)st.st_size,
	       (unsigned)st.st_mode, (unsigned)fcntl(fd, F_GETFL));
	close(fd);
}

int main(void)
{
	int p[2];
	if (pipe(p))
		return 1;
	char fdinfo[64];
	snprintf(fdinfo, sizeof(fdinfo), "/proc/self/fdinfo/%d", p[0]);
	view("/proc/self/stat");
	view("/proc/self/status");
	view("/proc/self/maps");
	view(fdinfo);
	int fd = open("/proc/self/stat", O_RDONLY);
	pread_whole(fd, a);
	printf("stat's pid is getpid(): %s\n", atoi(a) == getpid() ? "yes" : "no");
	return 0;
}
