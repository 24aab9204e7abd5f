/* Sockets as the group sees them, in plain runs (while a shim intercepts, every socket is
 * outside and these calls are the shim's: recorded and replayed as they came).
 *
 * Ports and autobind names. detrun does not give the group a network namespace of its own
 * (it talks to the outside through the host's), so the host's kernel picks a socket's
 * port when the program binds port 0 or connects without binding, and an abstract name
 * ("\0" and five hex digits) when a unix socket autobinds; picking them itself instead
 * would not help: a port detrun chose may be taken on the host (by another group, or by
 * the last run's connection in TIME_WAIT), and the retry would show. So the real ports and
 * names stay the kernel's, and the program sees virtual ones: the first port the group
 * meets is the low end of the kernel's ephemeral range, the next one above, and so on;
 * autobind names are "\0" and 00001, 00002 ... Every call that shows an address
 * translates real to virtual (getsockname, getpeername, accept, recvfrom, recvmsg,
 * recvmmsg), every call that takes one translates virtual to real (bind, connect, sendto,
 * sendmsg, sendmmsg), so members reach each other by the numbers they see. A port the
 * program names itself (bind 8080, connect to a server's port) is real and shown as it
 * is; virtual numbers skip it.
 * An outside peer must not be told a virtual port: a server meant for the outside binds
 * an explicit port (README, Limits).
 *
 * Time and CPU. Receive timestamps (SO_TIMESTAMP, SO_TIMESTAMPNS, SO_TIMESTAMPING control
 * messages and SIOCGSTAMP, SIOCGSTAMPNS) are the virtual clock at the receive, and so
 * is the time a recvmmsg leaves of its timeout; SO_INCOMING_CPU is CPU 0 as getcpu says; TCP_INFO's timings (round-trip times,
 * timeouts, times since the last packet, rates) are zero. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <linux/time_types.h>

#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "handlers/binding.h"
#include "handlers/fd_wait.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_external.h"
#include "handlers/sys_views.h"
#include "syscalls/syscall_table.h"

/* ---- the maps ------------------------------------------------------------------------------ */

static uint16_t port_virtual[65536], port_real[65536]; /* 0: none */
static uint8_t port_named[65536 / 8];                  /* ports the program named itself */
static unsigned port_low = 32768, port_high = 60999, next_port;
static bool ports_read;

static bool named(unsigned p)
{
	return port_named[p / 8] & (1u << (p % 8));
}

static void read_port_range(void)
{
	if (ports_read)
		return;
	ports_read = true;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	unsigned lo, hi;
	if (f && fscanf(f, "%u %u", &lo, &hi) == 2 && lo > 0 && lo <= hi && hi < 65536)
		port_low = lo, port_high = hi;
	if (f)
		fclose(f);
	next_port = port_low;
}

static bool ephemeral(unsigned p)
{
	read_port_range();
	return p >= port_low && p <= port_high;
}

/* The port the program sees for real port p. */
static unsigned shown_port(unsigned p)
{
	if (!ephemeral(p) || named(p))
		return p;
	if (!port_virtual[p]) {
		while (next_port <= port_high && (named(next_port) || port_real[next_port]))
			next_port++;
		if (next_port > port_high)
			return p; /* every virtual port given: the real ones from here */
		port_virtual[p] = (uint16_t)next_port;
		port_real[next_port++] = (uint16_t)p;
	}
	return port_virtual[p];
}

/* The real port for port p the program gave. */
static unsigned real_port(unsigned p)
{
	if (!p || !ephemeral(p))
		return p;
	if (port_real[p])
		return port_real[p];
	port_named[p / 8] |= (uint8_t)(1u << (p % 8));
	return p;
}

#define AUTOBIND_LEN 5 /* hex digits of an autobind name */

static struct name_pair {
	char real[AUTOBIND_LEN], virtual[AUTOBIND_LEN];
} * names;
static size_t n_names, cap_names;

