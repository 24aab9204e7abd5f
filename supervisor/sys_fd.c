/* Descriptor I/O that can block: reads, writes, accept, poll/select, epoll, file locks.
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
#include "supervisor/report.h"
#include "supervisor/sys_common.h"
#include "supervisor/sys_park.h"
#include "supervisor/sys_args.h"
#include "supervisor/sys_random.h"
#include "supervisor/sys_reach.h"
#include "supervisor/sys_external.h"
#include "supervisor/sys_files.h"
#include "supervisor/sys_proc.h"
#include "syscalls/syscall_table.h"

/* ---- internal files -------------------------------------------------------------------- */

static struct { uint64_t dev, ino; } *internal;
static size_t n_internal, cap_internal;

static bool internal_dev_ino(uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < n_internal; i++)
		if (internal[i].dev == dev && internal[i].ino == ino)
			return true;
	return false;
}

static bool ino_internal(uint64_t ino)
{
	for (size_t i = 0; i < n_internal; i++)
		if (internal[i].ino == ino)
			return true;
	return false;
}

/* By the descriptor's /proc link: "pipe:[ino]", "socket:[ino]", "anon_inode:[eventfd]".
 * Anonymous inodes all share one inode number, so their kind is told by name: an eventfd
 * is only written by the group and a timerfd follows the virtual clock; a signalfd may be
 * fed from outside. */
static bool link_internal(const char *link)
{
	unsigned long long ino;
	if (sscanf(link, "pipe:[%llu]", &ino) == 1 || sscanf(link, "socket:[%llu]", &ino) == 1)
		return ino_internal(ino);
	return strcmp(link, "anon_inode:[eventfd]") == 0 || strcmp(link, "anon_inode:[timerfd]") == 0;
}

static bool fd_link_internal(pid_t pid, int fd)
{
	char path[64], link[128];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return link_internal(link);
}

bool internal_file(int fd)
{
	return fd_link_internal(0, fd);
}

void internal_files_add(struct task *t, int tracee_fd)
{
	int fd = remote_dup_fd(t, tracee_fd);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && !internal_dev_ino(st.st_dev, st.st_ino)) {
		if (n_internal == cap_internal) {
			cap_internal = cap_internal ? cap_internal * 2 : 64;
			internal = realloc(internal, cap_internal * sizeof(*internal));
			if (!internal)
				abort();
		}
		internal[n_internal].dev = st.st_dev;
		internal[n_internal].ino = st.st_ino;
		n_internal++;
	}
	close(fd);
}

/* ---- readiness that depends on the reader --------------------------------------------------
 *
 * poll(2) on detrun's duplicate of a descriptor answers for detrun, and for most kinds the
 * answer is the program's too (a pipe's contents, an eventfd's count, a pidfd's process: a
 * pidfd is ready once its process died, and a member's death is reaped before the next
 * pick). A signalfd is the exception: the kernel's signalfd_poll looks at the pending
 * signals of `current`, so detrun's duplicate reports detrun's signals. Its readiness is
 * computed from the asking task's pending signals (its own and its process's, as a read by
 * that task would dequeue them) against the signalfd's mask.
 *
 * An epoll set holding a signalfd (or an epoll set holding such a set) must not be polled
 * by detrun at all: the kernel re-polls the items on the set's ready list with `current`
 * being detrun, finds the signalfd not ready and drops it from the list, so the program's
 * own epoll_wait would never see it either. Such a set is judged item by item from its
 * interest list (/proc fdinfo), each item with its registered events. */

enum fd_kind { FD_OTHER, FD_SIGNALFD, FD_EPOLL };

static enum fd_kind fd_kind(int fd)
{
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return FD_OTHER;
	link[n] = 0;
	if (strcmp(link, "anon_inode:[signalfd]") == 0)
		return FD_SIGNALFD;
	if (strcmp(link, "anon_inode:[eventpoll]") == 0)
		return FD_EPOLL;
	return FD_OTHER;
}

static FILE *open_fdinfo(int fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return fopen(path, "re");
}

static uint64_t signalfd_mask(int fd)
{
	unsigned long long mask = 0;
	return fdinfo_scan(0, fd, "sigmask: %llx", &mask) ? mask : 0;
}

static short signalfd_revents(struct task *t, int fd, short events)
{
	uint64_t pending = 0, blocked = 0;
	if (!(events & POLLIN) || read_signal_state(t, &pending, &blocked))
		return 0;
	return (pending & signalfd_mask(fd)) ? (POLLIN & events) | (POLLRDNORM & events) : 0;
}

#define EPOLL_DEPTH 5 /* the kernel's own limit on nested epoll sets */

/* One item of an epoll interest list, duplicated from the task's descriptor table. */
struct epoll_item {
	int fd;
	uint32_t events;
};

/* The inode all plain anonymous files share (signalfd, epoll, eventfd, timerfd ...): an
 * epoll item with another inode is never a signalfd or an epoll set. */
