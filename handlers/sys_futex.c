/* futex(2), emulated. See scheduler/futex_queue.h for the queues and their keys. */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "scheduler/futex_queue.h"
#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_args.h"
#include "syscalls/syscall_table.h"

/* A waiter's result is 0, or for futex_waitv the index of the word that woke it. */
void futex_woken(struct task *t)
{
	remote_load_regs(t);
	syscall_emulate(t, t->futex_index);
	t->futex_index = 0;
	sched_unpark(t);
}

/* A shared futex in a MAP_SHARED mapping is keyed by the object behind the mapping. */
static int futex_key_of(struct task *t, uint64_t addr, bool private, struct futex_key *key)
{
	*key = (struct futex_key){ (uint64_t)t->proc->aspace, 0, addr };
	if (private)
		return 0;
	struct remote_mapping m;
	int err = remote_mapping_at(t, addr, &m);
	if (err == -ENOENT)
		return -EFAULT;
	if (!err && m.perms[3] == 's')
		*key = (struct futex_key){ makedev(m.dev_major, m.dev_minor), m.ino,
					   m.offset + (addr - m.start) };
	return 0; /* maps unreadable: keyed as private */
}

static int read_word(struct task *t, uint64_t addr, uint32_t *v)
{
	return remote_read(t, REMOTE(addr), v, sizeof(*v)) ? -EFAULT : 0;
}

static void futex_timed_out(struct task *t)
{
	futex_dequeue(t);
	remote_load_regs(t);
	syscall_emulate(t, -ETIMEDOUT);
}

static void futex_interrupted(struct task *t)
{
	futex_dequeue(t);
}

/* A wait: the word at addr must hold `expected`; tsp, if not 0, is a timeout (a
 * deadline on clock `clk` when absolute). */
struct futex_wait_call {
	uint64_t addr, tsp;
	uint32_t expected, bitset;
	bool absolute;
	clockid_t clk;
};

static int64_t futex_wait(struct task *t, struct futex_key key, struct futex_wait_call c,
			  const char *what)
{
	uint32_t now;
	if (read_word(t, c.addr, &now))
		return -EFAULT;
	if (now != c.expected)
		return -EAGAIN;
	int64_t deadline = -1;
	if (c.tsp) {
		int err = deadline_from_timespec(t, c.tsp, c.absolute, c.clk, &deadline);
		if (err)
			return err;
	}
	futex_enqueue(t, key, c.bitset);
	struct wait w = {
		.what = what,
		.deadline_ns = deadline,
		.on_timeout = futex_timed_out,
		.on_interrupt = futex_interrupted,
		.interruptible = true,
		.restartable = !c.tsp,
	};
	sched_park(t, &w);
	return 0;
}

/* The futex(2) form: the word at argument 0, the value at 2, the timeout at 3. */
static int64_t futex1_wait(struct task *t, struct futex_key key, uint32_t bitset, bool absolute,
			   clockid_t clk)
{
	struct futex_wait_call c = { syscall_arg(t, 0),
				     syscall_arg(t, 3),
				     (uint32_t)syscall_arg(t, 2),
				     bitset,
				     absolute,
				     clk };
	return futex_wait(t, key, c, "futex wait");
}

static bool wake_op_compare(uint32_t old, int cmp, int arg)
{
	switch (cmp) {
	case FUTEX_OP_CMP_EQ:
		return (int)old == arg;
	case FUTEX_OP_CMP_NE:
		return (int)old != arg;
	case FUTEX_OP_CMP_LT:
		return (int)old < arg;
	case FUTEX_OP_CMP_LE:
		return (int)old <= arg;
	case FUTEX_OP_CMP_GT:
		return (int)old > arg;
	case FUTEX_OP_CMP_GE:
		return (int)old >= arg;
	}
	return false;
}

/* How many waiters a wake asks for. The kernel counts a waiter as woken before it compares
 * with that number, so a wake of 0 or fewer still wakes one. */
static int wake_count(uint64_t arg)
{
	int n = (int)arg;
	return n > 0 ? n : 1;
}

