/* hardening guest (sched, issue 9 point 9): every view a program has of the CPU it runs on
 * — sched_getcpu, getcpu, RDTSCP's TSC_AUX, the CPUID leaves that carry an APIC or core
 * id, /proc/self/stat's processor field, /proc/self/status's Cpus_allowed_list — printed,
 * then it waits until its standard input ends (the test looks at the real CPU meanwhile).
 * Under detrun the output must not depend on which real CPU the group was given. */
#include <cpuid.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void leaf(unsigned l, unsigned sub)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	__cpuid_count(l, sub, a, b, c, d);
	printf("cpuid %08x.%u %08x %08x %08x %08x\n", l, sub, a, b, c, d);
}

static void proc_line(const char *file, const char *prefix)
{
	char line[512];
	FILE *f = fopen(file, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, prefix, strlen(prefix)))
			printf("%s", line);
	if (f)
		fclose(f);
}

static void stat_processor(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	int field = 2;
	for (char *tok = p ? strtok(p + 1, " ") : NULL; tok; tok = strtok(NULL, " "))
		if (++field == 39)
			printf("stat processor %s\n", tok);
}

int main(void)
{
	unsigned cpu = 99, node = 99, aux = 99;
	printf("sched_getcpu %d\n", sched_getcpu());
	syscall(SYS_getcpu, &cpu, &node, NULL);
	printf("getcpu %u node %u\n", cpu, node);
	__builtin_ia32_rdtscp(&aux);
	printf("rdtscp aux %u\n", aux);
	leaf(1, 0);
	leaf(0xb, 0);
	leaf(0xb, 1);
	leaf(0x8000001e, 0);
	stat_processor();
	proc_line("/proc/self/status", "Cpus_allowed");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	printf("sched_cpu_hold: done\n");
	return 0;
}
