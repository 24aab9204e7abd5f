/* Reads one line from its terminal (stdin) and prints it, with whether it is in the
 * terminal's foreground when it does. Started as a background job it stops on SIGTTIN
 * until the shell brings it to the foreground. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char line[256];
	if (getenv("SIG_TTY_READ_SAY"))
		printf("reading\n"), fflush(stdout);
	ssize_t n = read(0, line, sizeof(line) - 1);
	if (n < 0) {
		perror("read");
		return 1;
	}
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	printf("read '%s' in the %s\n", line,
	       tcgetpgrp(0) == getpgrp() ? "foreground" : "background");
	return 0;
}
