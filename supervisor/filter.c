#include "supervisor/filter.h"

#include <errno.h>
#include <seccomp.h>
#include <unistd.h>

#include "supervisor/syscall_table.h"

int filter_install(bool shim_intercepts)
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
		const struct syscall_condition *c = NULL;
		for (size_t j = 0; j < syscall_conditions_len; j++)
			if (syscall_conditions[j].nr == e->nr)
				c = &syscall_conditions[j];
		if (c && c->every_call_with_shim && shim_intercepts)
			c = NULL;
		if (e->cls == SC_EXTERNAL && !shim_intercepts)
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)e->nr, 0);
		else if (c) /* allowed unless the argument has one of the bits; else the default */
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)e->nr, 1,
					       SCMP_CMP((unsigned)c->arg, SCMP_CMP_MASKED_EQ,
							c->mask, 0));
		else if (e->cls == SC_ALLOW)
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)e->nr, 0);
	}
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}
