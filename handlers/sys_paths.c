/* Paths in the traced program's memory, and where they start from in its own view of the
 * filesystem (sys_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "engine/remote.h"
#include "handlers/sys_files.h"

int tracee_path(struct task *t, uint64_t addr, char *path, size_t size)
{
	if (!addr)
		return -EFAULT;
	size_t done = 0;
	while (done < size) {
		size_t n = 256 - (size_t)((addr + done) % 256); /* never cross into a next page */
		if (n > size - done)
			n = size - done;
		if (remote_read(t, REMOTE(addr + done), path + done, n))
			return -EFAULT;
		if (memchr(path + done, 0, n))
			return 0;
		done += n;
	}
	return -ENAMETOOLONG;
}

/* The directory a tracee path starts from, opened in the tracee's own view of the
 * filesystem (its root and mount namespace, its cwd, or its dirfd). */
int tracee_path_base(struct task *t, int dirfd, const char *path)
{
	char proc[64];
	if (path[0] == '/' || dirfd == AT_FDCWD) {
		snprintf(proc, sizeof(proc), "/proc/%d/%s", t->tid,
			 path[0] == '/' ? "root" : "cwd");
		return open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	int fd = remote_dup_fd(t, dirfd);
	return fd < 0 ? -1 : fd;
}
