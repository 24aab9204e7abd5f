/* x86_64 registers as gdb numbers them: the target description we send says which
 * register has which number and size, and the `g` packet is their concatenation. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "debugger/internal.h"
#include "scheduler/task.h"
#include "engine/remote.h"

enum source {
	GPR,
	GPR32,
	FPR,
	FPR16,
	FTAG,
	FPR_HI,
	AVX
};

struct reg {
	const char *name;
	int bits;
	const char *type;
	enum source src;
	size_t off; /* in user_regs_struct (GPR) or user_fpregs_struct (FPR) */
};

/* One line a register kind (clang-format would spread each initializer over four). */
// clang-format off
#define G(n, r, ty) { n, 64, ty, GPR, offsetof(struct user_regs_struct, r) }
#define G32(n, r) { n, 32, "int32", GPR32, offsetof(struct user_regs_struct, r) }
#define ST(i) \
	{ "st" #i, 80, "i387_ext", FPR, offsetof(struct user_fpregs_struct, st_space) + 16 * i }
#define XMM(i) \
	{ "xmm" #i, 128, "vec128", FPR, offsetof(struct user_fpregs_struct, xmm_space) + 16 * i }
/* The upper halves of the ymm registers: XSAVE's AVX component, at its standard offset. */
enum { XSAVE_SIZE = 4096, XSAVE_BV = 512, XSAVE_AVX = 576 };
#define YMMH(i) { "ymm" #i "h", 128, "uint128", AVX, XSAVE_AVX + 16 * i }
// clang-format on

static const struct reg regs[] = {
	G("rax", rax, "int64"),
	G("rbx", rbx, "int64"),
	G("rcx", rcx, "int64"),
	G("rdx", rdx, "int64"),
	G("rsi", rsi, "int64"),
	G("rdi", rdi, "int64"),
	G("rbp", rbp, "data_ptr"),
	G("rsp", rsp, "data_ptr"),
	G("r8", r8, "int64"),
	G("r9", r9, "int64"),
	G("r10", r10, "int64"),
	G("r11", r11, "int64"),
	G("r12", r12, "int64"),
	G("r13", r13, "int64"),
	G("r14", r14, "int64"),
	G("r15", r15, "int64"),
	G("rip", rip, "code_ptr"),
	G32("eflags", eflags),
	G32("cs", cs),
	G32("ss", ss),
	G32("ds", ds),
	G32("es", es),
	G32("fs", fs),
	G32("gs", gs),
	ST(0),
	ST(1),
	ST(2),
	ST(3),
	ST(4),
	ST(5),
	ST(6),
	ST(7),
	{ "fctrl", 32, "int", FPR16, offsetof(struct user_fpregs_struct, cwd) },
	{ "fstat", 32, "int", FPR16, offsetof(struct user_fpregs_struct, swd) },
	{ "ftag", 32, "int", FTAG, offsetof(struct user_fpregs_struct, ftw) },
	{ "fiseg", 32, "int", FPR_HI, offsetof(struct user_fpregs_struct, rip) },
	{ "fioff", 32, "int", FPR, offsetof(struct user_fpregs_struct, rip) },
	{ "foseg", 32, "int", FPR_HI, offsetof(struct user_fpregs_struct, rdp) },
	{ "fooff", 32, "int", FPR, offsetof(struct user_fpregs_struct, rdp) },
	{ "fop", 32, "int", FPR16, offsetof(struct user_fpregs_struct, fop) },
	XMM(0),
	XMM(1),
	XMM(2),
	XMM(3),
	XMM(4),
	XMM(5),
	XMM(6),
	XMM(7),
	XMM(8),
	XMM(9),
	XMM(10),
	XMM(11),
	XMM(12),
	XMM(13),
	XMM(14),
	XMM(15),
	{ "mxcsr", 32, "int", FPR, offsetof(struct user_fpregs_struct, mxcsr) },
	G("orig_rax", orig_rax, "int"),
	G("fs_base", fs_base, "int"),
	G("gs_base", gs_base, "int"),
	YMMH(0),
	YMMH(1),
	YMMH(2),
	YMMH(3),
	YMMH(4),
	YMMH(5),
	YMMH(6),
	YMMH(7),
	YMMH(8),
	YMMH(9),
	YMMH(10),
	YMMH(11),
	YMMH(12),
	YMMH(13),
	YMMH(14),
	YMMH(15),
};
enum {
	N_REGS = sizeof(regs) / sizeof(regs[0]),
	FIRST_SSE = 40,
	FIRST_LINUX = 57,
	FIRST_SEGMENTS = 58,
	FIRST_AVX = 60
};

/* Does this CPU have AVX (and the kernel save it)? XCR0 bit 2. */
static bool have_avx(void)
{
	uint32_t eax, edx;
	__asm__("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
	return eax & 4;
}

static int n_regs(void)
{
	return have_avx() ? N_REGS : FIRST_AVX;
}

static void xml_regs(char *out, size_t size, int from, int to, size_t *n)
{
	for (int i = from; i < to; i++)
		*n += (size_t)snprintf(out + *n, size - *n,
				       "<reg name=\"%s\" bitsize=\"%d\" type=\"%s\" regnum=\"%d\"/>",
				       regs[i].name, regs[i].bits, regs[i].type, i);
}

/* Our own description, in the format of gdb's manual (Target Descriptions): the feature
 * names are the ones gdb's amd64 code looks for. */
const char *target_xml(void)
{
	static char xml[8192];
	if (xml[0])
		return xml;
	size_t n = 0, size = sizeof(xml);
	n += (size_t)
		snprintf(xml + n, size - n,
			 "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"
			 "<architecture>i386:x86-64</architecture><osabi>GNU/Linux</osabi>"
			 "<feature name=\"org.gnu.gdb.i386.core\">");
	xml_regs(xml, size, 0, FIRST_SSE, &n);
	n += (size_t)snprintf(
		xml + n, size - n,
		"</feature><feature name=\"org.gnu.gdb.i386.sse\">"
		"<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>"
		"<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>"
		"<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>"
		"<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>"
		"<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>"
		"<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>"
		"<union id=\"vec128\"><field name=\"v4_float\" type=\"v4f\"/>"
		"<field name=\"v2_double\" type=\"v2d\"/><field name=\"v16_int8\" type=\"v16i8\"/>"
		"<field name=\"v8_int16\" type=\"v8i16\"/><field name=\"v4_int32\" type=\"v4i32\"/>"
		"<field name=\"v2_int64\" type=\"v2i64\"/><field name=\"uint128\" type=\"uint128\"/>"
		"</union>");
	xml_regs(xml, size, FIRST_SSE, FIRST_LINUX, &n);
	n += (size_t)snprintf(xml + n, size - n,
			      "</feature><feature name=\"org.gnu.gdb.i386.linux\">");
	xml_regs(xml, size, FIRST_LINUX, FIRST_SEGMENTS, &n);
	n += (size_t)snprintf(xml + n, size - n,
			      "</feature><feature name=\"org.gnu.gdb.i386.segments\">");
	xml_regs(xml, size, FIRST_SEGMENTS, FIRST_AVX, &n);
	if (have_avx()) {
		n += (size_t)snprintf(xml + n, size - n,
				      "</feature><feature name=\"org.gnu.gdb.i386.avx\">");
		xml_regs(xml, size, FIRST_AVX, N_REGS, &n);
	}
	snprintf(xml + n, size - n, "</feature></target>");
	return xml;
}

static int load_fpregs(struct task *t, struct user_fpregs_struct *fp)
{
	return ptrace(PTRACE_GETFPREGS, t->tid, 0, fp) < 0 ? -errno : 0;
}

/* The XSAVE area; a component the task never used is in its initial state (zeros) and
 * its bytes in the area are not meaningful. */
static int load_xsave(struct task *t, unsigned char *area)
{
	struct iovec io = { area, XSAVE_SIZE };
	memset(area, 0, XSAVE_SIZE);
	if (ptrace(PTRACE_GETREGSET, t->tid, NT_X86_XSTATE, &io) < 0)
		return -errno;
	if (io.iov_len < XSAVE_AVX + 256 || !(area[XSAVE_BV] & 4))
		memset(area + XSAVE_AVX, 0, 256);
	return 0;
}

/* The full x87 tag word from FXSAVE's abridged one: empty (3) or valid (0). */
static uint32_t full_tag(uint16_t abridged)
{
	uint32_t tag = 0;
	for (int i = 0; i < 8; i++)
		if (!(abridged & (1u << i)))
			tag |= 3u << (2 * i);
	return tag;
}

/* A task's registers as ptrace gives them, each set loaded when first needed. */
struct state {
	struct task *t;
	struct user_regs_struct gpr;
	struct user_fpregs_struct fp;
	unsigned char xsave[XSAVE_SIZE];
	int have_gpr, have_fp, have_xsave; /* 0: not loaded, 1: loaded, -1: failed */
};

/* The bytes register r is taken from, or NULL when they cannot be read. */
static const unsigned char *source_bytes(const struct reg *r, struct state *st)
{
	switch (r->src) {
	case GPR:
	case GPR32:
		if (!st->have_gpr) {
			st->have_gpr = remote_load_regs(st->t) ? -1 : 1;
			task_gprs(st->t, &st->gpr);
		}
		return st->have_gpr > 0 ? (const unsigned char *)&st->gpr : NULL;
	case AVX:
		if (!st->have_xsave)
			st->have_xsave = load_xsave(st->t, st->xsave) ? -1 : 1;
		return st->have_xsave > 0 ? st->xsave : NULL;
	default:
		if (!st->have_fp)
			st->have_fp = load_fpregs(st->t, &st->fp) ? -1 : 1;
		return st->have_fp > 0 ? (const unsigned char *)&st->fp : NULL;
	}
}

/* Register r's bytes (little-endian) into val; returns its size, or -1. */
static int reg_bytes(const struct reg *r, struct state *st, unsigned char *val)
{
	int size = r->bits / 8;
	const unsigned char *base = source_bytes(r, st);
	if (!base)
		return -1;
	memset(val, 0, (size_t)size);
	uint32_t v32;
	switch (r->src) {
	case FPR16:
		v32 = *(const uint16_t *)(base + r->off);
		memcpy(val, &v32, 4);
		break;
	case FTAG:
		v32 = full_tag(*(const uint16_t *)(base + r->off));
		memcpy(val, &v32, 4);
		break;
	case FPR_HI:
		memcpy(val, base + r->off + 4, 4);
		break;
	default:
		memcpy(val, base + r->off, (size_t)size);
	}
	return size;
}

int regs_read_one(struct task *t, int n, char *out)
{
	static struct state st;
	st = (struct state){ .t = t };
	unsigned char val[16];
	int size = n >= 0 && n < n_regs() ? reg_bytes(&regs[n], &st, val) : -1;
	if (size < 0)
		return -1;
	hex_encode(out, val, (size_t)size);
	return 0;
}

void regs_read_all(struct task *t, char *out)
{
	static struct state st;
	st = (struct state){ .t = t };
	for (int i = 0; i < n_regs(); i++) {
		unsigned char val[16];
		int size = reg_bytes(&regs[i], &st, val);
		if (size > 0) {
			hex_encode(out, val, (size_t)size);
		} else {
			size = regs[i].bits / 8;
			memset(out, 'x', (size_t)size * 2);
			out[size * 2] = 0;
		}
		out += size * 2;
	}
}

/* Writes go to the task's registers (stored at once) or straight to the FPU state. Only
 * whole general registers and the plain FPU fields are writable. */
int regs_write_one(struct task *t, int n, const char *hex)
{
	if (n < 0 || n >= n_regs() || remote_load_regs(t))
		return -1;
	const struct reg *r = &regs[n];
	unsigned char val[16] = { 0 };
	if (hex_decode(val, hex, (size_t)r->bits / 8) != r->bits / 8)
		return -1;
	if (r->src == GPR || r->src == GPR32) {
		uint64_t v = 0;
		memcpy(&v, val, (size_t)r->bits / 8);
		struct user_regs_struct gpr;
		task_gprs(t, &gpr);
		uint64_t pc = gpr.rip;
		memcpy((char *)&gpr + r->off, &v, 8);
		task_set_gprs(t, &gpr);
		if (remote_store_regs(t))
			return -1;
		calls_pc_written(t, pc); /* a call of gdb's starts or ends */
		return 0;
	}
	if (r->src != FPR)
		return -1;
	struct user_fpregs_struct fp;
	if (load_fpregs(t, &fp))
		return -1;
	memcpy((char *)&fp + r->off, val, (size_t)r->bits / 8);
	return ptrace(PTRACE_SETFPREGS, t->tid, 0, &fp) < 0 ? -1 : 0;
}

/* Are two register sets one position of the program? The trap flag and the resume flag
 * are the stepping's, not the program's (and a syscall made while stepping saved them in
 * r11); orig_rax is the kernel's note of the last call. */
bool regs_same_position(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	enum {
		RF = 0x10000
	};
	struct user_regs_struct x = *a, y = *b;
	x.orig_rax = y.orig_rax = 0;
	x.eflags &= ~(EFLAGS_TF | RF);
	y.eflags &= ~(EFLAGS_TF | RF);
	x.r11 &= ~EFLAGS_TF;
	y.r11 &= ~EFLAGS_TF;
	return memcmp(&x, &y, sizeof(x)) == 0;
}
