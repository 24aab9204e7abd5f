#include "supervisor/auxv.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "supervisor/remote.h"
#include "supervisor/report.h"
#include "supervisor/sys_common.h"
#include "supervisor/sys_random.h"

/* At the exec stop rsp points at argc, then argv[], NULL, envp[], NULL, then auxv pairs. */
void auxv_rewrite(struct task *t, bool hide_vdso)
{
	if (remote_load_regs(t))
		return;
	uint64_t p = task_sp(t);
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

struct range {
	uint64_t start, end;
};

/* Finds the bytes 0F 05 (a syscall instruction, wherever it starts) in [start, end). */
static uint64_t find_syscall_bytes(struct task *t, uint64_t start, uint64_t end)
{
	uint8_t buf[65536];
	for (uint64_t at = start; at < end && at - start < (16u << 20); at += sizeof(buf) - 1) {
		size_t n = end - at < sizeof(buf) ? (size_t)(end - at) : sizeof(buf);
		if (remote_read(t, REMOTE(at), buf, n))
			return 0;
		for (size_t i = 0; i + 1 < n; i++)
			if (buf[i] == 0x0f && buf[i + 1] == 0x05)
				return at + i;
	}
	return 0;
}

void exec_setup(struct task *t, bool remove_vdso)
{
	if (remote_load_regs(t))
		return;
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *maps = fopen(path, "re");
	if (!maps)
		return;
	struct range special[4], code = { 0, 0 }, vdso = { 0, 0 };
	int n = 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &name_at) < 3)
			continue;
		const char *name = line + (name_at ? name_at : (int)strlen(line));
		bool is_vdso = !strncmp(name, "[vdso]", 6);
		if ((is_vdso || !strncmp(name, "[vvar", 5)) && n < 4)
			special[n++] = (struct range){ start, end };
		if (is_vdso)
			vdso = (struct range){ start, end };
		if (perms[2] == 'x' && task_ip(t) >= start && task_ip(t) < end)
			code = (struct range){ start, end };
	}
	fclose(maps);
	/* The loader's (or a static program's) own code has syscall instructions; the vDSO's
	 * serves as a last resort (the step over it ends at the syscall's exit). */
	uint64_t insn = code.end ? find_syscall_bytes(t, code.start, code.end) : 0;
	if (!insn && vdso.end)
		insn = find_syscall_bytes(t, vdso.start, vdso.end);
	if (!insn)
		return;
	t->proc->syscall_insn = insn;
	for (int i = 0; i < n && remove_vdso; i++) {
		long r = remote_syscall(t, __NR_munmap, special[i].start,
					special[i].end - special[i].start, 0, 0, 0, 0);
		if (r < 0)
			task_warn(t,
				  "cannot unmap the vDSO at %#llx (%s): clock reads there bypass "
				  "detrun",
				  (unsigned long long)special[i].start, strerror((int)-r));
	}
}
