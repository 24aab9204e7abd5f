#include "engine/stack.h"

#include <libunwind-ptrace.h>
#include <stdio.h>

#include "vkernel/task.h"

void stack_report(struct task *t, const char *why)
{
	fprintf(stderr, "detrun:   %s: stack of task %d (tid %d):\n", why, t->vtid, t->ns_tid);
	unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
	void *ctx = as ? _UPT_create(t->tid) : NULL;
	unw_cursor_t cursor;
	if (!ctx || unw_init_remote(&cursor, as, ctx) < 0) {
		fprintf(stderr, "detrun:     (stack unavailable)\n");
		goto out;
	}
	for (int depth = 0; depth < 16; depth++) {
		unw_word_t ip = 0, off = 0;
		char name[128] = "??";
		unw_get_reg(&cursor, UNW_REG_IP, &ip);
		if (unw_get_proc_name(&cursor, name, sizeof(name), &off) < 0)
			off = 0;
		fprintf(stderr, "detrun:     #%d 0x%llx %s+0x%llx\n", depth, (unsigned long long)ip,
			name, (unsigned long long)off);
		if (unw_step(&cursor) <= 0)
			break;
	}
out:
	if (ctx)
		_UPT_destroy(ctx);
	if (as)
		unw_destroy_addr_space(as);
}
