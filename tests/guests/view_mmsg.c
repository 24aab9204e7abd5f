/* sendmmsg and recvmmsg between UDP sockets of the group (issue 17, point 6;
 * tests/hardening/views_test.cc): the ports the kernel picks are shown virtual on every
 * message of a recvmmsg, not only the first ones, and a sendmmsg reaches the ports the
 * program was shown. Natively the ports differ from run to run; under detrun they must not.
 *
 *   1. SENDERS unbound sockets each send to a socket on port 0 with sendto, in turn,
 *      COUNT datagrams in all; recvmmsg takes them (one call under detrun; a recording
 *      takes 8 a call): every sender's port as the message shows it, and whether it is
 *      the one that sender's getsockname shows.
 *   2. One sendmmsg of COUNT datagrams to that socket's port (the first half naming one
 *      shared address, the rest a copy each), taken by recvmmsg; the msg_len the
 *      sendmmsg left in each message.
 *   3. One sendmmsg of replies, each to the address a message of part 1 showed; each
 *      sender takes its own with recvmmsg.
 *   4. A recvmmsg with a timeout of 5 s: the time it leaves there, which the clock
 *      measured (real natively, virtual under detrun). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define COUNT 20
#define SENDERS 4

static void die(const char *what)
{
	printf("%s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static unsigned port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	if (getsockname(fd, (struct sockaddr *)&a, &len))
		die("getsockname");
	return ntohs(a.sin_port);
}

/* A datagram must be there before a blocking recvmmsg starts: one sent to a port nobody
 * has is lost, and the program says so instead of waiting forever. */
static void await(int fd, const char *what)
{
	struct pollfd p = { fd, POLLIN, 0 };
	errno = 0;
	if (poll(&p, 1, 2000) != 1)
		die(what);
}

struct batch {
	struct mmsghdr m[COUNT];
	struct iovec io[COUNT];
	struct sockaddr_in name[COUNT];
	char data[COUNT][8];
};

/* Messages 0..n-1 of b: each its own buffer and address room. */
static void prepare(struct batch *b, int n)
{
	memset(b, 0, sizeof(*b));
	for (int i = 0; i < n; i++) {
		b->io[i] = (struct iovec){ b->data[i], sizeof(b->data[i]) };
		b->m[i].msg_hdr = (struct msghdr){ .msg_name = &b->name[i],
						   .msg_namelen = sizeof(b->name[i]),
						   .msg_iov = &b->io[i],
						   .msg_iovlen = 1 };
	}
}

/* Takes n datagrams with as many recvmmsg calls as it takes (a call may return fewer
 * than asked; MSG_WAITFORONE: it waits for the first only), printing each one's count. */
static int receive(int fd, struct batch *b, int n, const char *what)
{
	prepare(b, n);
	printf("%s:", what);
	for (int got = 0, k; got < n; got += k) {
		await(fd, what);
		k = recvmmsg(fd, b->m + got, (unsigned)(n - got), MSG_WAITFORONE, NULL);
		if (k <= 0)
			die(what);
		printf(" %d", k);
	}
	printf(" datagrams\n");
	return n;
}

static struct batch in1, in2, out, back;

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int u = socket(AF_INET, SOCK_DGRAM, 0), s[SENDERS];
	socklen_t len = sizeof(a);
	if (bind(u, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(u, (struct sockaddr *)&a, &len))
		die("bind");
	printf("receiver %u\n", ntohs(a.sin_port));

	for (int i = 0; i < SENDERS; i++)
		s[i] = socket(AF_INET, SOCK_DGRAM, 0);
	for (int i = 0; i < COUNT; i++) {
		char d[8];
		snprintf(d, sizeof(d), "%d", i);
		if (sendto(s[i % SENDERS], d, strlen(d), 0, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("sendto");
	}
	int got = receive(u, &in1, COUNT, "recvmmsg of sendto's");
	int shown_right = 0;
	for (int i = 0; i < got; i++) {
		unsigned from = ntohs(in1.name[i].sin_port);
		int k = atoi(in1.data[i]) % SENDERS;
		shown_right += from == port_of(s[k]);
		printf("  message %d: %s from %u (sender %d)\n", i, in1.data[i], from, k);
	}
	printf("every sender as its getsockname shows it: %s\n",
	       shown_right == COUNT ? "yes" : "no");

	struct sockaddr_in copies[COUNT];
	prepare(&out, COUNT);
	for (int i = 0; i < COUNT; i++) {
		copies[i] = a;
		out.m[i].msg_hdr.msg_name = i < COUNT / 2 ? (void *)&a : (void *)&copies[i];
		out.io[i].iov_len = (size_t)snprintf(out.data[i], sizeof(out.data[i]), "m%d", i);
	}
	int sent = sendmmsg(s[0], out.m, COUNT, 0);
	printf("sendmmsg: %d sent\n", sent);
	int lens_right = 0;
	for (int i = 0; i < sent; i++)
		lens_right += out.m[i].msg_len == out.io[i].iov_len;
	printf("msg_len of every message sent: %s\n", lens_right == sent ? "right" : "wrong");
	got = receive(u, &in2, COUNT, "recvmmsg of sendmmsg's");
	shown_right = 0;
	for (int i = 0; i < got; i++)
		shown_right += ntohs(in2.name[i].sin_port) == port_of(s[0]);
	printf("every datagram from sender 0: %s\n", shown_right == COUNT ? "yes" : "no");

	prepare(&out, COUNT);
	for (int i = 0; i < COUNT; i++) {
		out.m[i].msg_hdr.msg_name = &in1.name[i];
		out.m[i].msg_hdr.msg_namelen = in1.m[i].msg_hdr.msg_namelen;
		out.io[i].iov_len = (size_t)snprintf(out.data[i], sizeof(out.data[i]), "r%s",
						     in1.data[i]);
	}
	printf("sendmmsg of replies: %d sent\n", sendmmsg(u, out.m, COUNT, 0));
	for (int k = 0; k < SENDERS; k++) {
		char what[64];
		snprintf(what, sizeof(what), "sender %d's recvmmsg of replies", k);
		got = receive(s[k], &back, COUNT / SENDERS, what);
		for (int i = 0; i < got; i++)
			if (atoi(back.data[i] + 1) % SENDERS != k ||
			    ntohs(back.name[i].sin_port) != ntohs(a.sin_port))
				die("a reply reached the wrong sender");
	}
	printf("every reply reached its sender\n");

	struct timespec timeout = { 5, 0 };
	if (sendto(s[0], "t", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1)
		die("sendto");
	await(u, "recvmmsg with a timeout");
	prepare(&in2, 1);
	if (recvmmsg(u, in2.m, 1, 0, &timeout) != 1)
		die("recvmmsg with a timeout");
	printf("recvmmsg left %lld.%09ld s of its timeout\n", (long long)timeout.tv_sec,
	       timeout.tv_nsec);
	return 0;
}
