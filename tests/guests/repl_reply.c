/* A server that notes every reply it sent, for detrun replicate's output-commit test.
 *
 *   repl_reply PORT   listens on 127.0.0.1:PORT, prints "listening", accepts one
 *                     connection; for each line L read, writes "got L\n" to the client and,
 *                     once that write returned, appends "replied L\n" to the file
 *                     replied.txt. Exits 0 at the client's end.
 *
 * Natively (and under plain detrun) the reply is in the client's socket when the file
 * says it was sent: on loopback a write that returned has delivered its bytes. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void note(const char *line)
{
	int fd = open("replied.txt", O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		if (write(fd, "replied ", 8) != 8 || write(fd, line, strlen(line)) < 0)
			perror("repl_reply: replied.txt");
		close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: repl_reply PORT\n");
		return 2;
	}
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(argv[1])) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4)) {
		perror("repl_reply: bind/listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	int fd = accept(ls, NULL, NULL);
	FILE *in = fdopen(fd, "r");
	char line[256], reply[300];
	while (in && fgets(line, sizeof(line), in)) {
		int n = snprintf(reply, sizeof(reply), "got %s", line);
		if (write(fd, reply, (size_t)n) != n) {
			perror("repl_reply: write");
			return 1;
		}
		note(line);
	}
	return 0;
}
