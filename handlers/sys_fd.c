/* Descriptor I/O that can block: reads, writes, accept, pipes, file locks.
 *
 * None of these may block in the kernel: the rest of the group is stopped and could never
 * make the descriptor ready. Each checks readiness on a supervisor-side duplicate of the
 * descriptor and parks the task until the check passes; then the call runs natively and
 * cannot block, because nothing else runs between the check and the call. */
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
#include "handlers/sys_views.h"
#include "syscalls/syscall_table.h"

bool is_random_device(const struct fd_info *info)
{
	dev_t dev = info->rdev;
	return info->type == S_IFCHR && (dev == makedev(1, 8) || dev == makedev(1, 9) ||
					 dev == makedev(10, 183) /* hwrng */);
}

int must_wait(struct task *t, int tfd, struct fd_info *info)
{
	*info = (struct fd_info){ 0 };
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return -1;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) == 0) {
		info->type = st.st_mode & S_IFMT;
		info->rdev = st.st_rdev;
	}
	info->nonblock = fl < 0 || (fl & O_NONBLOCK);
	if (info->type == S_IFREG || info->type == S_IFBLK || is_random_device(info) ||
	    info->type == S_IFDIR || info->nonblock) {
		close(fd);
		return -1;
	}
	return fd;
}

static void park_on_one(struct task *t, int fd, short events, const char *verb,
			enum wait_result (*ready)(struct task *))
{
	struct pollfd *p = malloc(sizeof(*p));
	if (!p)
		abort();
	*p = (struct pollfd){ fd, events, 0 };
	char what[64]; /* copied by sched_park */
	snprintf(what, sizeof(what), "%s fd %d", verb, (int)syscall_arg(t, 0));
	park_on_fds(t, what, p, 1, -1, NULL, true);
	if (ready)
		t->wait.ready = ready;
}

static bool dontwait(struct task *t)
{
	int arg = syscall_msg_flags_arg(syscall_lookup(t->syscall_nr));
	return arg >= 0 && (syscall_arg(t, arg) & MSG_DONTWAIT);
}

/* /dev/random, /dev/urandom and /dev/hwrng give the seeded generator's bytes, like
 * getrandom(2). */
static void read_random_device(struct task *t)
{
	syscall_emulate(t, random_to_tracee(t, syscall_arg(t, 1), syscall_arg(t, 2)));
}

static void refresh_proc_view(struct task *t)
{
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd >= 0) {
		proc_view_refresh(t, fd);
		close(fd);
	}
}

/* ---- receives that wait for all ------------------------------------------------------------
 *
 * recv with MSG_WAITALL on a stream socket sleeps in the kernel until the whole length has
 * come. It runs without the flag, in pieces, each its own event that first waits for data,
 * until the length, an end of file or an error; then the program's arguments are put back
 * and it sees one call. (MSG_PEEK with MSG_WAITALL is left alone: pieces would re-read.) */

static bool continues_waitall(struct task *t)
{
	return t->exit.kind == CALL_WAITALL && t->syscall_nr == __NR_recvfrom &&
	       t->exit.rip == syscall_insn_addr(t) &&
	       syscall_arg(t, 1) == t->exit.call.pieces.buf + t->exit.call.pieces.progress;
}

/* At the exit of one piece of a call done in pieces (buffer in argument 1, length in
 * argument 2): true when another piece follows (the call is rewound for it); false when
 * the call is complete: the program's buffer and length are back and its result is the
 * total moved. */
static bool next_piece(struct task *t)
{
	int64_t n = syscall_result(t);
	if (n > 0)
		t->exit.call.pieces.progress += (uint64_t)n;
	if (n > 0 && t->exit.call.pieces.progress < t->exit.call.pieces.want) {
		syscall_set_arg(t, 1, t->exit.call.pieces.buf + t->exit.call.pieces.progress);
		syscall_set_arg(t, 2, t->exit.call.pieces.want - t->exit.call.pieces.progress);
		syscall_rewind(t);
		t->exit.rip = task_ip(t);
		return true;
	}
	if (t->exit.call.pieces.progress > 0)
		syscall_set_result(t, t->exit.call.pieces.progress);
	syscall_set_arg(t, 1, t->exit.call.pieces.buf);
	syscall_set_arg(t, 2, t->exit.call.pieces.want);
	t->exit.kind = CALL_NONE;
	return false;
}

