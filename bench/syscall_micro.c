/* Syscall micro-benchmarks: KIND ITERATIONS. The program cannot time itself under detrun
 * (its clocks are virtual), so bench/micro.py times whole runs from outside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static void pipe_pingpong(long n)
{
	int a[2], b[2];
	char c = 0;
	if (pipe(a) || pipe(b))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			exit(1);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: syscall_micro getppid|clock|devnull|openclose|pipe N\n");
		return 2;
	}
	long n = atol(argv[2]);
	const char *kind = argv[1];
	if (!strcmp(kind, "getppid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(kind, "clock")) {
		struct timespec ts;
		for (long i = 0; i < n; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
	} else if (!strcmp(kind, "devnull")) {
		int fd = open("/dev/null", O_WRONLY);
		for (long i = 0; i < n; i++)
			if (write(fd, "x", 1) != 1)
				return 1;
	} else if (!strcmp(kind, "openclose")) {
		for (long i = 0; i < n; i++)
			close(open("/dev/null", O_RDONLY));
	} else if (!strcmp(kind, "pipe")) {
		pipe_pingpong(n);
	} else {
		fprintf(stderr, "syscall_micro: unknown kind '%s'\n", kind);
		return 2;
	}
	return 0;
}
