/* Walks /proc and /sys and prints one line per entry: "PATH: SIZE HASH, readv SIZE HASH,
 * preadv2 SIZE HASH, splice SIZE HASH" for a file it could read (the lines it hashes, read
 * with each call),
 * "PATH -> TARGET" for a symlink (never followed), "PATH: dir" for a directory it listed,
 * "PATH: ! ERROR" for what it could not open, read or list, "PATH: skipped WHY" for what
 * it leaves alone on purpose. Every name in a listed directory gets a line, in name
 * order. Two runs of a program that sees no host figures print the same lines.
 *
 * Bounded, so that it takes seconds natively: /proc/PID of this process only (printed as
 * /proc/PID, so the pid itself is no difference), directories 6 deep at most, files read up
 * to 1 MiB, /sys 20000 entries at most. A few files block or never end when read natively;
 * they are skipped by name (none of them may be readable under detrun anyway). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_DEPTH 6
#define MAX_READ (1 << 20)
#define MAX_SYS_ENTRIES 20000

static char own_pid[16];
static long sys_entries;

/* Native-only hazards: reading these blocks or streams forever. */
static const char *const skipped[] = {
	"/proc/kmsg",             /* blocks until the kernel logs */
	"/proc/kcore",            /* the whole physical memory, as an ELF core */
	"/sys/kernel/debug",      /* trace_pipe and friends block; debug files are slow */
	"/sys/kernel/tracing",    /* trace_pipe, per_cpu/cpuN/trace_pipe_raw block */
	"/sys/power/wakeup_count" /* waits for wakeup events in progress */
};

static bool is_skipped(const char *path)
{
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
		if (!strcmp(path, skipped[i]))
			return true;
	return false;
}

/* The path as printed: this process's pid in /proc/N and /proc/N/task/N becomes PID. */
static void show(const char *path, const char *fmt, const char *detail)
{
	char copy[4096], shown[4096] = "";
	snprintf(copy, sizeof(copy), "%s", path);
	size_t n = 0;
	int i = 0;
	const char *before = "";
	for (char *save, *c = strtok_r(copy, "/", &save); c;
	     before = c, c = strtok_r(NULL, "/", &save), i++)
		n += (size_t)snprintf(shown + n, sizeof(shown) - n, "/%s",
				      (i == 1 || (i == 3 && !strcmp(before, "task"))) &&
						      !strcmp(c, own_pid)
					      ? "PID"
					      : c);
	printf("%s", shown);
	printf(fmt, detail);
	printf("\n");
}

/* The ways a file is read: each must show the same text. */
enum how {
	BY_READ,
	BY_READV,
	BY_PREADV2,
	BY_SPLICE
};

/* Moves up to room bytes of fd through a pipe into buf (the kernel copies the file's text
 * without a read): how many, or -1. */
static ssize_t spliced(int fd, char *buf, size_t room)
{
	static int pipe_ends[2] = { -1, -1 };
	if (pipe_ends[0] < 0 && pipe2(pipe_ends, O_CLOEXEC) < 0)
		return -1;
	ssize_t got = splice(fd, NULL, pipe_ends[1], NULL, room < 65536 ? room : 65536, 0);
	if (got <= 0)
		return got;
	for (ssize_t done = 0, n; done < got; done += n)
		if ((n = read(pipe_ends[0], buf + done, (size_t)(got - done))) <= 0)
			return -1;
	return got;
}

/* Reads path whole (up to MAX_READ) with read(2), readv(2) into two buffers at a time,
 * preadv2(2) at the offset reached, or splice(2): the size read, or -1 with errno set. */