static unsigned long anon_inode_number(void)
{
	static unsigned long ino;
	if (!ino) {
		int fd = epoll_create1(EPOLL_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0)
			ino = st.st_ino;
		if (fd >= 0)
			close(fd);
	}
	return ino;
}

/* Is supervisor descriptor fd the file epoll set epfd registered as target tfd? (The number
 * was the registering task's; the program may have closed or reused it since.) */
static bool same_target(int fd, int epfd, int tfd)
{
	struct kcmp_epoll_slot slot = { (uint32_t)epfd, (uint32_t)tfd, 0 };
	pid_t self = getpid();
	long r = syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, fd, &slot);
	return r == 0 || (r < 0 && (errno == ENOSYS || errno == EPERM)); /* no kcmp: trust it */
}

/* The items of supervisor epoll descriptor `epfd` (with `anon_only`, only those on the
 * anonymous inode), duplicated from t's descriptor table; the count, or -1. */
static int epoll_items(struct task *t, int epfd, struct epoll_item **items, bool anon_only)
{
	FILE *f = open_fdinfo(epfd);
	if (!f)
		return -1;
	int n = 0, cap = 0;
	*items = NULL;
	char line[256];
	int tfd;
	unsigned events;
	unsigned long ino;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "tfd: %d events: %x data: %*x pos: %*d ino: %lx", &tfd, &events,
			   &ino) != 3)
			continue;
		if (anon_only && ino != anon_inode_number())
			continue;
		int fd = remote_dup_fd(t, tfd);
		if (fd < 0)
			continue;
		if (!same_target(fd, epfd, tfd)) {
			close(fd);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			*items = realloc(*items, (size_t)cap * sizeof(**items));
			if (!*items)
				abort();
		}
		(*items)[n++] = (struct epoll_item){ fd, events };
	}
	fclose(f);
	return n;
}

static void free_items(struct epoll_item *items, int n)
{
	for (int i = 0; i < n; i++)
		close(items[i].fd);
	free(items);
}

static bool reader_dependent_at(struct task *t, int fd, int depth)
{
	enum fd_kind kind = fd_kind(fd);
	if (kind == FD_SIGNALFD)
		return true;
	if (kind != FD_EPOLL || depth >= EPOLL_DEPTH)
		return false;
	struct epoll_item *items;
	int n = epoll_items(t, fd, &items, true);
	bool dependent = false;
	for (int i = 0; i < n && !dependent; i++)
		dependent = reader_dependent_at(t, items[i].fd, depth + 1);
	if (n >= 0)
		free_items(items, n);
	return dependent;
}

/* Is supervisor descriptor fd's readiness the asking task's own (a signalfd, or an epoll
 * set that holds one)? Then detrun must never poll it. */
static bool reader_dependent(struct task *t, int fd)
{
	return reader_dependent_at(t, fd, 0);
}

static short revents_at(struct task *t, int fd, short events, int depth);

/* An epoll set is readable when one of its items has one of its registered events (the
 * kernel always registers EPOLLERR and EPOLLHUP; a disarmed EPOLLONESHOT item has none). */
static short epoll_revents(struct task *t, int epfd, short events, int depth)
{
	if (!(events & POLLIN) || depth >= EPOLL_DEPTH)
		return 0;
	struct epoll_item *items;
	int n = epoll_items(t, epfd, &items, false);
	bool ready = false;
	for (int i = 0; i < n && !ready; i++) {
		short want = (short)(items[i].events & 0xffff);
		ready = want && (revents_at(t, items[i].fd, want, depth + 1) & want);
	}
	if (n >= 0)
		free_items(items, n);
	return ready ? POLLIN : 0;
}

static short revents_at(struct task *t, int fd, short events, int depth)
{
	enum fd_kind kind = fd_kind(fd);
	if (kind == FD_SIGNALFD)
		return signalfd_revents(t, fd, events);
	if (kind == FD_EPOLL && reader_dependent_at(t, fd, depth))
		return epoll_revents(t, fd, events, depth);
	struct pollfd p = { fd, events, 0 };
	return poll(&p, 1, 0) > 0 ? p.revents : 0;
}

/* The descriptors an epoll set (and the sets inside it) finally watches, each with its
 * registered events: what detrun may poll in its place, signalfds judged by fds_ready_for. */
static void collect_leaves(struct task *t, int epfd, int depth, struct pollfd **out, int *n,
			   int *cap)
{
	struct epoll_item *items;
	int count = epoll_items(t, epfd, &items, false);
	for (int i = 0; i < count; i++) {
		if (fd_kind(items[i].fd) == FD_EPOLL) {
			if (depth + 1 < EPOLL_DEPTH)
				collect_leaves(t, items[i].fd, depth + 1, out, n, cap);
			close(items[i].fd);
			continue;
		}
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*out = realloc(*out, (size_t)*cap * sizeof(**out));
			if (!*out)
				abort();
		}
		(*out)[(*n)++] = (struct pollfd){ items[i].fd, (short)(items[i].events & 0xffff), 0 };
	}
	free(items);
}

