/* poll, select and epoll_wait: the descriptors are judged on duplicates and the task is
 * parked until one is ready or its virtual deadline passes; epoll sets that must not be
 * polled from outside (they hold reader-dependent items) are judged item by item. */
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

/* ---- poll, select, epoll ------------------------------------------------------------------ */

/* What poll, ppoll, select and pselect6 wait on. The timeout and signal mask are where
 * their rows' kinds say; the descriptors are a pollfd array (argument 0, counted by 1) or
 * three fd_sets (arguments 1-3, for argument 0 descriptors). */
struct poll_args {
	uint64_t fds_addr; /* pollfd array (poll, ppoll) */
	int nfds;
	uint64_t sets[3]; /* fd_set pointers (select, pselect6) */
	bool is_select;
	struct syscall_timeout timeout;
	struct syscall_sigset sigmask;
};

static void describe_poll(struct task *t, struct poll_args *a)
{
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	*a = (struct poll_args){ .timeout = syscall_timeout(e), .sigmask = syscall_sigset(e) };
	a->is_select = e->out[0].shape == SHAPE_FDSET;
	if (a->is_select) {
		a->nfds = (int)syscall_arg(t, 0);
		for (int i = 0; i < 3; i++)
			a->sets[i] = syscall_arg(t, 1 + i);
	} else {
		a->fds_addr = syscall_arg(t, 0), a->nfds = (int)syscall_arg(t, 1);
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
/* Rewrites the call's timeout (where its row says) to zero. */
static void timeout_to_zero(struct task *t)
{
	remote_load_regs(t);
	struct syscall_timeout to = syscall_timeout(syscall_lookup(t->syscall_nr));
	int arg = to.arg;
	if (to.form == TIMEOUT_MS) {
		syscall_set_arg(t, arg, 0);
		return;
	}
	uint64_t addr = syscall_arg(t, arg);
	static const char zero[16];
	size_t len = to.form == TIMEOUT_TIMEVAL ? sizeof(struct timeval) : sizeof(struct timespec);
	if (!remote_write(t, REMOTE(addr), zero, len))
		return;
	uint64_t scratch = remote_scratch(t, zero, len);
	if (scratch)
		syscall_set_arg(t, arg, scratch);
	else
		task_warn(t, "cannot give this call a zero timeout (its timeout and stack are "
			     "not writable): it waits its real timeout");
}

static int poll_deadline(struct task *t, const struct poll_args *a, int64_t *deadline)
{
	*deadline = -1;
	uint64_t v = syscall_arg(t, a->timeout.arg);
	if (a->timeout.form == TIMEOUT_MS) {
		int ms = (int)v;
		if (ms >= 0)
			*deadline = vclock_now() + (int64_t)ms * 1000000;
		return 0;
	}
	if (!v)
		return 0;
	if (a->timeout.form == TIMEOUT_TIMEVAL) {
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

/* The mask the call installs while it waits, into t's wait (none when it fails). */
static void wait_sigmask(struct task *t)
{
	if (call_sigmask(t, &t->wait.sigmask, &t->wait.sigmask_arg))
		t->wait.sigmask_arg = false;
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
		external_wait_set(t, fds, n, deadline, timeout_to_zero);
		if (t->parked)
			wait_sigmask(t);
		return;
	}
	if (zero_timeout) {
		for (int i = 0; i < n; i++)
			close(fds[i].fd);
		free(fds);
		return;
	}
	park_on_fds(t, syscall_name(t->syscall_nr), fds, n, deadline, timeout_to_zero, false);
	wait_sigmask(t);
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
	external_wait_set(t, p, n, deadline, timeout_to_zero);
	if (t->parked)
		wait_sigmask(t);
	return true;
}

/* ---- epoll sets detrun must not poll ---------------------------------------------------------
 *
 * Such a set is judged item by item, which can only approximate the kernel's ready list (an
 * edge-triggered item already reported still looks ready). So when the items say ready the
 * call runs with a zero timeout, and if it finds nothing it is rewound and parks again until
 * other tasks have run and the items say ready once more. The parked wait holds the
 * descriptors the set watches (listed afresh at each look, as other threads may change the
 * set), so an outside wait polls those instead of the set. State in t->exit.call.epoll
 * (CALL_EPOLL_RETRY, vkernel/task.h); exit.rip marks the call. */

static bool epoll_retrying(const struct task *t)
{
	return t->exit.kind == CALL_EPOLL_RETRY && t->exit.rip == syscall_insn_addr(t) &&
	       t->exit.call.epoll.nr == t->syscall_nr;
}

/* Are the items of t's epoll set ready? Refreshes the wait's descriptors. */
static bool epoll_items_say_ready(struct task *t)
{
	remote_load_regs(t);
	int look = epoll_look(t, (int)syscall_arg(t, 0));
	if (look >= 0)
		return look;
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
	t->exit.kind = CALL_EPOLL_RETRY;
	t->exit.call.epoll.nr = t->syscall_nr;
	t->exit.call.epoll.timeout = syscall_arg(t, 3);
	t->exit.call.epoll.deadline = deadline;
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
	if (sched_now() == parked_state(t, PARKED_LOOKED_AT)->looked_at ||
	    !epoll_items_say_ready(t))
		return WAIT_NOT_READY;
	return WAIT_READY; /* the rewound call runs again: sys_epoll_wait tries once more */
}

static void epoll_retry_timed_out(struct task *t)
{
	remote_load_regs(t);
	syscall_unrewind(t, 0); /* the rewound call returns as a timeout */
	t->exit.kind = CALL_NONE;
}

static void epoll_retry_exit(struct task *t)
{
	syscall_set_number(t, t->exit.call.epoll.nr);
	syscall_set_arg(t, 3, t->exit.call.epoll.timeout);
	int64_t deadline = t->exit.call.epoll.deadline;
	if (syscall_result(t) != 0 || (deadline >= 0 && deadline <= vclock_now())) {
		t->exit.kind = CALL_NONE;
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
	parked_state_new(t, PARKED_LOOKED_AT)->looked_at = sched_now();
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
	park_on_fds(t, "epoll_wait", leaves, n, deadline, timeout_to_zero, false);
	t->wait.ready = epoll_items_ready;
	wait_sigmask(t);
}

/* Implements epoll_wait(2), epoll_pwait(2), epoll_pwait2(2). */
void sys_epoll_wait(struct task *t)
{
	int64_t deadline = -1;
	if (epoll_retrying(t)) {
		deadline = t->exit.call.epoll.deadline;
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
	int fd = must_wait(t, (int)syscall_arg(t, 0), &info);
	if (fd < 0)
		return;
	struct pollfd *p = malloc(sizeof(*p));
	if (!p)
		abort();
	*p = (struct pollfd){ fd, POLLIN, 0 };
	park_on_fds(t, "epoll_wait", p, 1, deadline, timeout_to_zero, false);
	t->wait.external = !epoll_internal(t, fd);
	wait_sigmask(t);
}
