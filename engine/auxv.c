#include "engine/auxv.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/remote.h"
#include "engine/vdso.h"
#include "vkernel/report.h"
#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"
#include "vkernel/random.h"

/* At the exec stop rsp points at argc, then argv[], NULL, envp[], NULL, then auxv pairs. */
int auxv_rewrite(struct task *t, bool hide_vdso, uint64_t vdso_ehdr, const char **step)
{
	*step = "read the auxiliary vector";
	int err = remote_load_regs(t);
	uint64_t p = task_sp(t), argc = 0;
	if (err || (err = remote_read(t, REMOTE(p), &argc, sizeof(argc))))
		return err;
	p += 8 * (argc + 2); /* argc, argv[argc], NULL */
	for (uint64_t env = 1; env; p += 8)
		if ((err = remote_read(t, REMOTE(p), &env, sizeof(env))))
			return err;
	for (int i = 0; i < 512; i++, p += 16) {
		uint64_t pair[2];
		if ((err = remote_read(t, REMOTE(p), pair, sizeof(pair))) || pair[0] == AT_NULL)
			return err;
		if (pair[0] == AT_SYSINFO_EHDR && hide_vdso) {
			uint64_t ours[2] = { AT_SYSINFO_EHDR, vdso_ehdr }, ignore = AT_IGNORE;
			*step = "replace the vDSO (AT_SYSINFO_EHDR)";
			if ((err = vdso_ehdr ? remote_write(t, REMOTE(p), ours, sizeof(ours))
					     : remote_write(t, REMOTE(p), &ignore, sizeof(ignore))))
				return err;
		}
		if (pair[0] == AT_RANDOM) {
			unsigned char bytes[16];
			random_fill(bytes, sizeof(bytes));
			*step = "replace AT_RANDOM";
			if ((err = remote_write(t, REMOTE(pair[1]), bytes, sizeof(bytes))))
				return err;
		}
		*step = "read the auxiliary vector";
	}
	return -E2BIG;
}

void auxv_show_program_vdso(char *vec, size_t size, uint64_t vdso_ehdr)
{
	for (size_t at = 0; at + 16 <= size; at += 16) {
		uint64_t pair[2];
		memcpy(pair, vec + at, sizeof(pair));
		if (pair[0] != AT_SYSINFO_EHDR)
			continue;
		pair[0] = vdso_ehdr ? AT_SYSINFO_EHDR : AT_IGNORE;
		pair[1] = vdso_ehdr;
		memcpy(vec + at, pair, sizeof(pair));
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

/* What exec_setup needs of the maps: the vDSO's mappings, the vDSO, the code at the ip. */
struct exec_maps {
	struct range special[4], code, vdso;
	int n;
};

static int read_maps(struct task *t, struct exec_maps *m)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *maps = fopen(path, "re");
	if (!maps)
		return -errno;
	*m = (struct exec_maps){ .n = 0 };
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &name_at) < 3)
			continue;
		const char *name = line + (name_at ? name_at : (int)strlen(line));
		bool is_vdso = !strncmp(name, "[vdso]", 6);
		if ((is_vdso || !strncmp(name, "[vvar", 5)) && m->n < 4)
			m->special[m->n++] = (struct range){ start, end };
		if (is_vdso)
			m->vdso = (struct range){ start, end };
		if (perms[2] == 'x' && task_ip(t) >= start && task_ip(t) < end)
			m->code = (struct range){ start, end };
	}
	int err = ferror(maps) ? -EIO : 0;
	fclose(maps);
	return err;
}

int exec_setup(struct task *t, bool remove_vdso, uint64_t *vdso_ehdr, const char **step)
{
	*step = "read the process's maps";
	struct exec_maps m;
	int err = remote_load_regs(t);
	if (err || (err = read_maps(t, &m)))
		return err;
	/* The loader's (or a static program's) own code has syscall instructions; the vDSO's
	 * serves as a last resort (the step over it ends at the syscall's exit). */
	uint64_t insn = m.code.end ? find_syscall_bytes(t, m.code.start, m.code.end) : 0;
	if (!insn && m.vdso.end)
		insn = find_syscall_bytes(t, m.vdso.start, m.vdso.end);
	*step = "find a syscall instruction for injected calls";
	if (!insn)
		return -ENOEXEC;
	t->proc->syscall_insn = insn;
	*step = "unmap the vDSO";
	*vdso_ehdr = 0;
	uint64_t ours_at = 0; /* where the kernel's vDSO and its data were: detrun's go there */
	for (int i = 0; i < m.n && remove_vdso; i++) {
		if (!ours_at || m.special[i].start < ours_at)
			ours_at = m.special[i].start;
		long r = remote_syscall(t, __NR_munmap, m.special[i].start,
					m.special[i].end - m.special[i].start, 0, 0, 0, 0);
		if (r < 0)
			return (int)r;
	}
	/* Defence in depth: whatever the program's seccomp filter says (seccomp_filter.h),
	 * the unmap must have happened. */
	if (remove_vdso && (err = read_maps(t, &m)))
		return err;
	*step = "unmap the vDSO (it is still mapped after munmap)";
	if (remove_vdso && m.n)
		return -EEXIST;
	if (ours_at && tracer_opts->own_vdso)
		*vdso_ehdr = vdso_map(t, ours_at);
	return 0;
}
