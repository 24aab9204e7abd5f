#include "syscalls/syscall_table.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <linux/fs.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <stdio.h>
#include <sys/syscall.h>

#ifndef EXT4_IOC_GETVERSION /* fs/ext4/ext4.h: the same as FS_IOC_GETVERSION, on ext4 */
#define EXT4_IOC_GETVERSION _IOR('f', 3, long)
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

/* The outputs column, as initializers of struct syscall_output: one line a shape
 * (clang-format would spread each over four). */
// clang-format off
#define OUTPUTS(...) { __VA_ARGS__ }
#define NO_OUTPUTS { { SHAPE_NONE, -1, -1, 0 } }
#define OUT_BUF(a, n) { SHAPE_BUF, a, n, 0 }
#define OUT_IOV(a, n) { SHAPE_IOV, a, n, 0 }
#define OUT_MSG(a) { SHAPE_MSG, a, -1, 0 }
#define OUT_MMSG(a, n) { SHAPE_MMSG, a, n, 0 }
#define OUT_SIZED(a, l) { SHAPE_SIZED, a, l, 4 }
#define OUT_FIXED(a, size) { SHAPE_FIXED, a, -1, size }
#define OUT_ARRAY(a, n, e) { SHAPE_ARRAY, a, n, e }
#define OUT_FDSET(a, n) { SHAPE_FDSET, a, n, 0 }
#define OUT_PER_RESULT(a, n, e) { SHAPE_PER_RESULT, a, n, e }
#define OUT_IOCTL(a, r) { SHAPE_IOCTL, a, r, 0 }

/* The argument count: the kinds' length without a result's ">d". */
#define NARGS(kinds) (sizeof(kinds) - 1 - \
	(sizeof(kinds) > 2 && (kinds)[sizeof(kinds) > 2 ? sizeof(kinds) - 3 : 0] == '>' ? 2 : 0))

const struct syscall_entry syscall_table[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason) \
	{ #name, __NR_##name, SC_##cls, kinds, NARGS(kinds), \
	  outputs, DATA_##data, reason },
// clang-format on
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"
};
const size_t syscall_table_len = sizeof(syscall_table) / sizeof(syscall_table[0]);

const struct syscall_condition syscall_conditions[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define EVERY_CALL true
#define AS_IS false
#define STOP_WHEN(name, arg, mask, with_shim) { __NR_##name, arg, mask, with_shim },
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"
#undef EVERY_CALL
#undef AS_IS
};
const size_t syscall_conditions_len = sizeof(syscall_conditions) / sizeof(syscall_conditions[0]);

const struct syscall_value syscall_values[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value) { __NR_##name, arg, (uint32_t)(value) },
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"
};
const size_t syscall_values_len = sizeof(syscall_values) / sizeof(syscall_values[0]);

static const struct {
	long nr;
	const char *why;
} irregular_rows[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why) { __NR_##name, why },
#include "syscalls/syscalls.def"
};

const struct syscall_condition syscall_shared_conditions[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask) { __NR_##name, arg, mask, false },
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"
};
const size_t syscall_shared_conditions_len = sizeof(syscall_shared_conditions) /
					     sizeof(syscall_shared_conditions[0]);

static const long tick_rows[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#define TICK(name) __NR_##name,
#include "syscalls/syscalls.def"
};

bool syscall_ticks(long nr)
{
	for (size_t i = 0; i < sizeof(tick_rows) / sizeof(tick_rows[0]); i++)
		if (tick_rows[i] == nr)
			return true;
	return false;
}

const char *syscall_irregular(long nr)
{
	for (size_t i = 0; i < sizeof(irregular_rows) / sizeof(irregular_rows[0]); i++)
		if (irregular_rows[i].nr == nr)
			return irregular_rows[i].why;
	return NULL;
}

#define MAX_NR 1024
static const struct syscall_entry *by_nr[MAX_NR];

const struct syscall_entry *syscall_lookup(long nr)
{
	if (nr < 0 || nr >= MAX_NR)
		return NULL;
	if (!by_nr[0]) /* built on first use; the table is immutable */
		for (size_t i = 0; i < syscall_table_len; i++)
			by_nr[syscall_table[i].nr] = &syscall_table[i];
	return by_nr[nr];
}

const char *syscall_name(long nr)
{
	const struct syscall_entry *e = syscall_lookup(nr);
	if (e)
		return e->name;
	static char unknown[32];
	snprintf(unknown, sizeof(unknown), "syscall_%ld", nr);
	return unknown;
}

const char *syscall_class_name(enum syscall_class cls)
{
	static const char *names[] = { "allow",    "serialize",   "blocking", "emulate",
				       "external", "unsupported", "local" };
	return names[cls];
}

bool syscall_runs_freely(const struct syscall_entry *e, bool parallel)
{
	return e && (e->cls == SC_LOCAL || (e->cls == SC_ALLOW && !parallel));
}

/* The first argument whose kind is one of `kinds`, or -1. */
static int first_arg(const struct syscall_entry *e, const char *kinds)
{
	for (int i = 0; e && i < e->nargs; i++)
		if (strchr(kinds, e->kinds[i]))
			return i;
	return -1;
}

