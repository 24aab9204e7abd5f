/* Load client for kvserver: concurrent connections each store and read back their own
 * keys and check every reply, so a run either proves the server answered correctly or
 * says exactly where it did not.
 *
 * usage: kvclient [ADDRESS:]PORT CONNECTIONS REQUESTS VALUE_SIZE [--check] [--shutdown]
 *                 [--crash]
 * ADDRESS is an IPv4 address (default 127.0.0.1).
 * --check only reads: each GET expects the value a run with the same arguments stored (a
 * replica that took over must have every key written through the one before).
 * --crash sends `DEL no_such_key`, which kvserver's deliberate bug turns into a SIGSEGV;
 * --shutdown then asks the server to stop. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum {
	KEY_MAX = 64,
	VALUE_MAX = 4096,
	MAX_CONNECTIONS = 256,
	TIMEOUT_SECONDS = 20
};
enum {
	LINE_SIZE = sizeof "SET " + KEY_MAX + 1 + VALUE_MAX + 1
};

static int port, value_size;
static bool check_only;            /* --check */
static struct in_addr server_addr; /* 127.0.0.1 unless given */
static long requests_per_conn;

/* One connection: a socket and the bytes received but not yet returned as a line. */
struct conn {
	int fd;
	size_t len;
	char buf[LINE_SIZE];
};

struct worker {
	pthread_t thread;
	int id;
	long ok;
	char error[256];
};

static int conn_open(struct conn *c, char *error, size_t size)
{
	c->len = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0) {
		snprintf(error, size, "socket: %s", strerror(errno));
		return -1;
	}
	/* A server that died or hangs must turn into an error, never into a hung client. */
	struct timeval tv = { .tv_sec = TIMEOUT_SECONDS };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr = server_addr;
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		snprintf(error, size, "connect to port %d: %s", port, strerror(errno));
		close(c->fd);
		return -1;
	}
	return 0;
}

static int conn_send(struct conn *c, const char *buf, size_t len, char *error, size_t size)
{
	while (len > 0) {
		/* A dead server must be reported, not kill the client with SIGPIPE. */
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(error, size, "send: %s", strerror(errno));
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one reply line into LINE without its newline. Returns 1 for a line, 0 when the
 * server closed the connection, -1 on an error (described in ERROR). */
static int conn_read_line(struct conn *c, char *line, size_t line_size, char *error, size_t size)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			if (n >= line_size) {
				snprintf(error, size, "reply longer than %zu bytes", line_size - 1);
				return -1;
			}
			memcpy(line, c->buf, n);
			line[n] = '\0';
			c->len -= n + 1;
			memmove(c->buf, nl + 1, c->len);
			return 1;
		}
		if (c->len == sizeof c->buf) {
			snprintf(error, size, "reply longer than %zu bytes", sizeof c->buf);
			return -1;
		}
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			snprintf(error, size, "no reply within %d s", TIMEOUT_SECONDS);
			return -1;
		}
		if (n < 0) {
			snprintf(error, size, "recv: %s", strerror(errno));
			return -1;
		}
		c->len += (size_t)n;
	}
}

/* Sends REQUEST (one line, newline included) and checks that the reply is EXPECTED. */
static int exchange(struct conn *c, const char *request, const char *expected, char *error,
		    size_t size)
{
	if (conn_send(c, request, strlen(request), error, size) < 0)
		return -1;
	char reply[LINE_SIZE];
	int rc = conn_read_line(c, reply, sizeof reply, error, size);
	if (rc == 0)
		snprintf(error, size, "server closed the connection");
	if (rc <= 0)
		return -1;
	if (strcmp(reply, expected) != 0) {
		int shown = (int)strcspn(request, "\n");
		snprintf(error, size, "%.*s: expected \"%.40s\", got \"%.40s\"",
			 shown < 40 ? shown : 40, request, expected, reply);
		return -1;
	}
	return 0;
}

