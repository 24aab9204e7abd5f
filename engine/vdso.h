/*
 * detrun's own vDSO: clock reads without a stop.
 *
 * The kernel's vDSO reads the host's clock, so exec_setup (auxv.h) unmaps it. In its place
 * each address space gets a small code page of detrun's (engine/vdso/vdso.c, found through
 * AT_SYSINFO_EHDR as usual) and, right before it, a data page the supervisor shares with
 * it (a memfd mapped in both): the virtual time of the process's last event, which the
 * code reads (engine/vdso_data.h says how the reads between two events stay
 * deterministic). The supervisor writes the page at every event of one of the process's
 * tasks, when a wait of one of them ends and, in serial mode, when the scheduler picks
 * one of them to run (its threads are all stopped then), and never reads it back.
 *
 * A fork child would share its parent's page (MAP_SHARED is inherited): it gets a page of
 * its own at the same address before it first runs. A CLONE_VM child (vfork) shares its
 * parent's, as it shares the rest of its memory. When a page cannot be made the code
 * still works, by the syscall: an exec then keeps the program without a vDSO (as
 * --keep-vdso's opposite always did before), a fork child gets a private page whose reads
 * all go to the syscall.
 */
#ifndef DETRUN_ENGINE_VDSO_H
#define DETRUN_ENGINE_VDSO_H

#include <stdbool.h>
#include <stdint.h>

struct task;
struct process;

/* The memfd's name: /proc/PID/maps shows its mappings as "/memfd:detrun-vdso (deleted)",
 * which the maps view (handlers/sys_proc.c) shows as the kernel's "[vvar]" and "[vdso]". */
#define VDSO_MEMFD_NAME "detrun-vdso"

/* At the exec stop, once the kernel's vDSO is unmapped: maps the data page at `at` and the
 * code after it. Returns the code's address (AT_SYSINFO_EHDR), or 0 when it could not be
 * mapped (nothing of it is left then). */
uint64_t vdso_map(struct task *t, uint64_t at);
/* At the clone event, the child stopped: a child with its own address space gets its own
 * page, one with its parent's shares the parent's. */
void vdso_forked(struct task *parent, struct task *child);
/* An event of t: its process's page takes the virtual time. */
void vdso_event(struct task *t);
/* The scheduler ended t's wait (sched_ops.woken), or, in serial mode, picked t to run: its
 * page takes the virtual time if that moved since it last did without an event of the
 * process (a jump to a deadline, other tasks' events), so a task back from sleeping 10 ms
 * reads 10 ms later. Only those points do this, which come at the same places of the
 * timeline on every run; the stops that are no events (a spin probe, a signal's
 * delivery) do not, nor does parallel mode's start of a task that waits only for a CPU
 * (tracer_parallel.c, start_free_domains), whose moment timing chooses. */
void vdso_resumed(struct task *t);
/* The process is gone, or exec'd: its page, if no other process uses it, goes. */
void vdso_release(struct process *p);
/* Where detrun's vDSO code begins in p, the AT_SYSINFO_EHDR the program was given; 0 when
 * p has none. */
uint64_t vdso_ehdr(const struct process *p);
/* Is `start` where detrun's vDSO code begins in p? That code is detrun's, not the
 * program's: the CPU instruction scan (cpu_patch.h) leaves it alone. */
bool vdso_code_at(const struct process *p, uint64_t start);

#endif
