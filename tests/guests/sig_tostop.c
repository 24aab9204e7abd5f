/* A background job that writes to its terminal with TOSTOP set is stopped by SIGTTOU (and
 * stays stopped): its parent, in the foreground, sees that with waitpid(WUNTRACED), then
 * ends it. Needs a controlling terminal on stdin. Prints "sig_tostop: ok". */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
	struct termios saved, t;
	if (tcgetattr(0, &saved) < 0) {
		printf("no terminal\n");
		return 1;
	}
	t = saved;
	t.c_lflag |= TOSTOP;
	tcsetattr(0, TCSANOW, &t);
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0); /* a background job of the same session */
		int fd = open("/dev/tty", O_WRONLY);
		if (write(fd, "written from the background\n", 28) < 0)
			_exit(3);
		_exit(0);
	}
	setpgid(child, child);
	int st;
	if (waitpid(child, &st, WUNTRACED) != child)
		return 1;
	if (WIFSTOPPED(st))
		printf("child stopped by signal %d\n", WSTOPSIG(st));
	else
		printf("child not stopped: status %#x\n", st);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	printf("child %s by signal %d\n", WIFSIGNALED(st) ? "killed" : "not killed",
	       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	tcsetattr(0, TCSANOW, &saved);
	printf("sig_tostop: ok\n");
	return 0;
}
