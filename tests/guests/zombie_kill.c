/* e2e guest (issue 17, from rr's tests): a child that has exited but is not reaped yet is
 * still there: kill, tkill, tgkill and pidfd_send_signal to it succeed (0) and pidfd_open
 * opens it. Once reaped it is gone (ESRCH), as is a thread that has exited and been
 * joined (tgkill) — natively a moment after the join returns: the kernel wakes the joiner
 * (clearing the thread's tid) before it has released the thread, and in about one run in
 * seven tgkill still finds it, so the guest looks until it is gone. The output is the
 * same natively and under detrun. */
#include <sched.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : r == 0 ? "0" : "a descriptor");
}

static void *thread_tid(void *out)
{
	*(pid_t *)out = gettid();
	return NULL;
}

int main(void)
{
	pid_t child = fork();
	if (child == 0)
		_exit(7);
	siginfo_t si;
	if (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT)) /* left a zombie */
		return 1;
	printf("the child exited with %d and is not reaped\n", si.si_status);
	show("kill(zombie, 0)", kill(child, 0));
	show("kill(zombie, SIGTERM)", kill(child, SIGTERM));
	show("tkill(zombie, 0)", syscall(SYS_tkill, child, 0));
	show("tgkill(zombie, zombie, 0)", syscall(SYS_tgkill, child, child, 0));
	long fd = syscall(SYS_pidfd_open, child, 0);
	show("pidfd_open(zombie)", fd);
	if (fd >= 0) {
		show("pidfd_send_signal(zombie, 0)",
		     syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
		close((int)fd);
	}
	int status;
	waitpid(child, &status, 0);
	printf("reaped, status %d\n", WEXITSTATUS(status));
	show("kill(reaped, 0)", kill(child, 0));
	pthread_t th;
	pid_t tid = 0;
	pthread_create(&th, NULL, thread_tid, &tid);
	pthread_join(th, NULL);
	long r = 0;
	for (int tries = 0; tries < 1000000 && r == 0; tries++) {
		r = syscall(SYS_tgkill, getpid(), tid, 0);
		if (r == 0)
			sched_yield();
	}
	show("tgkill(self, joined thread, 0)", r);
	return 0;
}
