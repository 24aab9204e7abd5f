/* What a shell does with a job: stop a child with SIGSTOP (or SIGTSTP), see it stopped with
 * waitpid(WUNTRACED), check that it does not run while stopped, continue it with SIGCONT,
 * see that with waitpid(WCONTINUED), and end it. The child echoes bytes from one pipe to
 * another. Prints one line a step and "sig_jobctl: ok". */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("FAILED: %s\n", what);
	return 1;
}

static int round_trip(int to, int from)
{
	char c = 'x';
	return write(to, &c, 1) == 1 && read(from, &c, 1) == 1 && c == 'x';
}

static int stop_and_continue(pid_t child, int stop_sig, int to, int from)
{
	int st;
	if (kill(child, stop_sig) < 0 || waitpid(child, &st, WUNTRACED) != child)
		return fail("waitpid(WUNTRACED)");
	if (!WIFSTOPPED(st))
		return fail("child not reported stopped");
	printf("stopped by signal %d\n", WSTOPSIG(st));
	/* Stopped, the child does not echo, however long the parent lets it. */
	char c = 's';
	if (write(to, &c, 1) != 1)
		return fail("write");
	for (int i = 0; i < 200; i++)
		sched_yield();
	if (read(from, &c, 1) != -1 || errno != EAGAIN)
		return fail("a stopped child ran");
	if (waitpid(child, &st, WUNTRACED | WNOHANG) != 0)
		return fail("a stop reported twice");
	if (kill(child, SIGCONT) < 0 || waitpid(child, &st, WCONTINUED) != child)
		return fail("waitpid(WCONTINUED)");
	if (!WIFCONTINUED(st))
		return fail("child not reported continued");
	printf("continued\n");
	int flags = fcntl(from, F_GETFL);
	fcntl(from, F_SETFL, flags & ~O_NONBLOCK);
	if (read(from, &c, 1) != 1 || c != 's')
		return fail("the continued child did not echo");
	fcntl(from, F_SETFL, flags);
	return 0;
}

int main(void)
{
	int down[2], up[2];
	if (pipe(down) < 0 || pipe(up) < 0)
		return fail("pipe");
	pid_t child = fork();
	if (child == 0) {
		/* A job of its own, as a shell makes it: a process group that is not orphaned
		 * (the parent is in another one of the same session), so SIGTSTP stops it. */
		setpgid(0, 0);
		char c;
		while (read(down[0], &c, 1) == 1)
			if (write(up[1], &c, 1) != 1)
				_exit(2);
		_exit(0);
	}
	setpgid(child, child);
	if (!round_trip(down[1], up[0]))
		return fail("echo");
	fcntl(up[0], F_SETFL, O_NONBLOCK);
	if (stop_and_continue(child, SIGSTOP, down[1], up[0]) ||
	    stop_and_continue(child, SIGTSTP, down[1], up[0]))
		return 1;
	int st;
	if (kill(child, SIGTERM) < 0 || waitpid(child, &st, 0) != child)
		return fail("waitpid");
	printf("child %s by signal %d\n", WIFSIGNALED(st) ? "killed" : "not killed",
	       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	printf("sig_jobctl: ok\n");
	return 0;
}
