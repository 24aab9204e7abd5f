/* connect(2) to a unix stream or seqpacket socket whose listen backlog is full sleeps in the
 * kernel until the listener accepts, which only another task can do. The listener is found
 * through sock_diag (by the inode of a path, or by an abstract name) and its backlog read
 * there: while it is full the connect parks, then it runs natively and cannot sleep.
 * While a shim intercepts, connect is the shim's (sys_external.c) as before. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>

#include "shim/shim.h"
#include "handlers/binding.h"
#include "handlers/sys_common.h"
#include "handlers/sys_files.h"
#include "handlers/sys_views.h"
#include "syscalls/syscall_table.h"

/* The listener a connect aims at: by path inode, or by abstract name. */
struct connect_target {
	bool abstract;
	uint64_t ino, dev;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t name_len;
};

static bool matches(const struct connect_target *want, struct rtattr *attr, int len)
{
	for (; RTA_OK(attr, len); attr = RTA_NEXT(attr, len)) {
		if (!want->abstract && attr->rta_type == UNIX_DIAG_VFS) {
			const struct unix_diag_vfs *v = RTA_DATA(attr);
			dev_t dev = makedev(v->udiag_vfs_dev >> 20, v->udiag_vfs_dev & 0xfffff);
			if (v->udiag_vfs_ino == want->ino && dev == want->dev)
				return true;
		}
		if (want->abstract && attr->rta_type == UNIX_DIAG_NAME &&
		    (size_t)RTA_PAYLOAD(attr) == want->name_len &&
		    memcmp(RTA_DATA(attr), want->name, want->name_len) == 0)
			return true;
	}
	return false;
}

static bool backlog_full(struct rtattr *attr, int len)
{
	for (; RTA_OK(attr, len); attr = RTA_NEXT(attr, len))
		if (attr->rta_type == UNIX_DIAG_RQLEN) {
			const struct unix_diag_rqlen *q = RTA_DATA(attr);
			return q->udiag_rqueue > q->udiag_wqueue; /* queued > max_ack_backlog */
		}
	return false;
}

/* 1: a listener matching `want` has a full backlog; 0: none does (or no listener). */
static int listener_full(const struct connect_target *want)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return 0;
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} msg = {
		.nh = { sizeof(msg), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0 },
		.req = { .sdiag_family = AF_UNIX,
			 .udiag_states = 1 << TCP_LISTEN,
			 .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_RQLEN },
	};
	int full = 0;
	bool done = false;
	if (send(nl, &msg, sizeof(msg), 0) != sizeof(msg))
		done = true;
	static char buf[32768];
	while (!done) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			struct unix_diag_msg *m = NLMSG_DATA(h);
			int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			struct rtattr *attr = (struct rtattr *)(m + 1);
			if (!full && matches(want, attr, len) && backlog_full(attr, len))
				full = 1;
		}
	}
	close(nl);
	return full;
}

static void free_target(struct task *t)
{
	struct wait_state *s = parked_state(t, PARKED_CONNECT);
	free(s->connect);
	s->connect = NULL;
}

static enum wait_result backlog_has_room(struct task *t)
{
	if (listener_full(parked_state(t, PARKED_CONNECT)->connect))
		return WAIT_NOT_READY;
	free_target(t);
	netview_connect(t);
	return WAIT_READY;
}

/* Does t's connect aim at a unix listener through a blocking stream socket? */
static bool read_target(struct task *t, struct connect_target *want)
{
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (fd < 0)
		return false;
	int domain = 0, type = 0, fl = fcntl(fd, F_GETFL);
	socklen_t len = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	len = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
	close(fd);
	if (fl < 0 || (fl & O_NONBLOCK) || domain != AF_UNIX ||
	    (type != SOCK_STREAM && type != SOCK_SEQPACKET))
		return false;
	struct sockaddr_un sun = { 0 };
	uint64_t alen = syscall_arg(t, 2);
	size_t path_off = offsetof(struct sockaddr_un, sun_path);
	if (alen <= path_off || alen > sizeof(sun) ||
	    remote_read(t, REMOTE(syscall_arg(t, 1)), &sun, alen) || sun.sun_family != AF_UNIX)
		return false;
	*want = (struct connect_target){ 0 };
	if (sun.sun_path[0] == 0) { /* abstract: the name is every byte given, with the NUL */
		want->abstract = true;
		want->name_len = alen - path_off;
		memcpy(want->name, sun.sun_path, want->name_len);
		return true;
	}
	struct stat st;
	if (stat_path(t, AT_FDCWD, syscall_arg(t, 1) + path_off, false, true, &st) ||
	    !S_ISSOCK(st.st_mode))
		return false;
	want->ino = st.st_ino;
	want->dev = st.st_dev;
	return true;
}

/* Implements connect(2). */
void sys_connect(struct task *t)
{
	if (shim_intercepts()) {
		sys_external(t);
		return;
	}
	struct connect_target want;
	if (!read_target(t, &want) || !listener_full(&want)) {
		netview_connect(t);
		return;
	}
	struct connect_target *kept = malloc(sizeof(*kept));
	if (!kept)
		abort();
	*kept = want;
	struct wait w = {
		.what = "connect to a full backlog",
		.deadline_ns = -1,
		.ready = backlog_has_room,
		.on_interrupt = free_target,
		.interruptible = true,
		.restartable = true,
	};
	parked_state_new(t, PARKED_CONNECT)->connect = kept;
	sched_park(t, &w);
}
