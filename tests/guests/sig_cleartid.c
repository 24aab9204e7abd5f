/* A child sharing the memory (CLONE_VM) but in its own thread group, with
 * CLONE_CHILD_CLEARTID, is killed; the kernel clears its tid word and wakes the futex on
 * it, which its parent waits on. Prints "sig_cleartid: woken". */
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic int child_tid;
static int block[2];

static int child_main(void *arg)
{
	char c;
	(void)arg;
	for (;;)
		if (syscall(SYS_read, block[0], &c, 1) <= 0)
			syscall(SYS_exit, 0);
	return 0;
}

int main(void)
{
	if (pipe(block) < 0)
		return 1;
	size_t size = 1 << 16;
	char *stack = malloc(size);
	pid_t child = clone(child_main, stack + size,
			    CLONE_VM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, NULL,
			    NULL, NULL, &child_tid);
	if (child < 0)
		return 1;
	while (atomic_load(&child_tid) == 0)
		sched_yield();
	kill(child, SIGKILL);
	int tid;
	while ((tid = atomic_load(&child_tid)) != 0)
		syscall(SYS_futex, &child_tid, FUTEX_WAIT, tid, NULL, NULL, 0);
	int st;
	waitpid(child, &st, 0);
	printf("sig_cleartid: woken, child killed by signal %d\n",
	       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 0;
}