static struct name_pair *add_name(const char *real, const char *virtual)
{
	if (n_names == cap_names) {
		cap_names = cap_names ? 2 * cap_names : 16;
		names = realloc(names, cap_names * sizeof(*names));
		if (!names)
			abort();
	}
	struct name_pair *p = &names[n_names++];
	memcpy(p->real, real, AUTOBIND_LEN);
	memcpy(p->virtual, virtual, AUTOBIND_LEN);
	return p;
}

static struct name_pair *by_virtual(const char *shown)
{
	for (size_t i = 0; i < n_names; i++)
		if (memcmp(names[i].virtual, shown, AUTOBIND_LEN) == 0)
			return &names[i];
	return NULL;
}

/* The name the program sees for the real name the kernel picked: the next of 00001,
 * 00002 ... that no socket of the group shows already. */
static const char *shown_name(const char *real)
{
	static unsigned next_name;
	for (size_t i = 0; i < n_names; i++)
		if (memcmp(names[i].real, real, AUTOBIND_LEN) == 0)
			return names[i].virtual;
	char v[AUTOBIND_LEN + 1];
	do
		snprintf(v, sizeof(v), "%05x", ++next_name & 0xfffff);
	while (by_virtual(v) && next_name < 0xfffff);
	return add_name(real, v)->virtual;
}

/* The real name for a name the program gave: one it was shown, or else a name of its own
 * choosing (an explicit bind, a peer's name from elsewhere), remembered as itself so that
 * no autobind name is shown as it. */
static const char *real_name(const char *shown)
{
	struct name_pair *p = by_virtual(shown);
	return p ? p->real : add_name(shown, shown)->real;
}

/* ---- addresses ----------------------------------------------------------------------------- */

/* Where the translated part of an address of `len` bytes lies: an inet address's port, an
 * autobind address's name; false for any other address. */
static bool translatable(const struct sockaddr_storage *a, size_t len, size_t *off, size_t *size)
{
	if (len >= offsetof(struct sockaddr_in, sin_port) + 2 &&
	    (a->ss_family == AF_INET || a->ss_family == AF_INET6)) {
		_Static_assert(offsetof(struct sockaddr_in, sin_port) ==
				       offsetof(struct sockaddr_in6, sin6_port),
			       "both ports at one place");
		*off = offsetof(struct sockaddr_in, sin_port), *size = 2;
		return true;
	}
	const struct sockaddr_un *u = (const struct sockaddr_un *)a;
	size_t path = offsetof(struct sockaddr_un, sun_path);
	if (a->ss_family != AF_UNIX || len != path + 1 + AUTOBIND_LEN || u->sun_path[0])
		return false;
	for (int i = 1; i <= AUTOBIND_LEN; i++)
		if (!strchr("0123456789abcdef", u->sun_path[i]) || !u->sun_path[i])
			return false;
	*off = path + 1, *size = AUTOBIND_LEN;
	return true;
}

/* Rewrites address a (len bytes) from real to virtual (to_program) or back: true when it
 * changed. */
static bool translate(struct sockaddr_storage *a, size_t len, bool to_program)
{
	size_t off, size;
	if (!translatable(a, len, &off, &size))
		return false;
	char *at = (char *)a + off;
	if (size == 2) {
		uint16_t be;
		memcpy(&be, at, 2);
		unsigned p = ntohs(be);
		unsigned now = to_program ? shown_port(p) : real_port(p);
		be = htons((uint16_t)now);
		memcpy(at, &be, 2);
		return now != p;
	}
	const char *now = to_program ? shown_name(at) : real_name(at);
	if (!now || memcmp(now, at, AUTOBIND_LEN) == 0)
		return false;
	memcpy(at, now, AUTOBIND_LEN);
	return true;
}

/* The address a call left at addr (len bytes as the kernel says, room the program gave),
 * shown virtual. */
static void show_address(struct task *t, uint64_t addr, uint32_t len, uint32_t room)
{
	struct sockaddr_storage a;
	size_t n = len < room ? len : room;
	if (n > sizeof(a))
		n = sizeof(a);
	size_t off, size;
	if (!addr || !n || remote_read(t, REMOTE(addr), &a, n) ||
	    !translatable(&a, len, &off, &size) || off + size > n || !translate(&a, len, true))
		return;
	if (remote_write(t, REMOTE(addr + off), (char *)&a + off, size))
		task_warn(t, "cannot write the address %s returned", syscall_name(t->syscall_nr));
}

