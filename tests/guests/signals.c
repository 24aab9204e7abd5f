/* e2e guest: signals between processes.
 *  1. ping-pong: parent and child exchange SIGUSR1/SIGUSR2 with kill(), each waiting in
 *     sigsuspend with the signals otherwise blocked (no lost wake-ups);
 *  2. a child blocked in read(2) gets SIGUSR1 (handler with SA_RESTART: the read restarts and
 *     returns the data written afterwards) and then SIGUSR2 (handler without SA_RESTART:
 *     the read fails with EINTR; if the signal came before the read blocked, the handler's
 *     self-pipe byte ends the read and the child asks for another SIGUSR2);
 *  3. a child in pause() is killed by SIGTERM, a child blocked in read() by SIGKILL, a child
 *     whose SIGTERM handler exits with 42;
 *  4. several children race to queue real-time signals (sigqueue) to the parent, which
 *     collects them with sigwaitinfo and then waits for the children in exit order.
 * The parent prints every event and wait status in order. Parts 1-3 are ordered by
 * hand-shakes; part 4 races natively. Under detrun the whole output must be identical.
 * usage: signals [ROUNDS] [RACERS 1..8] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

static volatile sig_atomic_t usr1_count, usr2_count;
static int self_pipe_wr = -1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_count++;
	if (self_pipe_wr >= 0) { /* in case the signal came before the read blocked */
		int e = errno;
		if (write(self_pipe_wr, "h", 1) != 1)
			_exit(98);
		errno = e;
	}
}

static void on_term_exit42(int sig)
{
	(void)sig;
	_exit(42);
}

