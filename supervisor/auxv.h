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

#endif
