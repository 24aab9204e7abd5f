#include "engine/cpu_emulate.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>

#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "engine/cpu_patch.h"
#include "engine/vdso.h"
#include "vkernel/task.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"
#include "vkernel/random.h"

/* The virtual TSC runs at 1 GHz: one tick per virtual nanosecond. */
static uint64_t virtual_tsc(void)
{
	return (uint64_t)vclock_now();
}

/* Decodes the instruction at the task's ip: its capstone id and length, 0 if unreadable. */
static unsigned decode_at_ip(struct task *t, unsigned *length)
{
	static csh handle;
	static bool opened;
	if (!opened) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK)
			return 0;
		opened = true;
	}
	uint8_t code[16];
	if (remote_read(t, REMOTE(task_ip(t)), code, sizeof(code)))
		return 0;
	cs_insn *insn;
	size_t n = cs_disasm(handle, code, sizeof(code), task_ip(t), 1, &insn);
	if (n != 1)
		return 0;
	unsigned id = insn[0].id;
	*length = insn[0].size;
	cs_free(insn, n);
	return id;
}

/* Where capstone's register ids live in the tracee's registers. */
static uint64_t *register_slot(struct task *t, unsigned reg)
{
	struct user_regs_struct *r = &t->regs;
	static const struct {
		unsigned ids[3];
		size_t offset;
	} map[] = {
		{ { X86_REG_RAX, X86_REG_EAX, X86_REG_AX },
		  offsetof(struct user_regs_struct, rax) },
		{ { X86_REG_RBX, X86_REG_EBX, X86_REG_BX },
		  offsetof(struct user_regs_struct, rbx) },
		{ { X86_REG_RCX, X86_REG_ECX, X86_REG_CX },
		  offsetof(struct user_regs_struct, rcx) },
		{ { X86_REG_RDX, X86_REG_EDX, X86_REG_DX },
		  offsetof(struct user_regs_struct, rdx) },
		{ { X86_REG_RSI, X86_REG_ESI, X86_REG_SI },
		  offsetof(struct user_regs_struct, rsi) },
		{ { X86_REG_RDI, X86_REG_EDI, X86_REG_DI },
		  offsetof(struct user_regs_struct, rdi) },
		{ { X86_REG_RBP, X86_REG_EBP, X86_REG_BP },
		  offsetof(struct user_regs_struct, rbp) },
		{ { X86_REG_RSP, X86_REG_ESP, X86_REG_SP },
		  offsetof(struct user_regs_struct, rsp) },
		{ { X86_REG_R8, X86_REG_R8D, X86_REG_R8W }, offsetof(struct user_regs_struct, r8) },
		{ { X86_REG_R9, X86_REG_R9D, X86_REG_R9W }, offsetof(struct user_regs_struct, r9) },
		{ { X86_REG_R10, X86_REG_R10D, X86_REG_R10W },
		  offsetof(struct user_regs_struct, r10) },
		{ { X86_REG_R11, X86_REG_R11D, X86_REG_R11W },
		  offsetof(struct user_regs_struct, r11) },
		{ { X86_REG_R12, X86_REG_R12D, X86_REG_R12W },
		  offsetof(struct user_regs_struct, r12) },
		{ { X86_REG_R13, X86_REG_R13D, X86_REG_R13W },
		  offsetof(struct user_regs_struct, r13) },
		{ { X86_REG_R14, X86_REG_R14D, X86_REG_R14W },
		  offsetof(struct user_regs_struct, r14) },
		{ { X86_REG_R15, X86_REG_R15D, X86_REG_R15W },
		  offsetof(struct user_regs_struct, r15) },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		for (int k = 0; k < 3; k++)
			if (map[i].ids[k] == reg)
				return (uint64_t *)((char *)r + map[i].offset);
	return NULL;
}

/* CPUID as the group sees it: this CPU's answers (the group is pinned to it), with the
 * fields that name a particular CPU — APIC, core and node ids — set to virtual CPU 0 and
 * a fixed brand: which real CPU detrun chose must not show. */
static void virtual_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
	static const char brand[48] = "detrun virtual CPU";
	switch (leaf) {
	case 1:
		r[1] &= 0x00ffffff; /* initial APIC id */
		break;
	case 0xb:
	case 0x1f:
		r[3] = 0; /* x2APIC id */
		break;
	case 0x8000001e: /* AMD: extended APIC id, core (compute unit) id, node id */
		r[0] = 0;
		r[1] &= ~0xffu;
		r[2] &= ~0xffu;
		break;
	case 0x80000002:
	case 0x80000003:
	case 0x80000004:
		memcpy(r, brand + 16 * (leaf - 0x80000002), 16);
		break;
	}
}

