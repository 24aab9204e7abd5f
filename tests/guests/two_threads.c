/* Two threads that each write a line, joined by the main thread: a guest for strace -f
 * inside the group (ptrace_test.cc). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *worker(void *arg)
{
	const char *line = arg;
	if (write(1, line, strlen(line)) < 0)
		return (void *)1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, worker, "thread a\n");
	pthread_create(&b, NULL, worker, "thread b\n");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("joined\n");
	return 0;
}
