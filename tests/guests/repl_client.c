/* The client of detrun replicate's tests: writes keys through whichever replica serves
 * PORT, reconnecting when the connection fails (a leader killed, a new one taking over),
 * and counts the writes the server acknowledged. Then reads every acknowledged key back.
 * SERVER is [ADDRESS,ADDRESS...:]PORT: the replicas' IPv4 addresses (127.0.0.1 if none),
 * tried in turn from the first until one accepts (only the leader listens).
 *
 *   repl_client kv|mc SERVER N      SET k0..k(N-1) (kv: "SET k v" -> "OK";
 *                                   mc: memcached "set" -> "STORED"); prints
 *                                   "progress I" after every 500 acknowledged writes, "via
 *                                   ADDRESS" on each connection, and
 *                                   "acked A of N, reconnected R" at the end
 *   repl_client kv|mc SERVER N check  GET every key: "readable A of N" (every key must be
 *                                   there with its value, else "missing kI")
 *   repl_client bind PORT           "port PORT is in use" if binding 0.0.0.0:PORT (without
 *                                   SO_REUSEADDR) fails with EADDRINUSE here, else
 *                                   "port PORT is free": is a replica's socket bound?
 * A write whose answer was lost with its connection is sent again: both protocols'
 * SET is idempotent. Gives up (exit 1) after 120 s without a server. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_ADDRS 8

static bool mc;
static int port;
static struct in_addr addrs[MAX_ADDRS];
static int n_addrs, next_addr;

/* "[ADDRESS,ADDRESS...:]PORT" */
static bool parse_server(char *arg)
{
	char *colon = strrchr(arg, ':');
	port = atoi(colon ? colon + 1 : arg);
	addrs[0].s_addr = htonl(INADDR_LOOPBACK);
	n_addrs = 1;
	if (!colon)
		return port > 0;
	*colon = 0;
	n_addrs = 0;
	for (char *a = strtok(arg, ","); a; a = strtok(NULL, ","))
		if (n_addrs == MAX_ADDRS || inet_pton(AF_INET, a, &addrs[n_addrs++]) != 1)
			return false;
	return port > 0 && n_addrs > 0;
}

static int connect_server(void)
{
	for (int rounds = 0; rounds < 2400;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		a.sin_addr = addrs[next_addr];
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			char text[INET_ADDRSTRLEN];
			printf("via %s\n", inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text)));
			fflush(stdout);
			return fd;
		}
		close(fd);
		next_addr = (next_addr + 1) % n_addrs;
		if (next_addr == 0) { /* every address refused: wait a little */
			rounds++;
			usleep(50 * 1000);
		}
	}
	fprintf(stderr, "repl_client: no server on port %d for 120 s\n", port);
	exit(1);
}

/* One line of answer (up to '\n'), false if the connection failed. */
static bool read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;
	while (n + 1 < size) {
		ssize_t r = recv(fd, buf + n, 1, 0);
		if (r <= 0)
			return false;
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = 0;
	return true;
}

static bool send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t r = send(fd, p, len, MSG_NOSIGNAL);
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

/* 1 acknowledged, 0 refused, -1 connection failed. */
static int set_key(int fd, int i)
{
	char req[128], value[32], line[256];
	snprintf(value, sizeof(value), "v%d", i * 7);
	int n = mc ? snprintf(req, sizeof(req), "set k%d 0 0 %zu\r\n%s\r\n", i, strlen(value),
			      value)
		   : snprintf(req, sizeof(req), "SET k%d %s\n", i, value);
	if (!send_all(fd, req, (size_t)n) || !read_line(fd, line, sizeof(line)))
		return -1;
	return !strncmp(line, mc ? "STORED" : "OK", mc ? 6 : 2);
}

/* 1 there with its value, 0 not, -1 connection failed. */
static int get_key(int fd, int i)
{
	char req[64], line[256], want[32];
	snprintf(want, sizeof(want), "v%d", i * 7);
	int n = mc ? snprintf(req, sizeof(req), "get k%d\r\n", i)
		   : snprintf(req, sizeof(req), "GET k%d\n", i);
	if (!send_all(fd, req, (size_t)n) || !read_line(fd, line, sizeof(line)))
		return -1;
	if (!mc) /* kvserver: "VALUE v\n" */
		return !strncmp(line, "VALUE ", 6) && !strncmp(line + 6, want, strlen(want)) &&
		       line[6 + strlen(want)] == '\n';
	if (strncmp(line, "VALUE ", 6))
		return 0;
	char data[256], end[64];
	if (!read_line(fd, data, sizeof(data)) || !read_line(fd, end, sizeof(end)))
		return -1;
	return !strncmp(data, want, strlen(want)) && data[strlen(want)] == '\r';
}

static int probe_bind(int p)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p) };
	int r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	printf("port %d is %s\n", p, r < 0 && errno == EADDRINUSE ? "in use" : "free");
	close(fd);
	return r < 0 && errno != EADDRINUSE;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "bind"))
		return probe_bind(atoi(argv[2]));
	if (argc < 4 || (strcmp(argv[1], "kv") && strcmp(argv[1], "mc")) ||
	    !parse_server(argv[2])) {
		fprintf(stderr, "usage: repl_client kv|mc [ADDRESS,ADDRESS...:]PORT N [check]\n");
		return 2;
	}
	mc = !strcmp(argv[1], "mc");
	int total = atoi(argv[3]);
	bool check = argc > 4 && !strcmp(argv[4], "check");
	int fd = connect_server(), done = 0, reconnects = 0;
	for (int i = 0; i < total;) {
		int r = check ? get_key(fd, i) : set_key(fd, i);
		if (r < 0) {
			close(fd);
			fd = connect_server();
			reconnects++;
			continue;
		}
		if (r == 0 && check)
			printf("missing k%d\n", i);
		done += r;
		i++;
		if (!check && r && done % 500 == 0) {
			printf("progress %d\n", done);
			fflush(stdout);
		}
	}
	if (check)
		printf("readable %d of %d\n", done, total);
	else
		printf("acked %d of %d, reconnected %d\n", done, total, reconnects);
	close(fd);
	return 0;
}
