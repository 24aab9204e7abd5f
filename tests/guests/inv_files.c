/* Inventory: files. Directory order (read with small buffers, so order must hold across
 * getdents calls), inode and device numbers, and timestamps of files the run creates. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "selfcheck.h"

static void show_stat(const char *path)
{
	struct stat st;
	struct statx sx;
	CHECK(stat(path, &st) == 0 && statx(AT_FDCWD, path, 0, STATX_ALL, &sx) == 0,
	      "cannot stat %s: %s", path, strerror(errno));
	CHECK(st.st_ino == sx.stx_ino && st.st_size == (off_t)sx.stx_size,
	      "%s: stat says inode %lu size %ld, statx %llu %llu", path, (unsigned long)st.st_ino,
	      (long)st.st_size, (unsigned long long)sx.stx_ino, (unsigned long long)sx.stx_size);
	printf("%-8s ino %lu dev %lu size %ld atime %ld.%09ld mtime %ld.%09ld ctime %ld.%09ld "
	       "statx ino %llu btime %lld.%09u\n",
	       strrchr(path, '/') + 1, (unsigned long)st.st_ino, (unsigned long)st.st_dev,
	       (long)st.st_size, (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
	       (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long)st.st_ctim.tv_sec,
	       st.st_ctim.tv_nsec, (unsigned long long)sx.stx_ino, (long long)sx.stx_btime.tv_sec,
	       sx.stx_btime.tv_nsec);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/detrun-inv-files-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	const char *names[] = { "zeta",  "alpha", "mu",      "beta",  "omega",  "kappa",
				"delta", "pi",    "epsilon", "gamma", "lambda", "sigma",
				"tau",   "chi",   "rho",     "nu" };
	char path[256];
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		int fd = open(path, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0 && write(fd, names[i], strlen(names[i])) == (ssize_t)strlen(names[i]),
		      "cannot write %s", path);
		close(fd);
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char buf[96] __attribute__((aligned(8))); /* two or three entries per call */
	CHECK(dfd >= 0, "cannot open %s", dir);
	int listed = 0;
	printf("order:");
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			/* Entries are packed in the small buffer: read their fields in place. */
			const char *name = buf + off + offsetof(struct dirent64, d_name);
			unsigned short reclen;
			memcpy(&reclen, buf + off + offsetof(struct dirent64, d_reclen),
			       sizeof(reclen));
			if (name[0] != '.') {
				printf(" %s", name);
				listed++;
			}
			off += reclen;
		}
	}
	printf("\n");
	CHECK(listed == 16, "the directory listed %d names, want the 16 created", listed);
	close(dfd);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		show_stat(path);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, names[0]);
	CHECK(truncate(path, 1) == 0, "cannot truncate %s", path);
	show_stat(path);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == 1, "%s not truncated to 1 byte", path);
	snprintf(path, sizeof(path), "%s/.", dir);
	show_stat(path);
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}
