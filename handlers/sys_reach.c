/* Calls that name another process by pid, process group, priority "who" or process
 * descriptor: confined to the group's own members. Which arguments those are is the
 * table's (argument kinds P G W O D in syscalls.def): the filter stops every such call
 * that does not name the caller, and reach_refused runs before any handler, so a new row
 * gets the check by its kinds alone.
 *
 * The kernel's own gate (launch.c: detrun and the reaper are non-dumpable, the program
 * runs without CAP_SYS_PTRACE) already refuses memory and descriptor access to them. These
 * checks close what that gate does not cover: signals, limits, priorities and scheduling
 * (allowed between processes of one user whatever their dumpability), and every process
 * outside the group when there is no PID namespace (detrun itself, a shim program,
 * anything else of the same user). A call aimed outside
 * the group fails as if the target were out of reach: EPERM when such a process exists,
 * ESRCH when it does not. The target is read at the call's seccomp stop; the serial
 * schedule keeps every other task stopped until the kernel has acted on it, so it cannot
 * change in between. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <linux/ioprio.h>
#include <linux/sockios.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>

#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_reach.h"
#include "syscalls/syscall_table.h"

static bool namespaced; /* the group has its own PID namespace (pid 1 is the reaper) */

void reach_set_namespaced(bool yes)
{
	namespaced = yes;
}

/* Is `ns_tid`, as the group sees pids, one of its threads or processes? A process counts
 * by its pid even after its first thread is gone. */
static bool member_by_ns_tid(pid_t ns_tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if ((u->ns_tid == ns_tid || u->proc->ns_tgid == ns_tid) && u->state != TASK_DEAD)
			return true;
	return false;
}

bool reach_is_member(pid_t ns_tid)
{
	return member_by_ns_tid(ns_tid);
}

struct task *reach_task(pid_t ns_tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->ns_tid == ns_tid)
			return u;
	return NULL;
}

static bool member_by_host_tid(pid_t tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if ((u->tid == tid || u->proc->tgid == tid) && u->state != TASK_DEAD)
			return true;
	return false;
}

/* Is the process `host_pid` a zombie whose pid is `pid` (host's, or as the group sees it)? */
static bool zombie_is(pid_t host_pid, pid_t pid, bool host)
{
	char path[64], line[256], state = 0;
	pid_t ns = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", host_pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "State: %c", &state);
		if (!strncmp(line, "NSpid:", 6)) /* the last one is the group's */
			ns = atoi(strrchr(line, '\t') ? strrchr(line, '\t') + 1 : line + 6);
	}
	if (f)
		fclose(f);
	return state == 'Z' && (host ? host_pid : ns) == pid;
}

/* A child that has exited but that its parent, a member, has not reaped: no task stands
 * for it any more, yet it is still the group's, as natively (a signal to it succeeds,
 * pidfd_open opens it). Found among each member thread's children. */
static bool unreaped_child(pid_t pid, bool host)
{
	bool found = false;
	for (struct task *u = sched_first(); u && !found; u = u->next) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", u->proc->tgid, u->tid);
		FILE *f = fopen(path, "re");
		int child;
		while (f && !found && fscanf(f, "%d", &child) == 1)
			found = zombie_is(child, pid, host);
		if (f)
			fclose(f);
	}
	return found;
}

/* Inside a PID namespace every process but pid 1 is a member (a child of a member is
 * traced from birth); without one, detrun shares the group's view of pids. */
static bool exists_outside(pid_t pid)
{
	if (namespaced)
		return pid == 1;
	return kill(pid, 0) == 0 || errno == EPERM;
}

static void refuse(struct task *t, const char *what, pid_t pid)
{
	int err = exists_outside(pid) ? EPERM : ESRCH;
	trace_event(t, "  %s %d: not a member of the group, %s", what, pid,
		    err == EPERM ? "EPERM" : "ESRCH");
	syscall_emulate(t, -err);
}

/* A pid argument (an int, as the kernel reads it): refused unless a member's. Pids <= 0
 * mean something else to each call and are left to it. */
static bool refuse_pid_arg(struct task *t, int arg, const char *what)
{
	pid_t pid = (pid_t)(int32_t)syscall_arg(t, arg);
	if (pid <= 0 || member_by_ns_tid(pid) || unreaped_child(pid, false))
		return false;
	refuse(t, what, pid);
	return true;
}

/* The last number of a status text's "NSpgid:" line (the innermost namespace's), or -1. */
static long innermost_pgid(const char *status)
{
	const char *p = strstr(status, "\nNSpgid:");
	if (!p)
		return -1;
	long last = -1;
	char *end;
	for (p += 8;; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			return last;
		last = v;
	}
}