static struct pollfd *epoll_leaves(struct task *t, int epfd, int *n)
{
	struct pollfd *out = NULL;
	int cap = 0;
	*n = 0;
	collect_leaves(t, epfd, 0, &out, n, &cap);
	if (!out) {
		out = calloc(1, sizeof(*out));
		if (!out)
			abort();
	}
	return out;
}

/* ---- parking on descriptors -------------------------------------------------------------- */

bool fds_ready_now(struct pollfd *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		fds[i].revents = 0;
	return poll(fds, (nfds_t)nfds, 0) > 0;
}

bool fds_ready_for(struct task *t, struct pollfd *fds, int nfds)
{
	bool any = false;
	for (int i = 0; i < nfds; i++) {
		fds[i].revents = fds[i].fd < 0 ? 0 : revents_at(t, fds[i].fd, fds[i].events, 0);
		any |= fds[i].revents != 0;
	}
	return any;
}

static enum wait_result fds_ready(struct task *t)
{
	return fds_ready_for(t, t->wait.fds, t->wait.nfds) ? WAIT_READY : WAIT_NOT_READY;
}

void park_on_fds(struct task *t, const char *what, struct pollfd *fds, int nfds,
		 int64_t deadline, void (*on_timeout)(struct task *), bool restartable)
{
	struct wait w = {
		.what = what,
		.deadline_ns = deadline,
		.ready = fds_ready,
		.on_timeout = on_timeout,
		.fds = fds,
		.nfds = nfds,
		.interruptible = true,
		.restartable = restartable,
	};
	for (int i = 0; i < nfds && !w.external; i++)
		w.external = !internal_file(fds[i].fd);
	sched_park(t, &w);
}

struct fd_info {
	mode_t type;
	bool nonblock;
	dev_t rdev;
};

static bool is_random_device(const struct fd_info *info)
{
	dev_t dev = info->rdev;
	return info->type == S_IFCHR &&
	       (dev == makedev(1, 8) || dev == makedev(1, 9) || dev == makedev(10, 183) /* hwrng */);
}

/* Would a blocking call on tracee descriptor `tfd` wait for `events`? If so, returns a
 * supervisor duplicate to park on; -1 when the call can run now (ready, non-blocking,
 * a regular file, or an invalid descriptor the kernel will reject). */
static int must_wait(struct task *t, int tfd, short events, struct fd_info *info)
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
	struct pollfd p = { fd, events, 0 };
	if (info->type == S_IFREG || info->type == S_IFBLK || is_random_device(info) ||
	    info->type == S_IFDIR || info->nonblock || fds_ready_for(t, &p, 1)) {
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

static void read_proc_view(struct task *t)
{
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd >= 0) {
		proc_view_read(t, fd);
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
	return t->exit.want && t->syscall_nr == __NR_recvfrom &&
	       t->exit.rip == syscall_insn_addr(t) &&
	       syscall_arg(t, 1) == t->exit.buf + t->exit.progress;
}

/* At the exit of one piece of a call done in pieces (buffer in argument 1, length in
 * argument 2): true when another piece follows (the call is rewound for it); false when
 * the call is complete: the program's buffer and length are back and its result is the
 * total moved. */
static bool next_piece(struct task *t)
{
	int64_t n = syscall_result(t);
	if (n > 0)
		t->exit.progress += (uint64_t)n;
	if (n > 0 && t->exit.progress < t->exit.want) {
		syscall_set_arg(t, 1, t->exit.buf + t->exit.progress);
		syscall_set_arg(t, 2, t->exit.want - t->exit.progress);
		syscall_rewind(t);
		t->exit.rip = task_ip(t);
		return true;
	}
	if (t->exit.progress > 0)
		syscall_set_result(t, t->exit.progress);
	syscall_set_arg(t, 1, t->exit.buf);
	syscall_set_arg(t, 2, t->exit.want);
	t->exit.want = 0;
	t->exit.progress = 0;
	return false;
}

static void waitall_done(struct task *t)
{
	if (!next_piece(t))
		syscall_set_arg(t, 3, t->exit.waitall_flags);
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
	t->exit.want = syscall_arg(t, 2);
	t->exit.buf = syscall_arg(t, 1);
	t->exit.progress = 0;
	t->exit.rip = syscall_insn_addr(t);
	t->exit.waitall_flags = flags;
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
	if (external_fd_call(t, (int)syscall_arg(t, 0), POLLIN))
		return;
	if (dontwait(t))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), POLLIN, &info);
	if (fd >= 0) {
		park_on_one(t, fd, POLLIN, syscall_name(t->syscall_nr), receive_ready);
	} else if ((t->syscall_nr == __NR_recvfrom || t->syscall_nr == __NR_recvmsg) &&
		   !info.nonblock && info.type == S_IFSOCK) {
		fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
		if (fd >= 0) {
			fit_receive(t, fd);
			close(fd);
		}
	} else if (is_random_device(&info) && t->syscall_nr == __NR_read)
		read_random_device(t);
	else if (info.type == S_IFREG && t->syscall_nr == __NR_read)
		read_proc_view(t);
}