static void destination_restored(struct task *t)
{
	syscall_set_arg(t, t->exit.view_arg.arg, t->exit.view_arg.value);
}

/* The address at argument a (its length at argument l) the call is about to take, given
 * to the kernel real: a translated copy in scratch memory, the program's own argument
 * back at the exit. Called only where the call runs next (not before it parks: a signal
 * handler run meanwhile would reuse the scratch memory). */
static void give_real_address(struct task *t, int a, int l)
{
	uint64_t addr = syscall_arg(t, a), len = syscall_arg(t, l);
	struct sockaddr_storage s;
	if (!addr || len < 4 || len > sizeof(s) || remote_read(t, REMOTE(addr), &s, len) ||
	    !translate(&s, len, false))
		return;
	uint64_t copy = remote_scratch(t, &s, len);
	if (!copy) {
		task_warn(t, "no room on the stack for the real address %s takes",
			  syscall_name(t->syscall_nr));
		return;
	}
	t->exit.view_arg.arg = a;
	t->exit.view_arg.value = addr;
	syscall_set_arg(t, a, copy);
	tracer_want_view(t, destination_restored);
}

/* sendmsg's destination: a copy of its msghdr naming a translated copy of the address,
 * both in scratch memory (placed twice: the second time with the copy's address, which
 * depends only on the stack pointer and the size). */
static void give_real_msg_address(struct task *t)
{
	struct {
		struct sockaddr_storage a;
		struct msghdr m;
	} blob;
	struct msghdr *m = &blob.m;
	if (remote_read(t, REMOTE(syscall_arg(t, 1)), m, sizeof(*m)) || !m->msg_name ||
	    m->msg_namelen < 4 || m->msg_namelen > sizeof(blob.a) ||
	    remote_read(t, REMOTE((uint64_t)m->msg_name), &blob.a, m->msg_namelen) ||
	    !translate(&blob.a, m->msg_namelen, false))
		return;
	uint64_t at = remote_scratch(t, &blob, sizeof(blob));
	m->msg_name = (void *)at;
	if (!at || remote_scratch(t, &blob, sizeof(blob)) != at) {
		task_warn(t, "no room on the stack for the real address sendmsg takes");
		return;
	}
	t->exit.view_arg.arg = 1;
	t->exit.view_arg.value = syscall_arg(t, 1);
	syscall_set_arg(t, 1, at + offsetof(__typeof__(blob), m));
	tracer_want_view(t, destination_restored);
}

static uint32_t read_u32(struct task *t, uint64_t addr)
{
	uint32_t v = 0;
	if (addr && remote_read(t, REMOTE(addr), &v, sizeof(v)))
		v = 0;
	return v;
}

/* ---- sendmmsg's destinations ----------------------------------------------------------------
 *
 * The kernel reads the messages where the program's msgvec argument points, and writes
 * each sent message's msg_len there. A sendmmsg naming a destination to translate is given
 * a copy of its messages in scratch memory instead, the translated addresses beside them
 * (each distinct one once), and at its exit the msg_len of each message sent goes to the
 * program's own array and its arguments come back. A copy larger than the scratch memory
 * takes (1024 messages alone fill it) holds the first messages only, and the call is given
 * that many: sendmmsg may send fewer than asked (the program goes on
 * from the count it returns), and natively stops early at an error just so. */

#define SCRATCH_MAX 65536   /* the most remote_scratch places */
#define OWN_NAME UINT32_MAX /* a message whose destination is not translated */

