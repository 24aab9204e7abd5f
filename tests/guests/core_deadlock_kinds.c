/* core guest (issue 10 point 3): a deadlock in which tasks wait in calls of different
 * handler families, each with its own state: one thread reads an empty pipe, one writes a
 * full one, one waits in sigtimedwait for a signal nobody sends; the main thread joins the
 * first. detrun's deadlock report must name each task's own wait. Natively it never ends. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static int empty[2], full[2];

static void *reader(void *arg)
{
	char c;
	if (read(empty[0], &c, 1) < 0)
		perror("read");
	return NULL;
}

static void *writer(void *arg)
{
	char c = 'x';
	if (write(full[1], &c, 1) < 0)
		perror("write");
	return NULL;
}

static void *signal_waiter(void *arg)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (sigwaitinfo(&set, NULL) < 0)
		perror("sigwaitinfo");
	return NULL;
}

/* Fills the pipe until the kernel says it is full, then makes it blocking again. */
static int fill(int fd)
{
	char block[4096] = { 0 };
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		return -1;
	while (write(fd, block, sizeof(block)) > 0)
		;
	char c = 0;
	while (write(fd, &c, 1) > 0)
		;
	return fcntl(fd, F_SETFL, 0);
}

int main(void)
{
	if (pipe(empty) || pipe(full) || fill(full[1]))
		return 1;
	printf("reader on fd %d, writer on fd %d\n", empty[0], full[1]);
	fflush(stdout);
	pthread_t th[3];
	pthread_create(&th[0], NULL, reader, NULL);
	pthread_create(&th[1], NULL, writer, NULL);
	pthread_create(&th[2], NULL, signal_waiter, NULL);
	pthread_join(th[0], NULL);
	return 0;
}
