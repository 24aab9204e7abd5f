/* Waits in ppoll, with a signal mask of its own, for input that never comes — on a TCP
 * connection to 127.0.0.1:PORT (a peer that stays silent), or on stdin without an
 * argument; an alarm ends the wait. Under record/replay the wait is outside input and the
 * signal ends it: replay must end it the same way (EINTR, the handler run once), although
 * its stand-in for the connection is a socket that was never connected. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

int main(int argc, char **argv)
{
	int fd = 0;
	if (argc > 1) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons(atoi(argv[1])),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("connect");
			return 1;
		}
	}
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	sigset_t blocked, none;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGALRM);
	sigprocmask(SIG_BLOCK, &blocked, NULL); /* only ppoll's own mask lets it through */
	sigemptyset(&none);
	alarm(1);
	struct pollfd p = { fd, POLLIN, 0 };
	int r = ppoll(&p, 1, NULL, &none);
	printf("ppoll=%d %s revents=%#x alarms=%d\n", r, r < 0 ? strerror(errno) : "-", p.revents,
	       (int)alarms);
	return 0;
}
