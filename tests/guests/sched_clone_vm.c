/* hardening guest (sched, issue 9 point 8): a child created with CLONE_VM but without
 * CLONE_THREAD is a process of its own that shares its creator's memory. The child first
 * waits on a private futex the creator wakes (shared memory, so the same futex), then the
 * creator exits and the child lives on: it waits until its creator is gone (getppid
 * changes when it is re-parented), then writes through memory they shared and exits. The
 * main program waits for it through a pipe and prints what it wrote.
 * Prints "sched_clone_vm: child outlived its creator" on success. */
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipe_wr;
static pid_t creator;
static char *shared_word;
static unsigned started; /* futex: the creator sets it and wakes the child */

static int vm_child(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) == 0)
		syscall(SYS_futex, &started, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	/* Wait until the creator has exited (it is re-parented away from it). */
	while (syscall(SYS_getppid) == creator)
		sched_yield();
	strcpy(shared_word, "alive");
	char line[64];
	int n = snprintf(line, sizeof(line), "vm child: %s after its creator exited\n",
			 shared_word);
	syscall(SYS_write, pipe_wr, line, (size_t)n);
	syscall(SYS_exit, 0);
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	/* Orphans come back to the main program, not to pid 1: it waits for them itself. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int p[2];
	if (pipe(p))
		return 1;
	pid_t creator_pid = fork();
	if (creator_pid == 0) {
		close(p[0]);
		pipe_wr = p[1];
		creator = getpid();
		shared_word = malloc(64);
		size_t size = 256 * 1024;
		char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (stack == MAP_FAILED)
			_exit(2);
		pid_t c = clone(vm_child, stack + size, CLONE_VM | SIGCHLD, NULL);
		if (c < 0)
			_exit(3);
		for (int i = 0; i < 3; i++)
			sched_yield(); /* let the child reach its futex wait */
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &started, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		exit(0); /* exit_group of the creator: the CLONE_VM child is not in its group */
	}
	close(p[1]);
	int status;
	waitpid(creator_pid, &status, 0);
	printf("creator: exit %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	char buf[128];
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("%s", buf);
	pid_t orphan = wait(&status);
	printf("orphan %s: %s %d\n", orphan > 0 ? "reaped" : "missing",
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (n > 0 && orphan > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("sched_clone_vm: child outlived its creator\n");
	return 0;
}
