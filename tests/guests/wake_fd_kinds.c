/* Waits, blocking, on a descriptor whose readiness another member brings about: a signalfd
 * (read, poll, select, epoll, an epoll inside an epoll, a thread of its own, SIGCHLD), a
 * pidfd, an eventfd, a timerfd, an inotify descriptor. Usage: wake_fd_kinds MODE [DIR].
 * The waiter always starts waiting before the waker acts under detrun (the waker is a new
 * task and runs later), and natively the result is the same either way: one fixed line. */

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* A child that sends `sig` to its parent after a few calls, and exits. */
static pid_t child_sending(int sig)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			(void)getppid();
		if (sig)
			kill(parent, sig);
		_exit(7);
	}
	return pid;
}

static int blocked_signalfd(int sig)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die("sigprocmask");
	int fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		die("signalfd");
	return fd;
}

static int read_signo(int sfd)
{
	struct signalfd_siginfo si;
	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		die("read signalfd");
	return (int)si.ssi_signo;
}

static int reap(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int epoll_with(int fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 42 };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll");
	return ep;
}

/* An epoll set also watching a pipe nobody writes, so only `fd` can make it ready. */
static int epoll_with_idle_pipe(int fd, int *pipe_fds)
{
	int ep = epoll_with(fd);
	if (pipe(pipe_fds))
		die("pipe");
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 1 };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, pipe_fds[0], &ev))
		die("epoll_ctl pipe");
	return ep;
}

static uint32_t epoll_one(int ep)
{
	struct epoll_event ev;
	int n = epoll_wait(ep, &ev, 1, -1);
	if (n != 1)
		die("epoll_wait");
	return ev.data.u32;
}

static void signalfd_case(const char *mode)
{
	int sfd = blocked_signalfd(SIGUSR1);
	pid_t pid = child_sending(SIGUSR1);
	if (strcmp(mode, "signalfd_poll") == 0) {
		struct pollfd p = { sfd, POLLIN, 0 };
		if (poll(&p, 1, -1) != 1)
			die("poll");
	} else if (strcmp(mode, "signalfd_select") == 0) {
		fd_set in;
		FD_ZERO(&in);
		FD_SET(sfd, &in);
		if (select(sfd + 1, &in, NULL, NULL, NULL) != 1)
			die("select");
	} else if (strcmp(mode, "signalfd_epoll") == 0) {
		int pfd[2];
		int ep = epoll_with_idle_pipe(sfd, pfd);
		if (epoll_one(ep) != 42)
			die("epoll event");
	} else if (strcmp(mode, "signalfd_poll_epoll") == 0) {
		int pfd[2];
		int ep = epoll_with_idle_pipe(sfd, pfd);
		struct pollfd p = { ep, POLLIN, 0 };
		if (poll(&p, 1, -1) != 1 || epoll_one(ep) != 42)
			die("poll on epoll");
	} else if (strcmp(mode, "signalfd_epoll_nested") == 0) {
		int inner = epoll_with(sfd);
		int pfd[2];
		int outer = epoll_with_idle_pipe(inner, pfd);
		if (epoll_one(outer) != 42 || epoll_one(inner) != 42)
			die("nested epoll event");
	}
	printf("%s: signo %d, child %d\n", mode, read_signo(sfd), reap(pid));
}

/* An edge-triggered socket already reported, with its data still unread, beside a
 * signalfd: the second epoll_wait must wait for the signal, not report the socket again. */
static void signalfd_epoll_et(void)
{
	int sfd = blocked_signalfd(SIGUSR1);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || write(sv[1], "x", 1) != 1)
		die("socketpair");
	int ep = epoll_with(sfd);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = 7 };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev))
		die("epoll_ctl");
	uint32_t first = epoll_one(ep);
	pid_t pid = child_sending(SIGUSR1);
	uint32_t second = epoll_one(ep);
	printf("signalfd_epoll_et: first %u, then %u, signo %d, child %d\n", first, second,
	       read_signo(sfd), reap(pid));
}

static int thread_sfd;

static void *thread_reader(void *arg)
{
	(void)arg;
	struct pollfd p = { thread_sfd, POLLIN, 0 };
	if (poll(&p, 1, -1) != 1)
		die("poll");
	return (void *)(intptr_t)read_signo(thread_sfd);
}