static struct mmsg_copy {
	struct mmsghdr m[VIEW_ROOMS]; /* the program's messages */
	char blob[SCRATCH_MAX];       /* the translated addresses, then the copy of the array */
	uint32_t name_at[VIEW_ROOMS]; /* where in blob message i's address lies, or OWN_NAME */
	size_t names;                 /* the bytes of blob the addresses take */
	uint32_t n;                   /* the messages the copy holds */
} mc; /* one call at a time: the supervisor handles one stop at a time */

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Message i's destination, translated into mc.blob, or shared with the message before
 * when that one names the same: false when the copy has no room for it and its message. */
static bool mmsg_name_copied(struct task *t, uint32_t i)
{
	const struct msghdr *h = &mc.m[i].msg_hdr, *prev = i ? &mc.m[i - 1].msg_hdr : NULL;
	size_t len = h->msg_namelen, at = align8(mc.names), names = mc.names;
	uint32_t name_at = OWN_NAME;
	struct sockaddr_storage a;
	if (prev && h->msg_name == prev->msg_name && len == prev->msg_namelen) {
		name_at = mc.name_at[i - 1];
	} else if (h->msg_name && len >= 4 && len <= sizeof(a) &&
		   !remote_read(t, REMOTE((uint64_t)h->msg_name), &a, len) &&
		   translate(&a, len, false)) {
		name_at = (uint32_t)at;
		names = at + len;
	}
	if (align8(names) + (i + 1) * sizeof(struct mmsghdr) > SCRATCH_MAX)
		return false;
	if (names != mc.names)
		memcpy(mc.blob + at, &a, len);
	mc.names = names;
	mc.name_at[i] = name_at;
	return true;
}

/* The copy of the array, `array` bytes into a blob placed at `base`: its translated
 * destinations point into the blob. */
static void mmsg_copy_laid(uint64_t base, size_t array)
{
	struct mmsghdr *copy = (struct mmsghdr *)(mc.blob + array);
	memcpy(copy, mc.m, mc.n * sizeof(*copy));
	for (uint32_t i = 0; i < mc.n; i++)
		if (mc.name_at[i] != OWN_NAME)
			copy[i].msg_hdr.msg_name = (void *)(base + mc.name_at[i]);
}

static void mmsg_destinations_restored(struct task *t)
{
	int64_t sent = syscall_result(t);
	uint64_t copy = syscall_arg(t, 1), own = t->exit.view_mmsg.msgvec;
	size_t len_at = offsetof(struct mmsghdr, msg_len);
	for (int64_t i = 0; i < sent && i < t->exit.view_mmsg.copied; i++) {
		uint32_t len = read_u32(t, copy + (uint64_t)i * sizeof(struct mmsghdr) + len_at);
		if (remote_write(t, REMOTE(own + (uint64_t)i * sizeof(struct mmsghdr) + len_at),
				 &len, sizeof(len))) {
			task_warn(t, "cannot write sendmmsg's msg_len");
			break;
		}
	}
	syscall_set_arg(t, 1, own);
	syscall_set_arg(t, 2, t->exit.view_mmsg.vlen);
}

/* sendmmsg's destinations, given to the kernel real. */
static void give_real_mmsg_addresses(struct task *t)
{
	uint32_t vlen = (uint32_t)syscall_arg(t, 2), n = vlen < VIEW_ROOMS ? vlen : VIEW_ROOMS;
	if (!n || remote_read(t, REMOTE(syscall_arg(t, 1)), mc.m, n * sizeof(mc.m[0])))
		return;
	mc.names = 0;
	for (mc.n = 0; mc.n < n && mmsg_name_copied(t, mc.n);)
		mc.n++;
	if (!mc.names) /* no destination to translate */
		return;
	size_t array = align8(mc.names), size = array + mc.n * sizeof(mc.m[0]);
	mmsg_copy_laid(0, array);
	uint64_t at = remote_scratch(t, mc.blob, size);
	mmsg_copy_laid(at, array);
	if (!at || remote_scratch(t, mc.blob, size) != at) {
		task_warn(t, "no room on the stack for the real addresses sendmmsg takes");
		return;
	}
	t->exit.view_mmsg.msgvec = syscall_arg(t, 1);
	t->exit.view_mmsg.vlen = syscall_arg(t, 2);
	t->exit.view_mmsg.copied = mc.n;
	syscall_set_arg(t, 1, at + array);
	if (mc.n < vlen)
		syscall_set_arg(t, 2, mc.n);
	tracer_want_view(t, mmsg_destinations_restored);
}

