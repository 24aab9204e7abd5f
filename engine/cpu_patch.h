/* CPUID, RDRAND and RDSEED in mapped code, replaced by traps (see cpu_patch.c). */
#ifndef DETRUN_SUPERVISOR_CPU_PATCH_H
#define DETRUN_SUPERVISOR_CPU_PATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "vkernel/task.h"

/* RDPID (F3 0F C7 /7) is listed apart: capstone 4 decodes it as RDSEED. */
enum trap_kind {
	TRAP_CPUID,
	TRAP_RDRAND,
	TRAP_RDSEED,
	TRAP_RDPID
};

struct cpu_trap {
	enum trap_kind kind;
	uint8_t length; /* of the original instruction */
	unsigned reg;   /* capstone register id of RDRAND/RDSEED's destination */
	uint8_t width;  /* its size in bytes */
};

/* Patches every CPUID/RDRAND/RDSEED/RDPID in t's private executable file mappings not
 * yet patched; a shared mapping is never written (that would write into the file).
 * 0, or -errno with *step saying what could not be done: code that may hold such an
 * instruction was not scanned or not patched, and the caller stops the group. */
int cpu_patch_mappings(struct task *t, const char **step);
/* The same for the mappings that overlap [start, end) only (a mapping moved or grown). */
int cpu_patch_range(struct task *t, uint64_t start, uint64_t end, const char **step);
/* Does [start, end) overlap code mapped in address space `aspace`, as far as detrun knows? */
bool cpu_patch_is_code(int aspace, uint64_t start, uint64_t end);
/* The trap patched at `addr` in t's address space, or NULL. */
const struct cpu_trap *cpu_trap_at(struct task *t, uint64_t addr);
/* A forked address space carries its parent's patched code. */
void cpu_patch_inherit(int parent_aspace, int child_aspace);

#endif
