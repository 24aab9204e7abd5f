/* /proc views of the group's own processes, as programs commonly read them.
 *
 * The PID namespace already makes pids right. What remains is what the kernel measures
 * in real time: CPU times, start times, context switches, the CPU a task last ran on, the
 * real affinity mask, and the inode and device numbers in maps. An open of
 * /proc/PID/{stat,statm,status,maps,auxv} (also under task/TID) gives a snapshot of the
 * rewritten text instead of the kernel's file (sys_proc_snapshot.c). auxv is the vector
 * the program got: the kernel's copy names the host vDSO, unmapped at the exec.
 *
 * Kernel-wide counters show through too: mount ids (mountinfo, fdinfo's mnt_id, statx),
 * inode and device numbers of pipes, sockets and namespaces (fdinfo, readlink of
 * /proc/PID/fd/N and /proc/PID/ns), eventfd ids, socket cookies, inode generations, a
 * fresh random uuid per read and the boot id. Each is renumbered in order of first sight
 * (inodes and devices as stat(2) shows them, so the views agree) or comes from the seeded
 * generator (links and ioctl/getsockopt requests: sys_ids.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>

#include "engine/auxv.h"
#include "engine/tracer.h"
#include "engine/vdso.h"
#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "vkernel/random.h"
#include "handlers/sys_files.h"
#include "handlers/sys_proc.h"
#include "handlers/sys_proc_view.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_kernfs.h"

enum proc_view proc_view_of(int fd, char *link, size_t size)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)
		return VIEW_NONE;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, size - 1);
	if (n <= 0)
		return VIEW_NONE;
	link[n] = 0;
	if (!strcmp(link, "/proc/sys/kernel/random/uuid"))
		return VIEW_UUID;
	if (!strcmp(link, "/proc/sys/kernel/random/boot_id"))
		return VIEW_BOOT_ID;
	static regex_t re;
	static bool compiled;
	if (!compiled) {
		regcomp(&re,
			"(^|/)[0-9]+(/task/[0-9]+)?/(stat|statm|status|maps|auxv|mountinfo|fdinfo/[0-9]+)$",
			REG_EXTENDED);
		compiled = true;
	}
	regmatch_t m[4];
	if (regexec(&re, link, 4, m, 0))
		return VIEW_NONE;
	const char *leaf = link + m[3].rm_so;
	if (!strcmp(leaf, "stat"))
		return VIEW_STAT;
	if (!strcmp(leaf, "statm"))
		return VIEW_STATM;
	if (!strcmp(leaf, "status"))
		return VIEW_STATUS;
	if (!strcmp(leaf, "maps"))
		return VIEW_MAPS;
	if (!strcmp(leaf, "auxv"))
		return VIEW_AUXV;
	return !strcmp(leaf, "mountinfo") ? VIEW_MOUNTINFO : VIEW_FDINFO;
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
static void put(struct view_text *o, const char *s, size_t n)
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

/* The resident set depends on the page cache (fault-around maps whichever pages of a file
 * happen to be cached), so every view of it shows the whole mapped size instead, as
 * getrusage's maxrss shows the peak size (sys_identity.c): deterministic, and never below
 * the real figure. */

/* stat: fields after the command name; fault counts (10-13), utime..cstime (14-17),
 * starttime (22), rss (24, from vsize, 23), processor (39), delayacct_blkio_ticks,
 * guest_time and cguest_time (42-44). */