/* Implements preadv2(2): at the file position (offset -1) it is a readv, and on a pipe or
 * socket parks like one; at an offset it cannot sleep on another task. */
void sys_preadv2(struct task *t)
{
	if ((int64_t)syscall_arg(t, 3) != -1 || (syscall_arg(t, 5) & RWF_NOWAIT))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), POLLIN, &info);
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, syscall_name(t->syscall_nr), NULL);
}

/* Bytes a write to this pipe or stream socket takes now without sleeping, a lower bound.
 * A pipe's queued bytes may span one page more than they fill; a socket's send buffer is
 * counted half, as the kernel does for its writability test. */
static uint64_t room_for_write(int fd, mode_t type)
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
	return t->exit.want && t->syscall_nr == __NR_write && t->exit.rip == syscall_insn_addr(t) &&
	       syscall_arg(t, 1) == t->exit.buf + t->exit.progress;
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
		t->exit.want = syscall_arg(t, 2);
		t->exit.buf = syscall_arg(t, 1);
		t->exit.progress = 0;
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

/* A vectored call about to go in pieces: its number and arguments are kept to be put back
 * at the end, and progress starts at zero. */
static void start_vector_pieces(struct task *t, struct vector_write *v, uint64_t total)
{
	t->exit.vector.nr = t->syscall_nr;
	for (int i = 1; i < 6; i++)
		t->exit.vector.args[i] = syscall_arg(t, i);
	t->exit.ctx = v;
	t->exit.want = total;
	t->exit.buf = 0;
	t->exit.progress = 0;
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
static void vector_piece(const struct vector_write *v, uint64_t done, uint64_t *addr,
			 uint64_t *len)
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
	return t->exit.want && !t->exit.buf && vector_call(t->exit.vector.nr) &&
	       t->exit.ctx && t->exit.rip == syscall_insn_addr(t);
}

static void vector_done(struct task *t);

/* Sets t's call to the next piece (at most `room` bytes) and wants its exit. */
static void vector_next_piece(struct task *t, uint64_t room)
{
	uint64_t addr, len;
	vector_piece(t->exit.ctx, t->exit.progress, &addr, &len);
	bool socket = t->exit.vector.nr == __NR_sendmsg;
	syscall_set_number(t, socket ? __NR_sendto : __NR_write);
	syscall_set_arg(t, 1, addr);
	syscall_set_arg(t, 2, len < room ? len : room);
	if (socket) {
		syscall_set_arg(t, 3, t->exit.vector.args[2]); /* sendmsg's flags were argument 2 */
		syscall_set_arg(t, 4, 0);
		syscall_set_arg(t, 5, 0);
	}
	tracer_want_exit(t, vector_done);
}

static void vector_finish(struct task *t, int64_t last)
{
	syscall_set_result(t, t->exit.progress > 0 ? t->exit.progress : (uint64_t)last);
	for (int i = 1; i < 6; i++)
		syscall_set_arg(t, i, t->exit.vector.args[i]);
	free((void *)t->exit.ctx);
	t->exit.ctx = NULL;
	t->exit.want = 0;
	t->exit.progress = 0;
}

/* At a piece's exit: counts what it moved and, while the call goes on, rewinds it for the
 * next piece (true). False when the call is complete or failed. */
static bool next_vector_piece(struct task *t)
{
	int64_t n = syscall_result(t);
	if (n > 0)
		t->exit.progress += (uint64_t)n;
	if (n <= 0 || t->exit.progress >= t->exit.want)
		return false;
	uint64_t addr, len;
	vector_piece(t->exit.ctx, t->exit.progress, &addr, &len);
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
	if (type == S_IFSOCK && (getsockopt(fd, SOL_SOCKET, SO_TYPE, &stype, &len) ||
				 stype != SOCK_STREAM))
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
	start_vector_pieces(t, v, total);
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
	return t->exit.want && !t->exit.buf && t->exit.vector.nr == __NR_recvmsg && t->exit.ctx &&
	       t->syscall_nr == __NR_recvfrom && t->exit.rip == syscall_insn_addr(t);
}

