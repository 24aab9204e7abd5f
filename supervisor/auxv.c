#include "supervisor/auxv.h"

#include <elf.h>
#include <stdint.h>

#include "supervisor/remote.h"
#include "supervisor/report.h"
#include "supervisor/sys_common.h"

/* At the exec stop rsp points at argc, then argv[], NULL, envp[], NULL, then auxv pairs. */
void auxv_rewrite(struct task *t, bool hide_vdso)
{
	if (remote_load_regs(t))
		return;
	uint64_t p = t->regs.rsp;
	uint64_t argc;
	if (remote_read(t, REMOTE(p), &argc, sizeof(argc)))
		return;
	p += 8 * (argc + 2); /* argc, argv[argc], NULL */
	for (int i = 0; i < 100000; i++, p += 8) {
		uint64_t env;
		if (remote_read(t, REMOTE(p), &env, sizeof(env)))
			return;
		if (!env)
			break;
	}
	p += 8;
	for (int i = 0; i < 512; i++, p += 16) {
		uint64_t pair[2];
		if (remote_read(t, REMOTE(p), pair, sizeof(pair)) || pair[0] == AT_NULL)
			return;
		if (pair[0] == AT_SYSINFO_EHDR && hide_vdso) {
			uint64_t ignore = AT_IGNORE;
			if (remote_write(t, REMOTE(p), &ignore, sizeof(ignore)))
				task_warn(t, "cannot hide the vDSO; clock reads may bypass detrun");
		}
		if (pair[0] == AT_RANDOM) {
			unsigned char bytes[16];
			random_fill(bytes, sizeof(bytes));
			if (remote_write(t, REMOTE(pair[1]), bytes, sizeof(bytes)))
				task_warn(t, "cannot replace AT_RANDOM; hash seeds may vary");
		}
	}
}
