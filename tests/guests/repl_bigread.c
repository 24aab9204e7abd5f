/* One large read from a client, for detrun replicate's tests: an input record larger than
 * NATS's max_payload (1 MiB by default).
 *
 *   repl_bigread serve PORT N   listens on 127.0.0.1:PORT, prints "listening", accepts
 *                               one connection, asks the kernel (SO_RCVLOWAT) to report
 *                               it readable only once N bytes are there, then reads them
 *                               with ONE read into a buffer of N + 1 MiB and prints (and
 *                               answers) "first read R bytes, total T bytes, digest D";
 *                               reads the rest, if any, before answering. Exits 0.
 *   repl_bigread send PORT N    connects (retrying while nobody listens), writes N bytes
 *                               in one write, reads the answer; prints "sent N bytes,
 *                               digest D; server: ..." and "match" if the server counted
 *                               the same bytes with the same digest (exit 0), else exit 1.
 * The bytes are a fixed pattern; the digest is FNV-1a 64 over all of them. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static struct sockaddr_in address(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int serve(int port, size_t n)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = address(port);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4)) {
		perror("repl_bigread: bind/listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	int fd = accept(ls, NULL, NULL);
	int low = (int)n;
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
	struct pollfd p = { fd, POLLIN, 0 };
	poll(&p, 1, -1);
	size_t cap = n + (1u << 20);
	unsigned char *buf = malloc(cap);
	ssize_t first = read(fd, buf, cap);
	size_t total = first > 0 ? (size_t)first : 0;
	uint64_t h = fnv(14695981039346656037ULL, buf, total);
	while (total < n) { /* the kernel gave less at once: the rest, for the count */
		ssize_t r = read(fd, buf, cap);
		if (r <= 0)
			break;
		h = fnv(h, buf, (size_t)r);
		total += (size_t)r;
	}
	char line[160];
	int len = snprintf(line, sizeof(line),
			   "first read %zd bytes, total %zu bytes, digest %016llx\n", first, total,
			   (unsigned long long)h);
	fputs(line, stdout);
	fflush(stdout);
	if (write(fd, line, (size_t)len) != len)
		perror("repl_bigread: answer");
	close(fd);
	close(ls);
	free(buf);
	return 0;
}

static int send_all(int port, size_t n)
{
	unsigned char *buf = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(i * 131 + (i >> 12));
	uint64_t h = fnv(14695981039346656037ULL, buf, n);
	int fd = -1;
	for (int tries = 0; tries < 2400 && fd < 0; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = address(port);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			close(fd);
			fd = -1;
			usleep(50 * 1000);
		}
	}
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n) {
		fprintf(stderr, "repl_bigread: cannot send %zu bytes to port %d\n", n, port);
		return 1;
	}
	char answer[160] = "";
	size_t got = 0;
	ssize_t r;
	while (got + 1 < sizeof(answer) &&
	       (r = read(fd, answer + got, sizeof(answer) - 1 - got)) > 0)
		got += (size_t)r;
	answer[got] = 0;
	char want[64];
	snprintf(want, sizeof(want), "total %zu bytes, digest %016llx\n", n, (unsigned long long)h);
	printf("sent %zu bytes, digest %016llx; server: %s", n, (unsigned long long)h,
	       got ? answer : "(nothing)\n");
	int match = strstr(answer, want) != NULL;
	if (match)
		printf("match\n");
	free(buf);
	return match ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: repl_bigread serve|send PORT N\n");
		return 2;
	}
	int port = atoi(argv[2]);
	size_t n = strtoul(argv[3], NULL, 10);
	return strcmp(argv[1], "serve") ? send_all(port, n) : serve(port, n);
}
