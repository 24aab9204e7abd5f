/* inotify as the group sees it. A rename's IN_MOVED_FROM and IN_MOVED_TO carry a cookie
 * the kernel takes from one machine-wide counter, so its value says how many renames the
 * whole host watched before: the group sees its own sequence instead, numbered in the
 * order its reads first meet each cookie, and both events of a rename keep sharing one.
 *
 * Which events come is another matter: a watch reports what any process does to the
 * file, and a host process (an indexer, a backup, a shell) reading a file the program
 * watches is not input the group can be given again. Changes to the group's files are
 * its own state (a host process changing them is outside detrun's promise, as for any
 * file), but reads are common and harmless on the host, and an event does not say who
 * read: so watches are not given the read-side events (IN_ACCESS, IN_OPEN,
 * IN_CLOSE_NOWRITE), even those the group's own reads would cause. (Emulating inotify
 * from the group's own file operations would keep those; not done.) fanotify, whose
 * marks cover whole mounts and file systems and whose events carry host pids, is refused
 * at fanotify_init. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_views.h"

/* The most recent cookies seen, oldest overwritten first: a pair's two events come
 * together (in one read, or the next), so a window of this many renames matches every
 * pair while the table stays bounded. Overwriting goes in first-seen order, which is the
 * group's own, so the numbers stay the same on every run. */
#define COOKIE_WINDOW 4096

static struct {
	uint32_t real, virtual;
} cookies[COOKIE_WINDOW];
static uint32_t n_cookies; /* cookies numbered so far: the last virtual cookie given */

static uint32_t virtual_cookie(uint32_t real)
{
	uint32_t seen = n_cookies < COOKIE_WINDOW ? n_cookies : COOKIE_WINDOW;
	for (uint32_t i = 0; i < seen; i++)
		if (cookies[i].real == real)
			return cookies[i].virtual;
	n_cookies++;
	cookies[(n_cookies - 1) % COOKIE_WINDOW].real = real;
	cookies[(n_cookies - 1) % COOKIE_WINDOW].virtual = n_cookies;
	return n_cookies;
}

#define READ_SIDE (IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE)

static void watch_mask_restored(struct task *t)
{
	syscall_set_arg(t, 2, t->exit.changed_arg.value);
}

/* Implements inotify_add_watch(2) for a mask with read-side events (the filter lets the
 * others run): the watch is set without them. A mask of nothing else keeps IN_UNMOUNT,
 * which every watch reports anyway, so that the call succeeds as it would. */
void sys_inotify_watch(struct task *t)
{
	uint64_t mask = syscall_arg(t, 2);
	uint64_t without = mask & ~(uint64_t)READ_SIDE;
	if (!(without & IN_ALL_EVENTS))
		without |= IN_UNMOUNT;
	t->exit.changed_arg.arg = 2;
	t->exit.changed_arg.value = mask;
	syscall_set_arg(t, 2, without);
	tracer_want_exit(t, watch_mask_restored);
}

/* Renumbers the cookies of the whole events in `len` bytes at addr (the kernel never
 * splits an event across a buffer). */
static void renumber_buffer(struct task *t, uint64_t addr, size_t len)
{
	char *buf = malloc(len ? len : 1);
	if (!buf || remote_read(t, REMOTE(addr), buf, len)) {
		free(buf);
		task_warn(t, "cannot read the inotify events to renumber their cookies");
		return;
	}
	bool changed = false;
	for (size_t off = 0; off + sizeof(struct inotify_event) <= len;) {
		struct inotify_event ev;
		memcpy(&ev, buf + off, sizeof(ev));
		if (ev.cookie) {
			ev.cookie = virtual_cookie(ev.cookie);
			memcpy(buf + off + offsetof(struct inotify_event, cookie), &ev.cookie,
			       sizeof(ev.cookie));
			changed = true;
		}
		off += sizeof(ev) + ev.len;
	}
	if (changed && remote_write(t, REMOTE(addr), buf, len))
		task_warn(t, "cannot write the renumbered inotify cookies");
	free(buf);
}

void notify_view_read(struct task *t)
{
	int64_t n = syscall_result(t);
	if (n <= 0)
		return;
	if (t->syscall_nr == __NR_read) {
		renumber_buffer(t, syscall_arg(t, 1), (size_t)n);
		return;
	}
	/* readv: the kernel fills each buffer with whole events in turn. */
	struct iovec iov[64];
	uint64_t count = syscall_arg(t, 2) < 64 ? syscall_arg(t, 2) : 64;
	if (remote_read(t, REMOTE(syscall_arg(t, 1)), iov, count * sizeof(iov[0])))
		return;
	for (uint64_t i = 0; i < count && n > 0; i++) {
		size_t take = iov[i].iov_len < (uint64_t)n ? iov[i].iov_len : (size_t)n;
		renumber_buffer(t, (uint64_t)iov[i].iov_base, take);
		n -= (int64_t)take;
	}
}
