/* Writes a line, then what it reads from standard input after "got: ", then a last line,
 * each with its own write(2): a replay given other input (a changed log) would write
 * another second line, and must stop before it, with the first line out and nothing
 * after it. A child forked before the second line opens a file meanwhile: the write's
 * Output record, logged at its exit, comes after the child's first open in the log. */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s, size_t n)
{
	if (write(1, s, n) != (ssize_t)n)
		_exit(1);
}

int main(void)
{
	char line[128] = "got: ";
	say("first\n", 6);
	ssize_t n = read(0, line + 5, sizeof(line) - 5);
	if (n < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < 200; i++) {
			int fd = open("/etc/hostname", O_RDONLY);
			if (fd >= 0)
				close(fd);
		}
		_exit(0);
	}
	say(line, 5 + (size_t)n);
	say("last\n", 5);
	return child < 0 || waitpid(child, NULL, 0) != child;
}
