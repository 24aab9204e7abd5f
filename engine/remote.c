#include "engine/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/page_share.h"

int remote_load_regs(struct task *t)
{
	if (t->regs_valid)
		return 0;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	t->regs_valid = true;
	t->regs_dirty = false;
	return 0;
}

int remote_store_regs(struct task *t)
{
	if (!t->regs_dirty)
		return 0;
	t->regs_dirty = false;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	return 0;
}

/* /proc/TID/mem is the fallback for pages process_vm_*() refuses (read-only text, guard
 * pages that ptrace may still touch). */
static int proc_mem_io(struct task *t, uint64_t addr, void *buf, size_t len, bool write)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", t->tid);
	int fd = open(path, write ? O_WRONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write ? pwrite(fd, (char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n <= 0) {
			close(fd);
			return n < 0 && errno != EIO ? -errno : -EFAULT;
		}
		done += (size_t)n;
	}
	close(fd);
	return 0;
}

int remote_read(struct task *t, remote_ptr src, void *dst, size_t len)
{
	if (len == 0)
		return 0;
	/* A page the process does not hold would block process_vm_readv on a fault only
	 * detrun resolves; /proc/PID/mem fails on it instead. */
	if (page_share_covers(t->proc, src.addr, len))
		return proc_mem_io(t, src.addr, dst, len, false);
	struct iovec local = { dst, len }, remote = { (void *)src.addr, len };
	ssize_t n = process_vm_readv(t->tid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	return proc_mem_io(t, src.addr, dst, len, false);
}

int remote_write(struct task *t, remote_ptr dst, const void *src, size_t len)
{
	if (len == 0)
		return 0;
	if (page_share_covers(t->proc, dst.addr, len))
		return proc_mem_io(t, dst.addr, (void *)src, len, true);
	struct iovec local = { (void *)src, len }, remote = { (void *)dst.addr, len };
	ssize_t n = process_vm_writev(t->tid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

int remote_patch_code(struct task *t, remote_ptr dst, const void *src, size_t len)
{
	if (remote_write(t, dst, src, len) == 0)
		return 0;
	return proc_mem_io(t, dst.addr, (void *)src, len, true);
}

int remote_mapping_at(struct task *t, uint64_t addr, struct remote_mapping *m)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int err = -ENOENT;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned major, minor;
		char perms[5];
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu", &start, &end, perms, &off, &major,
			   &minor, &ino) != 7 ||
		    addr < start || addr >= end)
			continue;
		*m = (struct remote_mapping){ start, end, off, ino, major, minor, "" };
		memcpy(m->perms, perms, sizeof(perms));
		err = 0;
	}
	fclose(f);
	return err;
}

/* Does one private, writable mapping of the task hold [start, end)? */
static bool private_writable(struct task *t, uint64_t start, uint64_t end)
{
	struct remote_mapping m;
	return remote_mapping_at(t, start, &m) == 0 && end <= m.end && m.perms[0] == 'r' &&
	       m.perms[1] == 'w' && m.perms[3] == 'p';
}

uint64_t remote_scratch(struct task *t, const void *data, size_t len)
{
	if (remote_load_regs(t) || len > 65536 || t->regs.rsp < 128 + len + 16)
		return 0;
	uint64_t addr = (t->regs.rsp - 128 - len) & ~15ULL;
	if (!private_writable(t, addr, addr + len) || remote_write(t, REMOTE(addr), data, len))
		return 0;
	return addr;
}

int remote_dup_fd(struct task *t, int fd)
{
	struct process *p = t->proc;
	if (p->pidfd < 0) {
		p->pidfd = (int)syscall(SYS_pidfd_open, p->tgid, 0);
		if (p->pidfd < 0)
			return -errno;
		fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
	}
	int dup = (int)syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
	return dup < 0 ? -errno : dup;
}

void remote_forget_process(struct process *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	p->stat_fd = -1;
}

static const int arg_offsets[6] = {
	offsetof(struct user_regs_struct, rdi), offsetof(struct user_regs_struct, rsi),
	offsetof(struct user_regs_struct, rdx), offsetof(struct user_regs_struct, r10),
	offsetof(struct user_regs_struct, r8),  offsetof(struct user_regs_struct, r9),
};

uint64_t syscall_arg(const struct task *t, int n)
{
	return *(const uint64_t *)((const char *)&t->regs + arg_offsets[n]);
}

