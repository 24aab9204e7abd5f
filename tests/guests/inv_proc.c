/* Inventory: /proc self views and resource figures. */
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "selfcheck.h"

static void dump(const char *path, const char *only)
{
	FILE *f = fopen(path, "r");
	CHECK(f || strncmp(path, "/proc/self/", 11), "cannot read %s", path);
	char line[4096];
	while (f && fgets(line, sizeof(line), f))
		if (!only || strstr(line, only))
			printf("%s: %s", path, line);
	if (f)
		fclose(f);
}

int main(void)
{
	dump("/proc/self/stat", NULL);
	dump("/proc/self/status", "ctxt");
	dump("/proc/self/status", "Cpus_allowed");
	dump("/proc/self/status", "State");
	dump("/proc/self/maps", "inv_proc");
	dump("/proc/loadavg", NULL);
	dump("/proc/uptime", NULL);
	/* its own stat file names it */
	FILE *f = fopen("/proc/self/stat", "r");
	int pid = 0;
	char comm[32] = "";
	CHECK(f && fscanf(f, "%d %31s", &pid, comm) == 2, "cannot parse /proc/self/stat");
	fclose(f);
	CHECK(pid == getpid() && !strcmp(comm, "(inv_proc)"),
	      "/proc/self/stat says %d %s, want %d (inv_proc)", pid, comm, getpid());
	struct sysinfo si;
	CHECK(sysinfo(&si) == 0, "sysinfo failed: %s", strerror(errno));
	printf("sysinfo uptime %ld totalram %lu freeram %lu procs %u\n", si.uptime, si.totalram,
	       si.freeram, si.procs);
	return 0;
}
