/*
 * Shared memory between memory domains by page ownership (parallel mode): processes that
 * map one shmem object (anonymous MAP_SHARED, memfd, shm_open, any tmpfs file) stay in
 * domains of their own and run at once; each page of the object is written by one address
 * space at a time, or read by several and written by none (engine/page_owner.h does the
 * kernel's part, through one userfaultfd per address space).
 *
 * A process that touches a page it does not hold blocks in a fault detrun reads. The fault
 * is an event of its domain: the task is held (task.h, fault_held) and handled in Kendo
 * order like a held stop, and before the page leaves the address spaces that hold it their
 * domains must have stopped at a stop of their own (a barrier, as signals make), so which
 * of their stores go with the page does not depend on timing. A fault on a page the process
 * holds already (a hole of its own, a page it reads and may keep reading) is given at once:
 * nothing another process sees changes.
 *
 * Memory the kernel will not register (System V shm, files of other filesystems) keeps
 * merging domains (vkernel/memory_domain.h): page_share_map refuses it and the caller
 * merges. So does an object whose pages keep moving (page_share.c, MERGE_MOVES): from a
 * point on the timeline its mappers run as one domain. DETRUN_PAGE_OWNER=0 turns the
 * whole mechanism off (every shared mapping merges). At most 64 address spaces hold
 * ranges at once (a bit each): a fork past that ends the run with a message.
 */
#ifndef DETRUN_ENGINE_PAGE_SHARE_H
#define DETRUN_ENGINE_PAGE_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkernel/memory_domain.h"

struct task;
struct process;

/* Parallel mode with page ownership on. */
bool page_share_on(void);

/* At the exit stop of t's mmap(MAP_SHARED) that mapped `o` at [addr, addr+len) from page
 * `pgoff` of the object: the range is put under ownership; 0, or -errno when the kernel
 * refuses the memory (the caller merges domains instead). A mapping made without
 * PROT_WRITE is refused too (-EACCES), and the object's mappers merge: calls whose
 * arguments lie in such memory (clone3's, a timeout) crashed the child or lost the
 * timeout under ownership, a cause not yet found. */
int page_share_map(struct task *t, const struct shared_object *o, uint64_t addr, uint64_t len,
		   uint64_t pgoff, bool writable);

/* At a fork's clone event (child stopped at its first stop, its own address space): the
 * child's copies of its parent's ranges get its own registration before it runs. */
void page_share_forked(struct task *parent, struct task *child);

/* At the exit stop of t's successful mremap of [old, old+old_len) to [at, at+len): the
 * ranges there move with it, registered again and taken from t (the moved page-table
 * entries may show pages it does not hold); pages it holds come back at their first
 * fault. */
void page_share_remapped(struct task *t, uint64_t old, uint64_t old_len, uint64_t at, uint64_t len);

/* p runs a new image or is gone: its address space's ranges and holdings go when no other
 * process has it. */
void page_share_gone(struct process *p);

/* Does [addr, addr+len) of p's address space meet a range under ownership? (detrun's own
 * reads of it go through /proc/PID/mem, which fails where process_vm_readv would block.) */
bool page_share_covers(const struct process *p, uint64_t addr, uint64_t len);

/* Reads the faults waiting: those on pages held already are given, the others hold their
 * task for its turn. Cheap when nothing came (a waker thread says when something did). */
void page_share_drain(void);

/* t stopped (before its stop is held or handled): pages its address space gave up while
 * it could take no injected call are dropped now. */
void page_share_stopped(struct task *t);

/* The domain that must have stopped before t's fault is handled: -1 none, -2 every one. */
int page_share_barrier(struct task *t);

/* A call stopped at its seccomp stop (held for its turn): the domains that must have
 * stopped before it is handled, because it points into pages t's address space does not
 * hold (its handler may read them, detrun only reads pages the process holds); then,
 * just before its handler runs, those pages come to t for writing. -1 none, -2 all. */
int page_share_call_barrier(struct task *t);
void page_share_call_pages(struct task *t);

/* Handles t's held fault, an event of its domain: the page leaves the address spaces that
 * must give it up, and t gets it. */
void page_share_transfer(struct task *t);

/* With --trace, at the end of a run: faults that were events, and how many of them moved a
 * page between address spaces (took it from another, or made its writer a reader). */
void page_share_report(void);

#endif
