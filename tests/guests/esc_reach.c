/* Calls that name a process by pid, process group or user, aimed at a process outside
 * the group: "reaper" (pid 1 of detrun's PID namespace), "parent" (detrun itself, with
 * --no-namespaces), or "pid N" (any other process). One line a call: "route NAME:
 * refused (ERRNO)" when it failed for lack of reach (EPERM, ESRCH, EACCES), "route NAME:
 * REACHED (= result)" when it got through, "route NAME: error (ERRNO)" otherwise; then
 * "ALL ROUTES REFUSED" or "SOME ROUTE REACHED". "parent" then executes itself: detrun's
 * exec setup must still work, and the clock read through whatever vDSO the new image has
 * must be the virtual one, in 2030 ("after exec: clock virtual"), not the host's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/ioprio.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int reached;

static void route(const char *name, long r)
{
	if (r >= 0) {
		printf("route %s: REACHED (= %ld)\n", name, r);
		reached++;
	} else if (errno == EPERM || errno == ESRCH || errno == EACCES) {
		printf("route %s: refused (%s)\n", name, strerrorname_np(errno));
	} else {
		printf("route %s: error (%s)\n", name, strerrorname_np(errno));
		reached++;
	}
}

/* struct sched_attr, SCHED_ATTR_SIZE_VER0 */
struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static void scheduling(pid_t pid)
{
	struct sched_param param = { 0 };
	struct timespec ts;
	struct attr a = { sizeof(a), SCHED_OTHER, 0, 0, 0, 0, 0, 0 };
	route("sched_setscheduler", syscall(SYS_sched_setscheduler, pid, SCHED_OTHER, &param));
	route("sched_getscheduler", syscall(SYS_sched_getscheduler, pid));
	route("sched_setparam", syscall(SYS_sched_setparam, pid, &param));
	route("sched_getparam", syscall(SYS_sched_getparam, pid, &param));
	route("sched_rr_get_interval", syscall(SYS_sched_rr_get_interval, pid, &ts));
	route("sched_setattr", syscall(SYS_sched_setattr, pid, &a, 0));
	route("sched_getattr", syscall(SYS_sched_getattr, pid, &a, sizeof(a), 0));
	uint64_t mask = 1;
	route("sched_setaffinity", syscall(SYS_sched_setaffinity, pid, sizeof(mask), &mask));
	route("sched_getaffinity", syscall(SYS_sched_getaffinity, pid, sizeof(mask), &mask));
}

/* The user forms only read: where they get through (natively, or a broken detrun
 * running as root) a set form would change every process of the user on the machine. */
static void priorities(pid_t pid)
{
	int be4 = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4);
	route("setpriority", syscall(SYS_setpriority, PRIO_PROCESS, pid, 19));
	route("getpriority", syscall(SYS_getpriority, PRIO_PROCESS, pid));
	route("setpriority(PRIO_PGRP)", syscall(SYS_setpriority, PRIO_PGRP, 0, 19));
	route("getpriority(PRIO_USER)", syscall(SYS_getpriority, PRIO_USER, getuid()));
	route("ioprio_set", syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, pid, be4));
	route("ioprio_get", syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, pid));
	route("ioprio_get(IOPRIO_WHO_USER)", syscall(SYS_ioprio_get, IOPRIO_WHO_USER, 0));
	route("ioprio_get(IOPRIO_WHO_PGRP)", syscall(SYS_ioprio_get, IOPRIO_WHO_PGRP, 0));
}

static void others(pid_t pid)
{
	struct rlimit lim = { 16, 16 }, old;
	route("prlimit64(RLIMIT_NOFILE)", syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &lim, NULL));
	route("prlimit64 read", syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, NULL, &old));
	route("kcmp", syscall(SYS_kcmp, getpid(), pid, KCMP_VM, 0, 0));
	void *head;
	size_t len;
	route("get_robust_list", syscall(SYS_get_robust_list, pid, &head, &len));
	unsigned long nodes = 1;
	route("migrate_pages", syscall(SYS_migrate_pages, pid, 64, &nodes, &nodes));
	route("move_pages", syscall(SYS_move_pages, pid, 0, NULL, NULL, NULL, 0));
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, pid };
	struct __user_cap_data_struct caps[2];
	route("capget", syscall(SYS_capget, &header, caps));
	int fds[2];
	if (pipe(fds))
		return;
	/* The owner gets the descriptor's SIGIO later, sent by the kernel as from the caller. */
	route("fcntl(F_SETOWN)", syscall(SYS_fcntl, fds[0], F_SETOWN, pid));
	route("getpgid", syscall(SYS_getpgid, pid));
	route("getsid", syscall(SYS_getsid, pid));
	if (pid == 1) /* the group's own process group is the reaper's; kill(-1) is another call */
		return;
	route("setpgid(0, its group)", syscall(SYS_setpgid, 0, pid));
	route("kill(process group)", syscall(SYS_kill, -pid, 0));
	route("fcntl(F_SETOWN, process group)", syscall(SYS_fcntl, fds[0], F_SETOWN, -pid));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "after-exec")) {
		struct timespec ts; /* glibc reads it through the vDSO if it has one */
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("after exec: clock %s\n", ts.tv_sec >= 1893456000 ? "virtual" : "REAL");
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: esc_reach reaper|parent|pid N\n");
		return 2;
	}
	pid_t pid = !strcmp(argv[1], "reaper")   ? 1
		    : !strcmp(argv[1], "parent") ? getppid()
		    : argc > 2                   ? atoi(argv[2])
						 : 0;
	scheduling(pid);
	priorities(pid);
	others(pid);
	printf("%s\n", reached ? "SOME ROUTE REACHED" : "ALL ROUTES REFUSED");
	fflush(stdout);
	if (!strcmp(argv[1], "parent")) {
		execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
		perror("execl");
		return 1;
	}
	return 0;
}
