/* Reads a cgroup v1 file whose figures change by the moment, as the JVM does at every start
 * (memory.stat for its heap size). Such a file is a kernel view, not part of the run's
 * starting state: a recording that read it must still replay. Prints "cgroup read" and how
 * many reads succeeded (its content is not printed: it differs from run to run), or
 * "no cgroup v1" where the machine has none. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static const char *const files[] = {
	"/sys/fs/cgroup/cpuacct/cpuacct.usage",
	"/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage",
	"/sys/fs/cgroup/memory/memory.stat",
};

int main(void)
{
	int found = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i], O_RDONLY);
		if (fd < 0)
			continue;
		char buf[4096];
		if (read(fd, buf, sizeof(buf)) > 0)
			found++;
		close(fd);
	}
	if (!found) {
		printf("no cgroup v1\n");
		return 0;
	}
	printf("cgroup read: %d files\n", found);
	return 0;
}