static bool emulate_trap(struct task *t, const struct cpu_trap *trap)
{
	sched_event(t);
	vdso_event(t);
	if (trap->kind == TRAP_CPUID) {
		uint32_t r[4];
		virtual_cpuid((uint32_t)t->regs.rax, (uint32_t)t->regs.rcx, r);
		t->regs.rax = r[0], t->regs.rbx = r[1], t->regs.rcx = r[2], t->regs.rdx = r[3];
		trace_event(t, "cpuid");
	} else if (trap->kind == TRAP_RDPID) {
		uint64_t *slot = register_slot(t, trap->reg);
		if (!slot)
			return false;
		*slot = (uint64_t)t->vcpu; /* TSC_AUX as Linux sets it: node 0, the CPU */
		trace_event(t, "rdpid = %d", t->vcpu);
	} else {
		uint64_t *slot = register_slot(t, trap->reg), value;
		if (!slot)
			return false;
		random_fill(&value, sizeof(value));
		if (trap->width == 2)
			*slot = (*slot & ~0xffffULL) | (value & 0xffff);
		else
			*slot = trap->width == 4 ? (uint32_t)value : value;
		/* success: CF set, OF SF ZF AF PF clear */
		t->regs.eflags = (t->regs.eflags & ~0x8d5ULL) | 1;
		trace_event(t, "%s", trap->kind == TRAP_RDRAND ? "rdrand" : "rdseed");
	}
	task_skip_insn(t, trap->length);
	return true;
}

bool cpu_emulate_fault(struct task *t)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || remote_load_regs(t))
		return false;
	if (si.si_signo == SIGILL) {
		const struct cpu_trap *trap = cpu_trap_at(t, task_ip(t));
		return trap && emulate_trap(t, trap);
	}
	if (si.si_code != SI_KERNEL)
		return false;
	unsigned length = 0, id = decode_at_ip(t, &length);
	if (id != X86_INS_RDTSC && id != X86_INS_RDTSCP)
		return false;
	if (t->tsc_sigsegv) /* the program trapped the TSC itself (sys_prctl.c): its SIGSEGV */
		return false;
	/* A counter read is an event, so successive reads differ and the clock moves. */
	sched_event(t);
	vdso_event(t);
	uint64_t tsc = virtual_tsc();
	t->regs.rax = tsc & 0xffffffffu;
	t->regs.rdx = tsc >> 32;
	if (id == X86_INS_RDTSCP)
		t->regs.rcx = (uint64_t)t->vcpu; /* TSC_AUX: the virtual CPU, node 0 */
	task_skip_insn(t, length);
	trace_event(t, "%s = %llu", id == X86_INS_RDTSC ? "rdtsc" : "rdtscp",
		    (unsigned long long)tsc);
	return true;
}

void code_mapped(struct task *t)
{
	const char *step;
	int err = 0;
	if (syscall_result(t) >= 0 || t->syscall_nr == __NR_mprotect ||
	    t->syscall_nr == __NR_pkey_mprotect)
		err = cpu_patch_mappings(t, &step);
	if (err)
		task_setup_failed(t, step, err);
}

void persona_exec(struct task *t)
{
	char path[64], text[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/personality", t->tid);
	FILE *f = fopen(path, "re");
	unsigned kernel = 0;
	bool known = f && fgets(text, sizeof(text), f) && sscanf(text, "%x", &kernel) == 1;
	if (f)
		fclose(f);
	if (!known) /* unknown: kept as the program set it (the careful side) */
		kernel = t->proc->persona;
	t->proc->persona = (t->proc->persona & ~READ_IMPLIES_EXEC) | (kernel & READ_IMPLIES_EXEC);
	t->proc->read_implies_exec = (kernel & READ_IMPLIES_EXEC) != 0;
}

void code_mapped_implicitly(struct task *t)
{
	long nr = t->syscall_nr;
	if (!t->proc->read_implies_exec || (nr != __NR_mmap && nr != __NR_mprotect &&
					    nr != __NR_pkey_mprotect && nr != __NR_shmat))
		return;
	code_mapped(t);
}