void syscall_set_arg(struct task *t, int n, uint64_t v)
{
	*(uint64_t *)((char *)&t->regs + arg_offsets[n]) = v;
	t->regs_dirty = true;
}

void syscall_emulate(struct task *t, int64_t result)
{
	t->regs.orig_rax = (uint64_t)-1;
	t->regs.rax = (uint64_t)result;
	t->regs_dirty = true;
}

void syscall_skip_and_restart(struct task *t)
{
	uint64_t nr = t->regs.orig_rax;
	t->regs.orig_rax = (uint64_t)-1;
	t->regs.rax = nr;
	t->regs.rip -= 2;
	t->regs_dirty = true;
	t->traced.rewound = true; /* the same call again: no new stop for a tracer */
}

void syscall_set_result(struct task *t, int64_t result)
{
	t->regs.rax = (uint64_t)result;
	t->regs_dirty = true;
}

void syscall_rewind(struct task *t)
{
	t->regs.rax = t->regs.orig_rax;
	t->regs.rip -= 2;
	t->regs_dirty = true;
	t->traced.rewound = true;
}

pid_t waitpid_retry(pid_t pid, int *status, int flags)
{
	pid_t got;
	while ((got = waitpid(pid, status, flags)) < 0 && errno == EINTR)
		;
	return got;
}

/* Single-step the syscall instruction of `call` so the task stops right after it returns.
 * A signal that arrives meanwhile is kept for the task's next real resume. At an exec
 * stop the first step only finishes the execve (its exit reports the step before the
 * injected instruction ran, and writes its result over the call's number): the call's
 * registers are set again and stepped once more. (At a seccomp stop the call replaces
 * the pending one and has run by the first report.) */
static long step_over_syscall(struct task *t, struct user_regs_struct *call)
{
	int request = PTRACE_SINGLESTEP;
	t->interrupt_pending = 0; /* the stops of the injected call clear it in the kernel */
	/* At a seccomp stop the program's call is replaced: no exit trap comes for it, so
	 * the exit stop a tracer inside the group is owed comes at the task's resume. */
	if (t->at_entry && t->traced.in_syscall)
		t->traced.exit_due = true;
	for (int steps = 0; steps < 64; steps++) {
		if (ptrace(request, t->tid, 0, 0) < 0)
			return -errno;
		int status;
		/* detrun's own timer (the spin budget) may interrupt the wait: the step is
		 * still under way, and giving up here would lose its stop. */
		if (waitpid_retry(t->tid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		int sig = WSTOPSIG(status);
		unsigned event = (unsigned)status >> 16;
		if (sig == SIGTRAP && event == 0) {
			struct user_regs_struct r;
			if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
				return -errno;
			if (!t->in_exec_stop)
				return 0; /* the single-step trap after the syscall */
			t->in_exec_stop = false;
			if (ptrace(PTRACE_SETREGS, t->tid, 0, call) < 0)
				return -errno;
			continue;
		}
		if (event == PTRACE_EVENT_SECCOMP || event == PTRACE_EVENT_STOP)
			continue; /* filter stop of the injected call, or a stale interrupt */
		if (event == 0 && sig != SIGTRAP)
			t->inject_signal = sig;
	}
	return -EIO;
}

long remote_syscall(struct task *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		    uint64_t a4, uint64_t a5)
{
	if (!t->proc->syscall_insn)
		return -ENOEXEC;
	int err = remote_load_regs(t);
	if (err)
		return err;
	struct user_regs_struct saved = t->regs, r = t->regs;
	r.rip = t->proc->syscall_insn;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)nr;
	r.rdi = a0, r.rsi = a1, r.rdx = a2, r.r10 = a3, r.r8 = a4, r.r9 = a5;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0)
		return -errno;
	long result = step_over_syscall(t, &r);
	/* At a seccomp stop the injected call took the pending one's place: no call of the
	 * task is left to run (parallel mode's in-call waits for none). */
	t->at_entry = false;
	if (result == 0) {
		struct user_regs_struct after;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &after) < 0)
			result = -errno;
		else
			result = (long)after.rax;
	}
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &saved) < 0 && result >= 0)
		result = -errno;
	t->regs = saved;
	t->regs_dirty = false;
	return result;
}

bool fdinfo_scan(pid_t pid, int fd, const char *format, void *value)
{
	char path[64], line[256];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, format, value) == 1;
	if (f)
		fclose(f);
	return found;
}
