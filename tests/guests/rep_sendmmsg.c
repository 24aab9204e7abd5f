/* Sends two UDP datagrams with one sendmmsg: the first names the size of FILE, which the
 * program only stats (never opens, so no fingerprint covers it). A replay that finds the
 * file another size sends other bytes, which must be caught as a divergence.
 * Prints "sent 2 messages: size=N". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rep_sendmmsg FILE\n");
		return 2;
	}
	struct stat st;
	if (stat(argv[1], &st) < 0) {
		perror("stat");
		return 1;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) {
		perror("socket");
		return 1;
	}
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char first[64], second[] = "hello";
	snprintf(first, sizeof(first), "size=%lld", (long long)st.st_size);
	struct iovec iov[2] = { { first, strlen(first) }, { second, strlen(second) } };
	struct mmsghdr m[2];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 2; i++) {
		m[i].msg_hdr.msg_name = &to;
		m[i].msg_hdr.msg_namelen = sizeof(to);
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	int n = sendmmsg(s, m, 2, 0);
	if (n < 0) {
		perror("sendmmsg");
		return 1;
	}
	printf("sent %d messages: %s (%u and %u bytes)\n", n, first, m[0].msg_len, m[1].msg_len);
	return 0;
}