static void waitall_done(struct task *t)
{
	uint64_t flags = t->exit.call.pieces.flags;
	if (!next_piece(t))
		syscall_set_arg(t, 3, flags);
}

/* At the point a recvfrom may run: a MSG_WAITALL receive goes in pieces. */
static bool continues_vector_receive(struct task *t);
static void vector_received(struct task *t);
static void start_vector_receive(struct task *t, int fd);

static void fit_receive(struct task *t, int fd)
{
	if (t->syscall_nr == __NR_recvmsg) {
		start_vector_receive(t, fd);
		return;
	}
	if (t->syscall_nr != __NR_recvfrom)
		return;
	if (continues_vector_receive(t)) {
		tracer_want_exit(t, vector_received);
		return;
	}
	if (continues_waitall(t)) {
		tracer_want_exit(t, waitall_done);
		return;
	}
	uint64_t flags = syscall_arg(t, 3);
	int type = 0;
	socklen_t len = sizeof(type);
	if (!(flags & MSG_WAITALL) || (flags & MSG_PEEK) || syscall_arg(t, 2) == 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
		return;
	t->exit.kind = CALL_WAITALL;
	t->exit.call.pieces = (struct call_pieces){ .want = syscall_arg(t, 2),
						    .buf = syscall_arg(t, 1),
						    .flags = flags };
	t->exit.rip = syscall_insn_addr(t);
	syscall_set_arg(t, 3, flags & ~(uint64_t)MSG_WAITALL);
	tracer_want_exit(t, waitall_done);
}

static enum wait_result receive_ready(struct task *t)
{
	if (!fds_ready_for(t, t->wait.fds, t->wait.nfds))
		return WAIT_NOT_READY;
	remote_load_regs(t);
	fit_receive(t, t->wait.fds[0].fd);
	return WAIT_READY;
}

/* Implements read(2), readv(2), recvfrom(2), recvmsg(2), recvmmsg(2). */
void sys_fd_read(struct task *t)
{
	if (t->syscall_nr == __NR_recvmsg || t->syscall_nr == __NR_recvmmsg)
		signalfds_receive(t);
	if (external_fd_call(t, (int)syscall_arg(t, 0), POLLIN))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), &info);
	views_want_read(t, (int)syscall_arg(t, 0), info.type);
	if (dontwait(t)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, syscall_name(t->syscall_nr), receive_ready);
	else if (is_random_device(&info) && t->syscall_nr == __NR_read)
		read_random_device(t);
	else if (info.type == S_IFREG &&
		 (t->syscall_nr == __NR_read || t->syscall_nr == __NR_readv))
		refresh_proc_view(t);
}

static void nowait_restored(struct task *t)
{
	syscall_set_arg(t, 5, t->exit.changed_arg.value);
}

/* RWF_NOWAIT on a file fails with EAGAIN when its data is not in the page cache, which the
 * host's other processes and its memory decide: the call runs without the flag (it may
 * wait for the disk, never for another task) and gets the program's flags back at its
 * exit. On a pipe or socket the flag means "do not wait for data", which stays. */
static bool file_nowait_dropped(struct task *t)
{
	uint64_t flags = syscall_arg(t, 5);
	struct stat st;
	if (!(flags & RWF_NOWAIT))
		return false;
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	bool file = fd >= 0 && fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
	if (fd >= 0)
		close(fd);
	if (!file)
		return false;
	t->exit.changed_arg.arg = 5;
	t->exit.changed_arg.value = flags;
	syscall_set_arg(t, 5, flags & ~(uint64_t)RWF_NOWAIT);
	tracer_want_exit(t, nowait_restored);
	return true;
}

/* Implements preadv2(2): at the file position (offset -1) it is a readv, and on a pipe or
 * socket parks like one; at an offset it cannot sleep on another task. A rewritten /proc
 * view is answered like a read. */
