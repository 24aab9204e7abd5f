/* e2e guest: the parent forks several children that all write numbered lines into ONE
 * shared pipe (each line is one write(2), smaller than PIPE_BUF, so lines never tear). The
 * parent reads everything, prints the lines in arrival order, then waits for the children
 * and prints their exit statuses in wait order (they close the pipe and work a little
 * before exiting, so the exit order races too). Children exit with 10 + their index.
 * Natively the arrival and wait orders vary; under detrun they must not.
 * usage: pipe_writers [CHILDREN 1..16] [LINES] */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

/* Lines never tear (one write each, under PIPE_BUF): every child's lines are all there, in
 * the order it wrote them. */
static void check_lines(const char *all, size_t len, int n, int lines)
{
	int next[16] = { 0 };
	size_t want = 0;
	char line[64];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < lines; j++)
			want += (size_t)snprintf(line, sizeof line, "child %d line %d\n", i, j);
	CHECK(len == want, "read %zu bytes, want %zu", len, want);
	for (const char *p = all; p < all + len;) {
		const char *end = memchr(p, '\n', (size_t)(all + len - p));
		CHECK(end, "an unterminated line at byte %zu", (size_t)(p - all));
		int i, j, used = 0;
		CHECK(sscanf(p, "child %d line %d%n", &i, &j, &used) == 2 && i >= 0 && i < n &&
			      p + used == end,
		      "a torn line at byte %zu: %.*s", (size_t)(p - all), (int)(end - p), p);
		CHECK(j == next[i], "child %d's line %d came where line %d was due", i, j, next[i]);
		next[i]++;
		p = end + 1;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	int lines = argc > 2 ? atoi(argv[2]) : 100;
	if (n < 1 || n > 16 || lines < 1) {
		fprintf(stderr, "usage: pipe_writers [CHILDREN 1..16] [LINES]\n");
		return 2;
	}
	int fd[2];
	if (pipe(fd)) {
		perror("pipe");
		return 1;
	}
	pid_t pids[16];
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			close(fd[0]);
			char line[64];
			for (int j = 0; j < lines; j++) {
				/* some private work between lines, so the writers race */
				volatile unsigned x = (unsigned)(i * 31 + j);
				for (int k = 0; k < 3000; k++)
					x = x * 1103515245u + 12345u;
				int len = snprintf(line, sizeof line, "child %d line %d\n", i, j);
				if (write(fd[1], line, (size_t)len) != len)
					_exit(99);
			}
			/* close the pipe, then more work before exiting: the exit order races */
			close(fd[1]);
			volatile unsigned y = (unsigned)i;
			for (int k = 0; k < 200000; k++)
				y = y * 1103515245u + 12345u;
			_exit(10 + i);
		}
	}
	close(fd[1]);
	/* read everything; print the lines in arrival order */
	size_t cap = 1 << 16, len = 0;
	char *all = malloc(cap);
	for (;;) {
		if (len == cap)
			all = realloc(all, cap *= 2);
		ssize_t r = read(fd[0], all + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("read");
			return 1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len == cap)
		all = realloc(all, cap + 1);
	all[len] = 0; /* check_lines scans it */
	check_lines(all, len, n, lines);
	fwrite(all, 1, len, stdout);
	printf("total %zu bytes\n", len);
	bool waited[16] = { false };
	for (int k = 0; k < n; k++) {
		int st;
		pid_t p = wait(&st);
		int idx = -1;
		for (int i = 0; i < n; i++)
			if (pids[i] == p)
				idx = i;
		CHECK(idx >= 0 && !waited[idx], "wait returned %d, no child left to wait for", p);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 10 + idx,
		      "child %d ended with status 0x%x, want exit %d", idx, st, 10 + idx);
		waited[idx] = true;
		if (WIFEXITED(st))
			printf("wait: child %d exited %d\n", idx, WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			printf("wait: child %d killed by signal %d\n", idx, WTERMSIG(st));
	}
	return 0;
}
