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
#include <dirent.h>
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
#include "handlers/binding.h"
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

/* The devices of the filesystems whose files a /proc link names by kind and inode (see
 * link_internal): every pipe ("pipe:[ino]"), every socket ("socket:[ino]") and every
 * anonymous file ("anon_inode:[eventfd]") is on one of them, and nothing else is. Knowing
 * them spares a readlink (a path walk through /proc) per call: fstat of the descriptor
 * tells its kind, and only an anonymous file needs its name. */
struct name_filesystems {
	dev_t pipes, sockets, anon;
};

static dev_t fd_dev(int fd)
{
	struct stat st;
	dev_t dev = fd >= 0 && fstat(fd, &st) == 0 ? st.st_dev : (dev_t)-1;
	if (fd >= 0)
		close(fd);
	return dev;
}

static const struct name_filesystems *name_filesystems(void)
{
	static struct name_filesystems fs;
	static bool known;
	if (!known) {
		int p[2] = { -1, -1 };
		if (pipe2(p, O_CLOEXEC) == 0)
			close(p[1]);
		fs.pipes = fd_dev(p[0]);
		fs.sockets = fd_dev(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		fs.anon = fd_dev(epoll_create1(EPOLL_CLOEXEC));
		known = true;
	}
	return &fs;
}

bool internal_file(int fd)
{
	const struct name_filesystems *fs = name_filesystems();
	struct stat st;
	if (fstat(fd, &st) < 0)
		return false;
	if (st.st_dev == fs->pipes || st.st_dev == fs->sockets)
		return ino_internal(st.st_ino);
	return st.st_dev == fs->anon && fd_link_internal(0, fd); /* else a file with a path */
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
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_dev != name_filesystems()->anon)
		return FD_OTHER; /* every kind named here is an anonymous file */
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

/* ---- whether the group can hold a signalfd at all ---------------------------------------------
 *
 * A signalfd comes into the group only as a task makes one (signalfd, signalfd4: rows that
 * stop for this alone), inherited from detrun's own descriptors at the start, or in an
 * SCM_RIGHTS message from outside (recvmsg with room for control data on a socket that is
 * not one of the group's own socketpairs, and any recvmmsg); every other way a descriptor
 * moves (fork, dup, pidfd_getfd, a seccomp notifier's ADDFD, a message between members)
 * copies one the group holds already. (Not seen: an outsider that was sent one end of the
 * group's socketpair and sends a signalfd back through it.) Until one of those happened
 * no epoll set of the group can hold a signalfd, at any depth, and judging a set needs no
 * look at its interest list: a read of /proc fdinfo and a duplicate of each anonymous
 * item at every epoll_wait and wake-up. */
static bool signalfds_possible;

void signalfds_at_start(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && !signalfds_possible && (e = readdir(d)))
		if (e->d_name[0] != '.' && fd_kind(atoi(e->d_name)) == FD_SIGNALFD)
			signalfds_possible = true;
	if (d)
		closedir(d);
	else
		signalfds_possible = true; /* cannot tell */
}

/* Implements signalfd(2), signalfd4(2): noted, then run natively. */
void sys_signalfd(struct task *t)
{
	(void)t;
	signalfds_possible = true;
}

void signalfds_receive(struct task *t)
{
	if (signalfds_possible)
		return;
	uint64_t controllen = 1;
	if (t->syscall_nr == __NR_recvmsg &&
	    remote_read(t, REMOTE(syscall_arg(t, 1) + offsetof(struct msghdr, msg_controllen)),
			&controllen, sizeof(controllen)))
		controllen = 1; /* unreadable: the kernel fails the call, but assume the worst */
	if (!controllen)        /* recvmmsg: always looked at */
		return;
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd < 0 || !internal_file(fd)) /* from outside (nginx's channels are its own) */
		signalfds_possible = true;
	if (fd >= 0)
		close(fd);
}

