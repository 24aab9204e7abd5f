#include "engine/foreground.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "vkernel/report.h"
#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"

/* The sentinel tells detrun with this signal, the terminal's signal as its value. */
#define SENTINEL_SIGNAL (SIGRTMAX - 1)

static int tty_fd = -1;      /* detrun's controlling terminal, while detrun is in front */
static bool given;           /* the group's process group holds the terminal */
static pid_t sentinel;       /* reports the terminal's signals; 0 for none */
static int sentinel_go = -1; /* a byte here: the sentinel is in place, detrun listens */
static pid_t own_pgid;
static pid_t group_pgid;
static void (*report_signal)(const struct outside_signal_msg *msg);

static void sentinel_report(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_code != SI_KERNEL) /* kill(0, ...) from the program: not the terminal's */
		return;
	int saved = errno;
	sigqueue(getppid(), SENTINEL_SIGNAL, (union sigval){ .sival_int = sig });
	errno = saved;
}

/* The sentinel ignores everything it can (a program's kill(0, ...) must not end it) until
 * it stands in the group's process group; from then on it passes on what the terminal
 * sends there. */
static __attribute__((noreturn)) void run_sentinel(int go_fd, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	struct sigaction ign = { 0 }, report = { 0 };
	ign.sa_handler = SIG_IGN;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &ign, NULL);
	if (dup2(go_fd, 3) < 0)
		_exit(0);
	syscall(SYS_close_range, 4, ~0U, 0);
	/* holds none of detrun's output: a reader waiting for its end must not wait for it */
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2 && null >= 0; fd++)
		dup2(null, fd);
	char go;
	if (read(3, &go, 1) != 1)
		_exit(0);
	report.sa_sigaction = sentinel_report;
	report.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&report.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (TERMINAL_SIGNALS & SIGBIT(sig))
			sigaction(sig, &report, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (;;)
		pause();
}

static bool leave_terminal;

void foreground_leave_terminal(void)
{
	leave_terminal = true;
}

bool foreground_left_terminal(void)
{
	return leave_terminal;
}

bool foreground_have_terminal(void)
{
	int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* With a controlling terminal, the sentinel is started even for a background job, which
 * the shell may bring to the foreground later. */
void foreground_prepare(void)
{
	own_pgid = getpgrp();
	if (leave_terminal)
		return; /* the group has no terminal to be in front of */
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return; /* no controlling terminal */
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(fd);
		return;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		run_sentinel(go[0], parent);
	close(go[0]);
	if (pid < 0) {
		warn("cannot start the terminal sentinel (%s): the program runs in the "
		     "terminal's background",
		     strerror(errno));
		close(go[1]);
		close(fd);
		return;
	}
	sentinel = pid;
	sentinel_go = go[1];
	tty_fd = fd;
	atexit(foreground_restore);
}

static void on_sentinel(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if (si->si_pid != sentinel || si->si_code != SI_QUEUE)
		return;
	struct outside_signal_msg msg = { si->si_value.sival_int, SI_KERNEL, 0 };
	report_signal(&msg);
}

void foreground_give(pid_t pgid, void (*report)(const struct outside_signal_msg *msg))
{
	if (!sentinel)
		return;
	report_signal = report;
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_sentinel;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waitpid must return to notice */
	sigemptyset(&sa.sa_mask);
	sigaction(SENTINEL_SIGNAL, &sa, NULL);
	group_pgid = pgid;
	if (setpgid(sentinel, pgid) < 0) {
		warn("cannot start the terminal sentinel: %s", strerror(errno));
		foreground_restore();
		return;
	}
	/* A background job: the group stays in the background too (until `fg`). */
	if (tcgetpgrp(tty_fd) == own_pgid) {
		if (tcsetpgrp(tty_fd, pgid) < 0)
			warn("cannot give the terminal to the program: %s", strerror(errno));
		else
			given = true;
	}
	if (write(sentinel_go, "g", 1) != 1)
		warn("the terminal sentinel is gone: terminal signals reach the program late");
}

void foreground_stop_with_group(void)
{
	if (given && tcgetpgrp(tty_fd) == group_pgid && tcsetpgrp(tty_fd, own_pgid) < 0) {
		/* the terminal is gone: nothing to give back */
	}
	kill(getpid(), SIGSTOP);
	if (sentinel <= 0)
		return;
	kill(sentinel, SIGCONT); /* a program's kill(0, SIGSTOP) stopped it too */
	/* Continued: in the foreground (fg), the group has the terminal (again, or for the
	 * first time for a job started in the background); in the background (bg), the
	 * shell keeps it. */
	given = false;
	if (tcgetpgrp(tty_fd) == own_pgid && tcsetpgrp(tty_fd, group_pgid) == 0)
		given = true;
}

void foreground_restore(void)
{
	if (given && tty_fd >= 0) {
		/* detrun is in the background now: SIGTTOU is ignored, so this is allowed */
		if (tcsetpgrp(tty_fd, own_pgid) < 0) {
			/* the terminal is gone (hang-up): nothing to give back */
		}
	}
	given = false;
	if (tty_fd >= 0)
		close(tty_fd);
	tty_fd = -1;
	if (sentinel_go >= 0)
		close(sentinel_go);
	sentinel_go = -1;
	if (sentinel > 0) {
		kill(sentinel, SIGKILL);
		while (waitpid(sentinel, NULL, 0) < 0 && errno == EINTR)
			;
		sentinel = 0;
	}
}