/* A thread waits; the process (not the thread) gets the signal from the main thread. */
static void signalfd_thread(void)
{
	thread_sfd = blocked_signalfd(SIGUSR2);
	pthread_t th;
	if (pthread_create(&th, NULL, thread_reader, NULL))
		die("pthread_create");
	for (int i = 0; i < 3; i++)
		(void)getppid();
	kill(getpid(), SIGUSR2);
	void *signo;
	pthread_join(th, &signo);
	printf("signalfd_thread: signo %d\n", (int)(intptr_t)signo);
}

/* The event loop's way to hear of a child's death: SIGCHLD through a signalfd in epoll. */
static void signalfd_sigchld(void)
{
	int sfd = blocked_signalfd(SIGCHLD);
	int pfd[2];
	int ep = epoll_with_idle_pipe(sfd, pfd);
	pid_t pid = child_sending(0);
	if (epoll_one(ep) != 42)
		die("epoll event");
	printf("signalfd_sigchld: signo %d, child %d\n", read_signo(sfd), reap(pid));
}

static void pidfd_case(bool in_epoll)
{
	pid_t pid = child_sending(0);
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		die("pidfd_open");
	if (in_epoll) {
		int pfd[2];
		if (epoll_one(epoll_with_idle_pipe(pidfd, pfd)) != 42)
			die("epoll event");
	} else {
		struct pollfd p = { pidfd, POLLIN, 0 };
		if (poll(&p, 1, -1) != 1 || !(p.revents & POLLIN))
			die("poll pidfd");
	}
	printf("%s: child %d\n", in_epoll ? "pidfd_epoll" : "pidfd_poll", reap(pid));
}

static void eventfd_case(bool in_epoll)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	pid_t pid = fork();
	if (pid == 0) {
		uint64_t one = 5;
		for (int i = 0; i < 3; i++)
			(void)getppid();
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			_exit(1);
		_exit(7);
	}
	if (in_epoll) {
		int pfd[2];
		if (epoll_one(epoll_with_idle_pipe(efd, pfd)) != 42)
			die("epoll event");
	}
	uint64_t v = 0;
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		die("read eventfd");
	printf("%s: value %llu, child %d\n", in_epoll ? "eventfd_epoll" : "eventfd_read",
	       (unsigned long long)v, reap(pid));
}

static void timerfd_case(bool in_epoll)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = { .it_value = { 0, 20 * 1000 * 1000 } };
	if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL))
		die("timerfd");
	if (in_epoll) {
		int pfd[2];
		if (epoll_one(epoll_with_idle_pipe(tfd, pfd)) != 42)
			die("epoll event");
	}
	uint64_t v = 0;
	if (read(tfd, &v, sizeof(v)) != sizeof(v))
		die("read timerfd");
	printf("%s: expirations %llu\n", in_epoll ? "timerfd_epoll" : "timerfd_read",
	       (unsigned long long)v);
}

static void inotify_case(const char *dir)
{
	int ifd = inotify_init1(IN_CLOEXEC);
	if (ifd < 0 || inotify_add_watch(ifd, dir, IN_CREATE) < 0)
		die("inotify");
	char path[4096];
	snprintf(path, sizeof(path), "%s/wake_inotify_file", dir);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			(void)getppid();
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		_exit(fd < 0 ? 1 : 7);
	}
	union {
		struct inotify_event ev;
		char buf[sizeof(struct inotify_event) + 256];
	} u;
	if (read(ifd, &u, sizeof(u)) <= 0)
		die("read inotify");
	printf("inotify_read: %s, child %d\n", u.ev.len ? u.ev.name : "?", reap(pid));
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "signalfd_read";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "signalfd_epoll_et") == 0)
		signalfd_epoll_et();
	else if (strncmp(mode, "signalfd_", 9) == 0 && strcmp(mode, "signalfd_thread") &&
		 strcmp(mode, "signalfd_sigchld"))
		signalfd_case(mode);
	else if (strcmp(mode, "signalfd_thread") == 0)
		signalfd_thread();
	else if (strcmp(mode, "signalfd_sigchld") == 0)
		signalfd_sigchld();
	else if (strncmp(mode, "pidfd_", 6) == 0)
		pidfd_case(strcmp(mode, "pidfd_epoll") == 0);
	else if (strncmp(mode, "eventfd_", 8) == 0)
		eventfd_case(strcmp(mode, "eventfd_epoll") == 0);
	else if (strncmp(mode, "timerfd_", 8) == 0)
		timerfd_case(strcmp(mode, "timerfd_epoll") == 0);
	else if (strcmp(mode, "inotify_read") == 0 && argc > 2)
		inotify_case(argv[2]);
	else {
		fprintf(stderr, "usage: wake_fd_kinds MODE [DIR]\n");
		return 2;
	}
	return 0;
}
