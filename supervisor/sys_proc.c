/* /proc views of the group's own processes, as programs commonly read them.
 *
 * The PID namespace already makes pids right. What remains is what the kernel measures
 * in real time: CPU times, start times, context switches, the CPU a task last ran on, the
 * real affinity mask, and the inode and device numbers in maps. A read of
 * /proc/PID/{stat,status,maps} (also under task/TID) is answered from a rewritten copy. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>

#include "scheduler/vclock.h"
#include "supervisor/report.h"
#include "supervisor/sys_common.h"

enum proc_view { VIEW_NONE, VIEW_STAT, VIEW_STATUS, VIEW_MAPS };

static enum proc_view view_of(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)
		return VIEW_NONE;
	char path[64], link[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return VIEW_NONE;
	link[n] = 0;
	static regex_t re;
	static bool compiled;
	if (!compiled) {
		regcomp(&re, "(^|/)[0-9]+(/task/[0-9]+)?/(stat|status|maps)$", REG_EXTENDED);
		compiled = true;
	}
	regmatch_t m[4];
	if (regexec(&re, link, 4, m, 0))
		return VIEW_NONE;
	const char *leaf = link + m[3].rm_so;
	return !strcmp(leaf, "stat") ? VIEW_STAT : !strcmp(leaf, "status") ? VIEW_STATUS : VIEW_MAPS;
}

static char *read_all(int fd, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int fresh = open(path, O_RDONLY | O_CLOEXEC);
	if (fresh < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t got;
	while (buf && (got = read(fresh, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	close(fresh);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* Appends to a growing output buffer. */
struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (!o->buf)
			abort();
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

static int64_t ticks(int64_t ns)
{
	return ns / 10000000LL; /* USER_HZ = 100 */
}

/* stat: fields after the command name; fault counts (10-13), utime..cstime (14-17),
 * starttime (22), processor (39). */
static void rewrite_stat(struct task *t, const char *in, struct out *o)
{
	const char *paren = strrchr(in, ')');
	if (!paren) {
		put(o, in, strlen(in));
		return;
	}
	put(o, in, (size_t)(paren - in + 1));
	char *rest = strdup(paren + 1), *save = NULL;
	int field = 3;
	for (char *tok = strtok_r(rest, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
		char num[32];
		const char *value = tok;
		if (field == 14)
			snprintf(num, sizeof(num), "%lld", (long long)ticks(vclock_now() - VCLOCK_BOOT_NS)),
				value = num;
		else if ((field >= 15 && field <= 17) || (field >= 10 && field <= 13))
			value = "0"; /* system CPU time, and page-fault counts that depend on how
				      * often detrun itself touched the task's memory */
		else if (field == 22)
			snprintf(num, sizeof(num), "%lld", (long long)ticks(t->proc->start_ns)), value = num;
		else if (field == 39)
			value = "0";
		else if (field == 3 && !strcmp(tok, "t"))
			value = "R"; /* stopped by detrun, which is running it as far as it knows */
		put(o, " ", 1);
		put(o, value, strlen(value));
	}
	put(o, "\n", 1);
	free(rest);
}

static void rewrite_status(const char *in, struct out *o)
{
	int cpus = tracer_opts->cpus;
	/* detrun's own seccomp filter is not the program's (as PR_GET_SECCOMP, sys_prctl.c) */
	const char *f = strstr(in, "\nSeccomp_filters:");
	int own_filters = f ? atoi(f + 17) - 1 : 0;
	for (const char *line = in; *line;) {
		const char *end = strchrnul(line, '\n');
		size_t len = (size_t)(end - line) + (*end ? 1 : 0);
		char repl[96] = "";
		if (!strncmp(line, "State:\tt", 8))
			snprintf(repl, sizeof(repl), "State:\tR (running)\n");
		else if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			snprintf(repl, sizeof(repl), "voluntary_ctxt_switches:\t0\n");
		else if (!strncmp(line, "nonvoluntary_ctxt_switches:", 27))
			snprintf(repl, sizeof(repl), "nonvoluntary_ctxt_switches:\t0\n");
		else if (!strncmp(line, "Seccomp:\t2", 10) && f && own_filters <= 0)
			snprintf(repl, sizeof(repl), "Seccomp:\t0\n");
		else if (!strncmp(line, "Seccomp_filters:", 16) && f)
			snprintf(repl, sizeof(repl), "Seccomp_filters:\t%d\n",
				 own_filters > 0 ? own_filters : 0);
		else if (!strncmp(line, "Cpus_allowed:", 13))
			snprintf(repl, sizeof(repl), "Cpus_allowed:\t%llx\n",
				 cpus >= 64 ? ~0ULL : (1ULL << cpus) - 1);
		else if (!strncmp(line, "Cpus_allowed_list:", 18))
			snprintf(repl, sizeof(repl), cpus == 1 ? "Cpus_allowed_list:\t0\n"
						   : "Cpus_allowed_list:\t0-%d\n", cpus - 1);
		if (*repl)
			put(o, repl, strlen(repl));
		else
			put(o, line, len);
		line += len;
	}
}

static void rewrite_maps(const char *in, struct out *o)
{
	for (const char *line = in; *line;) {
		const char *end = strchrnul(line, '\n');
		size_t len = (size_t)(end - line) + (*end ? 1 : 0);
		unsigned long long start, stop, off, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &stop, perms, &off,
			   &maj, &min, &ino, &name_at) >= 7) {
			uint64_t dev = ino ? files_virtual_dev(makedev(maj, min)) : 0;
			uint64_t vino = ino ? files_virtual_ino(makedev(maj, min), ino) : 0;
			char head[160];
			int n = snprintf(head, sizeof(head), "%08llx-%08llx %s %08llx %02x:%02x %llu ",
					 start, stop, perms, off, major(dev), minor(dev),
					 (unsigned long long)vino);
			put(o, head, (size_t)n);
			if (name_at && line + name_at < end) {
				for (; n < 73; n++)
					put(o, " ", 1);
				put(o, line + name_at, (size_t)(end - line - name_at));
			}
			put(o, "\n", *end ? 1 : 0);
		} else {
			put(o, line, len);
		}
		line += len;
	}
}

bool proc_view_read(struct task *t, int fd)
{
	enum proc_view view = view_of(fd);
	if (view == VIEW_NONE)
		return false;
	size_t len;
	char *real = read_all(fd, &len);
	if (!real)
		return false;
	struct out o = { 0 };
	put(&o, "", 0);
	if (view == VIEW_STAT)
		rewrite_stat(t, real, &o);
	else if (view == VIEW_STATUS)
		rewrite_status(real, &o);
	else
		rewrite_maps(real, &o);
	free(real);
	off_t pos = lseek(fd, 0, SEEK_CUR);
	uint64_t count = syscall_arg(t, 2);
	size_t n = pos >= 0 && (size_t)pos < o.len ? o.len - (size_t)pos : 0;
	if (n > count)
		n = count;
	int64_t result = (int64_t)n;
	if (remote_write(t, REMOTE(syscall_arg(t, 1)), o.buf + (pos > 0 ? pos : 0), n))
		result = -EFAULT;
	else
		lseek(fd, pos + (off_t)n, SEEK_SET);
	free(o.buf);
	syscall_emulate(t, result);
	return true;
}