/* Is `pgid` (as the group sees ids) a process group of members: a member's pid, or the
 * group a member is in? */
static bool member_pgid(pid_t pgid)
{
	if (member_by_ns_tid(pgid))
		return true;
	for (struct task *u = sched_first(); u; u = u->next) {
		char buf[4096];
		if (u->state != TASK_DEAD && !proc_status_read(u->tid, buf, sizeof(buf)) &&
		    innermost_pgid(buf) == pgid)
			return true;
	}
	return false;
}

static bool refuse_pgid_arg(struct task *t, int arg, const char *what)
{
	pid_t pgid = (pid_t)(int32_t)syscall_arg(t, arg);
	if (pgid <= 0 || member_pgid(pgid))
		return false;
	refuse(t, what, pgid);
	return true;
}

enum fd_target {
	FD_NOT_A_PROCESS,
	FD_MEMBER,
	FD_OUTSIDE
};

/* The "Pid:" of a pidfd, in detrun's own (host) pid namespace; 0 when there is none. */
static pid_t pidfd_host_pid(int fd)
{
	pid_t pid = 0;
	return fdinfo_scan(0, fd, "Pid: %d", &pid) ? pid : 0;
}

/* A /proc/PID directory (which pidfd_send_signal accepts too): the pid its stat file
 * gives, in the numbering of the proc file system it belongs to (the group's). */
static pid_t proc_dir_pid(int fd)
{
	struct statfs fs;
	struct stat st;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	int stat_fd = openat(fd, "stat", O_RDONLY | O_CLOEXEC);
	if (stat_fd < 0)
		return 0;
	char buf[32] = "";
	ssize_t n = read(stat_fd, buf, sizeof(buf) - 1);
	close(stat_fd);
	pid_t pid = 0;
	if (n > 0 && sscanf(buf, "%d", &pid) != 1)
		pid = 0;
	return pid;
}

/* Which process the program's descriptor `fd` stands for. A descriptor that is no
 * process (or one that has exited, Pid: -1) is left for the kernel to refuse. */
static enum fd_target process_fd_target(struct task *t, int fd)
{
	int dup = remote_dup_fd(t, fd);
	if (dup < 0)
		return FD_NOT_A_PROCESS;
	enum fd_target target = FD_NOT_A_PROCESS;
	pid_t host = pidfd_host_pid(dup);
	if (host > 0) {
		target = member_by_host_tid(host) || unreaped_child(host, true) ? FD_MEMBER
										: FD_OUTSIDE;
	} else if (host == 0) {
		pid_t ns_pid = proc_dir_pid(dup);
		if (ns_pid > 0)
			target = member_by_ns_tid(ns_pid) ? FD_MEMBER : FD_OUTSIDE;
	}
	close(dup);
	return target;
}

static bool refuse_fd_arg(struct task *t, int arg, const char *what)
{
	int fd = (int)syscall_arg(t, arg);
	if (process_fd_target(t, fd) != FD_OUTSIDE)
		return false;
	trace_event(t, "  %s fd %d: a process outside the group, EPERM", what, fd);
	syscall_emulate(t, -EPERM);
	return true;
}

/* kill(-1, sig) without a PID namespace would reach every process of the user (of the
 * machine, for root), detrun included: each other member gets it instead, sent by the
 * task itself (an injected kill, so the receiver sees the real sender). The first
 * injection consumes the call's own seccomp stop, so what signal_sent (sys_signal.c) does
 * at the exit of a delivered signal is done here. */
static void kill_every_member(struct task *t, int sig)
{
	if (sig < 0 || sig > 64) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	int sent = 0;
	long last = -ESRCH;
	for (struct task *u = sched_first(); u; u = u->next) {
		if (u->tid != u->proc->tgid || u->proc == t->proc || u->state == TASK_DEAD)
			continue;
		last = remote_syscall(t, __NR_kill, (uint64_t)u->proc->ns_tgid, (uint64_t)sig, 0, 0,
				      0, 0);
		if (last)
			continue;
		sent++;
		if (sig == SIGKILL)
			u->proc->dying = true;
		else if (sig && (TERMINAL_SIGNALS & SIGBIT(sig)))
			u->proc->terminal_due |= SIGBIT(sig);
	}
	if (sent)
		sched_signals_changed();
	trace_event(t, "  kill(-1): sent to %d other members of the group", sent);
	syscall_emulate(t, sent ? 0 : last);
}

