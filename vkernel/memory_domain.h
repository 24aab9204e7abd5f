/*
 * Memory domains: which processes of the group share writable state, and so must run one
 * task at a time among themselves when processes run in parallel (--jobs above 1).
 *
 * Processes that share no memory communicate only through calls, which stop and are
 * ordered on the logical timeline; processes that share memory communicate by plain loads
 * and stores, which nothing orders but running them one at a time. A domain is a set of
 * processes closed under "shares something with": the engine runs the tasks of one domain
 * serially, different domains in parallel.
 *
 * Sharing comes from:
 *   - one address space: threads (one struct process) and CLONE_VM children such as
 *     vfork's, which have their parent's `aspace` until they exec;
 *   - shared objects mapped by several processes: an anonymous MAP_SHARED region (only
 *     fork hands it to another process: the child inherits every shared object of its
 *     parent), a file, memfd or shm_open object (by device and inode), a System V segment
 *     (by shmid) — recorded at the exit of a successful mmap(MAP_SHARED) or shmat, except
 *     shmem the engine keeps apart by page ownership (engine/page_share.h). A file
 *     mapped through a descriptor opened read-only can never be written through that
 *     mapping (the kernel refuses PROT_WRITE on it, mprotect included): such mappings
 *     share with a writable mapping of the file, not among themselves (glibc maps
 *     gconv-modules.cache so in every process that converts a character set: make and
 *     each compiler it starts, which would otherwise be one domain);
 *   - a descriptor table (CLONE_FILES) or fs information (CLONE_FS: cwd, umask) shared
 *     without CLONE_VM, which the LOCAL rows of syscalls.def count as the caller's own;
 *   - ptrace inside the group (handlers/sys_ptrace.c): a tracer reads and writes its
 *     tracee's registers and memory, and holds it at its stops, at events of its own, so
 *     the two run as one domain from the attach (or TRACEME, or a followed fork) on. The
 *     link outlives a detach and an exec (the careful side), until one of them is gone.
 * A process that shares nothing is a domain alone. exec drops a process's memory (and an
 * unshared descriptor table) and its exit all of it: the domain may then split. Munmap
 * and shmdt do not split (the careful side: a domain is never smaller than the truth).
 *
 * A domain's number is the smallest `aspace` among its processes: the same on every run,
 * since address-space ids are handed out in the order of the logical timeline.
 *
 * The module only keeps the relation. The engine tells it of new processes at their clone
 * event (memory_domain_forked), the handlers of execs and last exits (handlers/binding.c)
 * and of shared objects mapped (mmap and shmat, handlers/sys_misc.c, with processes in
 * parallel only); the engine asks memory_domain_of, and learns of merges through the
 * hook. A domain's number changes only at a merge, an exec or an exit.
 */
#ifndef DETRUN_VKERNEL_MEMORY_DOMAIN_H
#define DETRUN_VKERNEL_MEMORY_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>

struct process;

enum shared_kind {
	SHARED_ANON,  /* an anonymous MAP_SHARED region: id from memory_domain_new_anon */
	SHARED_FILE,  /* a mapped file, memfd or POSIX shm object: (dev, ino) */
	SHARED_SYSV,  /* a System V segment: (shmid, 0) */
	SHARED_FILES, /* a descriptor table shared by CLONE_FILES: exec unshares it */
	SHARED_FS,    /* fs information shared by CLONE_FS: exec keeps it */
	SHARED_TRACE, /* a tracer and its tracee (ptrace inside the group): exec keeps it */
};

struct shared_object {
	enum shared_kind kind;
	uint64_t a, b;
	bool read_only; /* a file mapped from a read-only descriptor; false: may be written */
};

/* The domain of p: the smallest aspace of the processes it shares with (its own when it
 * shares with none). */
int memory_domain_of(const struct process *p);
/* Do a and b share memory (one domain)? */
bool memory_domain_same(const struct process *a, const struct process *b);

/* p maps `o` (at the exit of a successful mmap(MAP_SHARED) or shmat): p's domain merges
 * with those of the other processes that map it, unless both mappings are read-only. */
void memory_domain_map(struct process *p, struct shared_object o);
/* tracer starts tracing tracee (at the tracer's event, the tracee's domain stopped: the
 * engine's barrier): their domains merge, reported to the hook, and stay one. */
void memory_domain_trace(struct process *tracer, struct process *tracee);
/* A new anonymous shared region's id: regions made by different calls never compare equal. */
uint64_t memory_domain_new_anon(void);

/* At the clone event of a new process (not a thread): the child inherits its parent's
 * shared mappings; CLONE_FILES and CLONE_FS without CLONE_VM share the table or the fs
 * information; CLONE_VM alone shares the address space (the same aspace). The child
 * starts in its parent's domain then, without a merge reported. */
void memory_domain_forked(struct process *parent, struct process *child, uint64_t clone_flags);
/* p runs a new image (its new aspace already set): its old memory is gone. */
void memory_domain_exec(struct process *p);
/* p is gone: it shares nothing any more. Idempotent. */
void memory_domain_forget(struct process *p);

/* fn(a, b) runs after each merge of two domains, a and b processes of the two, both now
 * in one domain (memory_domain_of(a) == memory_domain_of(b)). NULL: none. */
void memory_domain_set_merge_hook(void (*fn)(struct process *a, struct process *b));

/* Drops every record (a new run; the unit tests). */
void memory_domain_reset(void);

#endif
