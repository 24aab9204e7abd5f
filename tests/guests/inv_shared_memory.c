/* Inventory: MAP_SHARED memory between processes. Writers race on anonymous shared memory,
 * a memfd, POSIX shm and SysV shm without locks; the interleaving shows in the result. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

enum {
	WRITERS = 3,
	ROUNDS = 200000
};

struct area {
	volatile long counter;
	volatile char trace[64];
	volatile int len;
};

static void race(struct area *a, const char *name)
{
	CHECK(a != MAP_FAILED && a != NULL, "%s: no shared memory", name);
	memset((void *)a, 0, sizeof(*a));
	for (int w = 0; w < WRITERS; w++)
		if (fork() == 0) {
			for (int i = 0; i < ROUNDS; i++) {
				a->counter++;
				if (i % (ROUNDS / 8) == 0) {
					if (a->len < 63)
						a->trace[a->len++] = (char)('A' + w);
					sched_yield(); /* a switch point under detrun */
				}
			}
			_exit(0);
		}
	int st, waited = 0;
	pid_t w;
	while ((w = wait(&st)) > 0) {
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: writer %d ended 0x%x", name, w,
		      st);
		waited++;
	}
	CHECK(waited == WRITERS, "%s: %d writers waited for, want %d", name, waited, WRITERS);
	/* the trace is racy too, but holds at most 8 marks of each writer */
	CHECK(a->counter >= 1 && a->counter <= (long)WRITERS * ROUNDS && a->len <= WRITERS * 8,
	      "%s: counter %ld, %d marks", name, a->counter, a->len);
	printf("%-10s counter %ld order %s\n", name, a->counter, (const char *)a->trace);
}

int main(void)
{
	race(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
	     "anonymous");
	int mfd = memfd_create("inv", 0);
	ftruncate(mfd, 4096);
	race(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0), "memfd");
	char name[64];
	snprintf(name, sizeof(name), "/detrun-inv-%d", getpid());
	int sfd = shm_open(name, O_CREAT | O_RDWR, 0600);
	ftruncate(sfd, 4096);
	race(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0), "shm_open");
	shm_unlink(name);
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	struct area *sysv = shmat(id, NULL, 0);
	race(sysv, "sysv shm");
	shmdt(sysv);
	shmctl(id, IPC_RMID, NULL);
	return 0;
}
