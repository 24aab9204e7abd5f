/* Values the host's kernel picks or counts that a program can see (issue 17, point 6;
 * tests/determinism/views_test.cc). Each mode prints what it saw; natively it differs from
 * run to run (or from detrun's, where noted), under detrun it must not.
 *
 *   cookies    inotify: two renames in a watched directory, each pair's cookie
 *   ports      TCP: a listener on port 0, a client connected without bind; UDP: a socket
 *              on port 0 and one that sends to it unbound: every port the calls show, and
 *              a sendmsg reply to the port recvfrom showed, the sender recvmmsg shows
 *   autobind   unix datagram sockets that autobind (bind with only the family, and a
 *              send without bind with SO_PASSCRED): their names, through getsockname
 *              and recvfrom, and a reply to the name seen; first a name of the same
 *              form bound explicitly, which is shown as it is
 *   stamps     UDP receive timestamps: SO_TIMESTAMP, SO_TIMESTAMPNS, SIOCGSTAMP(NS)
 *   tcpinfo    TCP_INFO's timings and SO_INCOMING_CPU after an exchange on loopback (the
 *              CPU alone need not vary natively on a quiet machine; the timings do)
 *   sigq       /proc/self/status's SigQ with one signal of its own queued: natively the
 *              count is every signal queued for the user on the host (the test queues
 *              some elsewhere to show it)
 *   hold       prints its pid, then waits with SIGRTMIN blocked: signals sent to it stay
 *              queued for the user (the sigq test's host process)
 *   pagecache  a file of the current directory written, synced and dropped from the
 *              page cache: mincore of its mapping, preadv2 with RWF_NOWAIT (natively
 *              not resident, EAGAIN; the same on every run, so the test compares with
 *              the native output instead)
 *   keys       add_key's serial and the session keyring's id (random natively)
 *   watch FILE an inotify watch on FILE for reads and writes; prints "watching", waits
 *              for a line on stdin (the test reads FILE from outside meanwhile, or not),
 *              appends to FILE itself, then prints the events that came */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static void die(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	exit(1);
}

static int cookies(void)
{
	char dir[] = "/tmp/view_holes.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	int in = inotify_init1(0);
	if (in < 0 || inotify_add_watch(in, dir, IN_MOVED_FROM | IN_MOVED_TO) < 0)
		die("inotify");
	char a[64], b[64];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	close(open(a, O_CREAT | O_WRONLY, 0600));
	if (rename(a, b) || rename(b, a))
		die("rename");
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n = read(in, buf, sizeof(buf));
	for (ssize_t off = 0; off < n;) {
		struct inotify_event *e = (struct inotify_event *)(buf + off);
		printf("%s %s cookie %u\n", e->mask & IN_MOVED_FROM ? "from" : "to", e->name,
		       e->cookie);
		off += (ssize_t)sizeof(*e) + e->len;
	}
	unlink(a);
	rmdir(dir);
	return 0;
}

static unsigned port_of(int fd, int peer)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&a, &len))
		die(peer ? "getpeername" : "getsockname");
	return ntohs(a.sin_port);
}

