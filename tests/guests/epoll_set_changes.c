/* A thread waits in epoll_wait on a set holding a signalfd and a pipe (as PostgreSQL's
 * processes wait for their latch), and its sibling changes the set while it waits, with
 * calls that never stop under detrun, then makes the changed set ready. Usage:
 *   epoll_set_changes added     the sibling adds a new pipe and writes to it
 *   epoll_set_changes replaced  the sibling closes the signalfd and registers a new one,
 *                               for another signal, at the same number with the same data
 *   epoll_set_changes remasked  the sibling changes the signalfd's mask in place
 *   epoll_set_changes idle N    N child processes wait on such sets while the parent makes
 *                               N * 100 clock reads, then each child is woken by a signal
 * Natively the line printed is the same whichever thread runs first. */

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
	DATA_SIGNALFD = 1,
	DATA_PIPE = 2,
	DATA_ADDED = 3
};

static int ep, sfd, idle_pipe[2];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void add(int fd, uint32_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = data };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl add");
}

static int signalfd_for(int sig, int fd)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	int r = signalfd(fd, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r < 0)
		die("signalfd");
	return r;
}

/* Before any thread or child exists: the signals wait for the signalfd. */
static void block_signals(void)
{
	sigset_t both;
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &both, NULL))
		die("sigprocmask");
}

/* The set PostgreSQL's WaitEventSet makes: its latch's signalfd and a pipe. */
static void make_set(void)
{
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || pipe(idle_pipe))
		die("epoll_create1/pipe");
	sfd = signalfd_for(SIGUSR1, -1);
	add(sfd, DATA_SIGNALFD);
	add(idle_pipe[0], DATA_PIPE);
}

/* The wait, and what woke it: the item's data and, for a signalfd, the signal read. */
static void wait_and_say(const char *mode)
{
	struct epoll_event ev;
	if (epoll_wait(ep, &ev, 1, -1) != 1)
		die("epoll_wait");
	int signo = 0;
	if (ev.data.u32 == DATA_SIGNALFD) {
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			die("read signalfd");
		signo = (int)si.ssi_signo;
	}
	printf("%s: woken by item %u, signal %d\n", mode, ev.data.u32, signo);
}

/* Calls that stop under detrun: the scheduler looks at the parked waiter after each. */
static void clock_reads(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts;
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	}
}

static void *sibling(void *arg)
{
	const char *mode = arg;
	clock_reads(5); /* under detrun the waiter is parked, and looked at, by now */
	if (strcmp(mode, "added") == 0) {
		int p[2];
		if (pipe(p))
			die("pipe");
		add(p[0], DATA_ADDED);
		if (write(p[1], "x", 1) != 1)
			die("write");
	} else if (strcmp(mode, "replaced") == 0) {
		if (epoll_ctl(ep, EPOLL_CTL_DEL, sfd, NULL) || close(sfd))
			die("del");
		if (signalfd_for(SIGUSR2, -1) != sfd) /* the lowest number: the one just freed */
			die("signalfd number");
		add(sfd, DATA_SIGNALFD);
		kill(getpid(), SIGUSR2);
	} else {
		signalfd_for(SIGUSR2, sfd);
		kill(getpid(), SIGUSR2);
	}
	return NULL;
}

static void one_change(const char *mode)
{
	block_signals();
	make_set();
	pthread_t th;
	if (pthread_create(&th, NULL, sibling, (void *)mode))
		die("pthread_create");
	wait_and_say(mode);
	pthread_join(th, NULL);
}

static void idle_waiters(int n)
{
	pid_t kids[64];
	block_signals();
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die("fork");
		if (kids[i] == 0) {
			make_set(); /* a signalfd wakes the epoll sets of the process that added it */
			struct epoll_event ev;
			if (epoll_wait(ep, &ev, 1, -1) != 1 || ev.data.u32 != DATA_SIGNALFD)
				die("child epoll_wait");
			_exit(0);
		}
	}
	clock_reads(n * 100);
	int woken = 0;
	for (int i = 0; i < n; i++) {
		int status;
		kill(kids[i], SIGUSR1);
		woken += waitpid(kids[i], &status, 0) == kids[i] && WIFEXITED(status) &&
			 WEXITSTATUS(status) == 0;
	}
	printf("idle: %d of %d waiters woken\n", woken, n);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "idle") == 0) {
		int n = atoi(argv[2]);
		if (n < 1 || n > 64)
			die("idle count");
		idle_waiters(n);
	} else if (argc == 2 &&
		   (strcmp(argv[1], "added") == 0 || strcmp(argv[1], "replaced") == 0 ||
		    strcmp(argv[1], "remasked") == 0)) {
		one_change(argv[1]);
	} else {
		fprintf(stderr, "usage: epoll_set_changes added|replaced|remasked|idle N\n");
		return 2;
	}
	return 0;
}
