/* Output commit on the leader: a reply leaves the node only once the stream holds every
 * input before it, but the group does not wait for that. A send to a connected stream
 * socket (write, writev, send, sendto without an address, sendmsg without one and without
 * ancillary data) is answered here at once with its full length, as a send that found
 * room in the kernel's buffer is; its bytes are copied and held with the stream sequence
 * of the last input before it, and the result goes to the stream like any other. The held
 * bytes are sent, in order per connection, as soon as the acknowledgements reach that
 * sequence (sink.c counts them, and calls here on libnats' thread; a flusher thread waits
 * for room on connections whose kernel buffer is full); so several inputs are in flight at once, and the
 * stream's round trip is paid per batch, not per input (group commit).
 *
 * What the program sees does not depend on when acknowledgements come: a send that is
 * held is always answered with its length. Sends that cannot be held run for real after
 * the sync (every input acknowledged) and after what is held on their connection has left:
 * a connection the kernel already reports failed (the program gets the kernel's error),
 * one with HOLD_MAX bytes held (a client that does not read, or a stream without quorum:
 * a non-blocking send gets EAGAIN, as from a full buffer, a blocking one waits), calls
 * with flags or addresses. Held bytes of a run that stops unacknowledged (deposed, no
 * quorum) never leave: no client sees what depends on an input a follower could miss. */
#include "replicate/replicate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/remote.h"
#include "engine/tracer.h"
#include "recorder/fingerprint.h"
#include "shim/shim.h"

#define HOLD_MAX (4u << 20) /* bytes held per connection */
#define HOLD_IOVECS 1024    /* IOV_MAX */
#define FINISH_MS 10000     /* at the end, how long held bytes may take to leave */
#define FLAGS_HELD (MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE)

struct chunk {
	struct chunk *next;
	uint64_t need; /* leaves once the stream acknowledged every sequence up to this */
	size_t len, off;
	uint8_t bytes[];
};

/* The held bytes of one connection, on detrun's own duplicate of it (which keeps the
 * socket open, and its data unsent, after the program closed it). */
