/* Changes files in its working directory the way a small database does, and prints what it
 * reads back: creates `db` with O_CREAT|O_EXCL (it must not be there), writes and reads it,
 * appends to `journal` and reads it whole, renames `old` to `renamed`, removes `gone`, and
 * makes `sub/x`. Run again on what it left, it fails: a replay must meet the starting files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((noinline)) static void print_file(const char *name)
{
	char buf[256];
	int fd = open(name, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		printf("%s: %s\n", name, strerror(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: %s", name, buf);
	close(fd);
}

static int write_all(const char *name, int flags, const char *text)
{
	int fd = open(name, flags, 0644);
	if (fd < 0) {
		printf("open %s: %s\n", name, strerror(errno));
		return -1;
	}
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int main(void)
{
	if (write_all("db", O_CREAT | O_EXCL | O_RDWR, "row 1\nrow 2\n"))
		return 1;
	print_file("db");
	print_file("journal");
	if (write_all("journal", O_WRONLY | O_APPEND, "appended\n"))
		return 1;
	print_file("journal");
	if (rename("old", "renamed") < 0 || unlink("gone") < 0) {
		printf("rename or unlink: %s\n", strerror(errno));
		return 1;
	}
	print_file("renamed");
	print_file("gone");
	if (mkdir("sub", 0755) < 0 || write_all("sub/x", O_CREAT | O_WRONLY, "x\n")) {
		printf("mkdir: %s\n", strerror(errno));
		return 1;
	}
	print_file("sub/x");
	printf("done\n");
	return 0;
}