static bool reader_dependent_at(struct task *t, int fd, int depth)
{
	if (!signalfds_possible)
		return false;
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

/* ---- looking again at an epoll set that holds a signalfd ------------------------------------
 *
 * A task parked on such a set is looked at before every pick while it waits (PostgreSQL's
 * processes wait so between two statements), and listing the set from scratch costs some
 * fifty calls of detrun's: its fdinfo read three times, each item duplicated from the task
 * and classified again. The memo keeps what a listing found: the set's duplicate, its
 * fdinfo (kept open, read again from offset 0, which makes procfs write it anew), and each
 * item's duplicate in the wait's fds. The program can change the set between two looks
 * (another thread's epoll_ctl, close or dup2 run without stopping), so every look first
 * checks that the memo still says what a new listing would: the task's descriptor is the
 * same set (kcmp), the interest list reads the same text, and each item's registered file
 * is still the memo's and still at its number in the task. Any difference and the set is
 * listed again. The answer is the one a full listing gives, so the schedule is too. */

struct epoll_memo_item {
	int tfd;  /* the item's number in the task (and in the set's interest list) */
	int info; /* a signalfd's fdinfo (its mask), -1 for other kinds */
};

struct epoll_memo {
	int tfd;  /* the task's number for the set */
	int epfd; /* detrun's duplicate of the set */
	int info; /* /proc/self/fdinfo/<epfd> */
	size_t len;
	char text[4096]; /* the interest list as the listing read it */
	int n;           /* items, in the order of the wait's fds */
	struct epoll_memo_item item[];
};

static void epoll_memo_drop(void *memo)
{
	struct epoll_memo *m = memo;
	for (int i = 0; i < m->n; i++)
		if (m->item[i].info >= 0)
			close(m->item[i].info);
	if (m->info >= 0)
		close(m->info);
	if (m->epfd >= 0)
		close(m->epfd);
	free(m);
}

/* The mark of a wait whose set no memo fits (listed in full at each look). */
static void epoll_memo_none(void *memo)
{
}

static int open_own_fdinfo(int fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The fdinfo text behind `info` now, read from its start; its length, or -1 when it does
 * not fit `size` (then no memo is kept). */
static ssize_t reread(int info, char *buf, size_t size)
{
	ssize_t n = pread(info, buf, size, 0);
	return n >= 0 && (size_t)n < size ? n : -1;
}

static bool same_file_in_task(const struct task *t, int fd, int tfd)
{
	return syscall(SYS_kcmp, getpid(), t->tid, KCMP_FILE, fd, tfd) == 0;
}

/* Does m still describe the set the task has at m->tfd? */
static bool epoll_memo_holds(struct task *t, const struct epoll_memo *m)
{
	char now[sizeof(m->text)];
	if (!same_file_in_task(t, m->epfd, m->tfd) ||
	    reread(m->info, now, sizeof(now)) != (ssize_t)m->len || memcmp(now, m->text, m->len))
		return false;
	for (int i = 0; i < m->n; i++) {
		int fd = t->wait.fds[i].fd;
		if (!same_target(fd, m->epfd, m->item[i].tfd) ||
		    !same_file_in_task(t, fd, m->item[i].tfd))
			return false;
	}
	return true;
}

/* Is the set ready for t, item by item as epoll_revents judges it: a signalfd by t's
 * pending signals against its mask (read again: signalfd(2) changes it without a stop),
 * the others all in one poll. */
static bool epoll_memo_ready(struct task *t, const struct epoll_memo *m)
{
	uint64_t pending = 0, blocked = 0;
	bool signals_read = false;
	struct pollfd polled[m->n > 0 ? m->n : 1];
	int k = 0;
	for (int i = 0; i < m->n; i++) {
		short want = t->wait.fds[i].events;
		if (m->item[i].info < 0) {
			polled[k++] = (struct pollfd){ t->wait.fds[i].fd, want, 0 };
			continue;
		}
		if (!(want & POLLIN))
			continue;
		if (!signals_read && read_signal_state(t, &pending, &blocked))
			continue;
		signals_read = true;
		char text[512];
		unsigned long long mask = 0;
		const char *at;
		ssize_t len = reread(m->item[i].info, text, sizeof(text));
		if (len < 0)
			continue;
		text[len] = 0;
		if ((at = strstr(text, "sigmask:")) && sscanf(at, "sigmask: %llx", &mask) == 1 &&
		    (pending & mask))
			return true;
	}
	if (k == 0 || poll(polled, (nfds_t)k, 0) <= 0)
		return false;
	for (int i = 0; i < k; i++)
		if (polled[i].revents & polled[i].events)
			return true;
	return false;
}

/* Lists the set afresh into a new memo: the items become the wait's fds. NULL (the wait
 * untouched) where a memo does not fit: a nested set, an item the task cannot show, no
 * signalfd among the items, an interest list too long to keep. */
static struct epoll_memo *epoll_memo_make(struct task *t, int tfd)
{
	struct epoll_memo *m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	m->tfd = tfd;
	m->epfd = remote_dup_fd(t, tfd);
	m->info = m->epfd >= 0 ? open_own_fdinfo(m->epfd) : -1;
	ssize_t len = m->info >= 0 ? reread(m->info, m->text, sizeof(m->text)) : -1;
	struct pollfd *fds = NULL;
	bool fits = len >= 0, signalfd = false;
	m->len = fits ? (size_t)len : 0;
	for (const char *line = m->text; fits && line < m->text + m->len;) {
		const char *end = memchr(line, '\n', (size_t)(m->text + m->len - line));
		int item_tfd;
		unsigned events;
		if (sscanf(line, "tfd: %d events: %x", &item_tfd, &events) == 2) {
			int fd = remote_dup_fd(t, item_tfd);
			/* An item the task cannot show (closed, or its number reused) is left
			 * out of a listing; a memo would not see it come back. */
			bool shown = fd >= 0 && same_target(fd, m->epfd, item_tfd);
			enum fd_kind kind = shown ? fd_kind(fd) : FD_OTHER;
			fits = shown && kind != FD_EPOLL;
			if (fits) {
				m = realloc(m,
					    sizeof(*m) + (size_t)(m->n + 1) * sizeof(m->item[0]));
				fds = realloc(fds, (size_t)(m->n + 1) * sizeof(*fds));
				if (!m || !fds)
					abort();
				int info = kind == FD_SIGNALFD ? open_own_fdinfo(fd) : -1;
				signalfd |= info >= 0;
				m->item[m->n] = (struct epoll_memo_item){ item_tfd, info };
				fds[m->n++] = (struct pollfd){ fd, (short)(events & 0xffff), 0 };
			} else if (fd >= 0) {
				close(fd);
			}
		}
		line = end ? end + 1 : m->text + m->len;
	}
	if (!fits || !signalfd) {
		for (int i = 0; i < m->n; i++)
			close(fds[i].fd);
		free(fds);
		epoll_memo_drop(m);
		return NULL;
	}
	for (int i = 0; i < t->wait.nfds; i++)
		close(t->wait.fds[i].fd);
	free(t->wait.fds);
	t->wait.fds = fds;
	t->wait.nfds = m->n;
	return m;
}

int epoll_look(struct task *t, int tfd)
{
	if (t->wait.drop_memo && t->wait.drop_memo != epoll_memo_drop)
		return -1;
	struct epoll_memo *m = t->wait.memo;
	if (m && (m->tfd != tfd || !epoll_memo_holds(t, m))) {
		epoll_memo_drop(m);
		t->wait.memo = m = NULL;
	}
	if (!m) {
		m = epoll_memo_make(t, tfd);
		t->wait.memo = m;
		t->wait.drop_memo = m ? epoll_memo_drop : epoll_memo_none;
	}
	return m ? epoll_memo_ready(t, m) : -1;
}
