/*
 * Ticks (parallel mode): what moves a domain's clock besides its events. The calls a
 * process makes on its own memory map (the TICK rows of syscalls.def) stop for it, and
 * first touches of fresh memory are counted.
 *
 * First-touch ticks: a domain's clock moves as its processes first touch
 * fresh private anonymous memory, so that a process computing without calls keeps its clock
 * in pace with processes that make them (engine/tracer_parallel.c, README: Parallel mode).
 *
 * Each address space that maps anonymous memory has a userfaultfd, made inside it by
 * injected calls (page_owner_open) at the exit stop of its first `brk` or anonymous private
 * `mmap`, and held by detrun. The range each later such call maps (the mapping, the growth
 * of the break) is registered for MISSING faults at that call's exit stop, before the
 * program can touch it: the TICK stops of those calls are resumed to their exit for this.
 * A first touch of a page there blocks its task in the kernel until a thread of detrun's
 * (not the stop loop: detrun's own process_vm_readv/writev into such a page would wait for
 * itself) maps zeroed pages over the aligned block of TOUCH_BLOCK bytes around it, where no
 * page is mapped yet, and counts TOUCH_WEIGHT for the address space before waking the task.
 * The stop loop adds the counts to the domains' clocks (touch_collect) at every stop and
 * before it reads a clock that orders or raises anything.
 *
 * Deterministic: within a domain one task runs at a time, so the sequence of first touches
 * (the program's, the kernel's in its calls, detrun's own reads and writes of its memory at
 * its events) is a function of its run; a page becomes missing again only through the
 * program's own calls (munmap, MADV_DONTNEED), never by reclaim (anonymous memory is
 * swapped, which leaves an entry: not missing), and the kernel's khugepaged does not
 * collapse a registered range with missing pages. A fault whose page is mapped already is
 * not counted: its task left the fault for a ptrace interrupt before it was resolved and
 * touched again. detrun reads no such page at a moment timing chooses (the spin
 * detector's digests skip pages that are not mapped). A fault is counted before its task is
 * woken, so a count is in before the stop that follows it; a count of detrun's own access is
 * in before detrun's thread goes on. A fork child's copies of the ranges lose their
 * registration (the kernel drops it without UFFD_FEATURE_EVENT_FORK, whose event would
 * block the fork until read): the child gets a userfaultfd of its own before it runs, and
 * its private anonymous mappings are registered from its maps (touch_forked). Lost on
 * purpose: a range mremap moves, MADV_FREE'd ranges (unregistered at the call:
 * the kernel may drop their pages at any time), the main stack. A limit: an address space
 * opened while MAX_SPACES (512) others are (or detrun is out of descriptors) counts no
 * first touches, and how many others had gone by then is timing's choice.
 */
#ifndef DETRUN_ENGINE_TOUCH_TICKS_H
#define DETRUN_ENGINE_TOUCH_TICKS_H

#include <stdbool.h>
#include <stdint.h>

struct task;
struct process;

/* A stop of t that only moves its domain's clock, handled here (true): a tick's stop (a
 * TICK row's call, tagged by the filter: it weighs 1, plus the fresh anonymous pages it
 * maps where first touches are not counted), or the exit stop of such a call that mapped
 * memory, where what it mapped is registered. The task goes on at once. */
bool touch_tick_stop(struct task *t, int status);

/* A new process of its own address space: if its parent counts first touches, it does
 * too, over its copies of the parent's anonymous memory (registered here, before it runs). */
void touch_forked(struct task *parent, struct task *child);

/* Adds the counted touches to their domains' clocks. */
void touch_collect(void);

/* Did the fault thread wake the stop loop since the last call (its SIGALRM)? */
bool touch_woke(void);

/* An address space may be gone (a process exec'd, or `gone` died): closes the userfaultfds
 * of every address space no live process other than `gone` has any more. */
void touch_forget(const struct process *gone);

/* --trace: how many first touches were counted. */
void touch_report(void);

#endif