void netview_connect(struct task *t)
{
	give_real_address(t, 1, 2);
}

/* A datagram send's destination (a stream socket's is ignored, and its sends may go in
 * pieces, each a call of its own). */
void netview_send(struct task *t)
{
	long nr = t->syscall_nr;
	if (nr != __NR_sendmsg && nr != __NR_sendmmsg && (nr != __NR_sendto || !syscall_arg(t, 4)))
		return;
	int fd = remote_dup_fd(t, (int)syscall_arg(t, 0));
	int type = 0;
	socklen_t len = sizeof(type);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type != SOCK_STREAM) {
		if (nr == __NR_sendmmsg)
			give_real_mmsg_addresses(t);
		else if (nr == __NR_sendmsg)
			give_real_msg_address(t);
		else
			give_real_address(t, 4, 5);
	}
	close(fd);
}

/* Implements bind(2): the address taken real (a second socket on a port the group sees
 * virtual, with SO_REUSEPORT), a port the program names remembered as its own. */
void sys_bind(struct task *t)
{
	if (shim_intercepts())
		sys_external(t);
	else
		give_real_address(t, 1, 2);
}

/* ---- what calls show ------------------------------------------------------------------------- */

static int64_t virtual_realtime(void)
{
	int64_t ns = 0;
	vclock_read(CLOCK_REALTIME, &ns);
	return ns;
}

/* A timestamp control message's payload at p (size bytes), set to virtual time t_ns. */
static void stamp(char *p, size_t size, int type, int64_t ns)
{
	struct timeval tv = { ns / 1000000000, ns % 1000000000 / 1000 };
	struct __kernel_sock_timeval ktv = { tv.tv_sec, tv.tv_usec };
	struct timespec ts = ns_to_timespec(ns);
	struct __kernel_timespec kts = { ts.tv_sec, ts.tv_nsec };
	if (type == SO_TIMESTAMP_OLD && size >= sizeof(tv))
		memcpy(p, &tv, sizeof(tv));
	else if (type == SO_TIMESTAMP_NEW && size >= sizeof(ktv))
		memcpy(p, &ktv, sizeof(ktv));
	else if ((type == SO_TIMESTAMPNS_OLD || type == SO_TIMESTAMPNS_NEW) && size >= sizeof(ts))
		memcpy(p, &ts, sizeof(ts));
	else if (type == SO_TIMESTAMPING_OLD || type == SO_TIMESTAMPING_NEW)
		/* software, (legacy), hardware: every one the kernel filled is virtual */
		for (size_t off = 0; off + sizeof(kts) <= size && off < 3 * sizeof(kts);
		     off += sizeof(kts)) {
			struct __kernel_timespec was;
			memcpy(&was, p + off, sizeof(was));
			if (was.tv_sec || was.tv_nsec)
				memcpy(p + off, &kts, sizeof(kts));
		}
}

/* recvmsg's control messages: receive timestamps become the virtual clock now. */
static void virtual_timestamps(struct task *t, const struct msghdr *m)
{
	char buf[4096];
	size_t len = m->msg_controllen < sizeof(buf) ? m->msg_controllen : sizeof(buf);
	if (!m->msg_control || len < sizeof(struct cmsghdr) ||
	    remote_read(t, REMOTE((uint64_t)m->msg_control), buf, len))
		return;
	struct msghdr local = { .msg_control = buf, .msg_controllen = len };
	bool changed = false;
	int64_t now = virtual_realtime();
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&local); c; c = CMSG_NXTHDR(&local, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_len < CMSG_LEN(0))
			continue;
		int ty = c->cmsg_type;
		if (ty == SO_TIMESTAMP_OLD || ty == SO_TIMESTAMP_NEW || ty == SO_TIMESTAMPNS_OLD ||
		    ty == SO_TIMESTAMPNS_NEW || ty == SO_TIMESTAMPING_OLD ||
		    ty == SO_TIMESTAMPING_NEW) {
			stamp((char *)CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0), ty, now);
			changed = true;
		}
	}
	if (changed && remote_write(t, REMOTE((uint64_t)m->msg_control), buf, len))
		task_warn(t, "cannot write recvmsg's timestamps");
}