static void vector_received(struct task *t)
{
	if (next_vector_piece(t))
		return;
	int64_t n = syscall_result(t);
	if (n >= 0 || t->exit.progress > 0) {
		static const int no_flags;
		remote_write(t, REMOTE(t->exit.vector.args[1] + offsetof(struct msghdr, msg_flags)),
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
	start_vector_pieces(t, v, total);
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
	fit_to_room(t, t->wait.fds[0].fd, t->parked_on.write_type);
	return WAIT_READY;
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
	if (dontwait(t))
		return;
	struct fd_info info;
	int tfd = (int)syscall_arg(t, 0);
	int fd = must_wait(t, tfd, POLLOUT, &info);
	if (fd >= 0) {
		park_on_one(t, fd, POLLOUT, syscall_name(t->syscall_nr), write_ready);
		t->parked_on.write_type = info.type;
		return;
	}
	if (info.type == S_IFREG)
		files_written(t, (int)syscall_arg(t, 0));
	if (info.nonblock || (info.type != S_IFIFO && info.type != S_IFSOCK))
		return;
	fd = remote_dup_fd(t, tfd);
	if (fd >= 0) {
		fit_to_room(t, fd, info.type);
		close(fd);
	}
}

/* Implements pwritev2(2): at the file position (offset -1) on a pipe or socket it is a
 * writev; at an offset it writes a file, which is stamped. */
void sys_pwritev2(struct task *t)
{
	if ((int64_t)syscall_arg(t, 3) == -1)
		write_when_room(t);
	else
		files_written(t, (int)syscall_arg(t, 0));
}

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
	int len_arg = t->parked_on.ends.len_arg, out = t->parked_on.ends.out;
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
	union wait_state saved_state = t->parked_on;
	t->wait = (struct wait){ .fds = fds, .nfds = count };
	t->parked_on.ends.len_arg = len_arg;
	t->parked_on.ends.out = out;
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
	t->parked_on.ends.len_arg = len_arg;
	t->parked_on.ends.out = out;
}

/* Implements splice(2). */
void sys_splice(struct task *t)
{
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
	if (external_fd_call(t, (int)syscall_arg(t, 0), 0))
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

/* Implements accept(2), accept4(2). */
void sys_accept(struct task *t)
{
	if (external_fd_call(t, (int)syscall_arg(t, 0), POLLIN))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), POLLIN, &info);
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, "accept on", NULL);
}

/* ---- poll, select, epoll ------------------------------------------------------------------ */

struct poll_args {
	uint64_t fds_addr;   /* pollfd array (poll, ppoll) */
	int nfds;
	uint64_t sets[3];    /* fd_set pointers (select, pselect6) */
	bool is_select;
	int timeout_arg;     /* argument holding the timeout */
	bool timeout_in_reg; /* milliseconds in the register itself */
	bool timeval;        /* select: struct timeval; others: struct timespec */
	int sigmask_arg;     /* -1 for none */
	bool sigmask_indirect; /* pselect6: pointer to { sigset_t *, size_t } */
};

static void describe_poll(struct task *t, struct poll_args *a)
{
	*a = (struct poll_args){ .sigmask_arg = -1 };
	switch (t->syscall_nr) {
	case __NR_poll:
		a->fds_addr = syscall_arg(t, 0), a->nfds = (int)syscall_arg(t, 1);
		a->timeout_arg = 2, a->timeout_in_reg = true;
		break;
	case __NR_ppoll:
		a->fds_addr = syscall_arg(t, 0), a->nfds = (int)syscall_arg(t, 1);
		a->timeout_arg = 2, a->sigmask_arg = 3;
		break;
	case __NR_select:
		a->is_select = true, a->nfds = (int)syscall_arg(t, 0);
		for (int i = 0; i < 3; i++)
			a->sets[i] = syscall_arg(t, 1 + i);
		a->timeout_arg = 4, a->timeval = true;
		break;
	case __NR_pselect6:
		a->is_select = true, a->nfds = (int)syscall_arg(t, 0);
		for (int i = 0; i < 3; i++)
			a->sets[i] = syscall_arg(t, 1 + i);
		a->timeout_arg = 4, a->sigmask_arg = 5, a->sigmask_indirect = true;
		break;
	}
}

/* Supervisor duplicates of the polled descriptors; NULL with *n = -1 when the call should
 * simply run (bad arguments or descriptors the kernel will report at once). */
static struct pollfd *dup_polled(struct task *t, const struct poll_args *a, int *n)
{
	if (a->nfds < 0 || a->nfds > 4096)
		return *n = -1, NULL;
	struct pollfd *fds = calloc((size_t)a->nfds + 1, sizeof(*fds));
	if (!fds)
		abort();
	int count = 0;
	bool runnable = false;
	if (a->is_select) {
		fd_set sets[3];
		for (int s = 0; s < 3; s++) {
			FD_ZERO(&sets[s]);
			size_t bytes = ((size_t)a->nfds + 7) / 8;
			if (a->sets[s] && remote_read(t, REMOTE(a->sets[s]), &sets[s], bytes))
				runnable = true;
		}
		static const short ev[3] = { POLLIN, POLLOUT, POLLPRI };
		for (int fd = 0; fd < a->nfds && !runnable; fd++) {
			short events = 0;
			for (int s = 0; s < 3; s++)
				if (a->sets[s] && FD_ISSET(fd, &sets[s]))
					events |= ev[s];
			if (!events)
				continue;
			int d = remote_dup_fd(t, fd);
			if (d < 0)
				runnable = true;
			else
				fds[count++] = (struct pollfd){ d, events, 0 };
		}
	} else {
		struct pollfd *theirs = calloc((size_t)a->nfds + 1, sizeof(*theirs));
		if (!theirs)
			abort();
		if (remote_read(t, REMOTE(a->fds_addr), theirs, (size_t)a->nfds * sizeof(*theirs)))
			runnable = true;
		for (int i = 0; i < a->nfds && !runnable; i++) {
			if (theirs[i].fd < 0)
				continue;
			int d = remote_dup_fd(t, theirs[i].fd);
			if (d < 0)
				runnable = true; /* POLLNVAL: poll returns at once */
			else
				fds[count++] = (struct pollfd){ d, theirs[i].events, 0 };
		}
		free(theirs);
	}
	if (runnable) {
		for (int i = 0; i < count; i++)
			close(fds[i].fd);
		free(fds);
		return *n = -1, NULL;
	}
	*n = count;
	return fds;
}

