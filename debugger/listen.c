/* Where gdb reaches the server. `detrun debug` listens nowhere: gdb runs `detrun
 * --gdb-handoff=FD` as its remote pipe, which hands its end of gdb's pipe over a socket pair
 * only gdb and this process hold. --gdb listens on a unix socket in a directory only this
 * user can enter, or on TCP at 127.0.0.1 when asked, where any local user can connect: on
 * both a peer of another uid is refused (it could read and write the program's memory). */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "debugger/internal.h"
#include "shim/shim.h"
#include "vkernel/report.h"

static struct {
	enum {
		LISTEN_HANDOFF,
		LISTEN_UNIX,
		LISTEN_TCP
	} kind;
	char dir[PATH_MAX]; /* the private directory made for the socket, "" if none */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int port;
	pid_t owner; /* the process that made the socket file (forks share atexit) */
	int fd;      /* listening (for detrun debug: the socket pair's end), -1 once gdb came */
} where = { .fd = -1 };

static __attribute__((noreturn)) void cannot_serve(const char *fmt, const char *what)
{
	int e = errno;
	fprintf(stderr, "detrun: cannot serve gdb on ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, ": %s\n", strerror(e));
	exit(125);
}

/* The socket file and its directory go once gdb is connected or detrun ends. */
static void remove_socket_file(void)
{
	if (getpid() != where.owner || !where.path[0])
		return;
	unlink(where.path);
	if (where.dir[0])
		rmdir(where.dir);
	where.path[0] = where.dir[0] = 0;
}

static void listen_unix(const char *path)
{
	if (!path) {
		const char *base = getenv("XDG_RUNTIME_DIR");
		struct stat st;
		if (!base || stat(base, &st) || !S_ISDIR(st.st_mode) || access(base, W_OK))
			base = "/tmp";
		snprintf(where.dir, sizeof(where.dir), "%s/detrun-gdb-XXXXXX", base);
		if (!mkdtemp(where.dir)) /* 0700: no other user gets to the socket */
			cannot_serve("%s", where.dir);
		static char made[PATH_MAX + 16];
		snprintf(made, sizeof(made), "%s/gdb.sock", where.dir);
		path = made;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	errno = ENAMETOOLONG;
	if (strlen(path) >= sizeof(a.sun_path))
		cannot_serve("%s", path);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (where.dir[0])
			rmdir(where.dir);
		errno = e;
		cannot_serve("%s", path);
	}
	memcpy(where.path, a.sun_path, sizeof(where.path));
	where.owner = getpid();
	atexit(remove_socket_file);
	if (listen(fd, 1) < 0)
		cannot_serve("%s", path);
	where.kind = LISTEN_UNIX;
	where.fd = fd;
}

static void listen_tcp(const char *port_text)
{
	char *end;
	long port = strtol(port_text, &end, 10);
	if (end == port_text || *end || port < 0 || port > 65535) {
		fprintf(stderr, "detrun: --gdb=tcp:PORT takes a port 0..65535, not '%s'\n",
			port_text);
		exit(125);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1; /* a port still in TIME_WAIT from the last session is free */
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		cannot_serve("port %s", port_text);
	where.kind = LISTEN_TCP;
	where.port = ntohs(a.sin_port);
	where.fd = fd;
}

void listen_start(const char *spec)
{
	if (!spec)
		listen_unix(NULL);
	else if (!strncmp(spec, "unix:", 5) && spec[5])
		listen_unix(spec + 5);
	else if (!strncmp(spec, "tcp:", 4))
		listen_tcp(spec + 4);
	else
		listen_tcp(spec); /* --gdb=PORT, as before unix sockets: TCP, asked for */
}

int listen_pair(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		fprintf(stderr, "detrun: cannot make gdb's socket pair: %s\n", strerror(errno));
		exit(125);
	}
	where.kind = LISTEN_HANDOFF;
	where.fd = sv[0];
	return sv[1];
}

/* ---- messages: text, with descriptors ------------------------------------------------ */

int listen_send_msg(int fd, const char *text, const int *fds, int nfds)
{
	struct iovec iov = { (void *)text, strlen(text) + 1 };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds > 0) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t n;
	while ((n = sendmsg(fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n < 0 ? -1 : 0;
}

ssize_t listen_recv_msg(int fd, char *buf, size_t size, int *fds, int *nfds)
{
	struct iovec iov = { buf, size - 1 };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	while ((n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (nfds)
		*nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c && fds && nfds; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			*nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), (size_t)*nfds * sizeof(int));
		}
	return n;
}

void listen_hand_over(int pair_fd)
{
	int in = STDIN_FILENO; /* gdb's pipe is a socket, both ways */
	if (listen_send_msg(pair_fd, "g", &in, 1) < 0) {
		fprintf(stderr, "detrun: cannot hand gdb's pipe over (fd %d): %s\n", pair_fd,
			strerror(errno));
		exit(125);
	}
	exit(0);
}

static int take_handed_over(void)
{
	char msg[2];
	int fds[2], nfds = 0;
	if (listen_recv_msg(where.fd, msg, sizeof(msg), fds, &nfds) <= 0 || nfds < 1)
		return -1; /* gdb ended before it connected */
	for (int i = 1; i < nfds; i++)
		close(fds[i]);
	return fds[0];
}

/* The uid of the socket at the other end of a loopback connection: its line in
 * /proc/net/tcp (or tcp6, for an IPv4-mapped peer) has the peer's address as local. */
static long tcp_peer_uid(int fd)
{
	struct sockaddr_in peer, self;
	socklen_t pl = sizeof(peer), sl = sizeof(self);
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) || getsockname(fd, (void *)&self, &sl))
		return -1;
	char want_l[9], want_r[9];
	snprintf(want_l, sizeof(want_l), "%08X", peer.sin_addr.s_addr);
	snprintf(want_r, sizeof(want_r), "%08X", self.sin_addr.s_addr);
	const char *files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "re");
		char line[512], l[33], r[33];
		unsigned lport, rport;
		long uid;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, " %*d: %32[0-9A-F]:%x %32[0-9A-F]:%x %*x %*s %*s %*s %ld",
				   l, &lport, r, &rport, &uid) == 5 &&
			    lport == ntohs(peer.sin_port) && rport == ntohs(self.sin_port) &&
			    strlen(l) >= 8 && !strcmp(l + strlen(l) - 8, want_l) &&
			    strlen(r) >= 8 && !strcmp(r + strlen(r) - 8, want_r)) {
				fclose(f);
				return uid;
			}
		if (f)
			fclose(f);
	}
	return -1;
}

