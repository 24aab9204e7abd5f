#include "engine/vdso.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/options.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "engine/vdso_data.h"
#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "vkernel/task.h"

_Static_assert((VDSO_FAST_READS * VDSO_READ_STEP_NS) < VCLOCK_STEP_NS,
	       "the reads between two events must move the clock less than one event does");
_Static_assert(sizeof(struct vdso_data) <= VDSO_DATA_SIZE, "the data fits its page");

/* engine/vdso_image.c */
extern const unsigned char vdso_image_start[];
size_t vdso_image_size(void);

/* One data page, shared by the processes of one address space. */
struct vdso_space {
	int refs;
	int64_t ns;             /* the monotonic time last written */
	uint64_t at;            /* its address in the program */
	struct vdso_data *data; /* detrun's mapping of it; NULL when reads all go to the syscall */
};

#define PAGE 4096ULL

/* The page of p takes the virtual time `mono_ns`, and its reads start again from there. */
static void publish(struct process *p, int64_t mono_ns)
{
	p->event_ns = mono_ns;
	if (!p->vdso || !p->vdso->data)
		return;
	struct vdso_data *d = p->vdso->data;
	p->vdso->ns = mono_ns;
	d->mono_ns = mono_ns;
	d->epoch_ns = vclock_epoch_ns();
	d->boot_ns = VCLOCK_BOOT_NS;
	d->flags = tracer_opts->real_clock ? VDSO_REAL_CLOCK : 0;
	d->reads = 0;
}

/* The virtual time a new page of p starts from: the one its last page took (at the exec's
 * event, or the parent's at the fork's), or the clock's for the program's first image. */
static int64_t last_event_ns(const struct process *p)
{
	return p->event_ns ? p->event_ns : vclock_now();
}

/* A memfd of `size` bytes in t's process, its descriptor there in *fd_there and detrun's
 * duplicate as the result (-errno on failure, nothing left open in the program). Its size
 * is sealed: a program that reaches the memfd (/proc/self/map_files) and truncated it
 * would make detrun's next write to the page a SIGBUS in detrun. */
