/* A forked child writes a counter in a loop (step) and then crashes; the parent waits for
 * it. Both yield in between, so that their intervals alternate (quantum 1). With
 * follow-fork-mode child, going back from the crash must stay in the child
 * (tests/debugger/debug_fork_test.cc). */
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int counter;

__attribute__((noinline)) void step(int i)
{
	counter = i * 10;
}

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 1; i <= 5; i++) {
			step(i);
			sched_yield();
		}
		*(volatile int *)0 = counter;
		return 0;
	}
	for (int i = 0; i < 5; i++)
		sched_yield();
	int status = 0;
	waitpid(pid, &status, 0);
	printf(WIFSIGNALED(status) ? "DBG-FORKCRASH-OK\n" : "DBG-FORKCRASH-FAILED\n");
	return 0;
}
