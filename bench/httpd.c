/* A small multithreaded HTTP/1.1 server for the server benchmark: one pthread per
 * connection, keep-alive, GET only. Each request opens, reads and closes the file under
 * DOCROOT (no cache), so every request makes file and socket syscalls.
 * Usage: httpd PORT DOCROOT — listens on 127.0.0.1:PORT until killed (SIGTERM). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *docroot;

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Answers one request whose head is req[0..len); returns 0 to keep the connection. */
static int respond(int fd, char *req)
{
	char path[512], *sp = strchr(req + 4, ' ');
	if (sp)
		*sp = 0; /* the path ends here; the rest of the head follows */
	if (strncmp(req, "GET /", 5) || !sp || sp - (req + 4) >= 256 || strstr(req + 4, "..")) {
		static const char bad[] =
			"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		write_all(fd, bad, sizeof bad - 1);
		return -1;
	}
	snprintf(path, sizeof path, "%s%.*s", docroot, (int)(sp - (req + 4)), req + 4);
	int keep = strcasestr(sp + 1, "\r\nConnection: close") == NULL;
	int f = open(path, O_RDONLY);
	struct stat st;
	if (f < 0 || fstat(f, &st) || !S_ISREG(st.st_mode)) {
		if (f >= 0)
			close(f);
		static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
		return write_all(fd, nf, sizeof nf - 1) || !keep ? -1 : 0;
	}
	size_t size = (size_t)st.st_size;
	char *resp = malloc(size + 256);
	if (!resp) {
		close(f);
		return -1;
	}
	int h = snprintf(
		resp, 256,
		"HTTP/1.1 200 OK\r\nServer: detrun-bench-httpd\r\nContent-Type: application/octet-stream\r\n"
		"Content-Length: %zu\r\nConnection: %s\r\n\r\n",
		size, keep ? "keep-alive" : "close");
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(f, resp + h + got, size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(f);
	int rc = got == size ? write_all(fd, resp, (size_t)h + size) : -1;
	free(resp);
	return rc || !keep ? -1 : 0;
}

static void *connection(void *arg)
{
	int fd = (int)(long)arg;
	char buf[8192];
	size_t len = 0;
	for (;;) {
		char *end;
		buf[len] = 0;
		while ((end = strstr(buf, "\r\n\r\n")) != NULL) { /* pipelined requests */
			end[2] = 0;
			if (respond(fd, buf))
				goto out;
			size_t used = (size_t)(end + 4 - buf);
			memmove(buf, buf + used, len - used);
			len -= used;
			buf[len] = 0;
		}
		if (len >= sizeof buf - 1)
			break; /* head too large */
		ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
out:
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: httpd PORT DOCROOT\n");
		return 2;
	}
	docroot = argv[2];
	signal(SIGPIPE, SIG_IGN);
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_port = htons((uint16_t)atoi(argv[1])) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) || listen(ls, 128)) {
		perror("httpd: listen");
		return 1;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			perror("httpd: accept");
			return 1;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_t t;
		if (pthread_create(&t, &attr, connection, (void *)(long)c))
			close(c);
	}
}
