/* hardening guest (sched, issue 9 point 19): a deadlock in which every task waits on a
 * descriptor of its own. Three threads each read from their own pipe (in the order
 * printed) whose write end nobody writes; the main thread joins the first. detrun
 * must name each task's own descriptor in its deadlock report. Natively it never ends. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *reader(void *arg)
{
	int fd = (int)(long)arg;
	char c;
	if (read(fd, &c, 1) < 0)
		perror("read");
	return NULL;
}

int main(void)
{
	int p[3][2];
	for (int i = 0; i < 3; i++)
		if (pipe(p[i]))
			return 1;
	printf("readers on fds %d %d %d\n", p[0][0], p[1][0], p[2][0]);
	fflush(stdout);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, reader, (void *)(long)p[i][0]);
	pthread_join(th[0], NULL);
	return 0;
}