static int make_memfd(struct task *t, uint64_t size, long *fd_there)
{
	static const char name[] = VDSO_MEMFD_NAME;
	uint64_t at = remote_scratch(t, name, sizeof(name));
	if (!at)
		return -ENOMEM;
	long fd = remote_syscall(t, SYS_memfd_create, at, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0, 0,
				 0);
	if (fd < 0)
		return (int)fd;
	long r = remote_syscall(t, SYS_ftruncate, (uint64_t)fd, size, 0, 0, 0, 0);
	int mine = r < 0 ? (int)r : remote_dup_fd(t, (int)fd);
	if (mine >= 0 && fcntl(mine, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int err = -errno;
		close(mine);
		mine = err;
	}
	if (mine < 0)
		remote_syscall(t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
	*fd_there = fd;
	return mine;
}

static struct vdso_data *map_here(int fd)
{
	void *d = mmap(NULL, VDSO_DATA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return d == MAP_FAILED ? NULL : d;
}

static struct vdso_space *space_new(uint64_t at, struct vdso_data *data)
{
	struct vdso_space *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	*s = (struct vdso_space){ .refs = 1, .at = at, .data = data };
	return s;
}

/* The data page and the code in the program at `at`, from memfd `fd` there. */
static int map_there(struct task *t, uint64_t at, long fd, size_t code_len)
{
	long r = remote_syscall(t, SYS_mmap, at, VDSO_DATA_SIZE, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_FIXED_NOREPLACE, (uint64_t)fd, 0);
	if (r != (long)at)
		return r < 0 ? (int)r : -EEXIST;
	r = remote_syscall(t, SYS_mmap, at + VDSO_DATA_SIZE, code_len, PROT_READ | PROT_EXEC,
			   MAP_PRIVATE | MAP_FIXED_NOREPLACE, (uint64_t)fd, VDSO_DATA_SIZE);
	if (r == (long)(at + VDSO_DATA_SIZE))
		return 0;
	remote_syscall(t, SYS_munmap, at, VDSO_DATA_SIZE, 0, 0, 0, 0);
	return r < 0 ? (int)r : -EEXIST;
}

uint64_t vdso_map(struct task *t, uint64_t at)
{
	struct process *p = t->proc;
	size_t code_len = (vdso_image_size() + PAGE - 1) & ~(PAGE - 1);
	long fd_there;
	int fd = make_memfd(t, VDSO_DATA_SIZE + code_len, &fd_there);
	if (fd < 0) {
		task_warn(t, "no vDSO: cannot make its memory: %s", strerror(-fd));
		return 0;
	}
	int err = 0;
	ssize_t wrote = pwrite(fd, vdso_image_start, vdso_image_size(), VDSO_DATA_SIZE);
	if (wrote != (ssize_t)vdso_image_size())
		err = wrote < 0 ? -errno : -EIO;
	struct vdso_data *data = err ? NULL : map_here(fd);
	if (!err && !data)
		err = -errno;
	if (!err && (err = map_there(t, at, fd_there, code_len)) && data)
		munmap(data, VDSO_DATA_SIZE);
	close(fd);
	remote_syscall(t, SYS_close, (uint64_t)fd_there, 0, 0, 0, 0, 0);
	if (err) {
		task_warn(t, "no vDSO: cannot map it at 0x%llx: %s", (unsigned long long)at,
			  strerror(-err));
		return 0;
	}
	p->vdso = space_new(at, data);
	publish(p, last_event_ns(p));
	return at + VDSO_DATA_SIZE;
}

/* A fork child's own page in place of its parent's, at the same address: 0 or -errno. */
static int own_page(struct task *child, struct vdso_space *from)
{
	long fd_there;
	int fd = make_memfd(child, VDSO_DATA_SIZE, &fd_there);
	if (fd < 0)
		return fd;
	struct vdso_data *data = map_here(fd);
	int err = data ? 0 : -errno;
	long r = err ? 0
		     : remote_syscall(child, SYS_mmap, from->at, VDSO_DATA_SIZE,
				      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				      (uint64_t)fd_there, 0);
	if (!err && r != (long)from->at)
		err = r < 0 ? (int)r : -EFAULT;
	if (err && data)
		munmap(data, VDSO_DATA_SIZE);
	close(fd);
	remote_syscall(child, SYS_close, (uint64_t)fd_there, 0, 0, 0, 0, 0);
	if (err)
		return err;
	child->proc->vdso = space_new(from->at, data);
	publish(child->proc, last_event_ns(child->proc));
	return 0;
}

/* A private page that sends every read to the syscall: the child must not share its
 * parent's count (in parallel mode the two run at once), and slow is still right. */
static int syscall_page(struct task *child, struct vdso_space *from)
{
	long r = remote_syscall(child, SYS_mmap, from->at, VDSO_DATA_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, (uint64_t)-1, 0);
	if (r != (long)from->at)
		return r < 0 ? (int)r : -EFAULT;
	struct vdso_data d = { .reads = UINT32_MAX };
	int err = remote_write(child, REMOTE(from->at), &d, sizeof(d));
	if (!err)
		child->proc->vdso = space_new(from->at, NULL);
	return err;
}

void vdso_forked(struct task *parent, struct task *child)
{
	struct process *from = parent->proc, *p = child->proc;
	if (p == from)
		return; /* a thread */
	p->event_ns = from->event_ns;
	if (!from->vdso)
		return;
	if (p->aspace == from->aspace) {
		p->vdso = from->vdso;
		p->vdso->refs++;
		return;
	}
	int err = own_page(child, from->vdso);
	if (err) {
		task_warn(child,
			  "the vDSO's clock page of a new process: %s; its clock reads "
			  "stop at detrun",
			  strerror(-err));
		if ((err = syscall_page(child, from->vdso)))
			task_setup_failed(child, "give a new process its own vDSO clock page", err);
	}
}

void vdso_event(struct task *t)
{
	publish(t->proc, vclock_now());
}

void vdso_resumed(struct task *t)
{
	struct process *p = t->proc;
	int64_t now = vclock_now();
	/* Unchanged, the page keeps its count: reads started again from the same time would
	 * go back. */
	if (p->vdso && p->vdso->data ? p->vdso->ns != now : p->event_ns != now)
		publish(p, now);
}

void vdso_release(struct process *p)
{
	struct vdso_space *s = p->vdso;
	p->vdso = NULL;
	if (!s || --s->refs > 0)
		return;
	if (s->data)
		munmap(s->data, VDSO_DATA_SIZE);
	free(s);
}

uint64_t vdso_ehdr(const struct process *p)
{
	return p->vdso ? p->vdso->at + VDSO_DATA_SIZE : 0;
}

bool vdso_code_at(const struct process *p, uint64_t start)
{
	return p->vdso && p->vdso->at + VDSO_DATA_SIZE == start;
}