void sys_preadv2(struct task *t)
{
	refresh_proc_view(t);
	if (file_nowait_dropped(t) || (int64_t)syscall_arg(t, 3) != -1 ||
	    (syscall_arg(t, 5) & RWF_NOWAIT))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), &info);
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, syscall_name(t->syscall_nr), NULL);
}

/* Bytes a write to this pipe or stream socket takes now without sleeping, a lower bound.
 * A pipe's queued bytes may span one page more than they fill; a socket's send buffer is
 * counted half, as the kernel does for its writability test. */
uint64_t room_for_write(int fd, mode_t type)
{
	int queued = 0;
	long room = PIPE_BUF;
	if (type == S_IFIFO) {
		int size = fcntl(fd, F_GETPIPE_SZ);
		ioctl(fd, FIONREAD, &queued);
		long pages = queued ? (queued + 4095) / 4096 + 1 : 0;
		room = size - pages * 4096;
	} else {
		int sndbuf = 0;
		socklen_t len = sizeof(sndbuf);
		getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len);
		ioctl(fd, SIOCOUTQ, &queued);
		room = (sndbuf - queued) / 2;
	}
	return room > PIPE_BUF ? (uint64_t)room : PIPE_BUF;
}

/* The rest of a write that did not fit goes in further chunks, each its own event, so a
 * reader in the group can drain between them — natively the writer sleeps meanwhile. */
static void chunk_done(struct task *t)
{
	next_piece(t);
}

static bool continues_chunked_write(struct task *t)
{
	return t->exit.kind == CALL_CHUNKED_WRITE && t->syscall_nr == __NR_write &&
	       t->exit.rip == syscall_insn_addr(t) &&
	       syscall_arg(t, 1) == t->exit.call.pieces.buf + t->exit.call.pieces.progress;
}

/* A write(2) larger than the room in a blocking pipe or stream socket is cut to fit. */
static void fit_write(struct task *t, int fd, mode_t type)
{
	bool continuing = continues_chunked_write(t);
	if (t->syscall_nr != __NR_write || (type != S_IFIFO && type != S_IFSOCK))
		return;
	uint64_t room = room_for_write(fd, type);
	if (!continuing && syscall_arg(t, 2) <= room)
		return;
	if (!continuing) {
		t->exit.kind = CALL_CHUNKED_WRITE;
		t->exit.call.pieces = (struct call_pieces){ .want = syscall_arg(t, 2),
							    .buf = syscall_arg(t, 1) };
	}
	if (syscall_arg(t, 2) > room)
		syscall_set_arg(t, 2, room);
	tracer_want_exit(t, chunk_done);
}

/* ---- vector writes in chunks ----------------------------------------------------------------
 *
 * writev, pwritev2 (at the file position) and sendmsg of more than a blocking pipe or stream
 * socket holds would sleep in the kernel after the first part. Such a call is run as a
 * series of plain writes (sendto for sendmsg, keeping its flags), one piece of one iovec
 * each, every piece its own event that first waits for room; the program's registers are
 * put back at the end and it sees one call that moved everything. Natively the writer
 * sleeps between the parts too, so a reader in between sees the same kind of stream. */

#define MAX_VECTOR 1024 /* UIO_MAXIOV */

struct vector_write {
	int n;
	struct iovec iov[]; /* tracee addresses */
};

static bool vector_call(long nr)
{
	return nr == __NR_writev || nr == __NR_pwritev2 || nr == __NR_sendmsg;
}

/* The iovec of t's writev, pwritev2 or sendmsg; NULL when there is nothing to cut (no or
 * too many iovecs, unreadable memory, ancillary data that must go with the first byte). */
static struct vector_write *read_vector(struct task *t)
{
	uint64_t addr = syscall_arg(t, 1), count = syscall_arg(t, 2);
	if (t->syscall_nr == __NR_sendmsg || t->syscall_nr == __NR_recvmsg) {
		struct msghdr m;
		if (remote_read(t, REMOTE(addr), &m, sizeof(m)) || m.msg_controllen || m.msg_name)
			return NULL;
		addr = (uint64_t)(uintptr_t)m.msg_iov, count = m.msg_iovlen;
	}
	if (count == 0 || count > MAX_VECTOR)
		return NULL;
	struct vector_write *v = malloc(sizeof(*v) + count * sizeof(struct iovec));
	if (!v)
		abort();
	v->n = (int)count;
	if (remote_read(t, REMOTE(addr), v->iov, count * sizeof(struct iovec))) {
		free(v);
		return NULL;
	}
	return v;
}

