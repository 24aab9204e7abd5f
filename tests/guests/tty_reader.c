/* e2e guest: reads its terminal. Prints whether stdin is a tty and, if so, its window
 * size; then echoes every complete input line with its number and the wall-clock time at
 * which it was read, until the line `quit` or end of input. Under detrun the times come
 * from the virtual clock, so they depend only on the input, not on when it arrived.
 * Exits with status 3 so that tests can check that a non-zero status propagates.
 * usage: tty_reader */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int lines;

/* Returns 0 once the line `quit` has been read. */
static int echo_line(const char *line, size_t len)
{
	if (len == 4 && memcmp(line, "quit", 4) == 0)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	printf("got %d: %.*s at %lld.%06ld\n", ++lines, (int)len, line, (long long)now.tv_sec,
	       now.tv_nsec / 1000);
	fflush(stdout);
	return 1;
}

int main(void)
{
	int tty = isatty(0);
	printf("tty: %s\n", tty ? "yes" : "no");
	struct winsize ws;
	if (tty && ioctl(0, TIOCGWINSZ, &ws) == 0)
		printf("size: %ux%u\n", ws.ws_row, ws.ws_col);
	fflush(stdout);

	char buf[256];
	size_t len = 0;
	int more = 1;
	while (more) {
		ssize_t n = read(0, buf + len, sizeof buf - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		char *start = buf, *nl;
		while (more && (nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
			more = echo_line(start, (size_t)(nl - start));
			start = nl + 1;
		}
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
		/* A line longer than the buffer is echoed in buffer-sized pieces. */
		if (more && len == sizeof buf) {
			more = echo_line(buf, len);
			len = 0;
		}
	}
	printf("bye after %d lines\n", lines);
	fflush(stdout);
	return 3;
}
