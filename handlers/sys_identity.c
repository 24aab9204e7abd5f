/* What the machine looks like from inside: kernel identity, CPUs, resource usage. Each
 * answer is fixed or derived from the virtual clock, so it is the same on every run and
 * every machine. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scheduler/vclock.h"
#include "engine/launch.h"
#include "handlers/sys_common.h"
#include "handlers/sys_identity.h"
#include "vkernel/report.h"

static int64_t result_of_write(struct task *t, uint64_t addr, const void *data, size_t len)
{
	return remote_write(t, REMOTE(addr), data, len) ? -EFAULT : 0;
}

/* Implements uname(2). */
void sys_uname(struct task *t)
{
	struct utsname u;
	memset(&u, 0, sizeof(u));
	strcpy(u.sysname, "Linux");
	strcpy(u.nodename, DETRUN_HOSTNAME);
	strcpy(u.release, "6.1.0-detrun");
	strcpy(u.version, "#1 SMP PREEMPT_DYNAMIC detrun");
	strcpy(u.machine, "x86_64");
	strcpy(u.domainname, "(none)");
	syscall_emulate(t, result_of_write(t, syscall_arg(t, 0), &u, sizeof(u)));
}

static int64_t elapsed_ns(void)
{
	return vclock_now() - VCLOCK_BOOT_NS;
}

/* Implements sysinfo(2): a fixed machine, uptime from the virtual clock. */
void sys_sysinfo(struct task *t)
{
	struct sysinfo si;
	memset(&si, 0, sizeof(si));
	si.uptime = vclock_now() / 1000000000LL;
	si.totalram = 8ULL << 30;
	si.freeram = 4ULL << 30;
	si.procs = (unsigned short)sched_live_count();
	si.mem_unit = 1;
	syscall_emulate(t, result_of_write(t, syscall_arg(t, 0), &si, sizeof(si)));
}

/* A field of /proc/TID/status in kB ("VmPeak:"), 0 if unreadable. */
static int64_t status_kb(pid_t tid, const char *field)
{
	char buf[4096];
	return proc_status_read(tid, buf, sizeof(buf))
		       ? 0
		       : (int64_t)proc_status_field(buf, field, 10, 0);
}

/* ru_maxrss: the resident set depends on the page cache (fault-around maps whatever pages
 * happen to be cached) and on transparent huge pages, so detrun gives the peak virtual
 * size of the process (VmPeak) instead: deterministic, and never below the real figure. */
static int64_t maxrss_kb(struct task *t)
{
	return status_kb(t->tid, "\nVmPeak:");
}

/* The peaks of exited processes not yet waited for, by the pid the group sees. A parent
 * that never waits leaves its children here: the oldest make room. */
enum {
	EXITED_MAX = 256
};
static struct {
	pid_t ns_pid;
	int64_t peak_kb;
} exited[EXITED_MAX];
static unsigned n_exited;

static int64_t exited_peak_taken(pid_t ns_pid)
{
	for (unsigned i = 0; i < n_exited && i < EXITED_MAX; i++)
		if (exited[i].ns_pid == ns_pid) {
			exited[i].ns_pid = 0;
			return exited[i].peak_kb;
		}
	return 0;
}

void rusage_process_exiting(struct task *t)
{
	int64_t peak = maxrss_kb(t);
	exited[n_exited++ % EXITED_MAX] = (typeof(exited[0])){ t->proc->ns_tgid, peak };
	if (t->proc->children_maxrss_kb > peak)
		peak = t->proc->children_maxrss_kb;
	pid_t parent = (pid_t)status_kb(t->tid, "\nPPid:");
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->proc->tgid == parent && u->proc->children_maxrss_kb < peak)
			u->proc->children_maxrss_kb = peak;
}

