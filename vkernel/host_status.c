#include "vkernel/host_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_status_read(pid_t tid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? 0 : (err ? err : -EIO);
}

uint64_t proc_status_field(const char *status, const char *field, int base, uint64_t missing)
{
	const char *p = strstr(status, field);
	return p ? strtoull(p + strlen(field), NULL, base) : missing;
}

int proc_signal_state(pid_t tid, uint64_t *pending, uint64_t *blocked)
{
	char buf[4096];
	int err = proc_status_read(tid, buf, sizeof(buf));
	if (err)
		return err;
	*pending = proc_status_field(buf, "\nSigPnd:", 16, 0) |
		   proc_status_field(buf, "\nShdPnd:", 16, 0);
	*blocked = proc_status_field(buf, "\nSigBlk:", 16, 0);
	return 0;
}