/* Every value differs from the others, so a reply carrying another key's value is caught. */
static void make_value(char *value, int thread, long pair)
{
	for (int i = 0; i < value_size; i++)
		value[i] = (char)('!' + (thread * 131 + pair * 31 + i * 7) % 94);
	value[value_size] = '\0';
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	struct conn c;
	char value[VALUE_MAX + 1], request[LINE_SIZE], expected[LINE_SIZE];
	if (conn_open(&c, w->error, sizeof w->error) < 0)
		return NULL;
	for (long i = 0; i < requests_per_conn; i++) {
		long pair = i / 2;
		make_value(value, w->id, pair);
		if (check_only && i % 2 == 0)
			continue;
		if (i % 2 == 0) {
			snprintf(request, sizeof request, "SET k%d_%ld %s\n", w->id, pair, value);
			snprintf(expected, sizeof expected, "OK");
		} else {
			snprintf(request, sizeof request, "GET k%d_%ld\n", w->id, pair);
			snprintf(expected, sizeof expected, "VALUE %s", value);
		}
		if (exchange(&c, request, expected, w->error, sizeof w->error) < 0)
			break;
		w->ok++;
	}
	close(c.fd);
	return NULL;
}

/* The server is expected to die on this request; a reply means its bug is gone. */
static int crash_server(char *error, size_t size)
{
	struct conn c;
	if (conn_open(&c, error, size) < 0)
		return -1;
	char reply[LINE_SIZE];
	int rc = conn_send(&c, "DEL no_such_key\n", 16, error, size);
	if (rc == 0)
		rc = conn_read_line(&c, reply, sizeof reply, error, size);
	if (rc == 0)
		printf("kvclient: server closed the connection\n");
	else if (rc > 0)
		printf("kvclient: DEL no_such_key: %s\n", reply);
	close(c.fd);
	return rc < 0 ? -1 : 0;
}

static int shutdown_server(char *error, size_t size)
{
	struct conn c;
	if (conn_open(&c, error, size) < 0)
		return -1;
	int rc = exchange(&c, "SHUTDOWN\n", "BYE", error, size);
	close(c.fd);
	return rc;
}

static long parse_arg(const char *s, long min, long max, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "kvclient: %s must be %ld..%ld, not %s\n", what, min, max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: kvclient [ADDRESS:]PORT CONNECTIONS REQUESTS VALUE_SIZE "
				"[--check] [--shutdown] [--crash]\n");
		return 2;
	}
	server_addr.s_addr = htonl(INADDR_LOOPBACK);
	char *colon = strrchr(argv[1], ':');
	if (colon) {
		*colon = 0;
		if (inet_pton(AF_INET, argv[1], &server_addr) != 1) {
			fprintf(stderr, "kvclient: bad IPv4 address %s\n", argv[1]);
			return 2;
		}
	}
	port = (int)parse_arg(colon ? colon + 1 : argv[1], 1, 65535, "PORT");
	int nconn = (int)parse_arg(argv[2], 1, MAX_CONNECTIONS, "CONNECTIONS");
	requests_per_conn = parse_arg(argv[3], 0, 1000000000, "REQUESTS");
	value_size = (int)parse_arg(argv[4], 1, VALUE_MAX, "VALUE_SIZE");
	bool do_shutdown = false, do_crash = false;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "--check") == 0) {
			check_only = true;
		} else if (strcmp(argv[i], "--shutdown") == 0) {
			do_shutdown = true;
		} else if (strcmp(argv[i], "--crash") == 0) {
			do_crash = true;
		} else {
			fprintf(stderr, "kvclient: unknown option %s\n", argv[i]);
			return 2;
		}
	}

	struct worker *workers = calloc((size_t)nconn, sizeof *workers);
	if (!workers) {
		fprintf(stderr, "kvclient: out of memory\n");
		return 1;
	}
	for (int i = 0; i < nconn; i++) {
		workers[i].id = i;
		int err = pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]);
		if (err != 0) {
			fprintf(stderr, "kvclient: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	long ok = 0;
	const char *failure = NULL;
	char error[300];
	for (int i = 0; i < nconn; i++) {
		pthread_join(workers[i].thread, NULL);
		ok += workers[i].ok;
		if (!failure && workers[i].error[0]) {
			snprintf(error, sizeof error, "connection %d: %s", i, workers[i].error);
			failure = error;
		}
	}
	free(workers);
	if (!failure && do_crash) {
		if (crash_server(error, sizeof error) < 0)
			failure = error;
	}
	if (!failure && do_shutdown) {
		if (shutdown_server(error, sizeof error) < 0)
			failure = error;
		else
			ok++;
	}
	if (failure) {
		fprintf(stderr, "kvclient: %s\n", failure);
		return 1;
	}
	printf("kvclient: %ld requests ok\n", ok);
	return 0;
}