/* A timed-out poll runs natively with a zero timeout, so the kernel fills in the
 * results (all revents cleared) exactly as a real timeout would. The zeros go where the
 * kernel itself writes the time left back (select, pselect6, ppoll); a timeout the
 * program keeps in memory it cannot write (a const in a read-only or shared mapping),
 * which the kernel leaves alone, is replaced by zeros in scratch memory instead (the
 * argument register then points there after the call). If neither can be written the
 * call would wait its real timeout: said once, never silently. */
static void zero_timeout(struct task *t, int arg, bool in_reg, bool timeval)
{
	remote_load_regs(t);
	if (in_reg) {
		syscall_set_arg(t, arg, 0);
		return;
	}
	uint64_t addr = syscall_arg(t, arg);
	static const char zero[16];
	size_t len = timeval ? sizeof(struct timeval) : sizeof(struct timespec);
	if (!remote_write(t, REMOTE(addr), zero, len))
		return;
	uint64_t scratch = remote_scratch(t, zero, len);
	if (scratch)
		syscall_set_arg(t, arg, scratch);
	else
		task_warn(t, "cannot give this call a zero timeout (its timeout and stack are "
			     "not writable): it waits its real timeout");
}

static void poll_timed_out(struct task *t)
{
	struct poll_args a;
	describe_poll(t, &a);
	zero_timeout(t, a.timeout_arg, a.timeout_in_reg, a.timeval);
}

static int poll_deadline(struct task *t, const struct poll_args *a, int64_t *deadline)
{
	*deadline = -1;
	uint64_t v = syscall_arg(t, a->timeout_arg);
	if (a->timeout_in_reg) {
		int ms = (int)v;
		if (ms >= 0)
			*deadline = vclock_now() + (int64_t)ms * 1000000;
		return 0;
	}
	if (!v)
		return 0;
	if (a->timeval) {
		struct timeval tv;
		if (remote_read(t, REMOTE(v), &tv, sizeof(tv)))
			return -EFAULT;
		if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
			return -EINVAL;
		*deadline = vclock_now() + tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
		return 0;
	}
	return deadline_from_timespec(t, v, false, CLOCK_MONOTONIC, deadline);
}

static int poll_sigmask(struct task *t, const struct poll_args *a, struct wait *w)
{
	if (a->sigmask_arg < 0)
		return 0;
	uint64_t addr = syscall_arg(t, a->sigmask_arg), size = 8;
	if (a->sigmask_indirect && addr) {
		uint64_t pair[2];
		if (remote_read(t, REMOTE(addr), pair, sizeof(pair)))
			return -EFAULT;
		addr = pair[0], size = pair[1];
	} else if (!a->sigmask_indirect) {
		size = syscall_arg(t, a->sigmask_arg + 1);
	}
	return read_sigmask(t, addr, size, &w->sigmask, &w->sigmask_arg);
}

/* A polled epoll set that detrun must not poll is replaced by the descriptors it watches
 * (any of them ready: the set is ready), so neither a readiness check nor a wait for the
 * outside ever polls it. Takes fds. */
static struct pollfd *without_reader_dependent_sets(struct task *t, struct pollfd *fds, int *n)
{
	for (int i = 0; i < *n; i++) {
		if (fd_kind(fds[i].fd) != FD_EPOLL || !reader_dependent(t, fds[i].fd))
			continue;
		int m;
		struct pollfd *leaves = epoll_leaves(t, fds[i].fd, &m);
		struct pollfd *all = calloc((size_t)(*n + m) + 1, sizeof(*all));
		if (!all)
			abort();
		memcpy(all, fds, (size_t)i * sizeof(*all));
		memcpy(all + i, leaves, (size_t)m * sizeof(*all));
		memcpy(all + i + m, fds + i + 1, (size_t)(*n - i - 1) * sizeof(*all));
		close(fds[i].fd);
		free(fds);
		free(leaves);
		fds = all;
		*n += m - 1;
		i += m - 1;
	}
	return fds;
}

