/* Readiness of the program's descriptors, judged on supervisor-side duplicates, and parking
 * on them: which descriptors are detrun's own, which kinds report the *reader's* state
 * (signalfd, and epoll sets holding one), and the waits built on them. */
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

/* ---- internal files -------------------------------------------------------------------- */

static struct {
	uint64_t dev, ino;
} * internal;
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
	return strcmp(link, "anon_inode:[eventfd]") == 0 ||
	       strcmp(link, "anon_inode:[timerfd]") == 0;
}

bool fd_link_internal(pid_t pid, int fd)
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

enum fd_kind fd_kind(int fd)
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
	if (strcmp(link, "anon_inode:inotify") == 0)
		return FD_INOTIFY;
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
bool reader_dependent(struct task *t, int fd)
{
	return reader_dependent_at(t, fd, 0);
}

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

short revents_at(struct task *t, int fd, short events, int depth)
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
		(*out)[(*n)++] = (struct pollfd){ items[i].fd, (short)(items[i].events & 0xffff),
						  0 };
	}
	free(items);
}

struct pollfd *epoll_leaves(struct task *t, int epfd, int *n)
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

void park_on_fds(struct task *t, const char *what, struct pollfd *fds, int nfds, int64_t deadline,
		 void (*on_timeout)(struct task *), bool restartable)
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