static int64_t futex_wake_op(struct task *t, struct futex_key key, bool private)
{
	uint64_t addr2 = syscall_arg(t, 4);
	uint32_t encoded = (uint32_t)syscall_arg(t, 5);
	int op = (encoded >> 28) & 0xf, cmp = (encoded >> 24) & 0xf;
	int oparg = (int)(encoded << 8) >> 20, cmparg = (int)(encoded << 20) >> 20;
	if (op & FUTEX_OP_OPARG_SHIFT) {
		if (oparg < 0 || oparg > 31)
			return -EINVAL;
		oparg = 1 << oparg;
		op &= ~FUTEX_OP_OPARG_SHIFT;
	}
	struct futex_key key2;
	uint32_t old, val;
	if (futex_key_of(t, addr2, private, &key2) || read_word(t, addr2, &old))
		return -EFAULT;
	switch (op) {
	case FUTEX_OP_SET:
		val = (uint32_t)oparg;
		break;
	case FUTEX_OP_ADD:
		val = old + (uint32_t)oparg;
		break;
	case FUTEX_OP_OR:
		val = old | (uint32_t)oparg;
		break;
	case FUTEX_OP_ANDN:
		val = old & ~(uint32_t)oparg;
		break;
	case FUTEX_OP_XOR:
		val = old ^ (uint32_t)oparg;
		break;
	default:
		return -ENOSYS;
	}
	if (remote_write(t, REMOTE(addr2), &val, sizeof(val)))
		return -EFAULT;
	int woken = futex_wake(key, wake_count(syscall_arg(t, 2)), ~0u, futex_woken);
	if (wake_op_compare(old, cmp, cmparg))
		woken += futex_wake(key2, wake_count(syscall_arg(t, 3)), ~0u, futex_woken);
	return woken;
}

/* Priority-inheritance futexes: the word holds the owner's tid as the group sees it. Ownership passes to the
 * oldest waiter on unlock, as the kernel does; priorities themselves mean nothing in a
 * serial schedule. */
static int64_t futex_lock_pi(struct task *t, struct futex_key key, bool try, clockid_t clk)
{
	uint64_t addr = syscall_arg(t, 0);
	uint32_t v;
	if (read_word(t, addr, &v))
		return -EFAULT;
	uint32_t owner = v & FUTEX_TID_MASK;
	if (owner == (uint32_t)t->ns_tid)
		return -EDEADLK;
	if (!owner) {
		uint32_t mine = (uint32_t)t->ns_tid | (v & FUTEX_WAITERS);
		return remote_write(t, REMOTE(addr), &mine, sizeof(mine)) ? -EFAULT : 0;
	}
	if (try)
		return -EWOULDBLOCK;
	v |= FUTEX_WAITERS;
	if (remote_write(t, REMOTE(addr), &v, sizeof(v)))
		return -EFAULT;
	int64_t deadline = -1;
	uint64_t tsp = syscall_arg(t, 3);
	if (tsp) {
		int err = deadline_from_timespec(t, tsp, true, clk, &deadline);
		if (err)
			return err;
	}
	futex_enqueue(t, key, ~0u);
	struct wait w = { .what = "futex lock_pi",
			  .deadline_ns = deadline,
			  .on_timeout = futex_timed_out,
			  .on_interrupt = futex_interrupted,
			  .interruptible = true,
			  .restartable = true };
	sched_park(t, &w);
	return 0;
}

static int64_t futex_unlock_pi(struct task *t, struct futex_key key)
{
	uint64_t addr = syscall_arg(t, 0);
	uint32_t v;
	if (read_word(t, addr, &v))
		return -EFAULT;
	if ((v & FUTEX_TID_MASK) != (uint32_t)t->ns_tid)
		return -EPERM;
	struct task *next = futex_first_waiter(key);
	uint32_t word = 0;
	if (next) {
		futex_dequeue(next);
		word = (uint32_t)next->ns_tid | (futex_waiter_count(key) ? FUTEX_WAITERS : 0);
	}
	if (remote_write(t, REMOTE(addr), &word, sizeof(word)))
		return -EFAULT;
	if (next)
		futex_woken(next);
	return 0;
}

/* FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: wake some waiters, move others to a second word. */
static int64_t futex_requeue_call(struct task *t, int cmd, struct futex_key key, bool private)
{
	struct futex_key to;
	uint32_t now;
	if (futex_key_of(t, syscall_arg(t, 4), private, &to))
		return -EFAULT;
	if (cmd == FUTEX_CMP_REQUEUE) {
		if (read_word(t, syscall_arg(t, 0), &now))
			return -EFAULT;
		if (now != (uint32_t)syscall_arg(t, 5))
			return -EAGAIN;
	}
	return futex_requeue(key, to, (int)syscall_arg(t, 2), (int)syscall_arg(t, 3), futex_woken);
}

