/* e2e guest: two children race on several pages of shared memory and pass bytes out of
 * it through a pipe, the ways page ownership (engine/page_share.h) is taken:
 *   - stores racing on a counter of each page (a writer holds a page alone),
 *   - loads of a page the parent filled before the fork (readers share it),
 *   - write(2) from shared memory, across two pages: the first is handed over at the
 *     call's stop, the second faults in the kernel, inside the call,
 *   - a memfd mapped by each child after the fork, beside the inherited anonymous region,
 *   - the second child moves its view of the region (mremap) halfway and goes on there.
 * The parent prints a digest of what came through the pipe, in order, and the counters:
 * natively they vary from run to run, under detrun they must not. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	PAGE = 4096,
	PAGES = 6,
	ROUNDS = 48,
	STORES = 20000, /* per round, on one counter */
	SENT = 24,      /* bytes written from shared memory each fourth round */
};

/* Page p of a region: a counter and a note of the last writer. */
struct page {
	volatile long counter;
	volatile char last[64];
	char fill[PAGE - sizeof(long) - 64];
};

static void child(struct page *shared, struct page *mine, int out, char mark)
{
	long seen = 0;
	for (int r = 0; r < ROUNDS; r++) {
		struct page *p = &shared[(r + (mark == 'b')) % (PAGES - 1)];
		for (int i = 0; i < STORES; i++)
			p->counter++;
		snprintf((char *)p->last, sizeof(p->last), "%c%d", mark, r);
		mine[r % 2].counter += r;
		seen += shared[PAGES - 1].counter; /* filled by the parent: read by both */
		if (r % 4 == 3) { /* the end of p's page and the start of the next one */
			const char *from = (const char *)(p + 1) - SENT / 2;
			CHECK(write(out, from, SENT) == SENT, "write");
		}
		if (mark == 'b' && r == ROUNDS / 2) {
			void *to = mremap(shared, PAGES * PAGE, PAGES * PAGE, MREMAP_MAYMOVE);
			CHECK(to != MAP_FAILED, "mremap");
			shared = to;
		}
	}
	CHECK(seen == ROUNDS * 1000L, "read %ld", seen);
}

int main(void)
{
	struct page *shared = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED, "mmap");
	shared[PAGES - 1].counter = 1000;
	int memfd = memfd_create("par_shared_pages", 0);
	CHECK(memfd >= 0 && ftruncate(memfd, 2 * PAGE) == 0, "memfd");
	int pipefd[2];
	CHECK(pipe(pipefd) == 0, "pipe");
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		CHECK(kids[k] >= 0, "fork");
		if (kids[k] == 0) {
			struct page *mine = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
						 memfd, 0);
			CHECK(mine != MAP_FAILED, "mmap memfd");
			close(pipefd[0]);
			child(shared, mine, pipefd[1], (char)('a' + k));
			_exit(0);
		}
	}
	close(pipefd[1]);
	uint64_t digest = 1469598103934665603ULL;
	char buf[SENT];
	ssize_t n;
	while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			digest = (digest ^ (unsigned char)buf[i]) * 1099511628211ULL;
	for (int k = 0; k < 2; k++) {
		int st;
		CHECK(waitpid(kids[k], &st, 0) == kids[k] && WIFEXITED(st) && !WEXITSTATUS(st),
		      "child %d ended 0x%x", k, st);
	}
	struct page *mine = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, memfd, 0);
	CHECK(mine != MAP_FAILED, "mmap memfd");
	printf("pipe %016llx counters", (unsigned long long)digest);
	for (int p = 0; p < PAGES - 1; p++)
		printf(" %ld", shared[p].counter);
	printf(" memfd %ld %ld\n", mine[0].counter, mine[1].counter);
	return 0;
}
