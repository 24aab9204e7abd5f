/* A program whose own seccomp filter refuses munmap, then execs itself: the filter stays,
 * and judges the calls detrun injects at the exec (the vDSO unmap) as well as the
 * program's own.
 *
 *   esc_own_filter errno|trap|trapblocked|kill   installs the filter, execs "check MODE"
 *   esc_own_filter wait   installs none; says "waiting", reads a byte from stdin, then
 *                         execs "check none"
 *
 * The filter: munmap of at most 4 whole pages (the vDSO's mappings; not the loader's
 * unmap of its cache) gets ERRNO(0) ("succeeds" without running), TRAP (data 0x42) or
 * KILL_PROCESS by MODE (trapblocked: TRAP with SIGSYS blocked, which the kernel forces
 * through with the default action); uname gets ERRNO(5000), which the kernel cuts to
 * 4095 (in a forked child too); getpgid returns its own argument as the verdict
 * (BPF_RET|BPF_A) when its upper half is set.
 *
 * The check prints whether a vDSO is mapped and the time read through it (the host clock,
 * if the kernel's is), then each verdict as the program sees it. Under detrun the kernel's
 * vDSO is gone (the one mapped is detrun's, which reads the virtual clock) and every
 * verdict is the one the program asked for, as natively. */
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int install(const char *mode)
{
	uint32_t munmap_action = !strncmp(mode, "trap", 4) ? SECCOMP_RET_TRAP | 0x42
				 : !strcmp(mode, "kill")   ? SECCOMP_RET_KILL_PROCESS
							   : SECCOMP_RET_ERRNO | 0;
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0xfff, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x4000, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, munmap_action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_uname, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 5000),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpgid, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0xffff0000u, 0, 1),
		BPF_STMT(BPF_RET | BPF_A, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static uint64_t vdso_start(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long long start = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx", &start);
	if (f)
		fclose(f);
	return start;
}

typedef int (*clock_fn)(clockid_t, struct timespec *);

/* __vdso_clock_gettime, found through the vDSO's own section headers. */
static clock_fn vdso_clock(uint64_t base)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	uint64_t vaddr = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			vaddr = ph[i].p_vaddr;
			break;
		}
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *names = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (!strcmp(names + sym[k].st_name, "__vdso_clock_gettime"))
				return (clock_fn)(base + sym[k].st_value - vaddr);
	}
	return NULL;
}

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	printf("SIGSYS %d: code %d errno %#x syscall %d arch ok %d at the call %d rax %lld\n", sig,
	       si->si_code, si->si_errno, si->si_syscall, si->si_arch == AUDIT_ARCH_X86_64,
	       (uint64_t)si->si_call_addr == (uint64_t)uc->uc_mcontext.gregs[REG_RIP],
	       (long long)uc->uc_mcontext.gregs[REG_RAX]);
}

static void verdicts(const char *mode)
{
	struct utsname u;
	errno = 0;
	long r = uname(&u);
	printf("uname: %ld errno %d\n", r, errno);
	errno = 0;
	r = syscall(SYS_getpgid, (long)(SECCOMP_RET_ERRNO | 33));
	printf("getpgid(RET A): %ld errno %d\n", r, errno);
	fflush(stdout);
	pid_t child = fork(); /* the filter is the child's too */
	if (child == 0)
		_exit(uname(&u) < 0 ? errno & 0xff : 0);
	int status = 0;
	waitpid(child, &status, 0);
	printf("uname in a child: exit %d\n", WEXITSTATUS(status));
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page[0] = 7;
	if (!strncmp(mode, "trap", 4)) {
		struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
		sigaction(SIGSYS, &sa, NULL);
	}
	if (!strcmp(mode, "trapblocked")) { /* forced: unblocked, default action, death */
		sigset_t sys;
		sigemptyset(&sys);
		sigaddset(&sys, SIGSYS);
		sigprocmask(SIG_BLOCK, &sys, NULL);
	}
	fflush(stdout);
	errno = 0;
	r = syscall(SYS_munmap, page, 4096);
	printf("munmap: %ld errno %d, the page still holds %d\n", r, errno, page[0]);
}

static int check(const char *mode)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t base = vdso_start();
	printf("AT_SYSINFO_EHDR given: %s\n", getauxval(AT_SYSINFO_EHDR) ? "yes" : "no");
	printf("vdso mapped: %s\n", base ? "yes" : "no");
	clock_fn fn = base ? vdso_clock(base) : NULL;
	struct timespec ts = { 0, 0 };
	if (fn)
		fn(CLOCK_REALTIME, &ts);
	printf("vdso clock: %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("clock: %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	if (strcmp(mode, "none"))
		verdicts(mode);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "check"))
		return check(argv[2]);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "wait")) {
		char c;
		printf("waiting\n");
		fflush(stdout);
		if (read(0, &c, 1) != 1)
			return 1;
		execl("/proc/self/exe", argv[0], "check", "none", (char *)NULL);
		perror("execl");
		return 1;
	}
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none); /* the kill dumps no core */
	if (install(argv[1])) {
		perror("seccomp");
		return 1;
	}
	execl("/proc/self/exe", argv[0], "check", argv[1], (char *)NULL);
	perror("execl");
	return 1;
}