void rusage_wait_written(struct task *t)
{
	bool waitid = t->syscall_nr == __NR_waitid;
	uint64_t at = syscall_arg(t, waitid ? 4 : 3), info = syscall_arg(t, 2);
	pid_t pid = (pid_t)syscall_result(t);
	if (!at || syscall_result(t) < 0 || (!waitid && pid == 0))
		return;
	if (waitid && (!info || remote_read(t, REMOTE(info + offsetof(siginfo_t, si_pid)), &pid,
					    sizeof(pid))))
		return;
	bool reaped = !(waitid && (syscall_arg(t, 3) & WNOWAIT));
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	ru.ru_maxrss = pid && reaped ? exited_peak_taken(pid) : 0;
	if (remote_write(t, REMOTE(at), &ru, sizeof(ru)))
		task_warn(t, "cannot write the usage of child %d", pid);
}

void rusage_sigchld_times(struct task *t)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || si.si_code <= 0 ||
	    (!si.si_utime && !si.si_stime))
		return;
	si.si_utime = si.si_stime = 0;
	if (ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si) < 0)
		task_warn(t, "cannot hide a child's CPU times from its SIGCHLD: %s",
			  strerror(errno));
}

/* Implements getrusage(2): CPU time is the virtual time since the start; ru_maxrss as
 * maxrss_kb says. */
void sys_getrusage(struct task *t)
{
	int who = (int)syscall_arg(t, 0);
	if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN && who != RUSAGE_THREAD) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	if (who != RUSAGE_CHILDREN) {
		int64_t ns = elapsed_ns();
		ru.ru_utime.tv_sec = ns / 1000000000LL;
		ru.ru_utime.tv_usec = (ns % 1000000000LL) / 1000;
		ru.ru_maxrss = maxrss_kb(t);
	} else {
		ru.ru_maxrss = t->proc->children_maxrss_kb;
	}
	syscall_emulate(t, result_of_write(t, syscall_arg(t, 1), &ru, sizeof(ru)));
}

/* Implements times(2), in clock ticks of 10 ms. */
void sys_times(struct task *t)
{
	struct tms tms = { (clock_t)(elapsed_ns() / 10000000LL), 0, 0, 0 };
	int64_t result = vclock_now() / 10000000LL;
	if (syscall_arg(t, 0) && result_of_write(t, syscall_arg(t, 0), &tms, sizeof(tms)))
		result = -EFAULT;
	syscall_emulate(t, result);
}

/* Implements sched_getaffinity(2): the virtual CPUs. */
void sys_sched_getaffinity(struct task *t)
{
	uint64_t mask = tracer_opts->cpus >= 64 ? ~0ULL : (1ULL << tracer_opts->cpus) - 1;
	if (syscall_arg(t, 1) < sizeof(mask)) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	int64_t err = result_of_write(t, syscall_arg(t, 2), &mask, sizeof(mask));
	syscall_emulate(t, err ? err : (int64_t)sizeof(mask));
}

/* Implements sched_setaffinity(2): accepted when it names a virtual CPU; the group stays on
 * the one real CPU it runs on. */
void sys_sched_setaffinity(struct task *t)
{
	uint64_t mask = 0,
		 valid = tracer_opts->cpus >= 64 ? ~0ULL : (1ULL << tracer_opts->cpus) - 1;
	size_t len = syscall_arg(t, 1) < sizeof(mask) ? syscall_arg(t, 1) : sizeof(mask);
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &mask, len)) {
		syscall_emulate(t, -EFAULT);
		return;
	}
	pid_t pid = (pid_t)syscall_arg(t, 0);
	if ((mask & valid) && (pid == 0 || pid == t->ns_tid)) {
		/* Natively the task now runs on one of these CPUs: say the first. */
		if (!(mask & (1ULL << t->vcpu)))
			t->vcpu = __builtin_ctzll(mask & valid);
	}
	syscall_emulate(t, (mask & valid) ? 0 : -EINVAL);
}

/* Implements getcpu(2): the task's virtual CPU (0 unless its affinity excludes 0), node 0. */
void sys_getcpu(struct task *t)
{
	unsigned values[2] = { (unsigned)t->vcpu, 0 };
	int64_t result = 0;
	for (int i = 0; i < 2; i++)
		if (syscall_arg(t, i) &&
		    result_of_write(t, syscall_arg(t, i), &values[i], sizeof(values[i])))
			result = -EFAULT;
	syscall_emulate(t, result);
}
