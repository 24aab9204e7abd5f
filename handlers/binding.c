#include "handlers/binding.h"

#include <stddef.h>
#include <sys/syscall.h>

#include "handlers/fd_wait.h"
#include "handlers/sys_external.h"
#include "handlers/sys_files.h"
#include "handlers/sys_identity.h"
#include "handlers/sys_park.h"
#include "handlers/sys_ptrace.h"
#include "handlers/sys_reach.h"
#include "engine/page_share.h"
#include "syscalls/syscall_table.h" /* the numbers of calls newer than the libc headers */
#include "vkernel/memory_domain.h"
#include "vkernel/task.h"

/* Indexed by syscall number, from syscalls.def's rows: the table's handler column. */
static syscall_handler *const by_nr[] = {
#define SYSCALL(name, cls, handler, kinds, outputs, data, reason) [__NR_##name] = handler,
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"
};

syscall_handler *handler_of(long nr)
{
	return nr >= 0 && (size_t)nr < sizeof(by_nr) / sizeof(by_nr[0]) ? by_nr[nr] : NULL;
}

/* A call with no row is refused as unsupported; a row's call naming a process outside the
 * group is refused before its handler runs (reach_refused). */
static void dispatch(struct task *t)
{
	syscall_handler *handler = handler_of(t->syscall_nr);
	if (t->syscall_nr == -1 && ptrace_skipped(t))
		return; /* its tracer inside the group skipped it: nothing runs */
	if (!handler)
		sys_unsupported(t);
	else if (!reach_refused(t))
		handler(t);
}

/* A new image: the descriptors' state, and the memory the process shared is gone. */
static void executed(struct task *t)
{
	files_executed(t);
	ptrace_exec_done(t);
	memory_domain_exec(t->proc);
	page_share_gone(t->proc);
}

/* The last thread exits: its usage goes to the parent, and it shares no memory any more. */
static void process_exiting(struct task *t)
{
	rusage_process_exiting(t);
	memory_domain_forget(t->proc);
}

/* A SIGCHLD about to be delivered: the siginfo the group's kernel would give. */
static void sigchld_siginfo(struct task *t)
{
	rusage_sigchld_times(t);
	ptrace_sigchld_siginfo(t);
}

/* Before the program starts: what it inherits from detrun. */
static void run_starting(void)
{
	files_init();
	signalfds_at_start();
}

/* The program runs: a replay's view of the files (engine/file_view.h) is built by now, and
 * the files it wrote back count as older than the run. */
static void launched(bool pid_namespace)
{
	struct file_view_device devs[64];
	reach_set_namespaced(pid_namespace);
	files_view_devices(devs, file_view_devices(devs, 64));
	files_init();
}

const struct handler_ops handler_ops = {
	.dispatch = dispatch,
	.run_starting = run_starting,
	.launched = launched,
	.exec_done = executed,
	.process_exiting = process_exiting,
	.task_gone = ptrace_task_gone,
	.signal_stop = ptrace_signal_stop,
	.syscall_stop = ptrace_syscall_stop,
	.group_stop = ptrace_group_stop,
	.continued = ptrace_continued,
	.cloned = ptrace_cloned,
	.vfork_done = ptrace_vfork_done,
	.sigchld_siginfo = sigchld_siginfo,
	.joiner_woken = futex_woken,
	.outside_restarted = external_perform,
	.outside_wait_interrupted = external_wait_interrupted,
};