/* The arguments holding the address a call shows and the pointer to its length, for the
 * calls that show one directly rather than through a msghdr: false for the others. */
static bool plain_address_args(long nr, int *addr, int *len)
{
	switch (nr) {
	case __NR_getsockname:
	case __NR_getpeername:
	case __NR_accept:
	case __NR_accept4:
		*addr = 1, *len = 2;
		return true;
	case __NR_recvfrom:
		*addr = 4, *len = 5;
		return true;
	}
	return false;
}

/* An address room as kept: no address is longer than sockaddr_storage, and show_address
 * reads no more. */
static uint8_t address_room(uint32_t room)
{
	_Static_assert(sizeof(struct sockaddr_storage) <= UINT8_MAX, "a room fits a byte");
	return (uint8_t)(room < sizeof(struct sockaddr_storage) ? room
								: sizeof(struct sockaddr_storage));
}

#define MMSG_CHUNK 64 /* mmsghdrs read at a time */

/* Messages i.. of the mmsghdr array at `at`, up to MMSG_CHUNK of the first n, into mm:
 * how many were read. The kernel stops at a message it cannot read, after those before
 * it: a chunk that crosses into unreadable memory is read one message at a time. */
static uint32_t mmsgs_read(struct task *t, uint64_t at, uint32_t i, uint32_t n, struct mmsghdr *mm)
{
	uint32_t k = n - i < MMSG_CHUNK ? n - i : MMSG_CHUNK;
	while (k && remote_read(t, REMOTE(at + i * sizeof(*mm)), mm, k * sizeof(*mm)))
		k = k > 1 ? 1 : 0;
	return k;
}

/* A recvmmsg's rooms, one for each message it may take (every message: the kernel takes
 * no more than VIEW_ROOMS; an unreadable one and those after it get none): false when
 * the first message cannot be read (the call fails). */
static bool mmsg_rooms_kept(struct task *t)
{
	uint64_t at = syscall_arg(t, 1);
	uint32_t n = (uint32_t)syscall_arg(t, 2) < VIEW_ROOMS ? (uint32_t)syscall_arg(t, 2)
							      : VIEW_ROOMS;
	memset(t->exit.view_room, 0, n);
	for (uint32_t i = 0, k; i < n; i += k) {
		struct mmsghdr mm[MMSG_CHUNK];
		k = mmsgs_read(t, at, i, n, mm);
		if (!k)
			return i > 0;
		for (uint32_t j = 0; j < k; j++)
			t->exit.view_room[i + j] = address_room(
				mm[j].msg_hdr.msg_name ? mm[j].msg_hdr.msg_namelen : 0);
	}
	return true;
}

/* The first `got` messages of the recvmmsg array at `at`, shown virtual. */
static void mmsg_received_view(struct task *t, uint64_t at, uint32_t got)
{
	uint32_t n = got < VIEW_ROOMS ? got : VIEW_ROOMS;
	for (uint32_t i = 0, k; i < n; i += k) {
		struct mmsghdr mm[MMSG_CHUNK];
		k = mmsgs_read(t, at, i, n, mm);
		if (!k)
			return;
		for (uint32_t j = 0; j < k; j++) {
			show_address(t, (uint64_t)mm[j].msg_hdr.msg_name, mm[j].msg_hdr.msg_namelen,
				     t->exit.view_room[i + j]);
			virtual_timestamps(t, &mm[j].msg_hdr);
		}
	}
}

/* recvmmsg's timeout at the call's start: the kernel leaves in it the time left at the
 * last message, which the real clock measured. */