static long peer_uid(int fd)
{
	if (where.kind == LISTEN_TCP)
		return tcp_peer_uid(fd);
	struct ucred c;
	socklen_t len = sizeof(c);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) ? -1 : (long)c.uid;
}

static void announce(void)
{
	char at[PATH_MAX + 16];
	if (where.kind == LISTEN_TCP) {
		snprintf(at, sizeof(at), "127.0.0.1:%d", where.port);
		fprintf(stderr,
			"detrun: warning: gdb is served on TCP: any local user can connect to %s "
			"(other uids are refused; --gdb alone serves a private unix socket)\n",
			at);
	} else {
		snprintf(at, sizeof(at), "%s", where.path);
	}
	/* sysroot /: libc's frames by their symbols, and breakpoints in it on the function,
	 * not on the program's PLT stub (gdb would fetch the libraries through the target) */
	fprintf(stderr,
		"detrun: waiting for gdb on %s (in gdb: set sysroot / then target extended-remote "
		"%s)\n",
		at, at);
}

/* Waits for a connection to come. Nobody may ever connect: an ending signal sent to
 * detrun (SIGTERM, SIGINT, ...) ends the run here, as it would end the program, and the
 * socket's directory goes with detrun's exit. */
static void wait_for_peer(void)
{
	const struct shim_outside *o = shim_outside();
	for (;;) {
		struct pollfd p[2] = { { where.fd, POLLIN, 0 },
				       { o ? o->signal_fd : -1, POLLIN, 0 } };
		int r = poll(p, 2, -1);
		int sig = r > 0 && p[1].revents ? o->end_requested() : 0;
		if (sig) {
			fprintf(stderr, "detrun: %s while waiting for gdb: the group is killed\n",
				strsignal(sig));
			o->end_run(128 + sig);
		}
		if ((r < 0 && errno != EINTR) || (r > 0 && p[0].revents))
			return; /* accept says what is wrong */
	}
}

bool listen_waiting(void)
{
	return where.fd >= 0;
}

void listen_close(void)
{
	if (where.fd >= 0)
		close(where.fd);
	where.fd = -1;
}

static int accept_peer(void)
{
	if (where.kind == LISTEN_HANDOFF)
		return take_handed_over();
	announce();
	for (;;) {
		wait_for_peer();
		int fd = accept4(where.fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0)
			die("cannot accept gdb's connection: %s", strerror(errno));
		long uid = peer_uid(fd);
		if (uid == (long)getuid()) {
			remove_socket_file();
			return fd;
		}
		if (uid < 0)
			fprintf(stderr, "detrun: refused a gdb connection: its uid is unknown\n");
		else
			fprintf(stderr,
				"detrun: refused a gdb connection from uid %ld: detrun runs as "
				"uid %d\n",
				uid, (int)getuid());
		close(fd);
	}
}

/* A connection after gdb's own: an error packet to each of its first requests, which
 * gdb shows at once ("Remote replied unexpectedly … another gdb is connected"), where a
 * closed port would leave it retrying for its connect timeout. */
static void refuse(int c)
{
	static const char msg[] = "E.detrun: another gdb is connected to this run already";
	unsigned sum = 0;
	for (const char *p = msg; *p; p++)
		sum += (unsigned char)*p;
	char frame[sizeof(msg) + 8];
	int len = snprintf(frame, sizeof(frame), "+$%s#%02x", msg, sum & 0xff);
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char buf[1024];
	for (int answered = 0; answered < 4;) {
		ssize_t n = recv(c, buf, sizeof(buf), 0);
		if (n <= 0)
			return;
		if (memchr(buf, '$', (size_t)n)) {
			if (send(c, frame, (size_t)len, MSG_NOSIGNAL) != len)
				return;
			answered++;
		}
	}
}

static void *refuse_others(void *arg)
{
	int fd = (int)(intptr_t)arg;
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (c < 0)
			return NULL;
		refuse(c);
		close(c);
	}
}

static int refusing_fd = -1;

void listen_refuse_others(int fd)
{
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved); /* signals stay the stop loop's */
	pthread_t th;
	if (pthread_create(&th, NULL, refuse_others, (void *)(intptr_t)fd) == 0) {
		pthread_detach(th);
		refusing_fd = fd;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

int listen_refusing_fd(void)
{
	return refusing_fd;
}

int listen_accept(void)
{
	int fd = accept_peer();
	if (where.kind == LISTEN_TCP && fd >= 0) {
		listen_refuse_others(where.fd); /* the port stays taken, by a refusal */
		where.fd = -1;
		return fd;
	}
	listen_close();
	return fd;
}
