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
	int fd; /* a supervisor duplicate of tfd taken already (the call's to close), or -1 */
	const struct stat *st; /* fd's fstat, when taken already */
};

/* Does a call moving data through supervisor duplicate fd (which it closes if not) sleep
 * there? Then fd is returned to wait on; -1 when it cannot sleep. */
static int sleeping_end_fd(int fd, const struct stat *known, bool pipes_nonblock, mode_t *type)
{
	struct stat st;
	struct fd_info info = { 0 };
	if (known || fstat(fd, &st) == 0)
		info = (struct fd_info){ (known ? known : &st)->st_mode & S_IFMT, false,
					 (known ? known : &st)->st_rdev };
	*type = info.type;
	if (!info.type || info.type == S_IFREG || info.type == S_IFBLK || info.type == S_IFDIR ||
	    is_random_device(&info) || (pipes_nonblock && info.type == S_IFIFO)) {
		close(fd);
		return -1;
	}
	int fl = fcntl(fd, F_GETFL); /* the open file's flags: only an end that may sleep */
	if (fl < 0 || (fl & O_NONBLOCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A supervisor duplicate of tfd when a call moving data through it could sleep there. */
static int sleeping_end(struct task *t, const struct move_end *end, bool pipes_nonblock,
			mode_t *type)
{
	int fd = end->fd >= 0 ? end->fd : remote_dup_fd(t, end->tfd);
	*type = 0;
	return fd < 0 ? -1
		      : sleeping_end_fd(fd, end->fd >= 0 ? end->st : NULL, pipes_nonblock, type);
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
		int fd = sleeping_end(t, &ends[i], pipes_nonblock, &type);
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
	struct move_end ends[2] = { { (int)syscall_arg(t, 0), POLLIN, -1, NULL },
				    { (int)syscall_arg(t, 2), POLLOUT, -1, NULL } };
	move_when_ready(t, ends, 2, 4, syscall_arg(t, 5) & SPLICE_F_NONBLOCK);
}

/* Implements tee(2). */
void sys_tee(struct task *t)
{
	struct move_end ends[2] = { { (int)syscall_arg(t, 0), POLLIN, -1, NULL },
				    { (int)syscall_arg(t, 1), POLLOUT, -1, NULL } };
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
	struct move_end end = { tfd, (fl & O_ACCMODE) == O_WRONLY ? POLLOUT : POLLIN, -1, NULL };
	move_when_ready(t, &end, 1, -1, syscall_arg(t, 3) & SPLICE_F_NONBLOCK);
}

/* Implements sendfile(2): the output file is stamped; pipe and socket ends wait. Each end
 * is duplicated once, for every look at it. */
void sys_sendfile(struct task *t)
{
	int out_tfd = (int)syscall_arg(t, 0), in_tfd = (int)syscall_arg(t, 1);
	int in = remote_dup_fd(t, in_tfd);
	if ((in >= 0 && proc_view_fd_unspliceable(t, in)) || external_fd_call(t, out_tfd, 0)) {
		if (in >= 0)
			close(in);
		return;
	}
	int out = remote_dup_fd(t, out_tfd);
	struct stat out_st, in_st;
	bool out_known = out >= 0 && fstat(out, &out_st) == 0;
	if (out_known)
		files_written_fd(out, &out_st);
	bool in_known = in >= 0 && fstat(in, &in_st) == 0;
	bool pipe_in = in_known && S_ISFIFO(in_st.st_mode);
	if (pipe_in) { /* the kernel refuses a pipe as sendfile's input at once */
		close(in);
		in = -1;
	}
	struct move_end ends[2] = { { out_tfd, POLLOUT, out, out_known ? &out_st : NULL },
				    { in_tfd, POLLIN, in, in_known ? &in_st : NULL } };
	move_when_ready(t, ends, pipe_in ? 1 : 2, 3, false);
}