static void rewrite_stat(struct task *t, const char *in, struct view_text *o)
{
	const char *paren = strrchr(in, ')');
	if (!paren) {
		put(o, in, strlen(in));
		return;
	}
	put(o, in, (size_t)(paren - in + 1));
	char *rest = strdup(paren + 1), *save = NULL;
	int field = 3;
	unsigned long long vsize = 0;
	for (char *tok = strtok_r(rest, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		char num[32];
		const char *value = tok;
		if (field == 14)
			snprintf(num, sizeof(num), "%lld",
				 (long long)ticks(vclock_now() - VCLOCK_BOOT_NS)),
				value = num;
		else if ((field >= 15 && field <= 17) || (field >= 10 && field <= 13) ||
			 (field >= 42 && field <= 44))
			value = "0"; /* system CPU time, page-fault counts that depend on how
				      * often detrun itself touched the task's memory, block I/O
				      * delays and guest time */
		else if (field == 22)
			snprintf(num, sizeof(num), "%lld", (long long)ticks(t->proc->start_ns)),
				value = num;
		else if (field == 23)
			vsize = strtoull(tok, NULL, 10);
		else if (field == 24)
			snprintf(num, sizeof(num), "%llu", vsize / 4096), value = num;
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

/* "NAME:\t<value of field `from` in the status text>\n", the resident-set lines' stand-ins. */
static void status_copy_field(const char *in, const char *from, const char *name, char *out,
			      size_t size)
{
	const char *f = strstr(in, from);
	unsigned long long kb = f ? strtoull(f + strlen(from), NULL, 10) : 0;
	snprintf(out, size, "%s\t%8llu kB\n", name, kb);
}

/* statm: size resident shared text lib data dt, in pages; resident is the size, and
 * shared (resident file pages) none. */
static void rewrite_statm(const char *in, struct view_text *o)
{
	unsigned long long v[7] = { 0 };
	sscanf(in, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
	       &v[6]);
	char text[160];
	int n = snprintf(text, sizeof(text), "%llu %llu 0 %llu %llu %llu %llu\n", v[0], v[0], v[3],
			 v[4], v[5], v[6]);
	put(o, text, (size_t)n);
}

/* SigQ counts the signals queued for the whole user on the host: the group sees those
 * queued for this process (one per pending signal number), with its real limit. */
static void status_sigq(const char *in, const char *line, char *out, size_t size)
{
	const char *thread = strstr(in, "\nSigPnd:"), *shared = strstr(in, "\nShdPnd:");
	uint64_t pending = (thread ? strtoull(thread + 8, NULL, 16) : 0) |
			   (shared ? strtoull(shared + 8, NULL, 16) : 0);
	const char *slash = strchr(line, '/');
	unsigned long long limit = slash ? strtoull(slash + 1, NULL, 10) : 0;
	snprintf(out, size, "SigQ:\t%d/%llu\n", __builtin_popcountll(pending), limit);
}

static void rewrite_status(const char *in, struct view_text *o)
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
		else if (!strncmp(line, "SigQ:", 5))
			status_sigq(in, line, repl, sizeof(repl));
		else if (!strncmp(line, "VmHWM:", 6))
			status_copy_field(in, "\nVmPeak:", "VmHWM:", repl, sizeof(repl));
		else if (!strncmp(line, "VmRSS:", 6) || !strncmp(line, "RssAnon:", 8))
			status_copy_field(in, "\nVmSize:",
					  !strncmp(line, "VmRSS:", 6) ? "VmRSS:" : "RssAnon:", repl,
					  sizeof(repl));
		else if (!strncmp(line, "RssFile:", 8) || !strncmp(line, "RssShmem:", 9))
			snprintf(repl, sizeof(repl), "%.*s\t       0 kB\n",
				 (int)(strchr(line, ':') - line + 1), line);
		else if (!strncmp(line, "Cpus_allowed:", 13))
			snprintf(repl, sizeof(repl), "Cpus_allowed:\t%llx\n",
				 cpus >= 64 ? ~0ULL : (1ULL << cpus) - 1);
		else if (!strncmp(line, "Cpus_allowed_list:", 18))
			snprintf(repl, sizeof(repl),
				 cpus == 1 ? "Cpus_allowed_list:\t0\n"
					   : "Cpus_allowed_list:\t0-%d\n",
				 cpus - 1);
		if (*repl)
			put(o, repl, strlen(repl));
		else
			put(o, line, len);
		line += len;
	}
}

/* detrun's vDSO (engine/vdso.h) as the kernel shows its own: no file, [vvar] and [vdso]. */
static const char *vdso_mapping_name(const char *name, size_t len, const char *perms)
{
	static const char ours[] = "/memfd:" VDSO_MEMFD_NAME " (deleted)";
	if (len != sizeof(ours) - 1 || memcmp(name, ours, len))
		return NULL;
	return perms[2] == 'x' ? "[vdso]" : "[vvar]";
}

static void rewrite_maps(const char *in, struct view_text *o)
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
			const char *special = name_at && line + name_at < end
						      ? vdso_mapping_name(line + name_at,
									  (size_t)(end - line -
										   name_at),
									  perms)
						      : NULL;
			if (special)
				off = maj = min = ino = 0;
			uint64_t dev = ino ? files_virtual_dev(makedev(maj, min)) : 0;
			uint64_t vino = ino ? files_virtual_ino(makedev(maj, min), ino,
								NLINK_UNKNOWN)
					    : 0;
			char head[160];
			int n = snprintf(head, sizeof(head),
					 "%08llx-%08llx %s %08llx %02x:%02x %llu ", start, stop,
					 perms, off, major(dev), minor(dev),
					 (unsigned long long)vino);
			put(o, head, (size_t)n);
			if (name_at && line + name_at < end) {
				for (; n < 73; n++)
					put(o, " ", 1);
				if (special)
					put(o, special, strlen(special));
				else
					put(o, line + name_at, (size_t)(end - line - name_at));
			}
			put(o, "\n", *end ? 1 : 0);
		} else {
			put(o, line, len);
		}
		line += len;
	}
}