static void mmsg_timeout_kept(struct task *t)
{
	t->exit.view_timeout.since = -1;
	if (syscall_arg(t, 4) &&
	    !remote_read(t, REMOTE(syscall_arg(t, 4)), &t->exit.view_timeout.given,
			 sizeof(t->exit.view_timeout.given)))
		t->exit.view_timeout.since = vclock_now();
}

/* ... and at its end, the time left by the virtual clock (the kernel checked the timeout
 * itself: an invalid one fails the call). */
static void mmsg_timeout_view(struct task *t)
{
	if (t->exit.view_timeout.since < 0)
		return;
	struct timespec left = t->exit.view_timeout.given;
	struct timespec spent = ns_to_timespec(vclock_now() - t->exit.view_timeout.since);
	left.tv_sec -= spent.tv_sec;
	left.tv_nsec -= spent.tv_nsec;
	if (left.tv_nsec < 0)
		left.tv_sec--, left.tv_nsec += 1000000000;
	if (left.tv_sec < 0)
		left = (struct timespec){ 0, 0 };
	if (remote_write(t, REMOTE(syscall_arg(t, 4)), &left, sizeof(left)))
		task_warn(t, "cannot write recvmmsg's timeout");
}

static void received_view(struct task *t)
{
	if ((int64_t)syscall_result(t) < 0)
		return;
	uint64_t a1 = syscall_arg(t, 1);
	int addr, len;
	struct msghdr m;
	if (plain_address_args(t->syscall_nr, &addr, &len)) {
		show_address(t, syscall_arg(t, addr), read_u32(t, syscall_arg(t, len)),
			     t->exit.view_room[0]);
		return;
	}
	switch (t->syscall_nr) {
	case __NR_recvmsg:
		if (remote_read(t, REMOTE(a1), &m, sizeof(m)))
			break;
		show_address(t, (uint64_t)m.msg_name, m.msg_namelen, t->exit.view_room[0]);
		virtual_timestamps(t, &m);
		break;
	case __NR_recvmmsg:
		mmsg_received_view(t, a1, (uint32_t)syscall_result(t));
		if (syscall_result(t) > 0) /* the kernel writes the timeout only then */
			mmsg_timeout_view(t);
		break;
	}
}

/* At the stop of a call that shows an address (and recvmsg's control messages): the room
 * the program gave for the address, which the call overwrites with the length. */
static void want_received_view(struct task *t)
{
	int addr, len;
	struct msghdr m;
	if (plain_address_args(t->syscall_nr, &addr, &len)) {
		uint64_t room_at = syscall_arg(t, addr) ? syscall_arg(t, len) : 0;
		if (!room_at)
			return;
		t->exit.view_room[0] = address_room(read_u32(t, room_at));
		tracer_want_view(t, received_view);
		return;
	}
	switch (t->syscall_nr) {
	case __NR_recvmsg: /* nothing to show: no exit stop */
		if (remote_read(t, REMOTE(syscall_arg(t, 1)), &m, sizeof(m)) ||
		    (!m.msg_name && !m.msg_control))
			return;
		t->exit.view_room[0] = address_room(m.msg_name ? m.msg_namelen : 0);
		tracer_want_view(t, received_view);
		return;
	case __NR_recvmmsg:
		mmsg_timeout_kept(t);
		if (mmsg_rooms_kept(t))
			tracer_want_view(t, received_view);
		return;
	}
}

/* Implements getsockname(2), getpeername(2): the address shown virtual. */
void sys_sockname(struct task *t)
{
	if (shim_intercepts())
		sys_external(t);
	else
		want_received_view(t);
}

void netview_accept(struct task *t)
{
	want_received_view(t);
}

void views_want_read(struct task *t, int tfd, mode_t type)
{
	if (type == S_IFSOCK) {
		want_received_view(t);
		return;
	}
	/* an anonymous inode has no file type */
	if (type != 0 || (t->syscall_nr != __NR_read && t->syscall_nr != __NR_readv))
		return;
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return;
	if (fd_kind(fd) == FD_INOTIFY)
		tracer_want_view(t, notify_view_read);
	close(fd);
}

