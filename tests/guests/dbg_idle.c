/* Waits for a connection that never comes: every task waits for outside input, none
 * runs, and gdb's Ctrl-C must still stop the group. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

int main(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0)
		return 1;
	printf("waiting\n");
	fflush(stdout);
	int c = accept(fd, NULL, NULL);
	printf(c >= 0 ? "DBG-IDLE-CONNECTED\n" : "DBG-IDLE-FAILED\n");
	return 0;
}