/* Implements poll(2), ppoll(2), select(2), pselect6(2). */
void sys_poll(struct task *t)
{
	struct poll_args a;
	describe_poll(t, &a);
	int64_t deadline;
	if (poll_deadline(t, &a, &deadline))
		return; /* the kernel reports the bad timeout */
	bool zero_timeout = deadline >= 0 && deadline <= vclock_now();
	if (zero_timeout && !shim_intercepts())
		return; /* never blocks */
	int n;
	struct pollfd *fds = dup_polled(t, &a, &n);
	if (!fds)
		return;
	fds = without_reader_dependent_sets(t, fds, &n);
	if (external_any(fds, n)) {
		external_wait_set(t, fds, n, deadline, poll_timed_out);
		if (t->parked && poll_sigmask(t, &a, &t->wait))
			t->wait.sigmask_arg = false;
		return;
	}
	if (zero_timeout || fds_ready_for(t, fds, n)) {
		for (int i = 0; i < n; i++)
			close(fds[i].fd);
		free(fds);
		return;
	}
	park_on_fds(t, syscall_name(t->syscall_nr), fds, n, deadline, poll_timed_out, false);
	if (poll_sigmask(t, &a, &t->wait))
		t->wait.sigmask_arg = false;
}

/* Does any descriptor in the interest list of supervisor epoll descriptor `epfd` (read
 * from its fdinfo) satisfy `test`? */
static bool epoll_watches(struct task *t, int epfd, bool (*test)(struct task *t, int tfd))
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	int tfd;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "tfd: %d", &tfd) == 1 && test(t, tfd);
	fclose(f);
	return found;
}

static bool not_internal(struct task *t, int tfd)
{
	return !fd_link_internal(t->proc->tgid, tfd);
}

static bool outside(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	bool out = fd >= 0 && external_object(fd);
	if (fd >= 0)
		close(fd);
	return out;
}

/* epoll_wait's readiness is the epoll descriptor's own POLLIN. Its interest list tells
 * whether anything outside the group can make it ready. */
static bool epoll_internal(struct task *t, int epfd)
{
	return !epoll_watches(t, epfd, not_internal);
}

static void epoll_sigmask(struct task *t)
{
	if (t->syscall_nr != __NR_epoll_wait &&
	    read_sigmask(t, syscall_arg(t, 4), syscall_arg(t, 5), &t->wait.sigmask,
			 &t->wait.sigmask_arg))
		t->wait.sigmask_arg = false;
}

static void epoll_timed_out(struct task *t);

/* While a shim intercepts, an epoll set watching something outside is outside input. A
 * set detrun must not poll is waited on through the descriptors it watches. */
static bool epoll_outside(struct task *t, int64_t deadline)
{
	if (!shim_intercepts())
		return false;
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd < 0)
		return false;
	if (!epoll_watches(t, fd, outside)) {
		close(fd);
		return false;
	}
	int n = 1;
	struct pollfd *p;
	if (reader_dependent(t, fd)) {
		p = epoll_leaves(t, fd, &n);
		close(fd);
	} else {
		p = malloc(sizeof(*p));
		if (!p)
			abort();
		*p = (struct pollfd){ fd, POLLIN, 0 };
	}
	external_wait_set(t, p, n, deadline, epoll_timed_out);
	if (t->parked)
		epoll_sigmask(t);
	return true;
}

static void epoll_timed_out(struct task *t)
{
	bool in_reg = t->syscall_nr != __NR_epoll_pwait2;
	zero_timeout(t, 3, in_reg, false);
}

/* ---- epoll sets detrun must not poll ---------------------------------------------------------
 *
 * Such a set is judged item by item, which can only approximate the kernel's ready list (an
 * edge-triggered item already reported still looks ready). So when the items say ready the
 * call runs with a zero timeout, and if it finds nothing it is rewound and parks again until
 * other tasks have run and the items say ready once more. The parked wait holds the
 * descriptors the set watches (listed afresh at each look, as other threads may change the
 * set), so an outside wait polls those instead of the set. State in t->exit.epoll
 * (supervisor/task.h); exit.rip marks the call. */

static const char epoll_retry_tag;

static bool epoll_retrying(const struct task *t)
{
	return t->exit.ctx == &epoll_retry_tag && t->exit.rip == syscall_insn_addr(t) &&
	       t->exit.epoll.nr == t->syscall_nr;
}

/* Are the items of t's epoll set ready? Refreshes the wait's descriptors. */
static bool epoll_items_say_ready(struct task *t)
{
	remote_load_regs(t);
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd < 0)
		return true; /* the call fails at once */
	int n;
	struct pollfd *leaves = epoll_leaves(t, fd, &n);
	for (int i = 0; i < t->wait.nfds; i++)
		close(t->wait.fds[i].fd);
	free(t->wait.fds);
	t->wait.fds = leaves;
	t->wait.nfds = n;
	bool ready = revents_at(t, fd, POLLIN, 0) != 0;
	close(fd);
	return ready;
}

