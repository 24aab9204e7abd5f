/* e2e guest: two processes race on a counter in shared memory, without locks, and mark
 * their turns in a shared trace. KIND says how they come to share it, each a way memory
 * domains merge (vkernel/memory_domain.h):
 *   anon    MAP_SHARED|MAP_ANONYMOUS mapped before the fork: the child inherits it
 *   memfd   one memfd, mapped by each process after the fork
 *   sysv    one System V segment, attached by each process after the fork
 *   file    one regular file, mapped by each process after the fork
 * Both map first, then start together (a pipe); the final counter and the order of the
 * marks vary natively from run to run, and must not under detrun, with any --jobs.
 * Natively the two may share one CPU that nothing else wants (the other one busy, a
 * runner with one CPU); only the kernel's preemption then varies the order, so a turn
 * between two yields lasts several time slices and ticks (about 12 ms here): turns of
 * 0.6 ms ended at the yields alone, and such a CPU printed the same every run.
 * usage: par_shared_race anon|memfd|sysv|file */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	ROUNDS = 40000000, /* 10M between yields: longer than a time slice on any CPU */
	MARKS = 32,        /* per process: dense, so natively the kernel's switches show */
	YIELD_EVERY = 8    /* marks: the switch points under detrun */
};

struct area {
	volatile long counter;
	volatile int len;
	volatile char trace[2 * MARKS + 1];
};

static const char *kind;
static int fd = -1, shmid = -1;

/* Made before the fork: what both processes map. */
static void make_object(void)
{
	char path[] = "/tmp/par_shared_race.XXXXXX";
	if (!strcmp(kind, "memfd"))
		fd = memfd_create("par_shared_race", 0);
	else if (!strcmp(kind, "file") && (fd = mkstemp(path)) >= 0)
		unlink(path); /* the open descriptor keeps the inode */
	else if (!strcmp(kind, "sysv"))
		shmid = shmget(IPC_PRIVATE, sizeof(struct area), IPC_CREAT | 0600);
	CHECK(strcmp(kind, "anon") ? fd >= 0 || shmid >= 0 : 1, "%s: no object", kind);
	CHECK(fd < 0 || ftruncate(fd, 4096) == 0, "%s: ftruncate", kind);
}

static struct area *map_object(void)
{
	void *p = shmid >= 0 ? shmat(shmid, NULL, 0)
			     : mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	CHECK(p != MAP_FAILED && p != (void *)-1, "%s: cannot map", kind);
	return p;
}

static void race(struct area *a, char mark)
{
	for (int i = 0; i < ROUNDS; i++) {
		a->counter++;
		if (i % (ROUNDS / MARKS) == 0) {
			if (a->len < 2 * MARKS)
				a->trace[a->len++] = mark;
			if (i % (ROUNDS / MARKS * YIELD_EVERY) == 0)
				sched_yield(); /* a switch point under detrun */
		}
	}
}

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: par_shared_race anon|memfd|sysv|file");
	kind = argv[1];
	make_object();
	struct area *a = !strcmp(kind, "anon") ? map_object() : NULL;
	int go[2];
	CHECK(pipe(go) == 0, "pipe");
	pid_t child = fork();
	CHECK(child >= 0, "fork");
	if (!a)
		a = map_object();
	if (child == 0) {
		CHECK(write(go[1], "g", 1) == 1, "write");
		race(a, 'c');
		_exit(0);
	}
	char g;
	CHECK(read(go[0], &g, 1) == 1, "read");
	race(a, 'p');
	int st;
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "child ended 0x%x", st);
	CHECK(a->counter >= 1 && a->counter <= 2 * ROUNDS, "counter %ld", a->counter);
	printf("%-5s counter %ld order %s\n", kind, a->counter, (const char *)a->trace);
	if (shmid >= 0)
		shmctl(shmid, IPC_RMID, NULL);
	return 0;
}
