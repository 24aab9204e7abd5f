/* A server whose child exits while the server waits for a client that comes only after
 * that exit. The client (the test) waits for the child's connection to close, then
 * connects: so when detrun first looks at the waiting server after the child's last
 * event, no client is there yet; detrun runs the child out and finds the client at a later
 * look at the same logical time. When accept returns, the child's SIGCHLD (blocked, so
 * that it cannot cut the accept short) is pending. A replay must admit the client at that
 * later look too: admitted at the first, the server would go on before the child exits
 * and find no SIGCHLD pending.
 *
 * usage: rep_exit_then_accept SERVER_PORT CLIENT_PORT
 * Prints "sigchld pending at accept: yes" and "child status 0". */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int listen_on(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = loopback(port);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4) < 0) {
		perror("rep_exit_then_accept: listen");
		exit(1);
	}
	return s;
}

/* The child tells the test it is about to exit by connecting to it; the test waits for
 * the connection to close (the child's exit) before it becomes the server's client. */
static void child(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loopback(port);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("rep_exit_then_accept: connect");
		_exit(1);
	}
	/* A few events of its own: the parent reaches its accept meanwhile. */
	for (int i = 0; i < 4; i++)
		nanosleep(&(struct timespec){ 0, 1000 }, NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rep_exit_then_accept SERVER_PORT CLIENT_PORT\n");
		return 2;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int server = listen_on(atoi(argv[1]));
	pid_t pid = fork();
	if (pid == 0)
		child(atoi(argv[2]));
	int c = accept(server, NULL, NULL);
	if (c < 0) {
		perror("rep_exit_then_accept: accept");
		return 1;
	}
	sigset_t pending;
	sigpending(&pending);
	int seen = sigismember(&pending, SIGCHLD);
	char byte;
	if (read(c, &byte, 1) != 1) {
		perror("rep_exit_then_accept: read");
		return 1;
	}
	char line[64];
	int n = snprintf(line, sizeof(line), "sigchld pending at accept: %s\n",
			 seen ? "yes" : "no");
	if (write(c, line, (size_t)n) != n)
		return 1;
	int status;
	waitpid(pid, &status, 0);
	printf("%schild status %d\n", line, WEXITSTATUS(status));
	return 0;
}
