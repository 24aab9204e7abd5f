/* The auxiliary vector of a freshly exec'd image. */
#ifndef DETRUN_SUPERVISOR_AUXV_H
#define DETRUN_SUPERVISOR_AUXV_H

struct task;

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Both steps return 0, or -errno with *step saying what could not be done: the caller
 * stops the group then (the program must not run on with the host's vDSO or AT_RANDOM). */

/* Call at the exec stop, after exec_setup. Replaces the 16 AT_RANDOM bytes (stack
 * canaries, pointer guards, runtime hash seeds) with seeded ones, and with hide_vdso
 * points AT_SYSINFO_EHDR at detrun's vDSO (vdso_ehdr, engine/vdso.h), or turns it into
 * AT_IGNORE when there is none (0), so libc and language runtimes make real clock
 * syscalls, which detrun answers from the virtual clock. */
int auxv_rewrite(struct task *t, bool hide_vdso, uint64_t vdso_ehdr, const char **step);

/* The kernel's copy of a vector (/proc/PID/auxv, `size` bytes at vec) keeps the host vDSO
 * auxv_rewrite replaced on the stack: points its AT_SYSINFO_EHDR at vdso_ehdr (AT_IGNORE
 * for 0), so that every reader sees the vector the program got. */
void auxv_show_program_vdso(char *vec, size_t size, uint64_t vdso_ehdr);

/* Call at the exec stop. Gives the process a syscall instruction for injected calls
 * (proc->syscall_insn, found in the code about to run) and, with remove_vdso, unmaps the
 * vDSO and its data pages ([vvar], [vvar_vclock]): a program that finds the vDSO without
 * the auxiliary vector (in /proc/self/maps, by its ELF symbols) would otherwise read the
 * real clock there without a syscall. The maps are read again after the unmap: none of
 * those mappings may be left. detrun's own vDSO is then mapped where they were, its
 * address in *vdso_ehdr (0 if none could be). */
int exec_setup(struct task *t, bool remove_vdso, uint64_t *vdso_ehdr, const char **step);

#endif