/* A vectored call about to go in pieces (kind CALL_VECTOR_WRITE or _RECEIVE): its number
 * and arguments are kept to be put back at the end, and progress starts at zero. */
static void start_vector_pieces(struct task *t, enum call_kind kind, struct vector_write *v,
				uint64_t total)
{
	t->exit.kind = kind;
	t->exit.call.pieces = (struct call_pieces){ .want = total, .iov = v, .nr = t->syscall_nr };
	for (int i = 1; i < 6; i++)
		t->exit.call.pieces.args[i] = syscall_arg(t, i);
}

/* Total bytes, 0 when a length is absurd (the kernel rejects the call: let it). */
static uint64_t vector_total(const struct vector_write *v)
{
	uint64_t total = 0;
	for (int i = 0; i < v->n; i++) {
		if (v->iov[i].iov_len > (uint64_t)SSIZE_MAX - total)
			return 0;
		total += v->iov[i].iov_len;
	}
	return total;
}

/* The piece that starts `done` bytes into the vector: address and length. */
static void vector_piece(const struct vector_write *v, uint64_t done, uint64_t *addr, uint64_t *len)
{
	for (int i = 0; i < v->n; i++) {
		if (done < v->iov[i].iov_len) {
			*addr = (uint64_t)(uintptr_t)v->iov[i].iov_base + done;
			*len = v->iov[i].iov_len - done;
			return;
		}
		done -= v->iov[i].iov_len;
	}
	*addr = 0, *len = 0;
}

static bool continues_vector_write(struct task *t)
{
	return t->exit.kind == CALL_VECTOR_WRITE && t->exit.rip == syscall_insn_addr(t);
}

static void vector_done(struct task *t);

/* Sets t's call to the next piece (at most `room` bytes) and wants its exit. */
static void vector_next_piece(struct task *t, uint64_t room)
{
	uint64_t addr, len;
	vector_piece(t->exit.call.pieces.iov, t->exit.call.pieces.progress, &addr, &len);
	bool socket = t->exit.call.pieces.nr == __NR_sendmsg;
	syscall_set_number(t, socket ? __NR_sendto : __NR_write);
	syscall_set_arg(t, 1, addr);
	syscall_set_arg(t, 2, len < room ? len : room);
	if (socket) {
		/* sendmsg's flags were argument 2 */
		syscall_set_arg(t, 3, t->exit.call.pieces.args[2]);
		syscall_set_arg(t, 4, 0);
		syscall_set_arg(t, 5, 0);
	}
	tracer_want_exit(t, vector_done);
}

static void vector_finish(struct task *t, int64_t last)
{
	syscall_set_result(t, t->exit.call.pieces.progress > 0 ? t->exit.call.pieces.progress
							       : (uint64_t)last);
	for (int i = 1; i < 6; i++)
		syscall_set_arg(t, i, t->exit.call.pieces.args[i]);
	free(t->exit.call.pieces.iov);
	t->exit.kind = CALL_NONE;
}

/* At a piece's exit: counts what it moved and, while the call goes on, rewinds it for the
 * next piece (true). False when the call is complete or failed. */
static bool next_vector_piece(struct task *t)
{
	int64_t n = syscall_result(t);
	if (n > 0)
		t->exit.call.pieces.progress += (uint64_t)n;
	if (n <= 0 || t->exit.call.pieces.progress >= t->exit.call.pieces.want)
		return false;
	uint64_t addr, len;
	vector_piece(t->exit.call.pieces.iov, t->exit.call.pieces.progress, &addr, &len);
	syscall_set_arg(t, 1, addr);
	syscall_set_arg(t, 2, len);
	syscall_rewind(t);
	t->exit.rip = task_ip(t);
	return true;
}

