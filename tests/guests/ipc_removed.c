/* e2e guest (issue 17, from rr's tests): a thread waiting on a System V object that another
 * thread removes wakes with EIDRM: msgrcv on an empty queue, msgsnd on a full one, semop
 * and semtimedop on a semaphore at 0. The remover waits until the waiter says it makes the
 * call; natively it may still remove the object before the waiter sleeps in the call (then
 * the call finds no object: EINVAL), so that round is tried again with a fresh object,
 * yielding more before the removal each time. The output is the same natively and under
 * detrun. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <time.h>

enum kind {
	MSGRCV,
	MSGSND,
	SEMOP,
	SEMTIMEDOP
};
static const char *const names[] = { "msgrcv on an empty queue", "msgsnd on a full queue", "semop",
				     "semtimedop" };
static enum kind kind;
static int id, calling;
static struct {
	long mtype;
	char text[64];
} msg = { 1, "x" };

static void *waiter(void *out)
{
	struct sembuf down = { 0, -1, 0 };
	struct timespec long_ago = { 1000, 0 };
	long r;
	__atomic_store_n(&calling, 1, __ATOMIC_SEQ_CST);
	if (kind == MSGRCV)
		r = msgrcv(id, &msg, sizeof(msg.text), 0, 0);
	else if (kind == MSGSND)
		r = msgsnd(id, &msg, sizeof(msg.text), 0);
	else if (kind == SEMOP)
		r = semop(id, &down, 1);
	else
		r = semtimedop(id, &down, 1, &long_ago);
	*(int *)out = r < 0 ? errno : 0;
	return NULL;
}

/* One round: the error the waiter's call ended with when the object was removed. */
static int removed_while_waiting(int yields)
{
	int is_msg = kind == MSGRCV || kind == MSGSND, err = -1;
	id = is_msg ? msgget(IPC_PRIVATE, 0600) : semget(IPC_PRIVATE, 1, 0600);
	if (id < 0)
		return -1;
	while (kind == MSGSND && msgsnd(id, &msg, sizeof(msg.text), IPC_NOWAIT) == 0)
		;
	__atomic_store_n(&calling, 0, __ATOMIC_SEQ_CST);
	pthread_t th;
	pthread_create(&th, NULL, waiter, &err);
	while (!__atomic_load_n(&calling, __ATOMIC_SEQ_CST))
		sched_yield();
	for (int i = 0; i < yields; i++)
		sched_yield();
	if (is_msg ? msgctl(id, IPC_RMID, NULL) : semctl(id, 0, IPC_RMID))
		return -1;
	pthread_join(th, NULL);
	return err;
}

int main(void)
{
	for (kind = MSGRCV; kind <= SEMTIMEDOP; kind++) {
		int err = EINVAL;
		for (int round = 0; round < 100 && err == EINVAL; round++)
			err = removed_while_waiting(round);
		if (err < 0)
			return 1;
		printf("%s, removed meanwhile: %s\n", names[kind],
		       err == EIDRM ? "EIDRM" : strerror(err));
	}
	return 0;
}