bool syscall_names_process(const struct syscall_entry *e)
{
	return first_arg(e, "PGWOD") >= 0;
}

int syscall_fd_arg(const struct syscall_entry *e)
{
	return first_arg(e, "d");
}

int syscall_msg_flags_arg(const struct syscall_entry *e)
{
	return first_arg(e, "m");
}

int syscall_target_arg(const struct syscall_entry *e)
{
	return first_arg(e, "PD");
}

int syscall_signal_arg(const struct syscall_entry *e)
{
	return first_arg(e, "n");
}

struct syscall_sigset syscall_sigset(const struct syscall_entry *e)
{
	int arg = first_arg(e, "kK");
	bool indirect = arg >= 0 && e->kinds[arg] == 'K';
	return (struct syscall_sigset){ .arg = arg,
					.size_arg = arg < 0 || indirect ? -1 : first_arg(e, "z"),
					.indirect = indirect };
}

struct syscall_timeout syscall_timeout(const struct syscall_entry *e)
{
	static const char forms[] = "tTVA";
	int arg = first_arg(e, forms);
	if (arg < 0)
		return (struct syscall_timeout){ -1, TIMEOUT_NONE };
	return (struct syscall_timeout){
		arg, (enum timeout_form)(TIMEOUT_MS + (strchr(forms, e->kinds[arg]) - forms))
	};
}

bool syscall_arg_is_pointer(const struct syscall_entry *e, int arg)
{
	return e && arg >= 0 && arg < e->nargs && strchr("psclrkKTVA", e->kinds[arg]);
}

int syscall_path_arg(const struct syscall_entry *e)
{
	return first_arg(e, "scrl");
}

int syscall_dirfd_arg(const struct syscall_entry *e, int path_arg)
{
	return e && path_arg > 0 && path_arg < e->nargs && e->kinds[path_arg - 1] == 'a'
		       ? path_arg - 1
		       : -1;
}

struct syscall_entries syscall_entries(const struct syscall_entry *e)
{
	struct syscall_entries c = { 0 };
	bool created = false, linked = false, removed = false;
	for (int i = 0; e && i < e->nargs && c.n < 2; i++) {
		char k = e->kinds[i];
		if (k != 'c' && k != 'r' && k != 'l')
			continue;
		c.path[c.n++] = i;
		created |= k == 'c', linked |= k == 'l', removed |= k == 'r';
	}
	c.new_inode = created;
	c.creates = created || (linked && !removed);
	c.moves_inode = linked && removed;
	return c;
}

bool syscall_returns_fd(const struct syscall_entry *e)
{
	return e && !strcmp(e->kinds + e->nargs, ">d");
}

bool syscall_lets_out(const struct syscall_entry *e)
{
	return e && e->data >= DATA_PEER;
}

bool syscall_reads_data(const struct syscall_entry *e)
{
	return e && e->data == DATA_IN;
}

bool syscall_sends_memory(const struct syscall_entry *e)
{
	return e && e->data >= DATA_SEND_BUF && e->data <= DATA_SEND_MMSG;
}

bool syscall_sends(const struct syscall_entry *e)
{
	return e && e->data >= DATA_SEND_BUF;
}

/* Appends printf output to buf at *at, never past size (the text is cut short). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t size, size_t *at,
							 const char *fmt, ...)
{
	if (*at + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < size ? *at + (size_t)n : size - 1;
}

/* One argument by its kind letter. */
static void format_arg(char *buf, size_t size, size_t *at, char kind, uint64_t v,
		       syscall_string_reader *read, void *ctx)
{
	char s[48];
	switch (kind) {
	case 'd':
	case 'a':
	case 'i':
	case 'n':
	case 't':
	case 'P':
	case 'G':
	case 'W':
	case 'O':
	case 'D':
		append(buf, size, at, "%d", (int)v);
		return;
	case 'u':
	case 'z':
		append(buf, size, at, "%" PRIu64, v);
		return;
	case 's':
	case 'c':
	case 'r':
	case 'l':
		if (v && read && read(ctx, v, s, sizeof(s))) {
			append(buf, size, at, "\"%s\"%s", s,
			       strlen(s) == sizeof(s) - 1 ? "..." : "");
			return;
		}
		break; /* unreadable: shown as an address */
	}
	append(buf, size, at, v ? "%#" PRIx64 : "0", v);
}

void syscall_format_call(char *buf, size_t size, long nr, const uint64_t args[6],
			 syscall_string_reader *read, void *ctx)
{
	const struct syscall_entry *e = syscall_lookup(nr);
	const char *kinds = e ? e->kinds : "xxxxxx";
	int nargs = e ? e->nargs : 6;
	size_t at = 0;
	buf[0] = 0;
	append(buf, size, &at, "%s(", syscall_name(nr));
	for (int i = 0; i < nargs; i++) {
		if (i)
			append(buf, size, &at, ", ");
		format_arg(buf, size, &at, kinds[i], args[i], read, ctx);
	}
	append(buf, size, &at, ")");
}
