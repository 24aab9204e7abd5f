/* Calls that name another process by pid or by a process descriptor: confined to the
 * group's own members.
 *
 * The kernel's own gate (launch.c: detrun and the reaper are non-dumpable, the program
 * runs without CAP_SYS_PTRACE) already refuses memory and descriptor access to them. These
 * checks close what that gate does not cover: signals (allowed between processes of one
 * user whatever their dumpability), and every process outside the group when there is no
 * PID namespace (a shim program, anything else of the same user). A call aimed outside
 * the group fails as if the target were out of reach: EPERM when such a process exists,
 * ESRCH when it does not. The target is read at the call's seccomp stop; the serial
 * schedule keeps every other task stopped until the kernel has acted on it, so it cannot
 * change in between. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>

#include "supervisor/report.h"
#include "supervisor/sys_common.h"
#include "supervisor/sys_reach.h"
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

static bool member_by_host_tid(pid_t tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if ((u->tid == tid || u->proc->tgid == tid) && u->state != TASK_DEAD)
			return true;
	return false;
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
	if (pid <= 0 || member_by_ns_tid(pid))
		return false;
	refuse(t, what, pid);
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
		target = member_by_host_tid(host) ? FD_MEMBER : FD_OUTSIDE;
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

bool reach_signal_refused(struct task *t)
{
	switch (t->syscall_nr) {
	case __NR_kill:
		if ((pid_t)(int32_t)syscall_arg(t, 0) == -1 && !namespaced) {
			kill_every_member(t, (int)syscall_arg(t, 1));
			return true;
		}
		return refuse_pid_arg(t, 0, "kill");
	case __NR_tkill:
		return refuse_pid_arg(t, 0, "tkill");
	case __NR_rt_sigqueueinfo:
		return refuse_pid_arg(t, 0, "rt_sigqueueinfo");
	case __NR_tgkill:
		return refuse_pid_arg(t, 1, "tgkill") || refuse_pid_arg(t, 0, "tgkill");
	case __NR_rt_tgsigqueueinfo:
		return refuse_pid_arg(t, 1, "rt_tgsigqueueinfo") ||
		       refuse_pid_arg(t, 0, "rt_tgsigqueueinfo");
	case __NR_pidfd_send_signal:
		return refuse_fd_arg(t, 0, "pidfd_send_signal");
	}
	return false;
}

/* fcntl F_SETOWN and F_SETOWN_EX name the process that gets a descriptor's SIGIO (or the
 * signal F_SETSIG chose, SIGKILL included), sent later by the kernel with the setter's
 * permission: the owner must be a member too. (Process groups, negative owners and
 * F_OWNER_PGRP, are left to the kernel.) */
bool reach_owner_refused(struct task *t)
{
	uint64_t cmd = syscall_arg(t, 1);
	if (cmd == F_SETOWN)
		return refuse_pid_arg(t, 2, "fcntl(F_SETOWN)");
	if (cmd != F_SETOWN_EX)
		return false;
	struct f_owner_ex owner;
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &owner, sizeof(owner)))
		return false; /* the kernel cannot read it either: EFAULT */
	if (owner.type == F_OWNER_PGRP || owner.pid <= 0 || member_by_ns_tid(owner.pid))
		return false;
	refuse(t, "fcntl(F_SETOWN_EX)", owner.pid);
	return true;
}

/* ioctl FIOSETOWN and SIOCSPGRP set a socket's owner the same way (an int in memory). */
bool reach_ioctl_owner_refused(struct task *t)
{
	uint64_t cmd = (uint32_t)syscall_arg(t, 1);
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP)
		return false;
	int32_t pid;
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &pid, sizeof(pid)) || pid <= 0 ||
	    member_by_ns_tid(pid))
		return false;
	refuse(t, cmd == FIOSETOWN ? "ioctl(FIOSETOWN)" : "ioctl(SIOCSPGRP)", pid);
	return true;
}

/* Implements process_vm_readv(2), process_vm_writev(2), pidfd_open(2): members only. */
void sys_reach_pid(struct task *t)
{
	refuse_pid_arg(t, 0, syscall_name(t->syscall_nr));
}

/* Implements pidfd_getfd(2): members only. */
void sys_reach_pidfd(struct task *t)
{
	refuse_fd_arg(t, 0, "pidfd_getfd");
}
