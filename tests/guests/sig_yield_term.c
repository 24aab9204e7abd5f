/* One thread loops on sched_yield while the main thread waits to join it: SIGTERM sent
 * to detrun must still end the run (exit 143). Prints "ready" once both are in place. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static void *yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) /* well into the loop when the test sees "ready" */
		sched_yield();
	printf("ready\n");
	fflush(stdout);
	for (;;)
		sched_yield();
	return NULL;
}

int main(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, yielder, NULL))
		return 1;
	pthread_join(th, NULL);
	return 0;
}
