/* hardening guest (sched, issue 9 point 7): seccomp strict mode, entered with
 * seccomp(SECCOMP_SET_MODE_STRICT) or prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) (argument
 * "prctl"). In strict mode only read, write, _exit and rt_sigreturn are allowed; any other
 * call kills the thread with SIGKILL. A child enters strict mode, writes through a pipe,
 * and then either exits with _exit(7) or calls getpid (killed). The parent prints what it
 * read and how each child ended.
 * usage: sched_strict [seccomp|prctl] */
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int enter_strict(const char *how)
{
	if (!strcmp(how, "prctl"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
}

static void child(const char *how, int fd, int forbidden)
{
	if (enter_strict(how)) {
		char msg[96];
		int len = snprintf(msg, sizeof(msg), "strict mode refused: %s\n", strerror(errno));
		syscall(SYS_write, fd, msg, (size_t)len);
		syscall(SYS_exit, 1);
	}
	static const char hello[] = "in strict mode\n";
	syscall(SYS_write, fd, hello, sizeof(hello) - 1);
	if (forbidden)
		syscall(SYS_getpid); /* not allowed: SIGKILL */
	syscall(SYS_exit, 7);        /* _exit, not exit_group: only the former is allowed */
}

static void run(const char *how, int forbidden)
{
	int p[2];
	if (pipe(p))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(how, p[1], forbidden);
	}
	close(p[1]);
	char buf[128];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("child %s: killed by signal %d\n", forbidden ? "calling getpid" : "exiting",
		       WTERMSIG(status));
	else
		printf("child %s: exit %d\n", forbidden ? "calling getpid" : "exiting",
		       WEXITSTATUS(status));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "seccomp";
	setvbuf(stdout, NULL, _IOLBF, 0);
	run(how, 0);
	run(how, 1);
	return 0;
}