/* kill(2)'s own forms (the pid argument is checked as any, reach_refused): -1 without a
 * PID namespace, and a process group outside the group. */
bool reach_signal_refused(struct task *t)
{
	if (t->syscall_nr != __NR_kill)
		return false;
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	pid_t pid = (pid_t)(int32_t)syscall_arg(t, syscall_target_arg(e));
	if (pid == -1 && !namespaced) {
		kill_every_member(t, (int)syscall_arg(t, syscall_signal_arg(e)));
		return true;
	}
	if (pid >= -1 || member_pgid(-pid))
		return false;
	refuse(t, "kill(process group)", -pid);
	return true;
}

/* A descriptor's owner, who gets its SIGIO (or the signal F_SETSIG chose, SIGKILL
 * included), sent later by the kernel with the setter's permission: a pid (> 0) must be a
 * member's, a process group (< 0, or any value with F_OWNER_PGRP) a members' group. 0
 * clears the owner. */
static bool refuse_owner(struct task *t, int32_t owner, bool pgrp, const char *what)
{
	if (owner == 0)
		return false;
	if (pgrp || owner < 0) {
		pid_t pgid = owner < 0 ? -owner : owner;
		if (member_pgid(pgid))
			return false;
		refuse(t, what, pgid);
		return true;
	}
	if (member_by_ns_tid(owner))
		return false;
	refuse(t, what, owner);
	return true;
}

bool reach_owner_refused(struct task *t)
{
	uint64_t cmd = syscall_arg(t, 1);
	if (cmd == F_SETOWN)
		return refuse_owner(t, (int32_t)syscall_arg(t, 2), false, "fcntl(F_SETOWN)");
	if (cmd != F_SETOWN_EX)
		return false;
	struct f_owner_ex owner;
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &owner, sizeof(owner)))
		return false; /* the kernel cannot read it either: EFAULT */
	return refuse_owner(t, owner.pid, owner.type == F_OWNER_PGRP, "fcntl(F_SETOWN_EX)");
}

/* ioctl FIOSETOWN and SIOCSPGRP set a socket's owner the same way (an int in memory). */
bool reach_ioctl_owner_refused(struct task *t)
{
	uint64_t cmd = (uint32_t)syscall_arg(t, 1);
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP)
		return false;
	int32_t owner;
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &owner, sizeof(owner)))
		return false;
	return refuse_owner(t, owner, false,
			    cmd == FIOSETOWN ? "ioctl(FIOSETOWN)" : "ioctl(SIOCSPGRP)");
}

/* Implements capget(2): the pid is in the header it points at (version, pid), out of the
 * table's reach; another process's capability sets are not the group's to read. */
void sys_capget(struct task *t)
{
	struct {
		uint32_t version;
		int32_t pid;
	} header;
	if (remote_read(t, REMOTE(syscall_arg(t, 0)), &header, sizeof(header)) || header.pid <= 0 ||
	    member_by_ns_tid(header.pid))
		return; /* the kernel answers: EFAULT, the caller's own sets, a member's */
	refuse(t, "capget", header.pid);
}

/* setpriority's and ioprio_set's "who" (argument `arg`), read by the "which" before it
 * (PROCESS, PGRP, USER in that order from `process`): a process is checked as any pid. A
 * process group or a user would reach processes outside the group (the reaper, the
 * foreground sentinel, every process of the user on the machine): refused with EPERM. */
static bool refuse_who_arg(struct task *t, int arg, int process, const char *what)
{
	int which = (int)syscall_arg(t, arg - 1);
	if (which == process)
		return refuse_pid_arg(t, arg, what);
	if (which != process + 1 && which != process + 2)
		return false; /* EINVAL from the kernel */
	trace_event(t, "  %s of a %s: reaches outside the group, EPERM", what,
		    which == process + 1 ? "process group" : "user");
	syscall_emulate(t, -EPERM);
	return true;
}

bool reach_refused(struct task *t)
{
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	const char *what = syscall_name(t->syscall_nr);
	for (int i = 0; e && i < e->nargs; i++) {
		bool refused = false;
		switch (e->kinds[i]) {
		case 'P':
			refused = refuse_pid_arg(t, i, what);
			break;
		case 'G':
			refused = refuse_pgid_arg(t, i, what);
			break;
		case 'W':
			refused = refuse_who_arg(t, i, PRIO_PROCESS, what);
			break;
		case 'O':
			refused = refuse_who_arg(t, i, IOPRIO_WHO_PROCESS, what);
			break;
		case 'D':
			refused = refuse_fd_arg(t, i, what);
			break;
		}
		if (refused)
			return true;
	}
	return false;
}
