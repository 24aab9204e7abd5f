/* Prints what the program sees of its standard output and error (their kind, whether each
 * is a terminal) and whether it has a controlling terminal (/dev/tty), as programs look
 * at them before choosing how to buffer, colour or ask. Natively the answers follow the
 * shell's redirections; a replay must give the recording's, wherever its output goes. Under
 * detrun the session is led from outside the group's PID namespace (getsid gives 0). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return "closed";
	if (isatty(fd))
		return "a terminal";
	if (S_ISREG(st.st_mode))
		return "a file";
	if (S_ISFIFO(st.st_mode))
		return "a pipe";
	if (S_ISSOCK(st.st_mode))
		return "a socket";
	return S_ISCHR(st.st_mode) ? "a device" : "something else";
}

int main(void)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
	/* Said on stderr first: stdio buffers a file or a pipe, not a terminal, so where this
	 * line lands among the others depends on what stdout is. */
	fprintf(stderr, "stderr is %s\n", kind(2));
	printf("stdout is %s\n", kind(1));
	printf("controlling terminal: %s\n", tty >= 0 ? "yes" : "none");
	/* A replay that gave up the terminal by a session of its own would show it here. */
	printf("session leader: %s\n", getsid(0) == 0 ? "outside" : "visible");
	for (int i = 1; i <= 3; i++)
		printf("line %d\n", i);
	return 0;
}