static void set_handler(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

static const char *status_str(int st)
{
	static char s[64];
	if (WIFEXITED(st))
		snprintf(s, sizeof s, "exited %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(s, sizeof s, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(s, sizeof s, "status 0x%x", st);
	return s;
}

static pid_t xfork(void)
{
	fflush(stdout); /* the child must not inherit buffered output */
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		exit(1);
	}
	return p;
}

static void xwrite(int fd, const void *buf, size_t n)
{
	if (write(fd, buf, n) != (ssize_t)n)
		_exit(97);
}

/* Waits for pid, which must end as `want` says ("exited 42", "killed by signal 9"). */
static void waitfor(pid_t pid, const char *name, const char *want)
{
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	CHECK(!strcmp(status_str(st), want), "%s %s, want %s", name, status_str(st), want);
	printf("wait: %s %s\n", name, status_str(st));
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	int racers = argc > 2 ? atoi(argv[2]) : 4;
	if (rounds < 1 || racers < 1 || racers > 8) {
		fprintf(stderr, "usage: signals [ROUNDS] [RACERS 1..8]\n");
		return 2;
	}
	sigset_t usr, waitmask;
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr, &waitmask); /* waitmask: the original mask */
	sigdelset(&waitmask, SIGUSR1);
	sigdelset(&waitmask, SIGUSR2);

	/* 1. ping-pong with sigsuspend */
	set_handler(SIGUSR1, on_usr1, SA_RESTART);
	set_handler(SIGUSR2, on_usr2, 0);
	pid_t a = xfork();
	if (a == 0) {
		for (int r = 0; r < rounds; r++) {
			while (usr1_count <= r)
				sigsuspend(&waitmask);
			kill(getppid(), SIGUSR2);
		}
		_exit(rounds);
	}
	for (int r = 0; r < rounds; r++) {
		kill(a, SIGUSR1);
		while (usr2_count <= r)
			sigsuspend(&waitmask);
		printf("ping-pong round %d: pong received\n", r);
	}
	char want[32];
	snprintf(want, sizeof want, "exited %d", rounds);
	waitfor(a, "ping-pong child", want);

	/* 2. SA_RESTART and EINTR on a blocked read */
	int p[2], q[2];
	if (pipe(p) || pipe(q)) {
		perror("pipe");
		return 1;
	}
	pid_t b = xfork();
	if (b == 0) {
		close(q[0]);
		self_pipe_wr = p[1];
		usr1_count = usr2_count = 0;
		sigprocmask(SIG_UNBLOCK, &usr, NULL);
		char c, rep[128];
		xwrite(q[1], "\001", 1);       /* parent: send SIGUSR1, then write 'x' */
		ssize_t r = read(p[0], &c, 1); /* SIGUSR1 arrives, read restarts, gets 'x' */
		CHECK(r == 1 && c == 'x' && usr1_count == 1,
		      "SA_RESTART read returned %zd, %d handler run(s); want 1 byte 'x', 1 run", r,
		      (int)usr1_count);
		int n = snprintf(rep, sizeof rep,
				 "child: SA_RESTART read returned %zd '%c', %d handler run(s)\n", r,
				 r == 1 ? c : '?', (int)usr1_count);
		xwrite(q[1], rep, (size_t)n);
		int e;
		for (;;) {
			xwrite(q[1], "\002", 1); /* parent: send SIGUSR2 */
			r = read(p[0], &c, 1);   /* SIGUSR2 arrives: EINTR */
			e = errno;
			if (r < 0 || c != 'h')
				break;
			/* 'h' from the handler: the signal came before read blocked; again */
		}
		CHECK(r < 0 && e == EINTR, "plain handler read returned %zd (%s), want EINTR", r,
		      r < 0 ? strerror(e) : "data");
		n = snprintf(rep, sizeof rep,
			     "child: plain handler read returned %zd (%s), handler ran\n", r,
			     r < 0 ? strerror(e) : "data");
		xwrite(q[1], rep, (size_t)n);
		_exit(0);
	}
	close(q[1]);
	/* relay the child's reports; act on its requests */
	for (;;) {
		char ch;
		ssize_t k = read(q[0], &ch, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (ch == '\001') {
			kill(b, SIGUSR1);
			xwrite(p[1], "x", 1);
		} else if (ch == '\002') {
			kill(b, SIGUSR2);
		} else {
			putchar(ch);
		}
	}
	close(q[0]);
	waitfor(b, "restart/EINTR child", "exited 0");
	close(p[0]);
	close(p[1]);

	/* 3. children killed by signals */
	int ready[2], hold[2];
	if (pipe(ready) || pipe(hold)) {
		perror("pipe");
		return 1;
	}
	pid_t c = xfork();
	if (c == 0) {
		close(ready[0]);
		close(hold[0]);
		close(hold[1]);
		sigprocmask(SIG_UNBLOCK, &usr, NULL);
		xwrite(ready[1], "c", 1);
		for (;;)
			pause();
	}
	pid_t d = xfork();
	if (d == 0) {
		char x;
		close(ready[0]);
		close(hold[1]);
		xwrite(ready[1], "d", 1);
		for (;;)
			if (read(hold[0], &x, 1) == 0)
				_exit(0);
	}
	pid_t e = xfork();
	if (e == 0) {
		close(ready[0]);
		close(hold[0]);
		close(hold[1]);
		set_handler(SIGTERM, on_term_exit42, 0);
		xwrite(ready[1], "e", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char rd[3];
	for (size_t got3 = 0; got3 < 3;) { /* the three bytes come in any order */
		ssize_t k = read(ready[0], rd + got3, 3 - got3);
		if (k <= 0) {
			fprintf(stderr, "ready: short read\n");
			return 1;
		}
		got3 += (size_t)k;
	}
	printf("three children ready\n");
	kill(c, SIGTERM);
	waitfor(c, "pause child after SIGTERM:", "killed by signal 15");
	kill(d, SIGKILL);
	waitfor(d, "read child after SIGKILL:", "killed by signal 9");
	kill(e, SIGTERM);
	waitfor(e, "handler child after SIGTERM:", "exited 42");
	close(ready[0]);
	close(hold[0]);
	close(hold[1]);

	/* 4. racing real-time signals */
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	pid_t kids[8];
	for (int i = 0; i < racers; i++) {
		kids[i] = xfork();
		if (kids[i] == 0) {
			for (int j = 0; j < 3; j++) {
				volatile unsigned w = (unsigned)i;
				for (int k = 0; k < 20000 + 5000 * ((i + j) % 3); k++)
					w = w * 1103515245u + 12345u;
				union sigval v = { .sival_int = i * 10 + j };
				if (sigqueue(getppid(), SIGRTMIN, v))
					_exit(96);
			}
			volatile unsigned w = (unsigned)i;
			for (int k = 0; k < 50000; k++)
				w = w * 1103515245u + 12345u;
			_exit(i);
		}
	}
	/* one sender's queued signals arrive in the order sent; each one once */
	int next_of[8] = { 0 };
	printf("rt signal order:");
	for (int k = 0; k < 3 * racers; k++) {
		siginfo_t si;
		int s = sigwaitinfo(&rt, &si);
		if (s < 0 && errno == EINTR) {
			k--;
			continue;
		}
		if (s != SIGRTMIN) {
			perror("sigwaitinfo");
			return 1;
		}
		int from = si.si_value.sival_int / 10, nth = si.si_value.sival_int % 10;
		CHECK(from >= 0 && from < racers && nth == next_of[from],
		      "rt signal %d.%d came where %d.%d was due", from, nth, from,
		      from >= 0 && from < racers ? next_of[from] : -1);
		next_of[from]++;
		printf(" %d.%d", from, nth);
	}
	printf("\n");
	for (int k = 0; k < racers; k++) {
		int st;
		pid_t w = wait(&st);
		int idx = -1;
		for (int i = 0; i < racers; i++)
			if (kids[i] == w)
				idx = i;
		CHECK(idx >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == idx,
		      "racer %d (pid %d) %s, want exited %d", idx, w, status_str(st), idx);
		printf("wait: racer %d %s\n", idx, status_str(st));
	}
	printf("done\n");
	return 0;
}