/* At a piece's exit: on to the next piece (its own event, after a wait for room), or done. */
static void vector_done(struct task *t)
{
	if (!next_vector_piece(t))
		vector_finish(t, syscall_result(t));
}

/* A fresh vector call larger than the room: cut into pieces. */
static void start_vector_write(struct task *t, int fd, mode_t type)
{
	int stype = 0;
	socklen_t len = sizeof(stype);
	if (type == S_IFSOCK &&
	    (getsockopt(fd, SOL_SOCKET, SO_TYPE, &stype, &len) || stype != SOCK_STREAM))
		return; /* a datagram goes whole or not at all */
	if (t->syscall_nr == __NR_pwritev2 &&
	    ((int64_t)syscall_arg(t, 3) != -1 || (syscall_arg(t, 5) & RWF_NOWAIT)))
		return; /* at an offset (ESPIPE on a pipe) or not waiting */
	struct vector_write *v = read_vector(t);
	if (!v)
		return;
	uint64_t total = vector_total(v), room = room_for_write(fd, type);
	if (total <= room) {
		free(v);
		return;
	}
	start_vector_pieces(t, CALL_VECTOR_WRITE, v, total);
	t->exit.rip = task_ip(t);
	vector_next_piece(t, room);
}

/* Whatever must be cut to fit the room of pipe or stream socket `fd`. */
static void fit_to_room(struct task *t, int fd, mode_t type)
{
	if (type != S_IFIFO && type != S_IFSOCK)
		return;
	if (continues_vector_write(t))
		vector_next_piece(t, room_for_write(fd, type));
	else if (vector_call(t->syscall_nr))
		start_vector_write(t, fd, type);
	else
		fit_write(t, fd, type);
}

/* recvmsg with MSG_WAITALL on a stream socket: the same pieces, as recvfrom without the
 * flag, each waiting for data; at the end msg_flags is cleared as the kernel would. */
static bool continues_vector_receive(struct task *t)
{
	return t->exit.kind == CALL_VECTOR_RECEIVE && t->syscall_nr == __NR_recvfrom &&
	       t->exit.rip == syscall_insn_addr(t);
}

static void vector_received(struct task *t)
{
	if (next_vector_piece(t))
		return;
	int64_t n = syscall_result(t);
	if (n >= 0 || t->exit.call.pieces.progress > 0) {
		static const int no_flags;
		remote_write(t,
			     REMOTE(t->exit.call.pieces.args[1] +
				    offsetof(struct msghdr, msg_flags)),
			     &no_flags, sizeof(no_flags)); /* its own msghdr, just read */
	}
	vector_finish(t, n);
}

static void start_vector_receive(struct task *t, int fd)
{
	uint64_t flags = syscall_arg(t, 2);
	int type = 0;
	socklen_t len = sizeof(type);
	if (!(flags & MSG_WAITALL) || (flags & MSG_PEEK) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
		return;
	struct vector_write *v = read_vector(t);
	uint64_t total = v ? vector_total(v) : 0;
	if (!total) {
		free(v);
		return;
	}
	start_vector_pieces(t, CALL_VECTOR_RECEIVE, v, total);
	uint64_t addr, piece;
	vector_piece(v, 0, &addr, &piece);
	syscall_set_number(t, __NR_recvfrom);
	syscall_set_arg(t, 1, addr);
	syscall_set_arg(t, 2, piece);
	syscall_set_arg(t, 3, flags & ~(uint64_t)MSG_WAITALL);
	syscall_set_arg(t, 4, 0);
	syscall_set_arg(t, 5, 0);
	tracer_want_exit(t, vector_received);
}

/* Fitting happens only once the write can go, so a signal that ends the wait first finds
 * the program's own arguments untouched. */
static enum wait_result write_ready(struct task *t)
{
	if (!fds_ready_for(t, t->wait.fds, t->wait.nfds))
		return WAIT_NOT_READY;
	remote_load_regs(t);
	fit_to_room(t, t->wait.fds[0].fd, parked_state(t, PARKED_WRITE)->write_type);
	netview_send(t);
	external_output_call(t, (int)syscall_arg(t, 0)); /* unless cut into pieces */
	return WAIT_READY;
}

/* files_written (sys_files.h) for a descriptor of the program. */
void files_written(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0)
		files_written_fd(fd, &st);
	if (fd >= 0)
		close(fd);
}