struct held {
	ino_t ino;
	int fd;
	struct chunk *head, *tail;
	size_t bytes;
	bool blocked; /* the kernel's buffer is full: waits for POLLOUT */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t left = PTHREAD_COND_INITIALIZER; /* bytes left, or were dropped */
static struct held *held;
static int n_held, cap_held;
static int wake_fd = -1; /* eventfd: an acknowledgement came, or bytes were held */
static bool all_acked;   /* the run ended with every input acknowledged */

static void wake(void)
{
	uint64_t one = 1;
	if (write(wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the flusher is awake anyway */
	}
}

static uint64_t acked_now(void)
{
	return all_acked ? UINT64_MAX : rep_sink_acked();
}

static void drop_chunks(struct held *h)
{
	while (h->head) {
		struct chunk *c = h->head;
		h->head = c->next;
		free(c);
	}
	h->tail = NULL;
	h->bytes = 0;
}

/* Sends what may leave on h without blocking (lock held). */
static void send_due(struct held *h, uint64_t acked)
{
	while (h->head && h->head->need <= acked) {
		struct chunk *c = h->head;
		ssize_t n = send(h->fd, c->bytes + c->off, c->len - c->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			h->blocked = true;
			return;
		}
		if (n < 0) { /* the peer is gone: the rest is dropped */
			drop_chunks(h);
			break;
		}
		c->off += (size_t)n;
		h->bytes -= (size_t)n;
		if (c->off < c->len) {
			h->blocked = true;
			return;
		}
		h->head = c->next;
		if (!h->head)
			h->tail = NULL;
		free(c);
	}
	h->blocked = false;
}

/* Connections with nothing held are forgotten (their duplicate closed: a socket the
 * program closed closes now). One whose peer is gone is too: the kernel reports it failed
 * from then on, and the program's next send runs for real and gets its error. */
static void forget_empty(void)
{
	for (int i = 0; i < n_held; i++) {
		if (held[i].head)
			continue;
		close(held[i].fd);
		held[i--] = held[--n_held];
	}
}

/* Sends what may leave now (lock held): true if a connection waits for room. */
static bool send_all_due(void)
{
	uint64_t acked = acked_now();
	bool blocked = false;
	for (int i = 0; i < n_held; i++) {
		send_due(&held[i], acked);
		blocked |= held[i].blocked;
	}
	forget_empty();
	pthread_cond_broadcast(&left);
	return blocked;
}

/* An acknowledgement came (on libnats' thread): replies it frees leave at once, without
 * waking another thread; the flusher waits for room where the kernel has none. */
static void on_acked(void)
{
	pthread_mutex_lock(&lock);
	bool blocked = send_all_due();
	pthread_mutex_unlock(&lock);
	if (blocked)
		wake();
}

static void *flusher(void *arg)
{
	(void)arg;
	struct pollfd *p = NULL;
	int cap = 0;
	for (;;) {
		pthread_mutex_lock(&lock);
		send_all_due();
		if (n_held + 1 > cap) {
			cap = 2 * (n_held + 1);
			p = realloc(p, (size_t)cap * sizeof(*p));
			if (!p)
				abort();
		}
		int n = 0;
		p[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
		for (int i = 0; i < n_held; i++)
			if (held[i].blocked)
				p[n++] = (struct pollfd){ .fd = held[i].fd, .events = POLLOUT };
		pthread_mutex_unlock(&lock);
		if (poll(p, (nfds_t)n, -1) > 0 && (p[0].revents & POLLIN)) {
			uint64_t count;
			if (read(wake_fd, &count, sizeof(count)) < 0) {
				/* nothing to read: woken by a socket */
			}
		}
	}
	return NULL;
}

int rep_outputs_start(void)
{
	if (wake_fd >= 0)
		return 0;
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wake_fd < 0)
		return -errno;
	rep_sink_on_acked(on_acked);
	sigset_t saved;
	rep_signals_block(&saved);
	pthread_t th;
	int err = pthread_create(&th, NULL, flusher, NULL);
	rep_signals_restore(&saved);
	if (err)
		return -err;
	pthread_detach(th);
	return 0;
}

/* ---- holding a send ---- */

/* The call's flags, 0 for calls without; false for flags a held send cannot honour. */
static bool plain_send(const struct shim_call *c, struct msghdr *m)
{
	switch (c->nr) {
	case SYS_write:
	case SYS_writev:
		return true;
	case SYS_sendto:
		return !(c->args[3] & ~(uint64_t)FLAGS_HELD) && !c->args[4];
	case SYS_sendmsg:
		return !(c->args[2] & ~(uint64_t)FLAGS_HELD) &&
		       !remote_read(c->task, REMOTE(c->args[1]), m, sizeof(*m)) &&
		       !m->msg_namelen && !m->msg_controllen;
	default:
		return false;
	}
}

/* The bytes the call sends (all of them, as a send that found room takes), NULL when
 * they cannot be read or are none or too many. `need` goes into the chunk. */
static struct chunk *copy_bytes(const struct shim_call *c, const struct msghdr *m)
{
	static struct iovec iov[HOLD_IOVECS];
	size_t n = 0;
	if (c->nr == SYS_write || c->nr == SYS_sendto) {
		iov[n++] = (struct iovec){ (void *)c->args[1], c->args[2] };
	} else {
		uint64_t addr = c->nr == SYS_writev ? c->args[1] : (uint64_t)m->msg_iov;
		uint64_t count = c->nr == SYS_writev ? c->args[2] : m->msg_iovlen;
		if (count > HOLD_IOVECS ||
		    (count && remote_read(c->task, REMOTE(addr), iov, count * sizeof(*iov))))
			return NULL;
		n = count;
	}
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if (iov[i].iov_len > HOLD_MAX || total + iov[i].iov_len > HOLD_MAX)
			return NULL;
		total += iov[i].iov_len;
	}
	if (!total)
		return NULL;
	struct chunk *k = malloc(sizeof(*k) + total);
	if (!k)
		return NULL;
	*k = (struct chunk){ .len = total };
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (iov[i].iov_len && remote_read(c->task, REMOTE((uint64_t)iov[i].iov_base),
						  k->bytes + at, iov[i].iov_len)) {
			free(k);
			return NULL;
		}
		at += iov[i].iov_len;
	}
	return k;
}

