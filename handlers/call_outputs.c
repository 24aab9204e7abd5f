/* The output regions of an external call, from its row's outputs column (call_outputs.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "recorder/fingerprint.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_external.h"
#include "handlers/sys_proc.h"
#include "syscalls/syscall_table.h"
#include "handlers/call_outputs.h"

static void add(struct outputs *o, enum region_kind kind, uint64_t addr, uint64_t max,
		uint32_t elem)
{
	if (!addr)
		return;
	if (o->n == MAX_REGIONS)
		o->incomplete = true;
	else
		o->r[o->n++] = (struct region_spec){ kind, addr, max, elem };
}

static void add_iovecs(struct task *t, struct outputs *o, uint64_t iov_addr, uint64_t count)
{
	struct iovec iov[MAX_IOVECS];
	if (count > MAX_IOVECS) {
		count = MAX_IOVECS;
		o->incomplete = true;
	}
	if (remote_read(t, REMOTE(iov_addr), iov, count * sizeof(iov[0])))
		return;
	for (uint64_t i = 0; i < count; i++)
		add(o, R_DATA, (uint64_t)iov[i].iov_base, iov[i].iov_len, 0);
}

/* A length field in tracee memory, read now: the room of the buffer it describes. */
static uint64_t room_at(struct task *t, uint64_t len_addr, size_t size)
{
	uint64_t v = 0;
	if (len_addr)
		remote_read(t, REMOTE(len_addr), &v, size);
	return v;
}

static void add_sockaddr(struct task *t, struct outputs *o, uint64_t addr, uint64_t len_addr)
{
	if (!addr || !len_addr)
		return;
	add(o, R_LEN, len_addr, 4, 4);
	add(o, R_ADDR, addr, room_at(t, len_addr, 4), 0);
}

static void add_msghdr(struct task *t, struct outputs *o, uint64_t msg_addr)
{
	struct msghdr m;
	if (remote_read(t, REMOTE(msg_addr), &m, sizeof(m)))
		return;
	add_iovecs(t, o, (uint64_t)m.msg_iov, m.msg_iovlen);
	if (m.msg_name) {
		add(o, R_LEN, msg_addr + offsetof(struct msghdr, msg_namelen), 4, 4);
		add(o, R_ADDR, (uint64_t)m.msg_name, m.msg_namelen, 0);
	}
	if (m.msg_control) {
		add(o, R_LEN, msg_addr + offsetof(struct msghdr, msg_controllen), 8, 8);
		add(o, R_ADDR, (uint64_t)m.msg_control, m.msg_controllen, 0);
	}
	add(o, R_FIXED, msg_addr + offsetof(struct msghdr, msg_flags), 4, 0);
}

/* Bytes an ioctl fills in at its argument. Requests that encode a size say it; the
 * terminal requests that predate the encoding are listed. */
static uint64_t ioctl_out_size(uint64_t req)
{
	switch (req) {
	case TCGETS:
		return 36; /* the kernel's struct termios */
	case TIOCGWINSZ:
		return sizeof(struct winsize);
	case SIOCGSTAMP_OLD: /* a socket's last receive time */
		return sizeof(struct timeval);
	case SIOCGSTAMPNS_OLD:
		return sizeof(struct timespec);
	case FIONREAD:
	case TIOCOUTQ:
	case TIOCGPGRP:
	case TIOCGSID:
		return sizeof(int);
	}
	return (_IOC_DIR(req) & _IOC_READ) ? _IOC_SIZE(req) : 0;
}

/* One region list entry of the call's row: its shape applied to the call's arguments. */
static void add_output(struct task *t, struct outputs *o, const struct syscall_output *spec,
		       const uint64_t *a)
{
	uint64_t addr = a[spec->arg], count = spec->count_arg >= 0 ? a[spec->count_arg] : 0;
	switch ((enum output_shape)spec->shape) {
	case SHAPE_BUF:
		add(o, R_DATA, addr, count, 0);
		break;
	case SHAPE_IOV:
		add_iovecs(t, o, addr, count);
		break;
	case SHAPE_MSG:
		add_msghdr(t, o, addr);
		break;
	case SHAPE_MMSG:
		o->incomplete = count > MAX_MMSGS;
		for (uint64_t i = 0; i < count && i < MAX_MMSGS; i++) {
			uint64_t m = addr + i * sizeof(struct mmsghdr);
			add(o, R_BUDGET, m + offsetof(struct mmsghdr, msg_len), 4, 0);
			add_msghdr(t, o, m);
		}
		break;
	case SHAPE_SIZED:
		add_sockaddr(t, o, addr, count);
		break;
	case SHAPE_FIXED:
		add(o, R_FIXED, addr, spec->size, 0);
		break;
	case SHAPE_ARRAY:
		add(o, R_FIXED, addr, count * spec->size, 0);
		break;
	case SHAPE_FDSET:
		add(o, R_FIXED, addr, (count + 63) / 64 * 8, 0);
		break;
	case SHAPE_PER_RESULT:
		add(o, R_PER_RESULT, addr, count * spec->size, spec->size);
		break;
	case SHAPE_IOCTL:
		add(o, R_FIXED, addr, ioctl_out_size(count), 0);
		break;
	case SHAPE_NONE:
		break;
	}
}

/* The regions the call's row lists (syscalls.def, outputs column), in order. */
void describe_outputs(struct task *t, struct outputs *o)
{
	uint64_t a[6];
	for (int i = 0; i < 6; i++)
		a[i] = syscall_arg(t, i);
	o->n = 0;
	o->incomplete = false;
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	for (int i = 0; e && i < SYSCALL_MAX_OUTPUTS && e->out[i].shape != SHAPE_NONE; i++)
		add_output(t, o, &e->out[i], a);
}

/* Bytes each region holds after a call that returned ret, read from tracee memory. */
void read_outputs(struct task *t, const struct outputs *o, int64_t ret, struct shim_region *out)
{
	uint64_t budget = ret > 0 ? (uint64_t)ret : 0, bound = 0;
	for (int i = 0; i < o->n; i++) {
		const struct region_spec *s = &o->r[i];
		uint64_t len = 0;
		if (ret >= 0) {
			switch (s->kind) {
			case R_DATA:
				len = s->max < budget ? s->max : budget;
				budget -= len;
				break;
			case R_BUDGET:
				len = 4;
				budget = room_at(t, s->addr, 4);
				break;
			case R_LEN:
				len = s->elem;
				bound = room_at(t, s->addr, s->elem);
				break;
			case R_ADDR:
				len = bound < s->max ? bound : s->max;
				break;
			case R_FIXED:
				len = s->max;
				break;
			case R_PER_RESULT:
				len = (uint64_t)ret * s->elem;
				if (len > s->max)
					len = s->max;
				break;
			}
		}
		out[i] = (struct shim_region){ s->addr, s->max, len, NULL, s->kind == R_DATA };
		if (len) {
			out[i].bytes = malloc(len);
			if (!out[i].bytes || remote_read(t, REMOTE(s->addr), out[i].bytes, len))
				out[i].len = 0;
		}
	}
}

void free_regions(struct shim_region *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(out[i].bytes);
}
