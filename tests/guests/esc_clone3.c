/* clone3 with CLONE_UNTRACED, its arguments where detrun cannot or must not write them:
 *
 *   esc_clone3 ro        in a read-only MAP_SHARED mapping
 *   esc_clone3 rw        in a writable MAP_SHARED mapping of a file (memfd): detrun must
 *                        not change the file
 *   esc_clone3 badstack  read-only arguments and a stack pointer in read-only memory, so
 *                        no scratch memory either
 *   esc_clone3 fail      as ro, with flags the kernel refuses (CLONE_THREAD alone)
 *   esc_clone3 hold      as ro; the child clears its death signal and waits forever, the
 *                        parent prints "ready" and waits: whoever kills detrun then must
 *                        find nothing of the group left
 *
 * An untraced child's intercepted calls fail with ENOSYS (no tracer for the filter's
 * TRACE action): the child tells by uname whether it is traced, and says so through its
 * exit status. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child, right after clone3: exit 0 if its calls reach a tracer, crash otherwise
 * (an untraced child cannot even exit: exit_group stops at the filter). */
static void child(bool hold, bool arg_kept)
{
	struct utsname u;
	long traced = syscall(SYS_uname, &u) == 0;
	if (traced && !arg_kept)
		syscall(SYS_exit_group, 43);
	if (hold) {
		prctl(PR_SET_PDEATHSIG, 0);
		for (;;)
			syscall(SYS_pause);
	}
	syscall(SYS_exit_group, traced ? 0 : 42);
	*(volatile int *)0 = 0;
}

/* The register holding clone3's first argument after the call, in parent and child: the
 * kernel preserves it, so detrun's copy of the arguments must not show there. */
static unsigned long arg_after;

static long raw_clone3(struct clone_args *args, void *stack_top)
{
	long ret;
	unsigned long rdi;
	/* With a stack_top, the stack pointer is in read-only memory for the call itself,
	 * back at once after. */
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "test %[top], %[top]\n\t"
			 "cmovnz %[top], %%rsp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rsp"
			 : "=a"(ret), "=D"(rdi)
			 : "a"((long)SYS_clone3), "D"(args),
			   "S"(sizeof(*args)), [top] "r"(stack_top)
			 : "r12", "rcx", "r11", "memory", "cc");
	arg_after = rdi;
	return ret;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ro";
	bool hold = !strcmp(mode, "hold");
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fd = memfd_create("esc_clone3", 0);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 2;
	struct clone_args *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct clone_args *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	char *ro_stack = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rw == MAP_FAILED || ro == MAP_FAILED || ro_stack == MAP_FAILED)
		return 2;
	memset(rw, 0, sizeof(*rw));
	/* "fail": a combination the kernel refuses (EINVAL) after detrun made its copy */
	rw->flags = CLONE_UNTRACED | (!strcmp(mode, "fail") ? CLONE_THREAD : 0);
	rw->exit_signal = SIGCHLD;
	struct clone_args *args = !strcmp(mode, "rw") ? rw : ro;
	long pid = raw_clone3(args, !strcmp(mode, "badstack") ? ro_stack + 4096 : NULL);
	bool arg_kept = arg_after == (unsigned long)args;
	if (pid == 0)
		child(hold, arg_kept);
	if (pid < 0) {
		printf("clone3: refused (%s), argument register %s\n",
		       strerrorname_np((int)-pid > 0 ? (int)-pid : errno),
		       arg_kept ? "kept" : "CHANGED");
		return 0;
	}
	printf("arguments %s, argument register %s\n",
	       rw->flags & CLONE_UNTRACED ? "unchanged" : "CHANGED", arg_kept ? "kept" : "CHANGED");
	if (hold) {
		printf("ready\n");
		for (;;)
			pause();
	}
	/* A polling wait: an untraced child is unknown to detrun, which would park a
	 * blocking one forever. */
	int status = 0;
	for (long i = 0; i < 100000000 && waitpid((pid_t)pid, &status, WNOHANG) == 0; i++)
		sched_yield();
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("child: its calls were answered\n");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 43)
		printf("child: its argument register CHANGED\n");
	else
		printf("child: UNTRACED (status 0x%x)\n", status);
	return 0;
}
