#include "supervisor/sys_cpu.h"

#include <capstone/capstone.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "supervisor/remote.h"
#include "supervisor/report.h"

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
	if (remote_read(t, REMOTE(t->regs.rip), code, sizeof(code)))
		return 0;
	cs_insn *insn;
	size_t n = cs_disasm(handle, code, sizeof(code), t->regs.rip, 1, &insn);
	if (n != 1)
		return 0;
	unsigned id = insn[0].id;
	*length = insn[0].size;
	cs_free(insn, n);
	return id;
}

bool cpu_emulate_fault(struct task *t)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || si.si_code != SI_KERNEL)
		return false;
	if (remote_load_regs(t))
		return false;
	unsigned length = 0, id = decode_at_ip(t, &length);
	if (id != X86_INS_RDTSC && id != X86_INS_RDTSCP)
		return false;
	/* A counter read is an event, so successive reads differ and the clock moves. */
	sched_event(t);
	uint64_t tsc = virtual_tsc();
	t->regs.rax = tsc & 0xffffffffu;
	t->regs.rdx = tsc >> 32;
	if (id == X86_INS_RDTSCP)
		t->regs.rcx = 0; /* TSC_AUX: virtual CPU 0 */
	t->regs.rip += length;
	t->regs_dirty = true;
	trace_event(t, "%s = %llu", id == X86_INS_RDTSC ? "rdtsc" : "rdtscp",
		    (unsigned long long)tsc);
	return true;
}
