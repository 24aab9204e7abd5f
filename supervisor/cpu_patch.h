/* CPUID, RDRAND and RDSEED in mapped code, replaced by traps (see cpu_patch.c). */
#ifndef DETRUN_SUPERVISOR_CPU_PATCH_H
#define DETRUN_SUPERVISOR_CPU_PATCH_H

#include <stdint.h>

#include "scheduler/task.h"

enum trap_kind { TRAP_CPUID, TRAP_RDRAND, TRAP_RDSEED };

struct cpu_trap {
	enum trap_kind kind;
	uint8_t length;  /* of the original instruction */
	unsigned reg;    /* capstone register id of RDRAND/RDSEED's destination */
	uint8_t width;   /* its size in bytes */
};

/* Patches every CPUID/RDRAND/RDSEED in t's executable file mappings not yet patched. */
void cpu_patch_mappings(struct task *t);
/* The trap patched at `addr` in t's address space, or NULL. */
const struct cpu_trap *cpu_trap_at(struct task *t, uint64_t addr);
/* A forked address space carries its parent's patched code. */
void cpu_patch_inherit(int parent_aspace, int child_aspace);

#endif
