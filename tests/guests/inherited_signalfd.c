/* An epoll set holding a signalfd the program inherited (made before detrun started):
 * detrun must not poll that set itself (its poll would look at detrun's signals and drop
 * the item from the set's ready list). Usage: inherited_signalfd launch DETRUN|- makes a
 * signalfd for SIGUSR1 and executes `DETRUN -- inherited_signalfd wait FD` (or, with -,
 * the waiter itself); the waiter's child sends the signal while it waits in epoll_wait,
 * and the waiter prints how many events came: "events 1". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static sigset_t usr1(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die("sigprocmask");
	return set;
}

static int launch(const char *self, const char *detrun)
{
	sigset_t set = usr1();
	int fd = signalfd(-1, &set, 0); /* inherited across exec */
	if (fd < 0)
		die("signalfd");
	char num[16];
	snprintf(num, sizeof(num), "%d", fd);
	if (strcmp(detrun, "-") == 0)
		execl(self, self, "wait", num, (char *)NULL);
	else
		execl(detrun, detrun, "--", self, "wait", num, (char *)NULL);
	die("exec");
	return 1;
}

static int wait_for_signal(int fd)
{
	usr1();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll");
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0)
		_exit(kill(getppid(), SIGUSR1) ? 1 : 0);
	int n = epoll_wait(ep, &ev, 1, 5000);
	printf("events %d\n", n);
	int status;
	if (waitpid(child, &status, 0) != child || status != 0)
		die("child");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "launch") == 0)
		return launch(argv[0], argv[2]);
	if (argc == 3 && strcmp(argv[1], "wait") == 0)
		return wait_for_signal(atoi(argv[2]));
	fprintf(stderr, "usage: inherited_signalfd launch DETRUN|- | wait FD\n");
	return 2;
}
