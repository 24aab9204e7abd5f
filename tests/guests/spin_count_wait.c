/* A thread counts in a register while it waits for a flag main sets after a call: a loop
 * that writes no memory but whose registers change. Descheduled where timing chose, it
 * resumes with a count that depends on that point, and detrun must say so (a hazard when
 * it runs again). Prints only what does not depend on the count. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "selfcheck.h"

static atomic_int flag;

static void *counter(void *arg)
{
	unsigned long n = 0;
	while (!atomic_load_explicit(&flag, memory_order_relaxed))
		n++;
	printf("spin_count_wait: counted %s\n", n ? "some" : "none");
	return arg;
}

int main(void)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, counter, NULL) == 0, "pthread_create");
	CHECK(write(STDOUT_FILENO, "spin_count_wait: main sets the flag\n", 36) == 36, "write");
	atomic_store(&flag, 1);
	pthread_join(t, NULL);
	return 0;
}
