#include "supervisor/filter.h"

#include <errno.h>
#include <seccomp.h>
#include <unistd.h>

#include "supervisor/syscall_table.h"

int filter_install(void)
{
	/* Calls the table does not know (newer than these headers) stop too: an unknown call is
	 * treated as an event, never silently allowed. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRACE(0));
	if (!ctx)
		return -ENOMEM;
	int err = 0;
	/* As root, no_new_privs is not needed and would break setuid programs in the group. */
	if (geteuid() == 0)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary search over syscall numbers instead of a linear scan: allowed calls, the
	 * common case, pay a few comparisons. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; !err && i < syscall_table_len; i++) {
		const struct syscall_entry *e = &syscall_table[i];
		uint32_t action = e->cls == SC_ALLOW ? SCMP_ACT_ALLOW : SCMP_ACT_TRACE(e->cls);
		err = seccomp_rule_add(ctx, action, (int)e->nr, 0);
		if (err == -EACCES) /* same action as the default: nothing to add */
			err = 0;
	}
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}
