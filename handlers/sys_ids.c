/* Kernel-wide ids that show through links and requests, renumbered (sys_proc.h).
 *
 * readlink of /proc/PID/fd/N and /proc/PID/ns/X names pipes, sockets and namespaces by
 * kernel-wide inode numbers; FS_IOC_GETVERSION gives ext4's random inode generation and
 * SO_COOKIE a machine-wide counter. Each is renumbered as stat(2) shows the object, so the
 * views agree; a link to a /proc view's snapshot names the view (sys_proc_snapshot.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>

#ifndef EXT4_IOC_GETVERSION /* fs/ext4/ext4.h */
#define EXT4_IOC_GETVERSION _IOR('f', 3, long)
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_files.h"
#include "handlers/sys_kernfs.h"
#include "handlers/sys_proc.h"

/* ---- links to anonymous objects ---------------------------------------------------------- */

/* The device of the kernel's internal filesystem behind a link "TYPE:[N]": pipes,
 * sockets, namespaces. 0 for a type detrun does not know. */
static uint64_t anon_fs_dev(const char *type, size_t len)
{
	static uint64_t pipe_dev, socket_dev, ns_dev;
	struct stat st;
	if (len == 4 && !strncmp(type, "pipe", 4)) {
		int p[2];
		if (!pipe_dev && pipe2(p, O_CLOEXEC) == 0) {
			if (fstat(p[0], &st) == 0)
				pipe_dev = st.st_dev;
			close(p[0]);
			close(p[1]);
		}
		return pipe_dev;
	}
	if (len == 6 && !strncmp(type, "socket", 6)) {
		int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (!socket_dev && s >= 0 && fstat(s, &st) == 0)
			socket_dev = st.st_dev;
		if (s >= 0)
			close(s);
		return socket_dev;
	}
	static const char *const ns[] = { "cgroup", "ipc",
					  "mnt",    "net",
					  "pid",    "pid_for_children",
					  "time",   "time_for_children",
					  "user",   "uts" };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (strlen(ns[i]) == len && !strncmp(type, ns[i], len)) {
			if (!ns_dev && stat("/proc/self/ns/mnt", &st) == 0)
				ns_dev = st.st_dev;
			return ns_dev;
		}
	return 0;
}

static void link_read(struct task *t)
{
	int64_t len = syscall_result(t);
	bool at = t->syscall_nr == __NR_readlinkat;
	uint64_t buf = syscall_arg(t, at ? 2 : 1), size = syscall_arg(t, at ? 3 : 2);
	char link[PATH_MAX + 64];
	if (len <= 0 || len >= (int64_t)sizeof(link) ||
	    remote_read(t, REMOTE(buf), link, (size_t)len))
		return;
	link[len] = 0;
	if (proc_view_link_read(t, link, buf, size))
		return;
	const char *open = strstr(link, ":[");
	unsigned long long ino;
	char close;
	if (!open || sscanf(open + 2, "%llu%c", &ino, &close) != 2 || close != ']' ||
	    link[len - 1] != ']')
		return;
	uint64_t dev = anon_fs_dev(link, (size_t)(open - link));
	if (!dev)
		return;
	char out[64];
	int n = snprintf(out, sizeof(out), "%.*s:[%llu]", (int)(open - link), link,
			 (unsigned long long)files_virtual_ino(dev, ino, NLINK_UNKNOWN));
	if ((uint64_t)n > size)
		n = (int)size; /* readlink truncates silently */
	if (remote_write(t, REMOTE(buf), out, (size_t)n))
		return;
	syscall_set_result(t, (uint64_t)n);
}

/* Implements readlink(2), readlinkat(2): "pipe:[N]", "socket:[N]", "mnt:[N]" ... name
 * kernel-wide inode numbers, renumbered as fstat shows those objects. */
void sys_readlink(struct task *t)
{
	tracer_want_exit(t, link_read);
}

/* ---- ioctl and getsockopt requests that return kernel-wide ids ----------------------------- */

/* The renumbered inode number of the object behind tracee descriptor tfd, or 0. */
static uint64_t virtual_ino_of_fd(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	struct stat st;
	uint64_t vino = fd >= 0 && fstat(fd, &st) == 0
				? files_virtual_ino(st.st_dev,
						    views_proc_identity(fd, st.st_dev, st.st_ino),
						    (long)st.st_nlink)
				: 0;
	if (fd >= 0)
		close(fd);
	return vino;
}

/* The inode generation (a random number per inode on ext4): the renumbered inode number,
 * as an int like the kernel's. */
static void generation_read(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	uint32_t gen = (uint32_t)virtual_ino_of_fd(t, (int)syscall_arg(t, 0));
	if (remote_write(t, REMOTE(syscall_arg(t, 2)), &gen, sizeof(gen)))
		task_warn(t, "cannot write the inode generation");
}

/* A socket's cookie (a kernel-wide counter): the renumbered inode number of the socket, so
 * every descriptor of one socket gives the same cookie and no two sockets share one. */
static void cookie_read(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	uint64_t cookie = virtual_ino_of_fd(t, (int)syscall_arg(t, 0));
	if (remote_write(t, REMOTE(syscall_arg(t, 3)), &cookie, sizeof(cookie)))
		task_warn(t, "cannot write the socket cookie");
}

bool kernel_id_call(struct task *t)
{
	if (t->syscall_nr == __NR_ioctl) {
		uint32_t req = (uint32_t)syscall_arg(t, 1);
		if (req != (uint32_t)FS_IOC_GETVERSION && req != (uint32_t)EXT4_IOC_GETVERSION)
			return false;
		tracer_want_exit(t, generation_read);
		return true;
	}
	if (t->syscall_nr == __NR_getsockopt && (int)syscall_arg(t, 1) == SOL_SOCKET &&
	    (int)syscall_arg(t, 2) == SO_COOKIE) {
		tracer_want_exit(t, cookie_read);
		return true;
	}
	return false;
}
