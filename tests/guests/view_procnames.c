/* Whether names under /proc agree with what an open of them gets. Lists /proc/self,
 * /proc/self/task/TID and /proc, and for each listed name checks stat(2) and
 * access(F_OK) (and, in the process's own directories, a read-only open): a name that is
 * listed but not found by one of them prints "MISMATCH". Then, for files a restricted
 * container leaves out (io, smaps, sched ...), prints whether each is listed and what
 * stat, access and open say. Natively every one is there; under detrun each must be
 * absent to all four, where before it was listed and stat and access found it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *verdict(int r)
{
	return r >= 0 ? "ok" : strerrorname_np(errno);
}

static bool listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	bool found = false;
	for (struct dirent *e; d && !found && (e = readdir(d));)
		found = !strcmp(e->d_name, name);
	if (d)
		closedir(d);
	return found;
}

static void check_listing(const char *dir, bool open_too)
{
	DIR *d = opendir(dir);
	if (!d) {
		printf("%s: cannot list (%s)\n", dir, strerrorname_np(errno));
		return;
	}
	int names = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		const char *s = verdict(stat(path, &st)), *a = verdict(access(path, F_OK));
		const char *o = "-";
		if (open_too) {
			int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			o = verdict(fd);
			if (fd >= 0)
				close(fd);
		}
		if (!strcmp(s, "ENOENT") || !strcmp(a, "ENOENT") || !strcmp(o, "ENOENT"))
			printf("MISMATCH %s: listed, stat %s, access %s, open %s\n", path, s, a, o);
		names++;
	}
	closedir(d);
	printf("%s: %s names\n", dir, names > 2 ? "some" : "no");
}

static void check_absent(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct stat st;
	const char *s = verdict(stat(path, &st));
	const char *l = verdict(lstat(path, &st));
	const char *a = verdict(access(path, R_OK));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *o = verdict(fd);
	if (fd >= 0)
		close(fd);
	printf("%s: listed %s, stat %s, lstat %s, access %s, open %s\n", path,
	       listed(dir, name) ? "yes" : "no", s, l, a, o);
}

int main(void)
{
	char task[64];
	snprintf(task, sizeof(task), "/proc/self/task/%d", gettid());
	check_listing("/proc/self", true);
	check_listing(task, true);
	check_listing("/proc", false);
	static const char *const absent[] = { "io",        "smaps", "smaps_rollup", "sched",
					      "schedstat", "wchan", "stack",        "pagemap" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		check_absent("/proc/self", absent[i]);
		check_absent(task, absent[i]);
	}
	check_absent("/proc", "vmstat");
	check_absent("/proc", "interrupts");
	return 0;
}
