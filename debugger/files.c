/* gdb's file requests (vFile:): with real process ids (multiprocess), gdb reads a
 * process's /proc files through the target, /proc/PID/task/TID/maps at every stop among
 * them. Only the /proc files of the group's own tasks are served, read-only, with the
 * pids and tids the group sees translated to the host's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "vkernel/task.h"

enum {
	MAX_FILES = 16
};
static int files[MAX_FILES]; /* host fds + 1; 0: free */

static pid_t host_tid(long ns_tid)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if ((t->state == TASK_STOPPED || t->state == TASK_RUNNING) && t->ns_tid == ns_tid)
			return t->tid;
	return 0;
}

/* /proc/PID[/task/TID]/NAME of a member, as the host names it; -errno if not one. */
static int host_path(const char *path, char *out, size_t size)
{
	long pid, tid;
	int n = 0;
	if (sscanf(path, "/proc/%ld/task/%ld/%n", &pid, &tid, &n) == 2 && n > 0) {
		if (!host_tid(pid) || !host_tid(tid))
			return -ENOENT;
		snprintf(out, size, "/proc/%d/task/%d/%s", host_tid(pid), host_tid(tid), path + n);
	} else if (sscanf(path, "/proc/%ld/%n", &pid, &n) == 1 && n > 0) {
		if (!host_tid(pid))
			return -ENOENT;
		snprintf(out, size, "/proc/%d/%s", host_tid(pid), path + n);
	} else {
		return -EACCES;
	}
	return strstr(out, "..") ? -EACCES : 0;
}

static void file_open(const char *args, char *out, size_t size)
{
	char path[512], host[600];
	size_t hex_len = strcspn(args, ",");
	long n = hex_len / 2 < sizeof(path) ? hex_decode(path, args, hex_len / 2) : -1;
	path[n < 0 ? 0 : n] = 0;
	const char *flags = strchr(args, ',');
	int err = flags && strtol(flags + 1, NULL, 16) != 0 ? -EACCES : 0; /* O_RDONLY only */
	if (!err)
		err = host_path(path, host, sizeof(host));
	int slot = 0;
	while (!err && slot < MAX_FILES && files[slot])
		slot++;
	int fd = err                 ? -1
		 : slot == MAX_FILES ? (errno = EMFILE, -1)
				     : open(host, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(out, size, "F-1,%x", err ? -err : errno);
		return;
	}
	files[slot] = fd + 1;
	snprintf(out, size, "F%x", slot);
}

/* Replies F<count>;<bytes>: its length, which may hold NULs. */
static size_t file_pread(const char *args, char *out, size_t size)
{
	const char *p = args;
	uint64_t slot = hex_number(&p), count = 0, offset = 0;
	if (*p == ',')
		p++, count = hex_number(&p);
	if (*p == ',')
		p++, offset = hex_number(&p);
	if (slot >= MAX_FILES || !files[slot])
		return (size_t)snprintf(out, size, "F-1,%x", EBADF);
	if (count > size / 2)
		count = size / 2;
	static char data[PACKET_MAX];
	ssize_t got = pread(files[slot] - 1, data, count, (off_t)offset);
	if (got < 0)
		return (size_t)snprintf(out, size, "F-1,%x", errno);
	size_t n = (size_t)snprintf(out, size, "F%zx;", (size_t)got);
	memcpy(out + n, data, (size_t)got);
	return n + (size_t)got;
}

size_t files_request(const char *cmd, char *out, size_t size)
{
	if (!strncmp(cmd, "setfs:", 6))
		return (size_t)snprintf(out, size, "F0");
	if (!strncmp(cmd, "open:", 5)) {
		file_open(cmd + 5, out, size);
		return strlen(out);
	}
	if (!strncmp(cmd, "pread:", 6))
		return file_pread(cmd + 6, out, size);
	if (!strncmp(cmd, "close:", 6)) {
		const char *p = cmd + 6;
		uint64_t slot = hex_number(&p);
		if (slot >= MAX_FILES || !files[slot])
			return (size_t)snprintf(out, size, "F-1,%x", EBADF);
		close(files[slot] - 1);
		files[slot] = 0;
		return (size_t)snprintf(out, size, "F0");
	}
	out[0] = 0; /* unsupported: gdb does without */
	return 0;
}
