/* RDPID and RDTSCP's TSC_AUX name the CPU a task runs on (Linux: node << 12 | cpu). Prints
 * them and getcpu's answer, then pins itself to CPU 1 and prints them again. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

static void show(const char *when)
{
	uint64_t pid;
	uint32_t lo, hi, aux;
	__asm__ volatile("rdpid %0" : "=r"(pid));
	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	printf("%s: rdpid %llu rdtscp aux %u getcpu %d\n", when, (unsigned long long)pid, aux,
	       sched_getcpu());
}

int main(void)
{
	show("start");
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		perror("sched_setaffinity");
		return 1;
	}
	show("on cpu 1");
	return 0;
}