static void write_when_room(struct task *t);

/* Implements write(2), writev(2), sendto(2), sendmsg(2), sendmmsg(2). */
void sys_fd_write(struct task *t)
{
	if (external_fd_call(t, (int)syscall_arg(t, 0), 0))
		return;
	write_when_room(t);
}

static void write_when_room(struct task *t)
{
	if (dontwait(t)) {
		netview_send(t);
		return;
	}
	struct fd_info info;
	int tfd = (int)syscall_arg(t, 0);
	int fd = must_wait(t, tfd, &info);
	if (fd >= 0) {
		park_on_one(t, fd, POLLOUT, syscall_name(t->syscall_nr), write_ready);
		parked_state_new(t, PARKED_WRITE)->write_type = info.type;
	} else {
		if (info.type == S_IFREG)
			files_written(t, tfd);
		else
			netview_send(t);
		external_output_call(t, tfd);
	}
}

/* Implements pwritev2(2): at the file position (offset -1) on a pipe or socket it is a
 * writev; at an offset it writes a file, which is stamped. */
void sys_pwritev2(struct task *t)
{
	if (file_nowait_dropped(t)) { /* its exit restores the flags: the output goes unchecked */
		files_written(t, (int)syscall_arg(t, 0));
	} else if ((int64_t)syscall_arg(t, 3) == -1) {
		write_when_room(t);
	} else {
		files_written(t, (int)syscall_arg(t, 0));
		external_output_call(t, (int)syscall_arg(t, 0));
	}
}

/* Implements accept(2), accept4(2). */
void sys_accept(struct task *t)
{
	if (external_fd_call(t, (int)syscall_arg(t, 0), POLLIN))
		return;
	netview_accept(t);
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), &info);
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, "accept on", NULL);
}

/* ---- pipes and friends ----------------------------------------------------------------------- */

static void pipe_made(struct task *t)
{
	if (syscall_result(t) < 0)
		return;
	if (t->syscall_nr == __NR_eventfd || t->syscall_nr == __NR_eventfd2)
		return; /* known by its link name */
	int fds[2];
	uint64_t addr = syscall_arg(t, t->syscall_nr == __NR_socketpair ? 3 : 0);
	if (remote_read(t, REMOTE(addr), fds, sizeof(fds)))
		return;
	internal_files_add(t, fds[0]);
	internal_files_add(t, fds[1]);
}

/* Implements pipe(2), pipe2(2), socketpair(2), eventfd(2), eventfd2(2). */
void sys_pipe(struct task *t)
{
	tracer_want_exit(t, pipe_made);
}

/* ---- file locks ------------------------------------------------------------------------------- */

static enum wait_result other_tasks_ran(struct task *t)
{
	return sched_now() != parked_state(t, PARKED_EPOCH)->epoch ? WAIT_READY : WAIT_NOT_READY;
}

static uint64_t logical_now(void)
{
	return sched_now();
}

static bool lock_busy(struct task *t)
{
	int64_t r = syscall_result(t);
	return r == -EWOULDBLOCK || r == -EACCES;
}

static const struct retry flock_retry = { "flock", 1, lock_busy, other_tasks_ran, logical_now };
static const struct retry setlk_retry = { "fcntl lock", 1, lock_busy, other_tasks_ran,
					  logical_now };

/* Implements flock(2). */
void sys_flock(struct task *t)
{
	uint64_t op = syscall_arg(t, 1);
	if (op & (LOCK_NB | LOCK_UN))
		return;
	retry_nonblocking(t, &flock_retry, op | LOCK_NB);
}

/* Implements fcntl(2); only the waiting lock commands need care. */
void sys_fcntl(struct task *t)
{
	uint64_t cmd = syscall_arg(t, 1);
	if (reach_owner_refused(t))
		return;
	if (cmd == F_SETLKW)
		retry_nonblocking(t, &setlk_retry, F_SETLK);
	else if (cmd == F_OFD_SETLKW)
		retry_nonblocking(t, &setlk_retry, F_OFD_SETLK);
}