static void epoll_retry_exit(struct task *t);

/* Runs t's epoll_wait with a zero timeout (epoll_pwait2 as epoll_pwait: same arguments but
 * the timeout, which is then in milliseconds). */
static void epoll_run_nonblocking(struct task *t, int64_t deadline)
{
	t->exit.ctx = &epoll_retry_tag;
	t->exit.epoll.nr = t->syscall_nr;
	t->exit.epoll.timeout = syscall_arg(t, 3);
	t->exit.epoll.deadline = deadline;
	t->exit.rip = syscall_insn_addr(t);
	syscall_set_arg(t, 3, 0);
	if (t->syscall_nr == __NR_epoll_pwait2) {
		syscall_set_number(t, __NR_epoll_pwait);
	}
	tracer_want_exit(t, epoll_retry_exit);
}

static enum wait_result epoll_items_ready(struct task *t)
{
	if (!epoll_items_say_ready(t))
		return WAIT_NOT_READY;
	epoll_run_nonblocking(t, t->wait.deadline_ns);
	return WAIT_READY;
}

/* Parked at the exit of a try that found nothing: look again once other tasks ran. */
static enum wait_result epoll_retry_ready(struct task *t)
{
	if (sched_now() == t->parked_on.looked_at || !epoll_items_say_ready(t))
		return WAIT_NOT_READY;
	return WAIT_READY; /* the rewound call runs again: sys_epoll_wait tries once more */
}

static void epoll_retry_timed_out(struct task *t)
{
	remote_load_regs(t);
	syscall_unrewind(t, 0); /* the rewound call returns as a timeout */
	t->exit.ctx = NULL;
}

static void epoll_retry_exit(struct task *t)
{
	syscall_set_number(t, t->exit.epoll.nr);
	syscall_set_arg(t, 3, t->exit.epoll.timeout);
	int64_t deadline = t->exit.epoll.deadline;
	if (syscall_result(t) != 0 || (deadline >= 0 && deadline <= vclock_now())) {
		t->exit.ctx = NULL;
		return;
	}
	syscall_rewind(t);
	t->exit.rip = task_ip(t);
	int n;
	int epfd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	struct pollfd *leaves = epfd >= 0 ? epoll_leaves(t, epfd, &n) : calloc(1, sizeof(*leaves));
	if (epfd < 0)
		n = 0;
	else
		close(epfd);
	park_on_fds(t, "epoll_wait", leaves, n, deadline, epoll_retry_timed_out, false);
	t->wait.ready = epoll_retry_ready;
	t->parked_on.looked_at = sched_now();
}

/* epoll_wait on a set holding a signalfd: run it non-blocking when its items are ready,
 * else park on them. Takes epfd. */
static void epoll_items_wait(struct task *t, int epfd, int64_t deadline)
{
	if (revents_at(t, epfd, POLLIN, 0)) {
		close(epfd);
		epoll_run_nonblocking(t, deadline);
		return;
	}
	int n;
	struct pollfd *leaves = epoll_leaves(t, epfd, &n);
	close(epfd);
	park_on_fds(t, "epoll_wait", leaves, n, deadline, epoll_timed_out, false);
	t->wait.ready = epoll_items_ready;
	epoll_sigmask(t);
}

/* Implements epoll_wait(2), epoll_pwait(2), epoll_pwait2(2). */
void sys_epoll_wait(struct task *t)
{
	int64_t deadline = -1;
	if (epoll_retrying(t)) {
		deadline = t->exit.epoll.deadline;
	} else if (t->syscall_nr == __NR_epoll_pwait2) {
		uint64_t tsp = syscall_arg(t, 3);
		if (tsp && deadline_from_timespec(t, tsp, false, CLOCK_MONOTONIC, &deadline))
			return;
	} else if ((int)syscall_arg(t, 3) >= 0) {
		deadline = vclock_now() + (int64_t)(int)syscall_arg(t, 3) * 1000000;
	}
	if (epoll_outside(t, deadline))
		return;
	if (deadline >= 0 && deadline <= vclock_now())
		return;
	int epfd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (epfd >= 0 && reader_dependent(t, epfd)) {
		epoll_items_wait(t, epfd, deadline);
		return;
	}
	if (epfd >= 0)
		close(epfd);
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), POLLIN, &info);
	if (fd < 0)
		return;
	struct pollfd *p = malloc(sizeof(*p));
	if (!p)
		abort();
	*p = (struct pollfd){ fd, POLLIN, 0 };
	park_on_fds(t, "epoll_wait", p, 1, deadline, epoll_timed_out, false);
	t->wait.external = !epoll_internal(t, fd);
	epoll_sigmask(t);
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
	return sched_now() != t->parked_on.epoch ? WAIT_READY : WAIT_NOT_READY;
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
