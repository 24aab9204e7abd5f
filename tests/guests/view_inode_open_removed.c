/* A descriptor still open on a removed file (or directory) keeps the inode alive, and with
 * it its number: fstat before and after the removal shows the same number, as natively. A
 * file made after the descriptor is closed, which the kernel may give the freed number,
 * shows a number no earlier file had under detrun (natively, as the kernel decides).
 * Prints "open removed inodes keep their numbers: yes" and "new file, new number: yes". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static ino_t ino_of_fd(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		perror("fstat");
		exit(1);
	}
	return st.st_ino;
}

/* Removes path while fd is open on it; 1 if fd's inode number did not change. */
static int keeps_number(int fd, const char *path, int (*remove_name)(const char *))
{
	ino_t before = ino_of_fd(fd);
	if (remove_name(path) < 0) {
		perror(path);
		exit(1);
	}
	ino_t after = ino_of_fd(fd);
	if (after != before)
		printf("%s: %lu before its removal, %lu after\n", path, (unsigned long)before,
		       (unsigned long)after);
	return after == before;
}

int main(void)
{
	char dir[] = "/tmp/view-open-removed-XXXXXX", a[64], d[64];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(d, sizeof(d), "%s/d", dir);
	int fd = open(a, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || mkdir(d, 0700) < 0) {
		perror(dir);
		return 1;
	}
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	int ok = keeps_number(fd, a, unlink) & keeps_number(dfd, d, rmdir);
	ino_t old = ino_of_fd(fd);
	close(fd);
	close(dfd);
	fd = open(a, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0) {
		perror(a);
		return 1;
	}
	int renumbered = ino_of_fd(fd) != old;
	close(fd);
	unlink(a);
	rmdir(dir);
	printf("open removed inodes keep their numbers: %s\n", ok ? "yes" : "no");
	printf("new file, new number: %s\n", renumbered ? "yes" : "no");
	return 0;
}
