#include "supervisor/filter.h"

#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <unistd.h>

#include "supervisor/syscall_table.h"

/* Allows call nr unless the low 32 bits of argument `arg` are one of `values` (or its high
 * bits are set, which the kernel ignores for an int: such a call stops too, so it cannot
 * slip past). libseccomp takes one comparison per argument in a rule, so the allowed set
 * is a union of masked comparisons, each requiring the high half to be zero:
 *   - for each bit on which all the values agree: that bit differs;
 *   - on the bits where they differ (few), every pattern no value has. */
static int allow_unless_values(scmp_filter_ctx ctx, long nr, int arg, const uint32_t *values,
			       int n)
{
	const uint64_t high = 0xffffffff00000000ULL;
	uint32_t differ = 0;
	for (int i = 1; i < n; i++)
		differ |= values[i] ^ values[0];
	if (__builtin_popcount(differ) > 8)
		return -E2BIG;
	int err = 0;
	for (int b = 0; b < 32 && !err; b++) {
		uint64_t bit = 1U << b;
		struct scmp_arg_cmp differs = SCMP_CMP((unsigned)arg, SCMP_CMP_MASKED_EQ,
						       high | bit, ~values[0] & bit);
		if (!(differ & bit))
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)nr, 1, differs);
	}
	/* every sub-pattern of `differ`, by the standard subset walk */
	for (uint32_t p = differ;; p = (p - 1) & differ) {
		bool taken = false;
		for (int i = 0; i < n; i++)
			taken |= (values[i] & differ) == p;
		struct scmp_arg_cmp pattern = SCMP_CMP((unsigned)arg, SCMP_CMP_MASKED_EQ,
						       high | differ, p);
		if (!taken && !err)
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)nr, 1, pattern);
		if (!p)
			break;
	}
	return err;
}

/* Allows call nr, except for the values STOP_ON lists for it. */
static int allow_row(scmp_filter_ctx ctx, long nr)
{
	uint32_t values[8];
	int n = 0, arg = -1;
	for (size_t j = 0; j < syscall_stop_values_len; j++)
		if (syscall_stop_values[j].nr == nr && n < 8) {
			arg = syscall_stop_values[j].arg;
			values[n++] = syscall_stop_values[j].value;
		}
	if (!n)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)nr, 0);
	return allow_unless_values(ctx, nr, arg, values, n);
}

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
			err = allow_row(ctx, e->nr);
		else if (c) /* allowed unless the argument has one of the bits; else the default */
			err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)e->nr, 1,
					       SCMP_CMP((unsigned)c->arg, SCMP_CMP_MASKED_EQ,
							c->mask, 0));
		else if (e->cls == SC_ALLOW)
			err = allow_row(ctx, e->nr);
	}
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}
