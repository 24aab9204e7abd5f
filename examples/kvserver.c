/* A small multithreaded TCP key-value server, the guest of detrun's record/replay demo.
 * Natively its output is not reproducible: connection threads log in whatever order the
 * kernel runs them, and the request counter races. It also carries a deliberate crash bug
 * (see handle_del) so that a recorded crash can be replayed.
 *
 * usage: kvserver PORT DATAFILE [ADDRESS]
 * Listens on 127.0.0.1, or on the IPv4 ADDRESS given (0.0.0.0: every interface).
 * One request per line: SET key value | GET key | DEL key | STATS | SHUTDOWN.
 * Every SET is appended to DATAFILE; SHUTDOWN writes the table, sorted by key, to
 * DATAFILE.snapshot once every client has gone. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
	KEY_MAX = 64,
	VALUE_MAX = 4096,
	NBUCKETS = 256
};

/* Large enough for the longest valid request; a line that does not fit is an error. */
enum {
	REQUEST_MAX = sizeof "SET " + KEY_MAX + 1 + VALUE_MAX + 1
};

struct entry {
	struct entry *next;
	char *value;
	char key[KEY_MAX + 1];
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static size_t nkeys;
static int data_fd;

/* Deliberate benign data race: incremented by every connection thread without the lock,
 * so concurrent increments can be lost and the final figure varies natively under load.
 * detrun makes it reproducible, which is what the demo shows. */
static volatile long requests;

static int listen_fd;
static atomic_bool stopping;

enum op {
	OP_SET,
	OP_GET,
	OP_DEL,
	OP_STATS,
	OP_SHUTDOWN,
	OP_ERROR
};

static const struct {
	const char *name;
	int args;
} ops[] = {
	[OP_SET] = { "SET", 2 },     [OP_GET] = { "GET", 1 },           [OP_DEL] = { "DEL", 1 },
	[OP_STATS] = { "STATS", 0 }, [OP_SHUTDOWN] = { "SHUTDOWN", 0 }, [OP_ERROR] = { "ERROR", 0 },
};

struct request {
	enum op op;
	const char *key;
	const char *value;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Returns the link that points at KEY's entry, or the NULL link ending its bucket, so
 * that SET can insert and DEL can unlink through the same pointer. */
static struct entry **find_slot(const char *key)
{
	unsigned h = 2166136261u;
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	struct entry **slot = &buckets[h % NBUCKETS];
	while (*slot && strcmp((*slot)->key, key) != 0)
		slot = &(*slot)->next;
	return slot;
}

/* Writes all of buf to a socket (MSG_NOSIGNAL: a client that hangs up early must not kill
 * the server with SIGPIPE) or to a file. */
static int put_all(int fd, const char *buf, size_t len, bool is_socket)
{
	while (len > 0) {
		ssize_t n = is_socket ? send(fd, buf, len, MSG_NOSIGNAL) : write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static struct request parse(char *line)
{
	struct request rq = { OP_ERROR, NULL, NULL };
	char *key = strchr(line, ' ');
	if (key)
		*key++ = '\0';
	enum op op = OP_SET;
	while (op < OP_ERROR && strcmp(line, ops[op].name) != 0)
		op++;
	if (op == OP_ERROR || (ops[op].args == 0) != (key == NULL))
		return rq;
	char *value = NULL;
	if (key) {
		value = strchr(key, ' ');
		if ((value != NULL) != (ops[op].args == 2))
			return rq;
		if (value)
			*value++ = '\0';
		size_t key_len = strlen(key);
		if (key_len == 0 || key_len > KEY_MAX || (value && strlen(value) > VALUE_MAX))
			return rq;
	}
	rq.op = op;
	rq.key = key;
	rq.value = value;
	return rq;
}

/* The log is written before the table changes, so a SET that could not be persisted is
 * refused rather than silently lost on restart. */
static const char *handle_set(const char *key, const char *value)
{
	char line[REQUEST_MAX];
	int len = snprintf(line, sizeof line, "SET %s %s\n", key, value);
	char *copy = strdup(value);
	if (!copy)
		return "ERROR\n";
	pthread_mutex_lock(&table_lock);
	if (put_all(data_fd, line, (size_t)len, false) < 0) {
		pthread_mutex_unlock(&table_lock);
		free(copy);
		return "ERROR\n";
	}
	struct entry **slot = find_slot(key);
	struct entry *e = *slot;
	if (e) {
		free(e->value);
	} else {
		e = calloc(1, sizeof *e);
		if (!e)
			die("calloc");
		strcpy(e->key, key);
		*slot = e;
		nkeys++;
	}
	e->value = copy;
	pthread_mutex_unlock(&table_lock);
	return "OK\n";
}

static void handle_get(const char *key, char *reply, size_t size)
{
	pthread_mutex_lock(&table_lock);
	struct entry *e = *find_slot(key);
	if (e)
		snprintf(reply, size, "VALUE %s\n", e->value);
	else
		snprintf(reply, size, "NOTFOUND\n");
	pthread_mutex_unlock(&table_lock);
}

static const char *handle_del(const char *key)
{
	pthread_mutex_lock(&table_lock);
	struct entry **slot = find_slot(key);
	/* THE BUG the record/replay test reproduces: nothing checks that the key exists.
	 * For a missing key the lookup yields NULL and e->next below dereferences it, so
	 * `DEL` of an absent key kills the server with SIGSEGV. */
	struct entry *e = *slot;
	*slot = e->next;
	nkeys--;
	pthread_mutex_unlock(&table_lock);
	free(e->value);
	free(e);
	return "DELETED\n";
}

/* Ends the accept loop in main; shutdown also wakes an accept already blocked. */
static void stop_accepting(void)
{
	atomic_store(&stopping, true);
	shutdown(listen_fd, SHUT_RDWR);
}

/* Returns -1 when the connection must be closed. */
static int serve_line(int fd, int conn_id, char *line)
{
	requests++;
	struct request rq = parse(line);
	if (rq.key)
		printf("conn %d: %s %s\n", conn_id, ops[rq.op].name, rq.key);
	else
		printf("conn %d: %s\n", conn_id, ops[rq.op].name);
	fflush(stdout);

	char buf[sizeof "VALUE " + VALUE_MAX + 1];
	const char *reply = buf;
	switch (rq.op) {
	case OP_SET:
		reply = handle_set(rq.key, rq.value);
		break;
	case OP_GET:
		handle_get(rq.key, buf, sizeof buf);
		break;
	case OP_DEL:
		reply = handle_del(rq.key);
		break;
	case OP_STATS:
		pthread_mutex_lock(&table_lock);
		snprintf(buf, sizeof buf, "STATS requests=%ld keys=%zu\n", requests, nkeys);
		pthread_mutex_unlock(&table_lock);
		break;
	case OP_SHUTDOWN:
		reply = "BYE\n";
		break;
	case OP_ERROR:
		reply = "ERROR\n";
		break;
	}
	if (put_all(fd, reply, strlen(reply), true) < 0)
		return -1;
	if (rq.op == OP_SHUTDOWN)
		stop_accepting();
	return 0;
}

struct conn {
	int fd;
	int id;
};

/* Requests may arrive split across segments or several to a segment, so bytes are
 * gathered here and served one complete line at a time. */
static void serve_connection(int fd, int conn_id)
{
	char buf[REQUEST_MAX];
	size_t len = 0;
	for (;;) {
		char *start = buf, *nl;
		while ((nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
			*nl = '\0';
			if (serve_line(fd, conn_id, start) < 0)
				return;
			start = nl + 1;
		}
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
		if (len == sizeof buf) {
			requests++;
			printf("conn %d: %s\n", conn_id, ops[OP_ERROR].name);
			fflush(stdout);
			put_all(fd, "ERROR\n", 6, true);
			return;
		}
		ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		len += (size_t)n;
	}
}

static void *connection(void *arg)
{
	struct conn c = *(struct conn *)arg;
	free(arg);
	serve_connection(c.fd, c.id);
	close(c.fd);
	return NULL;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(struct entry *const *)a)->key, (*(struct entry *const *)b)->key);
}

static void write_snapshot(const char *datafile)
{
	struct entry **sorted = malloc((nkeys ? nkeys : 1) * sizeof *sorted);
	if (!sorted)
		die("malloc");
	size_t n = 0;
	for (int b = 0; b < NBUCKETS; b++)
		for (struct entry *e = buckets[b]; e; e = e->next)
			sorted[n++] = e;
	qsort(sorted, n, sizeof *sorted, by_key);

	char path[4096];
	snprintf(path, sizeof path, "%s.snapshot", datafile);
	FILE *f = fopen(path, "w");
	if (!f)
		die(path);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %s\n", sorted[i]->key, sorted[i]->value);
	if (fclose(f) != 0)
		die(path);
	free(sorted);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: kvserver PORT DATAFILE [ADDRESS]\n");
		return 2;
	}
	int port = atoi(argv[1]);
	if (port < 0 || port > 65535) {
		fprintf(stderr, "kvserver: bad port %s\n", argv[1]);
		return 2;
	}
	data_fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (data_fd < 0)
		die(argv[2]);

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0)
		die("socket");
	int one = 1;
	if (setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
		die("setsockopt");
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (argc == 4 && inet_pton(AF_INET, argv[3], &addr.sin_addr) != 1) {
		fprintf(stderr, "kvserver: bad IPv4 address %s\n", argv[3]);
		return 2;
	}
	if (bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) < 0)
		die("bind");
	if (listen(listen_fd, 64) < 0)
		die("listen");
	socklen_t addr_len = sizeof addr;
	if (getsockname(listen_fd, (struct sockaddr *)&addr, &addr_len) < 0)
		die("getsockname");
	printf("listening on port %d\n", ntohs(addr.sin_port));
	fflush(stdout);

	pthread_t *threads = NULL;
	size_t nthreads = 0, cap = 0;
	int next_id = 1;
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		if (fd < 0) {
			if (atomic_load(&stopping))
				break;
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		if (nthreads == cap) {
			cap = cap ? cap * 2 : 16;
			threads = realloc(threads, cap * sizeof *threads);
			if (!threads)
				die("realloc");
		}
		struct conn *c = malloc(sizeof *c);
		if (!c)
			die("malloc");
		c->fd = fd;
		c->id = next_id++;
		int err = pthread_create(&threads[nthreads], NULL, connection, c);
		if (err != 0) {
			errno = err;
			die("pthread_create");
		}
		nthreads++;
	}
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	close(listen_fd);

	printf("served %ld requests, %zu keys\n", requests, nkeys);
	fflush(stdout);
	write_snapshot(argv[2]);
	close(data_fd);
	return 0;
}