/* A connected stream socket of the group's own (not an output channel inherited from
 * outside, whose writes are the run's output), which the kernel does not report failed. */
static bool healthy_connection(const struct shim_call *c, int fd, struct stat *st)
{
	int type = 0;
	socklen_t len = sizeof(type);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	struct pollfd p = { fd, POLLOUT, 0 };
	return fstat(fd, st) == 0 && S_ISSOCK(st->st_mode) &&
	       !(c->to_output && c->to_output(c->task, c->fd)) &&
	       getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM &&
	       getpeername(fd, (struct sockaddr *)&peer, &plen) == 0 && poll(&p, 1, 0) >= 0 &&
	       !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

static struct held *held_of(ino_t ino)
{
	for (int i = 0; i < n_held; i++)
		if (held[i].ino == ino)
			return &held[i];
	return NULL;
}

static struct held *held_new(ino_t ino, int fd)
{
	if (n_held == cap_held) {
		cap_held = cap_held ? 2 * cap_held : 16;
		held = realloc(held, (size_t)cap_held * sizeof(*held));
		if (!held)
			abort();
	}
	held[n_held] = (struct held){ .ino = ino, .fd = fd };
	return &held[n_held++];
}

enum hold rep_outputs_hold(struct shim_call *c, uint64_t need)
{
	struct msghdr m;
	if (c->fd < 0 || wake_fd < 0 || !plain_send(c, &m))
		return HOLD_NOT;
	int fd = remote_dup_fd(c->task, c->fd);
	struct stat st;
	if (fd < 0)
		return HOLD_NOT;
	if (!healthy_connection(c, fd, &st)) {
		close(fd);
		return HOLD_NOT;
	}
	struct chunk *k = copy_bytes(c, &m);
	if (!k) {
		close(fd);
		return HOLD_NOT;
	}
	k->need = need;
	pthread_mutex_lock(&lock);
	struct held *h = held_of(st.st_ino);
	if (h && h->bytes + k->len > HOLD_MAX) {
		pthread_mutex_unlock(&lock);
		close(fd);
		free(k);
		return HOLD_FULL;
	}
	if (!h) {
		h = held_new(st.st_ino, fd);
		fd = -1;
	}
	if (h->tail)
		h->tail->next = k;
	else
		h->head = k;
	h->tail = k;
	h->bytes += k->len;
	c->ret = (int64_t)k->len;
	c->sent_len = k->len;
	c->sent_digest = fnv32(FNV32_INIT, k->bytes, k->len);
	/* Acknowledged already: no acknowledgement to come will send it. */
	bool blocked = need <= acked_now() && send_all_due();
	pthread_mutex_unlock(&lock);
	if (fd >= 0)
		close(fd);
	if (blocked)
		wake();
	return HOLD_DONE;
}

/* Waits until nothing is held on the connection behind tracee descriptor `tfd` (or its
 * peer is gone), in slices: a request to end from outside is looked at after each. */
void rep_outputs_drain(struct task *t, int tfd)
{
	if (wake_fd < 0 || tfd < 0)
		return;
	int fd = remote_dup_fd(t, tfd);
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok)
		return;
	pthread_mutex_lock(&lock);
	for (struct held *h; (h = held_of(st.st_ino)) && h->head;) {
		wake();
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&left, &lock, &until);
		int sig = outside_end_requested();
		if (sig) {
			pthread_mutex_unlock(&lock);
			shim_abort(t,
				   "replicate: %s from outside while a client did not take the "
				   "replies held for it: the group is killed",
				   strsignal(sig));
		}
	}
	pthread_mutex_unlock(&lock);
}

/* The run ended with every input acknowledged: what is held leaves before detrun exits,
 * waiting up to FINISH_MS for clients that do not read. */
void rep_outputs_finish(void)
{
	if (wake_fd < 0)
		return;
	pthread_mutex_lock(&lock);
	all_acked = true;
	wake();
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FINISH_MS / 1000;
	for (;;) {
		bool pending = false;
		for (int i = 0; i < n_held && !pending; i++)
			pending = held[i].head != NULL;
		if (!pending || pthread_cond_timedwait(&left, &lock, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&lock);
}