/* ---- getsockopt and ioctl --------------------------------------------------------------------- */

/* TCP_INFO with its timings zero: what differs between runs of the same exchange. */
static void tcp_info_read(struct task *t)
{
	uint32_t len = read_u32(t, syscall_arg(t, 4));
	struct tcp_info ti;
	if (syscall_result(t) != 0 || !len)
		return;
	if (len > sizeof(ti))
		len = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (remote_read(t, REMOTE(syscall_arg(t, 3)), &ti, len))
		return;
	ti.tcpi_rto = ti.tcpi_ato = 0;
	ti.tcpi_last_data_sent = ti.tcpi_last_ack_sent = 0;
	ti.tcpi_last_data_recv = ti.tcpi_last_ack_recv = 0;
	ti.tcpi_rtt = ti.tcpi_rttvar = ti.tcpi_rcv_rtt = ti.tcpi_min_rtt = 0;
	ti.tcpi_pacing_rate = ti.tcpi_max_pacing_rate = ti.tcpi_delivery_rate = 0;
	ti.tcpi_busy_time = ti.tcpi_rwnd_limited = ti.tcpi_sndbuf_limited = 0;
	ti.tcpi_rcv_space = ti.tcpi_rcv_ssthresh = 0;
	if (remote_write(t, REMOTE(syscall_arg(t, 3)), &ti, len))
		task_warn(t, "cannot write TCP_INFO");
	/* Newer kernels go on past these headers' struct: rcv_wnd, rehash, total_rto and
	 * total_rto_recoveries (u32, u32, u16, u16), then total_rto_time (ms in timeouts). */
	uint64_t rto_time = offsetof(struct tcp_info, tcpi_snd_wnd) + 4 + 4 + 4 + 2 + 2;
	static const uint32_t zero;
	if (read_u32(t, syscall_arg(t, 4)) >= rto_time + 4 &&
	    remote_write(t, REMOTE(syscall_arg(t, 3) + rto_time), &zero, sizeof(zero)))
		task_warn(t, "cannot write TCP_INFO");
}

static void incoming_cpu_read(struct task *t)
{
	int cpu = 0;
	if (syscall_result(t) == 0 && remote_write(t, REMOTE(syscall_arg(t, 3)), &cpu, sizeof(cpu)))
		task_warn(t, "cannot write SO_INCOMING_CPU");
}

/* SIOCGSTAMP, SIOCGSTAMPNS: the last packet's receive time, the virtual clock now. */
static void stamp_ioctl_read(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	int64_t ns = virtual_realtime();
	uint32_t req = (uint32_t)syscall_arg(t, 1);
	struct timespec ts = ns_to_timespec(ns);
	long long out[2] = { ts.tv_sec, ts.tv_nsec };
	if (req == SIOCGSTAMP_OLD || req == (uint32_t)SIOCGSTAMP_NEW)
		out[1] /= 1000;
	if (remote_write(t, REMOTE(syscall_arg(t, 2)), out, sizeof(out)))
		task_warn(t, "cannot write the socket timestamp");
}

bool netview_call(struct task *t)
{
	if (shim_intercepts())
		return false;
	if (t->syscall_nr == __NR_ioctl) {
		uint32_t req = (uint32_t)syscall_arg(t, 1);
		if (req != SIOCGSTAMP_OLD && req != SIOCGSTAMPNS_OLD &&
		    req != (uint32_t)SIOCGSTAMP_NEW && req != (uint32_t)SIOCGSTAMPNS_NEW)
			return false;
		tracer_want_exit(t, stamp_ioctl_read);
		return true;
	}
	if (t->syscall_nr != __NR_getsockopt)
		return false;
	int level = (int)syscall_arg(t, 1), opt = (int)syscall_arg(t, 2);
	if (level == SOL_SOCKET && opt == SO_INCOMING_CPU)
		tracer_want_exit(t, incoming_cpu_read);
	else if (level == IPPROTO_TCP && opt == TCP_INFO)
		tracer_want_exit(t, tcp_info_read);
	else
		return false;
	return true;
}
