/* Descriptor I/O that can block: reads, writes, accept, poll/select, epoll, file locks.
 *
 * None of these may block in the kernel: the rest of the group is stopped and could never
 * make the descriptor ready. Each checks readiness on a supervisor-side duplicate of the
 * descriptor and parks the task until the check passes; then the call runs natively and
 * cannot block, because nothing else runs between the check and the call. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "supervisor/report.h"
#include "supervisor/sys_common.h"
#include "supervisor/syscall_table.h"

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

/* ---- parking on descriptors -------------------------------------------------------------- */

bool fds_ready_now(struct pollfd *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		fds[i].revents = 0;
	return poll(fds, (nfds_t)nfds, 0) > 0;
}

static enum wait_result fds_ready(struct task *t)
{
	return fds_ready_now(t->wait.fds, t->wait.nfds) ? WAIT_READY : WAIT_NOT_READY;
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
	    info->type == S_IFDIR || info->nonblock || fds_ready_now(&p, 1)) {
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

static int msg_flags_arg(long nr)
{
	switch (nr) {
	case __NR_recvfrom:
	case __NR_sendto:
	case __NR_recvmmsg:
	case __NR_sendmmsg:
		return 3;
	case __NR_recvmsg:
	case __NR_sendmsg:
		return 2;
	default:
		return -1;
	}
}

static bool dontwait(struct task *t)
{
	int arg = msg_flags_arg(t->syscall_nr);
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

/* Implements read(2), readv(2), recvfrom(2), recvmsg(2), recvmmsg(2). */
void sys_fd_read(struct task *t)
{
	if (external_fd_call(t, (int)syscall_arg(t, 0), POLLIN))
		return;
	if (dontwait(t))
		return;
	struct fd_info info;
	int fd = must_wait(t, (int)syscall_arg(t, 0), POLLIN, &info);
	if (fd >= 0)
		park_on_one(t, fd, POLLIN, syscall_name(t->syscall_nr), NULL);
	else if (is_random_device(&info) && t->syscall_nr == __NR_read)
		read_random_device(t);
	else if (info.type == S_IFREG && t->syscall_nr == __NR_read)
		read_proc_view(t);
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
	int64_t n = (int64_t)t->regs.rax;
	if (n > 0)
		t->exit.progress += (uint64_t)n;
	if (n > 0 && t->exit.progress < t->exit.want) {
		syscall_set_arg(t, 1, t->exit.buf + t->exit.progress);
		syscall_set_arg(t, 2, t->exit.want - t->exit.progress);
		syscall_rewind(t);
		t->exit.rip = t->regs.rip;
		return;
	}
	if (t->exit.progress > 0)
		t->regs.rax = t->exit.progress;
	syscall_set_arg(t, 1, t->exit.buf);
	syscall_set_arg(t, 2, t->exit.want);
	t->exit.want = 0;
	t->exit.progress = 0;
}

static bool continues_chunked_write(struct task *t)
{
	return t->exit.want && t->syscall_nr == __NR_write && t->exit.rip == t->regs.rip - 2 &&
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

/* Fitting happens only once the write can go, so a signal that ends the wait first finds
 * the program's own arguments untouched. */
static enum wait_result write_ready(struct task *t)
{
	if (!fds_ready_now(t->wait.fds, t->wait.nfds))
		return WAIT_NOT_READY;
	remote_load_regs(t);
	fit_write(t, t->wait.fds[0].fd, (mode_t)t->wait.arg[0]);
	return WAIT_READY;
}

/* Implements write(2), writev(2), sendto(2), sendmsg(2), sendmmsg(2). */
void sys_fd_write(struct task *t)
{
	if (external_fd_call(t, (int)syscall_arg(t, 0), 0))
		return;
	if (dontwait(t))
		return;
	struct fd_info info;
	int tfd = (int)syscall_arg(t, 0);
	int fd = must_wait(t, tfd, POLLOUT, &info);
	if (fd >= 0) {
		park_on_one(t, fd, POLLOUT, syscall_name(t->syscall_nr), write_ready);
		t->wait.arg[0] = info.type;
		return;
	}
	if (info.type == S_IFREG)
		files_written(t, (int)syscall_arg(t, 0));
	if (info.nonblock || (info.type != S_IFIFO && info.type != S_IFSOCK))
		return;
	fd = remote_dup_fd(t, tfd);
	if (fd >= 0) {
		fit_write(t, fd, info.type);
		close(fd);
	}
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
	if (!remote_write_unforced(t, REMOTE(addr), zero, len))
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
	if (external_any(fds, n)) {
		external_wait_set(t, fds, n, deadline, poll_timed_out);
		if (t->parked && poll_sigmask(t, &a, &t->wait))
			t->wait.sigmask_arg = false;
		return;
	}
	if (zero_timeout || fds_ready_now(fds, n)) {
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

/* While a shim intercepts, an epoll set watching something outside is outside input. */
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
	struct pollfd *p = malloc(sizeof(*p));
	if (!p)
		abort();
	*p = (struct pollfd){ fd, POLLIN, 0 };
	external_wait_set(t, p, 1, deadline, epoll_timed_out);
	if (t->parked)
		epoll_sigmask(t);
	return true;
}

static void epoll_timed_out(struct task *t)
{
	bool in_reg = t->syscall_nr != __NR_epoll_pwait2;
	zero_timeout(t, 3, in_reg, false);
}

/* Implements epoll_wait(2), epoll_pwait(2), epoll_pwait2(2). */
void sys_epoll_wait(struct task *t)
{
	int64_t deadline = -1;
	if (t->syscall_nr == __NR_epoll_pwait2) {
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
	if ((int64_t)t->regs.rax < 0)
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
	return sched_now() != t->wait.arg[0] ? WAIT_READY : WAIT_NOT_READY;
}

static uint64_t logical_now(void)
{
	return sched_now();
}

static bool lock_busy(struct task *t)
{
	int64_t r = (int64_t)t->regs.rax;
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