/* The task of the group whose tid (as the group sees it) ends `link`, before its leaf. */
static struct task *task_named_by(const char *link)
{
	const char *end = strrchr(link, '/'), *digits = end;
	while (digits > link && digits[-1] >= '0' && digits[-1] <= '9')
		digits--;
	pid_t tid = digits < end ? (pid_t)atoi(digits) : 0;
	return tid ? reach_task(tid) : NULL;
}

/* auxv: the vector as that process got it (engine/auxv.h). */
static void rewrite_auxv(const char *link, char *vec, size_t len, struct view_text *o)
{
	struct task *owner = task_named_by(link);
	if (!tracer_opts->keep_vdso)
		auxv_show_program_vdso(vec, len, owner ? vdso_ehdr(owner->proc) : 0);
	put(o, vec, len);
}

/* ---- kernel-wide ids --------------------------------------------------------------------- */

/* Renumbering in order of first sight: real -> virtual, a bijection per kind. */
struct renumber {
	uint64_t *real;
	size_t n, cap;
	uint64_t first; /* the first virtual number */
};

static uint64_t renumbered(struct renumber *r, uint64_t real)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->real[i] == real)
			return r->first + i;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->real = realloc(r->real, r->cap * sizeof(*r->real));
		if (!r->real)
			abort();
	}
	r->real[r->n] = real;
	return r->first + r->n++;
}

static struct renumber mount_ids = { .first = 21 }, peer_groups = { .first = 1 },
		       eventfd_ids = { .first = 0 },
		       unique_mount_ids = { .first = (1ULL << 31) + 1 };

uint64_t proc_virtual_mount_id(uint64_t id, bool unique)
{
	return renumbered(unique ? &unique_mount_ids : &mount_ids, id);
}

/* A virtual device number for a kernel-encoded one (major << 20 | minor, as fdinfo and
 * mountinfo's neighbours print it). */
static uint64_t virtual_kdev(uint64_t kdev)
{
	uint64_t dev = files_virtual_dev(
		makedev((unsigned)(kdev >> 20), (unsigned)(kdev & 0xfffff)));
	return (uint64_t)major(dev) << 20 | minor(dev);
}

/* mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [shared:N master:N ...] - TYPE SRC OPTS".
 * The ids of this namespace's mounts are numbered in list order before their parents that
 * lie outside it, so the first listing reads naturally. */
static void rewrite_mountinfo(const char *in, struct view_text *o)
{
	unsigned long long id, parent;
	for (const char *line = in; *line;
	     line = strchrnul(line, '\n') + (*strchrnul(line, '\n') != 0))
		if (sscanf(line, "%llu", &id) == 1)
			renumbered(&mount_ids, id);
	for (const char *line = in; *line;) {
		const char *end = strchrnul(line, '\n');
		size_t len = (size_t)(end - line) + (*end ? 1 : 0);
		unsigned maj, min;
		int rest = 0;
		if (sscanf(line, "%llu %llu %u:%u %n", &id, &parent, &maj, &min, &rest) < 4 ||
		    !rest) {
			put(o, line, len);
			line += len;
			continue;
		}
		uint64_t dev = files_virtual_dev(makedev(maj, min));
		char head[96];
		int n = snprintf(head, sizeof(head), "%llu %llu %u:%u ",
				 (unsigned long long)renumbered(&mount_ids, id),
				 (unsigned long long)renumbered(&mount_ids, parent), major(dev),
				 minor(dev));
		put(o, head, (size_t)n);
		/* the optional fields, up to the "-" separator: peer group numbers */
		const char *p = line + rest;
		bool optional = true;
		while (p < end) {
			const char *sp = memchr(p, ' ', (size_t)(end - p));
			const char *tok_end = sp ? sp : end;
			char word[32];
			unsigned long long group;
			size_t tl = (size_t)(tok_end - p);
			const char *colon = memchr(p, ':', tl);
			if (tl == 1 && *p == '-')
				optional = false;
			if (optional && colon && tl < sizeof(word) &&
			    (!strncmp(p, "shared:", 7) || !strncmp(p, "master:", 7) ||
			     !strncmp(p, "propagate_from:", 15)) &&
			    sscanf(colon + 1, "%llu", &group) == 1) {
				n = snprintf(word, sizeof(word), "%.*s%llu", (int)(colon + 1 - p),
					     p,
					     (unsigned long long)renumbered(&peer_groups, group));
				put(o, word, (size_t)n);
			} else {
				put(o, p, tl);
			}
			if (sp)
				put(o, " ", 1);
			p = sp ? sp + 1 : end;
		}
		put(o, "\n", *end ? 1 : 0);
		line += len;
	}
}

/* The file a /proc/PID/fdinfo/N describes, stat'ed in the task's view of the group's /proc,
 * with the key of its virtual number (views_proc_identity): 0, or -1. */
static int described_file(struct task *t, const char *link, struct stat *st, uint64_t *key)
{
	const char *fdinfo = strstr(link, "/fdinfo/");
	if (!fdinfo)
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "/proc/%d/root%.*s/fd/%s", t->tid, (int)(fdinfo - link), link,
		 fdinfo + 8);
	int fd = open(path, O_PATH | O_CLOEXEC);
	int err = fd < 0 || fstat(fd, st) ? -1 : 0;
	if (!err)
		*key = views_proc_identity(fd, st->st_dev, st->st_ino);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Rewrites "name:<spaces>N" (decimal) or, with hex, "name:N" in hex, at the start of
 * each whitespace-separated token. */