static ssize_t slurp(const char *path, enum how how, char *buf)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t size = 0;
	ssize_t got = 0;
	while (size < MAX_READ) {
		size_t room = MAX_READ - size;
		struct iovec v[2] = { { buf + size, room / 2 },
				      { buf + size + room / 2, room - room / 2 } };
		got = how == BY_READ      ? read(fd, buf + size, room)
		      : how == BY_READV   ? readv(fd, v, 2)
		      : how == BY_PREADV2 ? preadv2(fd, v, 2, (off_t)size, 0)
					  : spliced(fd, buf + size, room);
		if (got <= 0)
			break;
		size += (size_t)got;
	}
	int err = errno;
	close(fd);
	errno = err;
	return got < 0 && size == 0 ? -1 : (ssize_t)size;
}

/* "SIZE HASH" of the whole text. */
static void digest(const char *buf, size_t size, char *out, size_t cap)
{
	uint64_t hash = 1469598103934665603ULL;
	for (size_t i = 0; i < size; i++)
		hash = (hash ^ (unsigned char)buf[i]) * 1099511628211ULL;
	snprintf(out, cap, "%zu %016llx", size, (unsigned long long)hash);
}

/* The file as read(2), readv(2), preadv2(2) and splice(2) give it (detrun rewrites some views at the
 * read). */
static void read_file(const char *path)
{
	static char buf[MAX_READ];
	static const char *const names[] = { "", ", readv ", ", preadv2 ", ", splice " };
	char detail[320] = "", one[64];
	for (enum how how = BY_READ; how <= BY_SPLICE; how++) {
		ssize_t size = slurp(path, how, buf);
		if (size < 0 && how == BY_READ) {
			show(path, ": ! %s", strerror(errno));
			return;
		}
		if (size < 0)
			snprintf(one, sizeof(one), "! %s", strerror(errno));
		else
			digest(buf, (size_t)size, one, sizeof(one));
		strcat(detail, names[how]);
		strcat(detail, one);
	}
	show(path, ": %s", detail);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(const char *path, int depth);

/* /proc/N and /proc/N/task/N of another process: not this run's own state. */
static bool other_process(const char *path, const char *name)
{
	size_t len = strlen(path);
	bool pid_dir = !strcmp(path, "/proc") ||
		       (len > 5 && !strcmp(path + len - 5, "/task") && !strncmp(path, "/proc/", 6));
	return pid_dir && name[strspn(name, "0123456789")] == 0 && strcmp(name, own_pid);
}

static void list(const char *path, int depth)
{
	DIR *d = opendir(path);
	if (!d) {
		show(path, ": ! %s", strerror(errno));
		return;
	}
	char **names = NULL;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			names = realloc(names, (n + 1) * sizeof(*names));
			names[n++] = strdup(e->d_name);
		}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	show(path, ": dir", NULL);
	for (size_t i = 0; i < n; i++) {
		char child[4096];
		snprintf(child, sizeof(child), "%s/%s", path, names[i]);
		if (other_process(path, names[i]))
			show(child, ": skipped %s", "(another process)");
		else
			walk(child, depth + 1);
		free(names[i]);
	}
	free(names);
}

static void walk(const char *path, int depth)
{
	struct stat st;
	if (!strncmp(path, "/sys", 4) && ++sys_entries > MAX_SYS_ENTRIES) {
		if (sys_entries == MAX_SYS_ENTRIES + 1)
			show(path, ": skipped %s", "(entry limit; nothing after it is listed)");
		return;
	}
	if (is_skipped(path)) {
		show(path, ": skipped %s", "(blocks or never ends when read)");
		return;
	}
	if (lstat(path, &st) < 0) {
		show(path, ": ! %s", strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		show(path, n < 0 ? ": ! readlink %s" : " -> %s", n < 0 ? strerror(errno) : target);
	} else if (S_ISDIR(st.st_mode)) {
		if (depth >= MAX_DEPTH)
			show(path, ": skipped %s", "(depth limit)");
		else
			list(path, depth);
	} else if (S_ISREG(st.st_mode)) {
		read_file(path);
	} else {
		show(path, ": skipped %s", "(not a file, directory or link)");
	}
}

int main(void)
{
	snprintf(own_pid, sizeof(own_pid), "%d", getpid());
	walk("/proc", 0);
	walk("/sys", 0);
	return 0;
}
