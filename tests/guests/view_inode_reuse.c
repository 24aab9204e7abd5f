/* Creates and removes files one after another (unlink, rmdir, a rename over an existing
 * name) and says whether each new file got an inode number no earlier file had. The
 * kernel may give a freed inode's number to the next new file, or not, depending on what
 * else the machine does (ext4 usually does at once; tmpfs never): under detrun every new
 * file gets a new virtual number, so what the program sees does not depend on that.
 * Prints "new inode number for every new file: yes" and the numbers' differences. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	N = 8
};
static ino_t seen[N];
static int n_seen;

static void note(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		perror(path);
		exit(1);
	}
	seen[n_seen++] = st.st_ino;
}

static void create(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
	note(path);
}

int main(void)
{
	char dir[] = "/tmp/view-inode-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char a[64], b[64], d[64];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(d, sizeof(d), "%s/d", dir);
	for (int i = 0; i < 3; i++) {
		create(a);
		unlink(a);
	}
	mkdir(d, 0700);
	note(d);
	rmdir(d);
	create(a);
	create(b);
	rename(a, b); /* b's first inode is freed */
	create(a);
	unlink(a);
	unlink(b);
	rmdir(dir);
	int fresh = 1;
	for (int i = 0; i < n_seen; i++)
		for (int j = 0; j < i; j++)
			fresh &= seen[i] != seen[j];
	printf("new inode number for every new file: %s\n", fresh ? "yes" : "no");
	for (int i = 1; i < n_seen; i++)
		printf("%lld ", (long long)seen[i] - (long long)seen[0]);
	printf("\n");
	return 0;
}