static int ports(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
		die("listen");
	a.sin_port = htons((unsigned short)port_of(l, 0));
	printf("listener %u\n", ntohs(a.sin_port));
	if (connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	int s = accept(l, (struct sockaddr *)&peer, &len);
	printf("client %u peer %u accepted %u server-side peer %u\n", port_of(c, 0), port_of(c, 1),
	       ntohs(peer.sin_port), port_of(s, 1));
	int u = socket(AF_INET, SOCK_DGRAM, 0), v = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_port = 0;
	if (bind(u, (struct sockaddr *)&a, sizeof(a)))
		die("bind udp");
	a.sin_port = htons((unsigned short)port_of(u, 0));
	if (sendto(v, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1)
		die("sendto");
	len = sizeof(peer);
	char ch;
	if (recvfrom(u, &ch, 1, 0, (struct sockaddr *)&peer, &len) != 1)
		die("recvfrom");
	printf("udp %u sender %u sender sees itself %u\n", ntohs(a.sin_port), ntohs(peer.sin_port),
	       port_of(v, 0));
	struct iovec io = { "y", 1 };
	struct msghdr m = { .msg_name = &peer, .msg_namelen = len, .msg_iov = &io, .msg_iovlen = 1 };
	if (sendmsg(u, &m, 0) != 1 || recv(v, &ch, 1, 0) != 1 || ch != 'y')
		die("sendmsg reply to the port seen");
	printf("sendmsg reached the sender\n");
	if (sendto(v, "z", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1)
		die("sendto");
	struct iovec in = { &ch, 1 };
	struct mmsghdr mm = { .msg_hdr = { .msg_name = &peer,
					   .msg_namelen = sizeof(peer),
					   .msg_iov = &in,
					   .msg_iovlen = 1 } };
	if (recvmmsg(u, &mm, 1, 0, NULL) != 1)
		die("recvmmsg");
	printf("recvmmsg sender %u\n", ntohs(peer.sin_port));
	return 0;
}

static void print_name(const char *what, const struct sockaddr_un *u, socklen_t len)
{
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	printf("%s len %u name \\0%.*s\n", what, (unsigned)len, n ? (int)n - 1 : 0,
	       u->sun_path + 1);
}

static int autobind(void)
{
	int a = socket(AF_UNIX, SOCK_DGRAM, 0), b = socket(AF_UNIX, SOCK_DGRAM, 0), on = 1;
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	setsockopt(b, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)); /* a send autobinds it */
	/* A name of autobind's form chosen by the program is its own, and no autobind name
	 * is shown as it. */
	int c = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un own = { .sun_family = AF_UNIX,
				   .sun_path = "\0"
					       "00001" };
	socklen_t own_len = offsetof(struct sockaddr_un, sun_path) + 6;
	if (bind(c, (struct sockaddr *)&own, own_len) && errno != EADDRINUSE)
		die("bind own name");
	own_len = sizeof(own);
	getsockname(c, (struct sockaddr *)&own, &own_len);
	print_name("own", &own, own_len);
	if (bind(a, (struct sockaddr *)&u, sizeof(sa_family_t)))
		die("autobind");
	socklen_t len = sizeof(u);
	if (getsockname(a, (struct sockaddr *)&u, &len))
		die("getsockname");
	print_name("bound", &u, len);
	if (sendto(b, "x", 1, 0, (struct sockaddr *)&u, len) != 1) /* b autobinds here */
		die("sendto");
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	char ch;
	if (recvfrom(a, &ch, 1, 0, (struct sockaddr *)&from, &flen) != 1)
		die("recvfrom");
	print_name("sender", &from, flen);
	if (sendto(a, "y", 1, 0, (struct sockaddr *)&from, flen) != 1) /* the name it saw */
		die("reply");
	if (recv(b, &ch, 1, 0) != 1 || ch != 'y')
		die("reply lost");
	printf("reply reached the sender\n");
	return 0;
}

static int stamps(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int u = socket(AF_INET, SOCK_DGRAM, 0), v = socket(AF_INET, SOCK_DGRAM, 0), on = 1;
	socklen_t len = sizeof(a);
	if (bind(u, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(u, (struct sockaddr *)&a, &len))
		die("bind");
	for (int opt = 0; opt < 2; opt++) {
		setsockopt(u, SOL_SOCKET, opt ? SO_TIMESTAMPNS : SO_TIMESTAMP, &on, sizeof(on));
		if (sendto(v, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1)
			die("sendto");
		char ch, control[256];
		struct iovec io = { &ch, 1 };
		struct msghdr m = { .msg_iov = &io,
				    .msg_iovlen = 1,
				    .msg_control = control,
				    .msg_controllen = sizeof(control) };
		if (recvmsg(u, &m, 0) != 1)
			die("recvmsg");
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct timespec ts;
			struct timeval tv;
			if (c->cmsg_type == SO_TIMESTAMPNS) {
				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				printf("SO_TIMESTAMPNS %lld.%09ld\n", (long long)ts.tv_sec,
				       ts.tv_nsec);
			} else if (c->cmsg_type == SO_TIMESTAMP) {
				memcpy(&tv, CMSG_DATA(c), sizeof(tv));
				printf("SO_TIMESTAMP %lld.%06ld\n", (long long)tv.tv_sec,
				       (long)tv.tv_usec);
			}
		}
	}
	/* The ioctls report the last packet of a socket without the options. */
	int w = socket(AF_INET, SOCK_DGRAM, 0);
	char ch;
	len = sizeof(a);
	a.sin_port = 0;
	if (bind(w, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(w, (struct sockaddr *)&a, &len) ||
	    sendto(v, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1 || recv(w, &ch, 1, 0) != 1)
		die("receive");
	struct timeval tv;
	struct timespec ts;
	if (ioctl(w, SIOCGSTAMP, &tv) || ioctl(w, SIOCGSTAMPNS, &ts))
		die("SIOCGSTAMP");
	printf("SIOCGSTAMP %lld.%06ld SIOCGSTAMPNS %lld.%09ld\n", (long long)tv.tv_sec,
	       (long)tv.tv_usec, (long long)ts.tv_sec, ts.tv_nsec);
	return 0;
}

static int tcpinfo(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t len = sizeof(a);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &len) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	int s = accept(l, NULL, NULL);
	char buf[4096] = { 0 };
	for (int i = 0; i < 16; i++)
		if (write(c, buf, sizeof(buf)) != sizeof(buf) || read(s, buf, sizeof(buf)) <= 0 ||
		    write(s, buf, 1) != 1 || read(c, buf, 1) != 1)
			die("exchange");
	struct tcp_info ti;
	len = sizeof(ti);
	if (getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	printf("rtt %u rttvar %u rto %u ato %u last_data_recv %u last_ack_recv %u "
	       "last_data_sent %u rcv_rtt %u rcv_space %u\n",
	       ti.tcpi_rtt, ti.tcpi_rttvar, ti.tcpi_rto, ti.tcpi_ato, ti.tcpi_last_data_recv,
	       ti.tcpi_last_ack_recv, ti.tcpi_last_data_sent, ti.tcpi_rcv_rtt, ti.tcpi_rcv_space);
	int cpu = -1;
	len = sizeof(cpu);
	if (getsockopt(s, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len))
		die("SO_INCOMING_CPU");
	printf("incoming cpu %d\n", cpu);
	return 0;
}

static int sigq(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	raise(SIGUSR1);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigQ:", 5))
			fputs(line, stdout);
	return 0;
}

static int hold(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &s, NULL);
	printf("pid %d holding\n", (int)getpid());
	for (;;)
		pause();
	return 0;
}

static int pagecache(void)
{
	const char *path = "view_holes.pagecache";
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char page[4096];
	memset(page, 'p', sizeof(page));
	for (int i = 0; i < 4; i++)
		if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
			die("write");
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	void *m = mmap(NULL, 4 * sizeof(page), PROT_READ, MAP_SHARED, fd, 0);
	unsigned char vec[4];
	if (m == MAP_FAILED || mincore(m, 4 * sizeof(page), vec))
		die("mincore");
	printf("mincore %d%d%d%d\n", vec[0] & 1, vec[1] & 1, vec[2] & 1, vec[3] & 1);
	struct iovec io = { page, sizeof(page) };
	ssize_t n = preadv2(fd, &io, 1, 2 * sizeof(page), RWF_NOWAIT);
	printf("preadv2 RWF_NOWAIT %zd %s\n", n, n < 0 ? strerror(errno) : "");
	unlink(path);
	return 0;
}

static int watch(const char *file)
{
	int in = inotify_init1(IN_NONBLOCK);
	if (in < 0 || inotify_add_watch(in, file,
					IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE | IN_MODIFY |
						IN_CLOSE_WRITE) < 0)
		die("inotify");
	printf("watching\n");
	char line[16];
	if (read(0, line, sizeof(line)) <= 0)
		die("stdin");
	int fd = open(file, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "w\n", 2) != 2)
		die("append");
	close(fd);
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n = read(in, buf, sizeof(buf));
	for (ssize_t off = 0; off < n;) {
		struct inotify_event *e = (struct inotify_event *)(buf + off);
		printf("event %#x\n", e->mask);
		off += (ssize_t)sizeof(*e) + e->len;
	}
	return 0;
}

static int keys(void)
{
	long key = syscall(SYS_add_key, "user", "view_holes", "x", 1, -2 /* process keyring */);
	printf("add_key %ld %s\n", key, key < 0 ? strerror(errno) : "");
	long ring = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 1);
	printf("session keyring %ld %s\n", ring, ring < 0 ? strerror(errno) : "");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "cookies"))
		return cookies();
	if (!strcmp(mode, "ports"))
		return ports();
	if (!strcmp(mode, "autobind"))
		return autobind();
	if (!strcmp(mode, "stamps"))
		return stamps();
	if (!strcmp(mode, "tcpinfo"))
		return tcpinfo();
	if (!strcmp(mode, "sigq"))
		return sigq();
	if (!strcmp(mode, "hold"))
		return hold();
	if (!strcmp(mode, "pagecache"))
		return pagecache();
	if (!strcmp(mode, "keys"))
		return keys();
	if (!strcmp(mode, "watch") && argc > 2)
		return watch(argv[2]);
	printf("unknown mode %s\n", mode);
	return 2;
}
