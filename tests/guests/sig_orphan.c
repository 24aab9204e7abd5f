/* The program exits and leaves a child blocked for ever (it reads a pipe it holds the
 * write end of itself). Prints "parent done"; natively the shell is back at once and the
 * child stays behind. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	int fds[2];
	if (pipe(fds) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1); /* the caller waiting for the end of the output must not wait */
		dup2(null, 2);
		char c;
		if (read(fds[0], &c, 1) < 0)
			return 2;
		return 3;
	}
	printf("parent done\n");
	return 0;
}
