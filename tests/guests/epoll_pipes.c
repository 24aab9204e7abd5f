/* e2e guest: the parent creates one pipe per child; each child writes short messages into
 * its pipe at different points of its own computation, then closes it and exits. The
 * parent waits on all read ends with epoll_wait and prints every event in order: which
 * pipe, what it read (or EOF). Signature: the event order and the chunking of the data.
 * Natively both vary; under detrun they must not.
 * usage: epoll_pipes [CHILDREN 1..16] [MESSAGES] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int msgs = argc > 2 ? atoi(argv[2]) : 20;
	if (n < 1 || n > 16 || msgs < 1) {
		fprintf(stderr, "usage: epoll_pipes [CHILDREN 1..16] [MESSAGES]\n");
		return 2;
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		perror("epoll_create1");
		return 1;
	}
	int rd[16];
	pid_t pids[16];
	for (int i = 0; i < n; i++) {
		int fd[2];
		if (pipe(fd)) {
			perror("pipe");
			return 1;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			close(fd[0]);
			for (int k = 0; k < i; k++)
				close(rd[k]);
			char m[32];
			for (int j = 0; j < msgs; j++) {
				/* different amounts of work per child and message */
				volatile unsigned x = (unsigned)(i * 131 + j);
				int work = 20000 + 15000 * ((i + 2 * j) % 5);
				for (int k = 0; k < work; k++)
					x = x * 1103515245u + 12345u;
				int len = snprintf(m, sizeof m, "%c%d;", 'a' + i, j);
				if (write(fd[1], m, (size_t)len) != len)
					_exit(99);
			}
			close(fd[1]);
			_exit(0);
		}
		close(fd[1]);
		rd[i] = fd[0];
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (unsigned)i };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[0], &ev)) {
			perror("epoll_ctl");
			return 1;
		}
	}
	/* what each pipe must deliver, whatever the chunking: "a0;a1;..." */
	static char want[16][4096], got[16][4096];
	size_t want_len[16], got_len[16] = { 0 };
	for (int i = 0; i < n; i++) {
		want_len[i] = 0;
		for (int j = 0; j < msgs && want_len[i] < sizeof want[i] - 32; j++)
			want_len[i] += (size_t)snprintf(want[i] + want_len[i], 32, "%c%d;", 'a' + i,
							j);
	}
	int open_pipes = n, waits = 0;
	while (open_pipes > 0) {
		struct epoll_event evs[16];
		int k = epoll_wait(ep, evs, 16, -1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			perror("epoll_wait");
			return 1;
		}
		waits++;
		printf("epoll_wait #%d: %d ready\n", waits, k);
		for (int e = 0; e < k; e++) {
			int i = (int)evs[e].data.u32;
			char buf[4096];
			ssize_t r = read(rd[i], buf, sizeof buf);
			if (r > 0) {
				if (got_len[i] + (size_t)r <= sizeof got[i])
					memcpy(got[i] + got_len[i], buf, (size_t)r);
				got_len[i] += (size_t)r;
				printf("  pipe %d:%s%s read %.*s\n", i,
				       evs[e].events & EPOLLIN ? " IN" : "",
				       evs[e].events & EPOLLHUP ? " HUP" : "", (int)r, buf);
			} else if (r == 0) {
				CHECK(got_len[i] == want_len[i] &&
					      !memcmp(got[i], want[i], want_len[i]),
				      "pipe %d delivered %zu bytes (\"%.*s\"), want \"%.*s\"", i,
				      got_len[i], (int)(got_len[i] < 4096 ? got_len[i] : 4096),
				      got[i], (int)want_len[i], want[i]);
				printf("  pipe %d: EOF\n", i);
				epoll_ctl(ep, EPOLL_CTL_DEL, rd[i], NULL);
				close(rd[i]);
				open_pipes--;
			} else {
				perror("read");
				return 1;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		int st;
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("child %d failed (status 0x%x)\n", i, st);
			return 1;
		}
	}
	printf("all %d children done after %d epoll_waits\n", n, waits);
	return 0;
}