/* Implements futex(2). */
void sys_futex(struct task *t)
{
	int op = (int)syscall_arg(t, 1);
	int cmd = op & FUTEX_CMD_MASK;
	bool private = op & FUTEX_PRIVATE_FLAG;
	clockid_t clk = (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	uint32_t val3 = (uint32_t)syscall_arg(t, 5);
	struct futex_key key;
	int64_t result;
	if (futex_key_of(t, syscall_arg(t, 0), private, &key)) {
		syscall_emulate(t, -EFAULT);
		return;
	}
	switch (cmd) {
	case FUTEX_WAIT:
		result = futex1_wait(t, key, ~0u, false, CLOCK_MONOTONIC);
		break;
	case FUTEX_WAIT_BITSET:
		result = val3 ? futex1_wait(t, key, val3, true, clk) : -EINVAL;
		break;
	case FUTEX_WAKE:
		result = futex_wake(key, wake_count(syscall_arg(t, 2)), ~0u, futex_woken);
		break;
	case FUTEX_WAKE_BITSET:
		result = val3 ? futex_wake(key, wake_count(syscall_arg(t, 2)), val3, futex_woken)
			      : -EINVAL;
		break;
	case FUTEX_CMP_REQUEUE:
	case FUTEX_REQUEUE:
		result = futex_requeue_call(t, cmd, key, private);
		break;
	case FUTEX_WAKE_OP:
		result = futex_wake_op(t, key, private);
		break;
	case FUTEX_LOCK_PI:
		result = futex_lock_pi(t, key, false, CLOCK_REALTIME);
		break;
	case FUTEX_LOCK_PI2:
		result = futex_lock_pi(t, key, false, clk);
		break;
	case FUTEX_TRYLOCK_PI:
		result = futex_lock_pi(t, key, true, CLOCK_REALTIME);
		break;
	case FUTEX_UNLOCK_PI:
		result = futex_unlock_pi(t, key);
		break;
	default:
		/* WAIT_REQUEUE_PI and CMP_REQUEUE_PI: libc falls back when they are missing. */
		hazard(t, "futex operation %d is not emulated; returning ENOSYS", cmd);
		result = -ENOSYS;
	}
	if (!t->parked)
		syscall_emulate(t, result);
}

/* ---- futex_wake(2), futex_wait(2), futex_requeue(2): the futex2 calls ---- */

#define FUTEX2_SIZE_MASK 0x03
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_NUMA 0x04
#define FUTEX2_MPOL 0x08
#define FUTEX2_PRIVATE 128

/* What the kernel accepts: 32-bit words only (so far). A NUMA word (a node number after
 * it, which the kernel reads and fills in) is refused as invalid: not emulated. */
static bool futex2_flags_valid(uint64_t flags)
{
	return (flags & ~(uint64_t)(FUTEX2_SIZE_MASK | FUTEX2_PRIVATE)) == 0 &&
	       (flags & FUTEX2_SIZE_MASK) == FUTEX2_SIZE_U32;
}

/* One struct futex_waitv of futex_requeue's pair: its value and its word, keyed. */
static int64_t futex2_waiter(struct task *t, uint64_t at, struct futex_key *key, uint64_t *addr,
			     uint32_t *val)
{
	struct {
		uint64_t val, uaddr;
		uint32_t flags, reserved;
	} w;
	if (remote_read(t, REMOTE(at), &w, sizeof(w)))
		return -EFAULT;
	if (!futex2_flags_valid(w.flags) || w.reserved || w.val > UINT32_MAX)
		return -EINVAL;
	*val = (uint32_t)w.val;
	*addr = w.uaddr;
	return futex_key_of(t, w.uaddr, w.flags & FUTEX2_PRIVATE, key) ? -EFAULT : 0;
}

/* As FUTEX_CMP_REQUEUE, the first word compared with the first value. */
static int64_t futex2_requeue(struct task *t)
{
	uint64_t at = syscall_arg(t, 0), addr, ignored_addr;
	uint32_t val, ignored_val, now;
	int nwake = (int)syscall_arg(t, 2), nrequeue = (int)syscall_arg(t, 3);
	struct futex_key from, to;
	if (syscall_arg(t, 1) || nwake < 0 || nrequeue < 0)
		return -EINVAL;
	int64_t err = futex2_waiter(t, at, &from, &addr, &val);
	if (!err)
		err = futex2_waiter(t, at + 24, &to, &ignored_addr, &ignored_val);
	if (err)
		return err;
	if (read_word(t, addr, &now))
		return -EFAULT;
	if (now != val)
		return -EAGAIN;
	return futex_requeue(from, to, nwake, nrequeue, futex_woken);
}

#define FUTEX_WAITV_MAX 128

/* futex_waitv: parked on every word at once (each word's queue keeps its FIFO order); the
 * first wake on any of them ends the wait with that word's index. */
static int64_t futex2_waitv(struct task *t)
{
	uint64_t list = syscall_arg(t, 0), tsp = syscall_arg(t, 3);
	uint64_t n = syscall_arg(t, 1);
	clockid_t clk = (clockid_t)syscall_arg(t, 4);
	if (syscall_arg(t, 2) || !n || n > FUTEX_WAITV_MAX || !list)
		return -EINVAL;
	int64_t deadline = -1, err = 0;
	if (tsp && clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)
		return -EINVAL;
	if (tsp && (err = deadline_from_timespec(t, tsp, true, clk, &deadline)))
		return err;
	struct futex_key keys[FUTEX_WAITV_MAX];
	uint64_t addrs[FUTEX_WAITV_MAX];
	uint32_t vals[FUTEX_WAITV_MAX], now;
	for (uint64_t i = 0; i < n && !err; i++)
		err = futex2_waiter(t, list + 24 * i, &keys[i], &addrs[i], &vals[i]);
	for (uint64_t i = 0; i < n && !err; i++)
		err = read_word(t, addrs[i], &now) ? -EFAULT : now != vals[i] ? -EAGAIN : 0;
	if (err)
		return err;
	for (uint64_t i = 0; i < n; i++)
		futex_enqueue_at(t, keys[i], ~0u, (int)i);
	struct wait w = {
		.what = "futex_waitv",
		.deadline_ns = deadline,
		.on_timeout = futex_timed_out,
		.on_interrupt = futex_interrupted,
		.interruptible = true,
		.restartable = true,
	};
	sched_park(t, &w);
	return 0;
}

static int64_t futex2_call(struct task *t)
{
	if (t->syscall_nr == __NR_futex_requeue)
		return futex2_requeue(t);
	if (t->syscall_nr == __NR_futex_waitv)
		return futex2_waitv(t);
	bool wait = t->syscall_nr == __NR_futex_wait;
	uint64_t flags = syscall_arg(t, 3), mask = syscall_arg(t, wait ? 2 : 1);
	if (!futex2_flags_valid(flags) || !mask || mask > UINT32_MAX)
		return -EINVAL;
	struct futex_key key;
	if (futex_key_of(t, syscall_arg(t, 0), flags & FUTEX2_PRIVATE, &key))
		return -EFAULT;
	if (!wait) { /* unlike futex(2)'s wake, a count of 0 wakes none */
		int n = (int)syscall_arg(t, 2);
		return n ? futex_wake(key, wake_count((uint64_t)n), (uint32_t)mask, futex_woken)
			 : 0;
	}
	uint64_t val = syscall_arg(t, 1);
	clockid_t clk = (clockid_t)syscall_arg(t, 5);
	if (val > UINT32_MAX)
		return -EINVAL;
	if (syscall_arg(t, 4) && clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)
		return -EINVAL;
	struct futex_wait_call c = {
		syscall_arg(t, 0), syscall_arg(t, 4), (uint32_t)val, (uint32_t)mask, true, clk
	};
	return futex_wait(t, key, c, "futex_wait");
}

/* Implements futex_wake(2), futex_wait(2), futex_requeue(2) and futex_waitv(2) on the
 * same queues as futex(2): a program may mix the two interfaces on one word. */
void sys_futex2(struct task *t)
{
	int64_t result = futex2_call(t);
	if (!t->parked)
		syscall_emulate(t, result);
}
