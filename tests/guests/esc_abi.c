/* A 64-bit program making a 32-bit (int 0x80) and an x32 system call: both getpid.
 *
 *   esc_abi tie   first installs its own filter answering every 32-bit call with
 *                 SECCOMP_RET_TRACE, data 0 (as detrun's own filter answers native
 *                 calls): such a call must still be known for what it is, not run as the
 *                 x86_64 call of the same number (20 is writev; 120, the 32-bit clone,
 *                 is getpgid). */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int trace_foreign_calls(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	};
	struct sock_fprog prog = { 4, code };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static long int80(long nr)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr) : "memory");
	return ret;
}

static long x32(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr | 0x40000000L) : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "tie")) {
		printf("own filter: %d\n", trace_foreign_calls());
		/* i386 clone(CLONE_UNTRACED | SIGCHLD, 0): a child nobody traces, if it ran */
		long r = 0;
		__asm__ volatile("int $0x80"
				 : "=a"(r)
				 : "a"(120L), "b"(0x00800000L | 17), "c"(0L), "d"(0L), "S"(0L),
				   "D"(0L)
				 : "memory");
		if (r == 0)
			_exit(0); /* the child, had the call run */
		printf("int 0x80 clone: %s\n", r == -38 ? "ENOSYS" : r > 0 ? "A CHILD" : "error");
	}
	long r = int80(20); /* i386 getpid */
	printf("int 0x80 getpid: %s\n", r == -38 ? "ENOSYS" : r > 0 ? "a pid" : "error");
	r = x32(39); /* x32 getpid */
	printf("x32 getpid: %s\n", r == -38 ? "ENOSYS" : r > 0 ? "a pid" : "error");
	printf("still running\n");
	return 0;
}
