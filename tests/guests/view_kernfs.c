/* Opens a file of a cgroup2 file system the program mounts itself (a detached mount made
 * with fsopen/fsmount: nothing changes on the host) twice: by path relative to the mount,
 * and by a file handle (open_by_handle_at, which opens without a path, from a working
 * directory on that mount). Its figures are the
 * host's (cpu.stat counts every process of the cgroup), so under detrun both opens must
 * fail. Prints "path: opened" or "path: refused (ERRNO)", the same for "handle", or
 * "no cgroup2" where the machine cannot mount one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

static void verdict(const char *route, int fd)
{
	if (fd >= 0) {
		printf("%s: opened\n", route);
		close(fd);
	} else {
		printf("%s: refused (%s)\n", route, strerrorname_np(errno));
	}
}

int main(void)
{
	int fs = (int)syscall(SYS_fsopen, "cgroup2", FSOPEN_CLOEXEC);
	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		printf("no cgroup2\n");
		return 0;
	}
	int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	if (mnt < 0) {
		printf("no cgroup2\n");
		return 0;
	}
	verdict("path", openat(mnt, "cgroup.procs", O_RDONLY | O_CLOEXEC));
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	h->handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	if (name_to_handle_at(mnt, "cgroup.procs", h, &mount_id, 0) < 0) {
		printf("handle: none (%s)\n", strerrorname_np(errno));
		return 0;
	}
	/* the mount descriptor is an O_PATH one, which open_by_handle_at refuses (EBADF):
	 * the working directory names the mount instead */
	if (fchdir(mnt) < 0) {
		printf("handle: no working directory (%s)\n", strerrorname_np(errno));
		return 0;
	}
	verdict("handle", open_by_handle_at(AT_FDCWD, h, O_RDONLY | O_CLOEXEC));
	return 0;
}
