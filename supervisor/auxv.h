/* The auxiliary vector of a freshly exec'd image. */
#ifndef DETRUN_SUPERVISOR_AUXV_H
#define DETRUN_SUPERVISOR_AUXV_H

struct task;

#include <stdbool.h>

/* Call at the exec stop. Replaces the 16 AT_RANDOM bytes (stack canaries, pointer guards,
 * runtime hash seeds) with seeded ones, and with hide_vdso turns AT_SYSINFO_EHDR into
 * AT_IGNORE, so libc and language runtimes find no vDSO and make real clock syscalls,
 * which detrun answers from the virtual clock. */
void auxv_rewrite(struct task *t, bool hide_vdso);

/* Call at the exec stop, after auxv_rewrite. Gives the process a syscall instruction for
 * injected calls (proc->syscall_insn, found in the code about to run) and, with
 * remove_vdso, unmaps the vDSO and its data pages ([vvar], [vvar_vclock]): a program that
 * finds the vDSO without the auxiliary vector (in /proc/self/maps, by its ELF symbols)
 * would otherwise read the real clock there without a syscall. */
void exec_setup(struct task *t, bool remove_vdso);

#endif
