/* Tries every route to a process outside the group and prints one line per route:
 * "route NAME: refused (ERRNO)" when the kernel or detrun refused it for lack of
 * permission or reach, "route NAME: REACHED ..." when it got through, "route NAME: error
 * (ERRNO)" otherwise.
 *
 *   esc_routes reaper   target pid 1 (detrun's reaper in the group's PID namespace), then
 *                       unmount /proc and look for the host's /proc underneath
 *   esc_routes parent   target the parent (detrun itself, under --no-namespaces)
 *
 * Nothing is changed in the target: the write routes stop at opening, or write to a
 * read-only page of it (EFAULT after the permission check means the route was open).
 * /proc/PID/maps and environ, which the kernel lets a caller with CAP_SYS_ADMIN read even
 * from a non-dumpable process, are refused by detrun at the open. */

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures;

static void verdict(const char *route, long r, int err)
{
	if (r >= 0 || err == EFAULT || err == EIO) {
		printf("route %s: REACHED (%s)\n", route, r >= 0 ? "ok" : strerrorname_np(err));
		failures++;
	} else if (err == EPERM || err == EACCES || err == ESRCH) {
		printf("route %s: refused (%s)\n", route, strerrorname_np(err));
	} else {
		printf("route %s: error (%s)\n", route, strerrorname_np(err));
		failures++;
	}
}

static void try_open(pid_t pid, const char *leaf, int flags, const char *route)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, leaf);
	int fd = open(path, flags | O_CLOEXEC);
	verdict(route, fd, errno);
	if (fd >= 0)
		close(fd);
}

/* The start of a read-only mapping of the target, if its maps are readable. */
static unsigned long readonly_address(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	unsigned long lo = 0x400000, hi;
	char perms[8];
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && !strcmp(perms, "r--p"))
			break;
	if (f)
		fclose(f);
	return lo;
}

static void try_memory_calls(pid_t pid)
{
	unsigned long addr = readonly_address(pid);
	char buf[8];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)addr, sizeof(buf) };
	long r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	verdict("process_vm_readv", r, errno);
	r = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	verdict("process_vm_writev", r, errno);
}

static void try_pidfd(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	verdict("pidfd_open", pidfd, errno);
	if (pidfd < 0)
		return;
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
	verdict("pidfd_getfd", fd, errno);
	if (fd >= 0)
		close(fd);
	close(pidfd);
}

static void try_signals(pid_t pid)
{
	/* SIGIO (or any signal, F_SETSIG) sent by the kernel to a descriptor's owner */
	int p[2];
	if (pipe(p) == 0) {
		long r = fcntl(p[0], F_SETOWN, pid);
		verdict("fcntl(F_SETOWN)", r, errno);
		struct f_owner_ex owner = { F_OWNER_PID, pid };
		r = fcntl(p[0], F_SETOWN_EX, &owner);
		verdict("fcntl(F_SETOWN_EX)", r, errno);
		close(p[0]);
		close(p[1]);
	}
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		int owner = pid;
		long r = ioctl(s, FIOSETOWN, &owner);
		verdict("ioctl(FIOSETOWN)", r, errno);
		r = ioctl(s, SIOCSPGRP, &owner);
		verdict("ioctl(SIOCSPGRP)", r, errno);
		close(s);
	}
	long r = kill(pid, SIGCONT);
	verdict("kill", r, errno);
	r = syscall(SYS_tkill, pid, SIGCONT);
	verdict("tkill", r, errno);
	r = syscall(SYS_tgkill, pid, pid, SIGCONT);
	verdict("tgkill", r, errno);
	siginfo_t si = { .si_signo = SIGCONT, .si_code = SI_QUEUE };
	r = syscall(SYS_rt_sigqueueinfo, pid, SIGCONT, &si);
	verdict("rt_sigqueueinfo", r, errno);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", pid);
	int dir = open(path, O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) { /* under detrun another process's /proc/PID does not open */
		verdict("pidfd_send_signal(/proc/PID)", dir, errno);
		return;
	}
	r = syscall(SYS_pidfd_send_signal, dir, SIGCONT, NULL, 0);
	verdict("pidfd_send_signal(/proc/PID)", r, errno);
	close(dir);
}

/* With the group's /proc gone, is a /proc of other processes underneath? */
static void try_umount_proc(void)
{
	if (umount2("/proc", MNT_DETACH) < 0) {
		printf("route umount /proc: cannot unmount (%s)\n", strerrorname_np(errno));
		failures++;
		return;
	}
	char self[32] = "";
	ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		printf("route umount /proc: REACHED (a /proc underneath, self is %s)\n",
		       atoi(self) == getpid() ? "us" : "another pid");
		failures++;
	} else {
		printf("route umount /proc: refused (no /proc underneath)\n");
	}
	/* A proc file system mounted now is of the group's own PID namespace. */
	memset(self, 0, sizeof(self));
	if (mount("proc", "/proc", "proc", 0, NULL) == 0 && readlink("/proc/self", self, 31) > 0)
		printf("route mount proc: own namespace (self is %s)\n",
		       atoi(self) == getpid() ? "us" : "another pid");
}

int main(int argc, char **argv)
{
	bool reaper = argc > 1 && !strcmp(argv[1], "reaper");
	pid_t pid = reaper ? 1 : getppid();
	setvbuf(stdout, NULL, _IOLBF, 0);
	try_open(pid, "mem", O_RDONLY, "open mem for reading");
	try_open(pid, "mem", O_WRONLY, "open mem for writing");
	try_open(pid, "fd/0", O_RDONLY, "open fd/0");
	try_open(pid, "ns/mnt", O_RDONLY, "open ns/mnt (for setns)");
	try_open(pid, "root/", O_RDONLY | O_DIRECTORY, "open root/");
	try_open(pid, "exe", O_RDONLY, "open exe");
	try_open(pid, "maps", O_RDONLY, "open maps");
	try_open(pid, "environ", O_RDONLY, "open environ");
	try_memory_calls(pid);
	try_pidfd(pid);
	try_signals(pid);
	long r = ptrace(PTRACE_SEIZE, pid, 0, 0);
	verdict("ptrace", r, errno);
	if (reaper)
		try_umount_proc();
	printf("%s\n", failures ? "ESCAPED" : "ALL ROUTES REFUSED");
	return failures ? 1 : 0;
}
