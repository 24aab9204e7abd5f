/* kill(-1, SIGURG): natively (as root) every process of the machine but init and the
 * caller gets it; under detrun --no-namespaces only the other members of the group. A
 * child waits for it and says so. SIGURG is ignored by default, so a process outside
 * that did get it is not harmed. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_urg(int sig)
{
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGURG, on_urg);
	sigset_t urg, old;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	sigprocmask(SIG_BLOCK, &urg, &old);
	int ready[2];
	if (pipe(ready) < 0)
		return 2;
	pid_t pid = fork();
	if (pid == 0) {
		if (write(ready[1], "x", 1) != 1)
			_exit(2);
		int sig = 0;
		sigwait(&urg, &sig);
		printf("child got SIGURG\n");
		_exit(0);
	}
	char c;
	if (read(ready[0], &c, 1) != 1)
		return 2;
	printf("kill(-1, SIGURG): %d\n", kill(-1, SIGURG));
	int status;
	waitpid(pid, &status, 0);
	printf("child exit %d\n", WEXITSTATUS(status));
	return 0;
}
