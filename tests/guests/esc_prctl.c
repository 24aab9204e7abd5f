/* prctl settings detrun makes itself must not show: the program's death signal, seccomp
 * mode and TSC mode are what it set (or the defaults), and asking for the real TSC does
 * not give it. Prints one line per answer; "rdtsc-value" lines are the TSC reads. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

static sigjmp_buf faulted;

static void on_segv(int sig)
{
	siglongjmp(faulted, 1);
}

/* The same seen through /proc/self/status. */
static void status_seccomp(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int mode = -1, filters = -1;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Seccomp: %d", &mode);
		sscanf(line, "Seccomp_filters: %d", &filters);
	}
	if (f)
		fclose(f);
	snprintf(out, size, "status Seccomp %d, Seccomp_filters %d", mode, filters);
}

static void show(const char *what)
{
	char status[128];
	status_seccomp(status, sizeof(status));
	int tsc = -1;
	int pdeath = -1;
	prctl(PR_GET_PDEATHSIG, &pdeath);
	prctl(PR_GET_TSC, &tsc);
	printf("%s: pdeathsig %d, seccomp %d, tsc %d, %s\n", what, pdeath, prctl(PR_GET_SECCOMP),
	       tsc, status);
}

static int own_filter(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	show("start");
	printf("set tsc enable: %d\n", prctl(PR_SET_TSC, PR_TSC_ENABLE));
	printf("set tsc bad: %d\n", prctl(PR_SET_TSC, 7));
	show("after enable");
	printf("rdtsc-value %llu\n", (unsigned long long)__rdtsc());
	printf("rdtsc-value %llu\n", (unsigned long long)__rdtsc());
	signal(SIGSEGV, on_segv);
	printf("set tsc sigsegv: %d\n", prctl(PR_SET_TSC, PR_TSC_SIGSEGV));
	show("after sigsegv");
	if (sigsetjmp(faulted, 1) == 0)
		printf("rdtsc-value %llu (did not fault)\n", (unsigned long long)__rdtsc());
	else
		printf("rdtsc faulted\n");
	prctl(PR_SET_TSC, PR_TSC_ENABLE);
	printf("set pdeathsig: %d\n", prctl(PR_SET_PDEATHSIG, SIGUSR1));
	show("after pdeathsig");
	pid_t pid = fork();
	if (pid == 0) {
		show("child");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("own filter: %d\n", own_filter());
	show("after own filter");
	return 0;
}
