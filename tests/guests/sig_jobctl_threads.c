/* A group stop of a process with three threads (two parked in reads of their own pipes,
 * one joining): the parent sees the whole process stop and continue, three times, and the
 * threads go on reading after each continue. Prints one line a step. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int p[2], q[2];

static void *reader(void *arg)
{
	int fd = *(int *)arg;
	char c;
	while (read(fd, &c, 1) == 1)
		;
	return NULL;
}

int main(void)
{
	int st;
	if (pipe(p) < 0 || pipe(q) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		pthread_t t1, t2;
		pthread_create(&t1, NULL, reader, &p[0]);
		pthread_create(&t2, NULL, reader, &q[0]);
		pthread_join(t1, NULL);
		return 0;
	}
	setpgid(child, child);
	for (int i = 0; i < 3; i++) {
		kill(child, SIGSTOP);
		if (waitpid(child, &st, WUNTRACED) != child || !WIFSTOPPED(st))
			return 1;
		printf("stopped by signal %d\n", WSTOPSIG(st));
		kill(child, SIGCONT);
		if (waitpid(child, &st, WCONTINUED) != child || !WIFCONTINUED(st))
			return 2;
		printf("continued\n");
		if (write(p[1], "x", 1) != 1 || write(q[1], "y", 1) != 1)
			return 3;
	}
	kill(child, SIGTERM);
	waitpid(child, &st, 0);
	printf("child killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 0;
}
