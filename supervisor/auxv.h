/* The auxiliary vector of a freshly exec'd image. */
#ifndef DETRUN_SUPERVISOR_AUXV_H
#define DETRUN_SUPERVISOR_AUXV_H

struct task;

/* Turns AT_SYSINFO_EHDR into AT_IGNORE so libc and language runtimes find no vDSO and make
 * real clock syscalls, which detrun answers from the virtual clock. Call at the exec stop. */
void auxv_hide_vdso(struct task *t);

#endif