static void rewrite_fdinfo(struct task *t, const char *link, const char *in, struct view_text *o)
{
	struct stat st;
	uint64_t key = 0;
	bool have_file = described_file(t, link, &st, &key) == 0;
	for (const char *line = in; *line;) {
		const char *end = strchrnul(line, '\n');
		size_t len = (size_t)(end - line) + (*end ? 1 : 0);
		unsigned long long v;
		char repl[160] = "";
		if (sscanf(line, "mnt_id: %llu", &v) == 1)
			snprintf(repl, sizeof(repl), "mnt_id:\t%llu\n",
				 (unsigned long long)renumbered(&mount_ids, v));
		else if (sscanf(line, "ino: %llu", &v) == 1 && have_file)
			snprintf(repl, sizeof(repl), "ino:\t%llu\n",
				 (unsigned long long)files_virtual_ino(st.st_dev,
								       v == st.st_ino ? key : v,
								       NLINK_UNKNOWN));
		else if (sscanf(line, "eventfd-id: %llu", &v) == 1)
			snprintf(repl, sizeof(repl), "eventfd-id: %llu\n",
				 (unsigned long long)renumbered(&eventfd_ids, v));
		if (*repl) {
			put(o, repl, strlen(repl));
			line += len;
			continue;
		}
		/* epoll targets and inotify watches: "... ino:HEX sdev:HEX ..." */
		const char *ino = strstr(line, " ino:"), *sdev = strstr(line, " sdev:");
		unsigned long long i, d;
		if (ino && sdev && ino < end && sdev < end && sscanf(ino, " ino:%llx", &i) == 1 &&
		    sscanf(sdev, " sdev:%llx", &d) == 1) {
			uint64_t real_dev = makedev((unsigned)(d >> 20), (unsigned)(d & 0xfffff));
			put(o, line, (size_t)(ino - line));
			int n = snprintf(repl, sizeof(repl), " ino:%llx",
					 (unsigned long long)files_virtual_ino(real_dev, i,
									       NLINK_UNKNOWN));
			put(o, repl, (size_t)n);
			const char *after_ino = ino + 5 + strspn(ino + 5, "0123456789abcdef");
			put(o, after_ino, (size_t)(sdev - after_ino));
			n = snprintf(repl, sizeof(repl), " sdev:%llx",
				     (unsigned long long)virtual_kdev(d));
			put(o, repl, (size_t)n);
			const char *after_dev = sdev + 6 + strspn(sdev + 6, "0123456789abcdef");
			put(o, after_dev, (size_t)(end - after_dev) + (*end ? 1 : 0));
		} else {
			put(o, line, len);
		}
		line += len;
	}
}

/* A random uuid: a fresh one from the seeded generator per read, as the kernel makes
 * one per read; the boot id is fixed by the seed. */
static void put_uuid(struct view_text *o, bool boot_id)
{
	unsigned char b[16];
	if (boot_id) {
		uint64_t x = tracer_opts->seed ^ 0xb007b007b007b007ULL;
		for (int i = 0; i < 16; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			b[i] = (unsigned char)(x >> 56);
		}
	} else {
		random_fill(b, sizeof(b));
	}
	b[6] = (b[6] & 0x0f) | 0x40; /* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80; /* RFC 4122 variant */
	char text[40];
	int n = snprintf(text, sizeof(text),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
	put(o, text, (size_t)n);
}

int proc_view_text(struct task *t, int fd, enum proc_view view, const char *link,
		   struct view_text *o)
{
	size_t len;
	char *real = view == VIEW_UUID || view == VIEW_BOOT_ID ? strdup("") : read_all(fd, &len);
	if (!real)
		return -1;
	*o = (struct view_text){ 0 };
	put(o, "", 0);
	if (view == VIEW_STAT)
		rewrite_stat(t, real, o);
	else if (view == VIEW_STATM)
		rewrite_statm(real, o);
	else if (view == VIEW_STATUS)
		rewrite_status(real, o);
	else if (view == VIEW_MAPS)
		rewrite_maps(real, o);
	else if (view == VIEW_AUXV)
		rewrite_auxv(link, real, len, o);
	else if (view == VIEW_MOUNTINFO)
		rewrite_mountinfo(real, o);
	else if (view == VIEW_FDINFO)
		rewrite_fdinfo(t, link, real, o);
	else
		put_uuid(o, view == VIEW_BOOT_ID);
	free(real);
	return 0;
}
