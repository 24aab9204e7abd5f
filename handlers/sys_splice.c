/* splice, tee, vmsplice, sendfile: calls that move bytes between two descriptors and can
 * sleep on either end. Each waits (parked) until both ends are ready, and moves no more
 * than the waiting end has room for, so the call never blocks in the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/kcmp.h>
#include <linux/sockios.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "handlers/fd_wait.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_args.h"
#include "vkernel/random.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_external.h"
#include "handlers/sys_files.h"
#include "handlers/sys_proc.h"
#include "syscalls/syscall_table.h"

/* ---- splice, tee, vmsplice, sendfile ----------------------------------------------------------
 *
 * Calls that move data between descriptors sleep in the kernel while their input is empty
 * or their output full, like read and write. Each waits until all of its pipe, socket or
 * character-device ends are ready (with SPLICE_F_NONBLOCK the pipe ends never wait); then
 * it cannot sleep on a pipe (the kernel moves what fits and returns). Into a stream socket
 * it could still sleep midway, so the length is cut to the socket's room, as for write. */

struct move_end {
	int tfd;
	short events;
};

/* A supervisor duplicate of tfd when a call moving data through it could sleep there. */
static int sleeping_end(struct task *t, int tfd, bool pipes_nonblock, mode_t *type)
{
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return -1;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	struct fd_info info = { 0 };
	if (fl >= 0 && fstat(fd, &st) == 0)
		info = (struct fd_info){ st.st_mode & S_IFMT, (fl & O_NONBLOCK) != 0, st.st_rdev };
	*type = info.type;
	if (!info.type || info.type == S_IFREG || info.type == S_IFBLK || info.type == S_IFDIR ||
	    is_random_device(&info) || info.nonblock || (pipes_nonblock && info.type == S_IFIFO)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void move_length_restored(struct task *t)
{
	syscall_set_arg(t, t->exit.changed_arg.arg, t->exit.changed_arg.value);
}

/* Into a stream socket: at most its room. t->parked_on.ends says which argument is the
 * length and which of the wait's descriptors is the output end. */
static void cut_to_room(struct task *t, const struct pollfd *fds)
{
	const struct wait_state *s = parked_state(t, PARKED_ENDS);
	int len_arg = s->ends.len_arg, out = s->ends.out;
	struct stat st;
	if (len_arg < 0 || out < 0 || fstat(fds[out].fd, &st) || !S_ISSOCK(st.st_mode))
		return;
	uint64_t room = room_for_write(fds[out].fd, S_IFSOCK);
	if (syscall_arg(t, len_arg) <= room)
		return;
	t->exit.changed_arg.value = syscall_arg(t, len_arg);
	t->exit.changed_arg.arg = len_arg;
	syscall_set_arg(t, len_arg, room);
	tracer_want_exit(t, move_length_restored);
}

static enum wait_result ends_ready(struct task *t)
{
	fds_ready_for(t, t->wait.fds, t->wait.nfds);
	for (int i = 0; i < t->wait.nfds; i++)
		if (!t->wait.fds[i].revents)
			return WAIT_NOT_READY;
	remote_load_regs(t);
	cut_to_room(t, t->wait.fds);
	return WAIT_READY;
}

static void park_ends(struct task *t, int len_arg, int out)
{
	struct wait_state *s = parked_state_new(t, PARKED_ENDS);
	s->ends.len_arg = len_arg;
	s->ends.out = out;
}

/* Runs t's call once every end that could sleep is ready; parks it until then. */
static void move_when_ready(struct task *t, const struct move_end *ends, int n, int len_arg,
			    bool pipes_nonblock)
{
	struct pollfd *fds = calloc((size_t)n, sizeof(*fds));
	if (!fds)
		abort();
	int count = 0, out = -1;
	for (int i = 0; i < n; i++) {
		mode_t type;
		int fd = sleeping_end(t, ends[i].tfd, pipes_nonblock, &type);
		if (fd < 0)
			continue;
		if (ends[i].events & POLLOUT)
			out = count;
		fds[count++] = (struct pollfd){ fd, ends[i].events, 0 };
	}
	struct wait saved = t->wait;
	struct wait_state saved_state = t->parked_on;
	t->wait = (struct wait){ .fds = fds, .nfds = count };
	park_ends(t, len_arg, out);
	bool ready = ends_ready(t) == WAIT_READY;
	t->wait = saved;
	t->parked_on = saved_state;
	if (ready) {
		for (int i = 0; i < count; i++)
			close(fds[i].fd);
		free(fds);
		return;
	}
	park_on_fds(t, syscall_name(t->syscall_nr), fds, count, -1, NULL, true);
	t->wait.ready = ends_ready;
	park_ends(t, len_arg, out);
}

/* Implements splice(2). */
void sys_splice(struct task *t)
{
	if (proc_view_unspliceable(t, 0))
		return;
	struct move_end ends[2] = { { (int)syscall_arg(t, 0), POLLIN },
				    { (int)syscall_arg(t, 2), POLLOUT } };
	move_when_ready(t, ends, 2, 4, syscall_arg(t, 5) & SPLICE_F_NONBLOCK);
}

/* Implements tee(2). */
void sys_tee(struct task *t)
{
	struct move_end ends[2] = { { (int)syscall_arg(t, 0), POLLIN },
				    { (int)syscall_arg(t, 1), POLLOUT } };
	move_when_ready(t, ends, 2, -1, syscall_arg(t, 3) & SPLICE_F_NONBLOCK);
}

/* Implements vmsplice(2): into a pipe's write end, or out of its read end. */
void sys_vmsplice(struct task *t)
{
	int tfd = (int)syscall_arg(t, 0), fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return;
	int fl = fcntl(fd, F_GETFL);
	close(fd);
	struct move_end end = { tfd, (fl & O_ACCMODE) == O_WRONLY ? POLLOUT : POLLIN };
	move_when_ready(t, &end, 1, -1, syscall_arg(t, 3) & SPLICE_F_NONBLOCK);
}

/* Implements sendfile(2): the output file is stamped; pipe and socket ends wait. */
void sys_sendfile(struct task *t)
{
	if (proc_view_unspliceable(t, 1) || external_fd_call(t, (int)syscall_arg(t, 0), 0))
		return;
	files_written(t, (int)syscall_arg(t, 0));
	struct move_end ends[2] = { { (int)syscall_arg(t, 0), POLLOUT },
				    { (int)syscall_arg(t, 1), POLLIN } };
	int in = remote_dup_fd(t, ends[1].tfd);
	struct stat st;
	bool pipe_in = in >= 0 && fstat(in, &st) == 0 && S_ISFIFO(st.st_mode);
	if (in >= 0)
		close(in);
	/* the kernel refuses a pipe as sendfile's input at once: only the output waits */
	move_when_ready(t, ends, pipe_in ? 1 : 2, 3, false);
}
