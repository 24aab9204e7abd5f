/* Binds a unix socket to DIR/sock and uses the file like a server does (PostgreSQL with
 * -k DIR): chmod, stat, then unlink. Prints each result; under replay the same lines must
 * come out, so the socket file must exist there too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void result(const char *what, int r)
{
	printf("%s: %s\n", what, r == 0 ? "ok" : strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rep_unix_bind DIR\n");
		return 2;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", argv[1]);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0) {
		perror("socket");
		return 1;
	}
	result("bind", bind(s, (struct sockaddr *)&a, sizeof(a)));
	result("listen", listen(s, 4));
	result("chmod", chmod(a.sun_path, 0777));
	struct stat st;
	int r = stat(a.sun_path, &st);
	result("stat", r);
	if (r == 0)
		printf("socket file: %s, mode %o\n", S_ISSOCK(st.st_mode) ? "yes" : "no",
		       (unsigned)(st.st_mode & 07777));
	result("unlink", unlink(a.sun_path));
	return 0;
}
