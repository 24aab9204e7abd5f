#include "supervisor/syscall_table.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <sys/syscall.h>

#ifndef EXT4_IOC_GETVERSION /* fs/ext4/ext4.h: the same as FS_IOC_GETVERSION, on ext4 */
#define EXT4_IOC_GETVERSION _IOR('f', 3, long)
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

const struct syscall_entry syscall_table[] = {
#define SYSCALL(name, cls, handler, reason) { #name, __NR_##name, SC_##cls, handler, reason },
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#include "supervisor/syscalls.def"
#undef STOP_WHEN_EQ
#undef STOP_WHEN
#undef SYSCALL
};
const size_t syscall_table_len = sizeof(syscall_table) / sizeof(syscall_table[0]);

const struct syscall_condition syscall_conditions[] = {
#define SYSCALL(name, cls, handler, reason)
#define EVERY_CALL true
#define AS_IS false
#define STOP_WHEN(name, arg, mask, with_shim) { __NR_##name, arg, mask, with_shim },
#define STOP_WHEN_EQ(name, arg, value)
#include "supervisor/syscalls.def"
#undef STOP_WHEN_EQ
#undef STOP_WHEN
#undef SYSCALL
#undef EVERY_CALL
#undef AS_IS
};
const size_t syscall_conditions_len = sizeof(syscall_conditions) / sizeof(syscall_conditions[0]);

const struct syscall_value syscall_values[] = {
#define SYSCALL(name, cls, handler, reason)
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value) { __NR_##name, arg, (uint32_t)(value) },
#include "supervisor/syscalls.def"
#undef STOP_WHEN_EQ
#undef STOP_WHEN
#undef SYSCALL
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
	static const char *names[] = { "allow", "serialize", "blocking", "emulate", "external",
				       "unsupported" };
	return names[cls];
}
