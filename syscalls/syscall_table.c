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

const struct syscall_entry syscall_table[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason) \
	{ #name, __NR_##name, SC_##cls, kinds, sizeof(kinds) - 1, \
	  outputs, DATA_##data, reason },
// clang-format on
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#include "syscalls/syscalls.def"
};
const size_t syscall_table_len = sizeof(syscall_table) / sizeof(syscall_table[0]);

const struct syscall_condition syscall_conditions[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define EVERY_CALL true
#define AS_IS false
#define STOP_WHEN(name, arg, mask, with_shim) { __NR_##name, arg, mask, with_shim },
#define STOP_WHEN_EQ(name, arg, value)
#include "syscalls/syscalls.def"
#undef EVERY_CALL
#undef AS_IS
};
const size_t syscall_conditions_len = sizeof(syscall_conditions) / sizeof(syscall_conditions[0]);

const struct syscall_value syscall_values[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value) { __NR_##name, arg, (uint32_t)(value) },
#include "syscalls/syscalls.def"
};
const size_t syscall_values_len = sizeof(syscall_values) / sizeof(syscall_values[0]);

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
	static const char *names[] = { "allow",   "serialize", "blocking",
				       "emulate", "external",  "unsupported" };
	return names[cls];
}

bool syscall_names_process(const struct syscall_entry *e)
{
	return e && strpbrk(e->kinds, "PGWOD");
}

int syscall_fd_arg(const struct syscall_entry *e)
{
	const char *d = e ? strchr(e->kinds, 'd') : NULL;
	return d ? (int)(d - e->kinds) : -1;
}

int syscall_msg_flags_arg(const struct syscall_entry *e)
{
	const char *m = e ? strchr(e->kinds, 'm') : NULL;
	return m ? (int)(m - e->kinds) : -1;
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
	case 'i':
	case 'P':
	case 'G':
	case 'W':
	case 'O':
	case 'D':
		append(buf, size, at, "%d", (int)v);
		return;
	case 'u':
		append(buf, size, at, "%" PRIu64, v);
		return;
	case 's':
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
	size_t at = 0;
	buf[0] = 0;
	append(buf, size, &at, "%s(", syscall_name(nr));
	for (int i = 0; kinds[i] && i < 6; i++) {
		if (i)
			append(buf, size, &at, ", ");
		format_arg(buf, size, &at, kinds[i], args[i], read, ctx);
	}
	append(buf, size, &at, ")");
}
