/* Finding CPUID, RDRAND and RDSEED in code the group maps, and turning them into traps.
 *
 * These machines have no CPUID faulting, so the instructions themselves are replaced:
 * UD2 over their first two bytes, and the SIGILL that follows is emulated (sys_cpu.c).
 * RDPID (the CPU number, without a syscall) is patched the same way.
 * A byte is patched where capstone, decoding a whole function from its first
 * instruction, found that exact instruction: function starts come from the ELF symbol
 * tables and from .eh_frame, which covers stripped libraries. Executable code that no
 * symbol or unwind entry covers (hand-written assembly, stripped code without .eh_frame)
 * is decoded by a linear sweep from the start of the uncovered stretch. A cheap byte scan
 * first picks the few stretches worth decoding. Each file is analysed once per run.
 *
 * Only private mappings are written: a write into a MAP_SHARED file mapping would reach
 * the file itself, and detrun never changes a file. Such code runs natively, with a
 * hazard. Whether a site is already patched is read from the tracee's bytes, not from
 * memory of past patches, so code mapped again at the same address (dlclose, then
 * dlopen) is patched again. */
#include "engine/cpu_patch.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "engine/remote.h"
#include "engine/vdso.h"
#include "vkernel/report.h"

struct range {
	uint64_t start, end; /* link-time virtual addresses */
};

struct site {
	uint64_t offset; /* file offset of the instruction */
	struct cpu_trap trap;
};

struct analysis {
	uint64_t dev, ino;
	int64_t mtime_ns, size;
	struct site *sites;
	int n_sites;
	struct analysis *next;
};

static struct analysis *analyses;

struct patched {
	int aspace;
	uint64_t addr;
	struct cpu_trap trap;
	const struct analysis *file; /* the file and offset the site was patched from */
	uint64_t offset;
	bool seen; /* still mapped there, at the latest full scan */
	struct patched *next;
};

static struct patched *patched;

/* Executable mappings of each address space as last seen in its maps. Every way to make
 * code executable stops (exec, mmap, mprotect, pkey_mprotect with PROT_EXEC), so an
 * mremap of a range not listed here moves no code and needs no scan. Ranges unmapped
 * since (munmap runs freely) only cost a needless scan. */
struct code_range {
	int aspace;
	uint64_t start, end;
	struct code_range *next;
};

static struct code_range *code_ranges;

static void code_range_add(int aspace, uint64_t start, uint64_t end)
{
	struct code_range *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	*r = (struct code_range){ aspace, start, end, code_ranges };
	code_ranges = r;
}

static void code_ranges_forget(int aspace)
{
	for (struct code_range **rr = &code_ranges; *rr;) {
		struct code_range *r = *rr;
		if (r->aspace == aspace) {
			*rr = r->next;
			free(r);
		} else {
			rr = &r->next;
		}
	}
}

bool cpu_patch_is_code(int aspace, uint64_t start, uint64_t end)
{
	for (struct code_range *r = code_ranges; r; r = r->next)
		if (r->aspace == aspace && r->start < end && start < r->end)
			return true;
	return false;
}

/* ---- ELF ------------------------------------------------------------------------------ */

struct elf {
	const uint8_t *data;
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
};

static bool elf_open(struct elf *e, const uint8_t *data, size_t size)
{
	e->data = data, e->size = size;
	e->eh = (const Elf64_Ehdr *)data;
	if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) ||
	    e->eh->e_ident[EI_CLASS] != ELFCLASS64 || e->eh->e_machine != EM_X86_64)
		return false;
	if (e->eh->e_shoff + (uint64_t)e->eh->e_shnum * sizeof(Elf64_Shdr) > size ||
	    e->eh->e_phoff + (uint64_t)e->eh->e_phnum * sizeof(Elf64_Phdr) > size)
		return false;
	e->sh = (const Elf64_Shdr *)(data + e->eh->e_shoff);
	e->ph = (const Elf64_Phdr *)(data + e->eh->e_phoff);
	return true;
}

/* File offset of link-time address `vaddr`, through the PT_LOAD segments; 0 if unmapped. */
static uint64_t elf_offset_of(const struct elf *e, uint64_t vaddr)
{
	for (int i = 0; i < e->eh->e_phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && vaddr < p->p_vaddr + p->p_filesz)
			return vaddr - p->p_vaddr + p->p_offset;
	}
	return 0;
}

static void add_range(struct range **r, int *n, int *cap, uint64_t start, uint64_t end)
{
	if (end <= start)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*r = realloc(*r, (size_t)*cap * sizeof(**r));
		if (!*r)
			abort();
	}
	(*r)[(*n)++] = (struct range){ start, end };
}

static void symbol_ranges(const struct elf *e, struct range **r, int *n, int *cap)
{
	for (int i = 0; i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if ((s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM) ||
		    s->sh_offset + s->sh_size > e->size || s->sh_entsize != sizeof(Elf64_Sym))
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(e->data + s->sh_offset);
		for (size_t k = 0; k < s->sh_size / sizeof(Elf64_Sym); k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value &&
			    sym[k].st_size)
				add_range(r, n, cap, sym[k].st_value,
					  sym[k].st_value + sym[k].st_size);
	}
}

/* ---- .eh_frame: every function with unwind info ---------------------------------------- */

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* Reads a DW_EH_PE-encoded pointer; `field_vaddr` is where it lives, for pc-relative. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_vaddr,
			 uint64_t *out)
{
	int64_t v;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		if (end - *p < 8)
			return false;
		memcpy(&v, *p, 8), *p += 8;
		break;
	case 0x03: { /* udata4 */
		uint32_t u;
		if (end - *p < 4)
			return false;
		memcpy(&u, *p, 4), *p += 4, v = u;
		break;
	}
	case 0x0b: { /* sdata4 */
		int32_t s;
		if (end - *p < 4)
			return false;
		memcpy(&s, *p, 4), *p += 4, v = s;
		break;
	}
	default:
		return false;
	}
	if ((enc & 0x70) == 0x10) /* pcrel */
		v += (int64_t)field_vaddr;
	*out = (uint64_t)v;
	return true;
}

static void eh_frame_ranges(const struct elf *e, struct range **r, int *n, int *cap)
{
	const char *names = NULL;
	if (e->eh->e_shstrndx < e->eh->e_shnum)
		names = (const char *)e->data + e->sh[e->eh->e_shstrndx].sh_offset;
	for (int i = 0; names && i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (strcmp(names + s->sh_name, ".eh_frame") || s->sh_offset + s->sh_size > e->size)
			continue;
		const uint8_t *base = e->data + s->sh_offset, *p = base, *end = base + s->sh_size;
		uint8_t fde_enc = 0;
		while (end - p >= 8) {
			uint32_t len;
			memcpy(&len, p, 4);
			if (len == 0 || len == 0xffffffff ||
			    (uint64_t)(end - p) < 4 + (uint64_t)len)
				break;
			const uint8_t *rec = p + 4, *next = rec + len;
			uint32_t id;
			memcpy(&id, rec, 4);
			const uint8_t *q = rec + 4;
			if (id == 0) { /* CIE: find the FDE pointer encoding */
				fde_enc = 0;
				uint8_t version = *q++;
				const char *aug = (const char *)q;
				q += strnlen(aug, (size_t)(next - q)) + 1;
				uleb(&q, next); /* code alignment */
				uleb(&q, next); /* data alignment (sleb, skipped) */
				version == 1 ? (void)q++
					     : (void)uleb(&q, next); /* return register */
				if (aug[0] == 'z') {
					uleb(&q, next);
					for (const char *a = aug + 1; *a && q < next; a++) {
						if (*a == 'R') {
							fde_enc = *q++;
						} else if (*a == 'L') {
							q++;
						} else if (*a == 'P') {
							uint8_t penc = *q++;
							uint64_t ignored;
							if (!read_encoded(&q, next, penc, 0,
									  &ignored))
								break;
						}
					}
				}
			} else { /* FDE */
				uint64_t field = s->sh_addr + (uint64_t)(q - base), start, range;
				if (read_encoded(&q, next, fde_enc, field, &start) &&
				    read_encoded(&q, next, fde_enc & 0x0f, 0, &range))
					add_range(r, n, cap, start, start + range);
			}
			p = next;
		}
	}
}

/* ---- finding the instructions --------------------------------------------------------------- */

/* CPUID is 0F A2; RDRAND/RDSEED are 0F C7 with a register operand and /6 or /7. */
static bool candidate_at(const uint8_t *b, size_t left)
{
	if (left < 2 || b[0] != 0x0f)
		return false;
	if (b[1] == 0xa2)
		return true;
	return left >= 3 && b[1] == 0xc7 && (b[2] >> 6) == 3 && ((b[2] >> 3) & 7) >= 6;
}

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void add_site(struct analysis *an, uint64_t offset, const cs_insn *insn)
{
	struct cpu_trap trap = { .length = insn->size };
	cs_x86 *x86 = &insn->detail->x86;
	if (insn->id == X86_INS_CPUID) {
		trap.kind = TRAP_CPUID;
	} else {
		trap.kind = insn->id == X86_INS_RDRAND ? TRAP_RDRAND : TRAP_RDSEED;
		if (x86->op_count != 1 || x86->operands[0].type != X86_OP_REG)
			return;
		trap.reg = x86->operands[0].reg;
		trap.width = x86->operands[0].size;
		/* F3 0F C7 /7 is RDPID (RDSEED takes no F3 prefix); it writes a 64-bit
		 * register. Capstone 4 decodes it as RDSEED of the 32-bit register and
		 * drops the prefix from its details, so the bytes are looked at. */
		bool f3 = false;
		for (int i = 0; i < insn->size && insn->bytes[i] != 0x0f; i++)
			f3 |= insn->bytes[i] == 0xf3;
		if (insn->id == X86_INS_RDSEED && f3)
			trap.kind = TRAP_RDPID, trap.width = 8;
	}
	an->sites = realloc(an->sites, (size_t)(an->n_sites + 1) * sizeof(*an->sites));
	if (!an->sites)
		abort();
	an->sites[an->n_sites++] = (struct site){ offset, trap };
}

/* RDPID is among the RDSEEDs (see add_site). */
static bool is_trapped_insn(unsigned id)
{
	return id == X86_INS_CPUID || id == X86_INS_RDRAND || id == X86_INS_RDSEED;
}

/* Decodes function `f` from its start; records every CPUID/RDRAND/RDSEED it contains. */
static void decode_function(csh cs, const struct elf *e, const struct range *f, struct analysis *an)
{
	uint64_t off = elf_offset_of(e, f->start);
	if (!off || off + (f->end - f->start) > e->size)
		return;
	const uint8_t *code = e->data + off;
	size_t size = f->end - f->start;
	uint64_t addr = f->start;
	cs_insn *insn = cs_malloc(cs);
	while (size && cs_disasm_iter(cs, &code, &size, &addr, insn))
		if (is_trapped_insn(insn->id))
			add_site(an, elf_offset_of(e, insn->address), insn);
	cs_free(insn, 1);
}

/* Instructions compiled code does not contain in user space, but data decoded as code
 * often does: a stretch showing one is taken for data. */
static bool implausible(const cs_insn *insn)
{
	const cs_x86 *x86 = &insn->detail->x86;
	for (int i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == X86_GRP_PRIVILEGE ||
		    insn->detail->groups[i] == X86_GRP_IRET)
			return true;
	switch (insn->id) {
	case X86_INS_IN:
	case X86_INS_INSB:
	case X86_INS_INSW:
	case X86_INS_INSD:
	case X86_INS_OUT:
	case X86_INS_OUTSB:
	case X86_INS_OUTSW:
	case X86_INS_OUTSD:
	case X86_INS_HLT:
	case X86_INS_ENTER:
	case X86_INS_LJMP:
	case X86_INS_LCALL:
	case X86_INS_INT:
	case X86_INS_INTO:
	case X86_INS_INT1:
	case X86_INS_SALC:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_CLI:
	case X86_INS_STI:
	case X86_INS_LDS:
	case X86_INS_LES:
	case X86_INS_LSS:
	case X86_INS_LFS:
	case X86_INS_LGS:
		return true;
	}
	for (int i = 0; i < x86->op_count; i++)
		if (x86->operands[i].type == X86_OP_REG &&
		    (x86->operands[i].reg == X86_REG_CS || x86->operands[i].reg == X86_REG_DS ||
		     x86->operands[i].reg == X86_REG_ES || x86->operands[i].reg == X86_REG_SS))
			return true;
	return false;
}

/* Decodes [start, end) (link-time addresses) linearly and records every trapped
 * instruction, for code no function range covers — but only if the whole stretch decodes
 * as plausible code: hand-written assembly does, while constant tables kept in .text
 * (OpenSSL's) do not, and patching a constant would corrupt it. */
static void sweep(csh cs, const struct elf *e, uint64_t start, uint64_t end, struct analysis *an)
{
	uint64_t off = elf_offset_of(e, start);
	if (!off || off + (end - start) > e->size)
		return;
	bool any = false;
	for (uint64_t k = 0; k + 1 < end - start && !any; k++)
		any = candidate_at(e->data + off + k, end - start - k);
	if (!any)
		return;
	struct analysis found = { 0 };
	const uint8_t *code = e->data + off;
	size_t size = end - start;
	uint64_t addr = start;
	cs_insn *insn = cs_malloc(cs);
	bool plausible = true;
	while (size && plausible) {
		plausible = cs_disasm_iter(cs, &code, &size, &addr, insn) && !implausible(insn);
		if (plausible && is_trapped_insn(insn->id))
			add_site(&found, elf_offset_of(e, insn->address), insn);
	}
	cs_free(insn, 1);
	for (int i = 0; plausible && i < found.n_sites; i++) {
		an->sites = realloc(an->sites, (size_t)(an->n_sites + 1) * sizeof(*an->sites));
		if (!an->sites)
			abort();
		an->sites[an->n_sites++] = found.sites[i];
	}
	free(found.sites);
}

/* Executable stretches, from the section headers (or the PT_LOAD segments without them). */
static void code_regions(const struct elf *e, struct range **r, int *n, int *cap)
{
	for (int i = 0; i < e->eh->e_shnum; i++)
		if ((e->sh[i].sh_flags & SHF_EXECINSTR) && e->sh[i].sh_type == SHT_PROGBITS)
			add_range(r, n, cap, e->sh[i].sh_addr, e->sh[i].sh_addr + e->sh[i].sh_size);
	if (*n)
		return;
	for (int i = 0; i < e->eh->e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD && (e->ph[i].p_flags & PF_X))
			add_range(r, n, cap, e->ph[i].p_vaddr,
				  e->ph[i].p_vaddr + e->ph[i].p_filesz);
}

/* Sweeps the parts of the executable regions that no function range (sorted) covers. */
static void sweep_uncovered(csh cs, const struct elf *e, const struct range *fns, int n,
			    struct analysis *an)
{
	struct range *regions = NULL;
	int n_regions = 0, cap = 0;
	code_regions(e, &regions, &n_regions, &cap);
	for (int r = 0; r < n_regions; r++) {
		uint64_t at = regions[r].start;
		for (int i = 0; i < n && at < regions[r].end; i++) {
			if (fns[i].end <= at || fns[i].start >= regions[r].end)
				continue;
			if (fns[i].start > at)
				sweep(cs, e, at, fns[i].start, an);
			if (fns[i].end > at)
				at = fns[i].end;
		}
		if (at < regions[r].end)
			sweep(cs, e, at, regions[r].end, an);
	}
	free(regions);
}

static void analyse(struct analysis *an, const uint8_t *data, size_t size)
{
	struct elf e;
	if (!elf_open(&e, data, size))
		return;
	struct range *fns = NULL;
	int n = 0, cap = 0;
	symbol_ranges(&e, &fns, &n, &cap);
	eh_frame_ranges(&e, &fns, &n, &cap);
	if (n)
		qsort(fns, (size_t)n, sizeof(*fns), by_start);
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(fns);
		return;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* Only functions whose bytes contain a candidate opcode are decoded. */
	int last_decoded = -1;
	for (int i = 0; i < n; i++) {
		uint64_t off = elf_offset_of(&e, fns[i].start);
		uint64_t len = fns[i].end - fns[i].start;
		if (!off || off + len > size || i == last_decoded ||
		    (i > 0 && fns[i].start == fns[i - 1].start))
			continue;
		for (uint64_t k = 0; k + 1 < len; k++)
			if (candidate_at(data + off + k, len - k)) {
				decode_function(cs, &e, &fns[i], an);
				last_decoded = i;
				break;
			}
	}
	sweep_uncovered(cs, &e, fns, n, an);
	cs_close(&cs);
	free(fns);
}

/* The analysis of the file open at fd: NULL with *err 0 for what is not a regular file
 * (no code to scan), NULL with *err set when the file cannot be read. */
static struct analysis *analysis_of(int fd, int *err)
{
	struct stat st;
	*err = 0;
	if (fstat(fd, &st) < 0) {
		*err = -errno;
		return NULL;
	}
	if (!S_ISREG(st.st_mode))
		return NULL;
	int64_t mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	for (struct analysis *a = analyses; a; a = a->next)
		if (a->dev == st.st_dev && a->ino == st.st_ino && a->mtime_ns == mtime &&
		    a->size == st.st_size)
			return a;
	void *data = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
				: NULL;
	if (data == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	struct analysis *an = calloc(1, sizeof(*an));
	if (!an)
		abort();
	*an = (struct analysis){ st.st_dev, st.st_ino, mtime, st.st_size, NULL, 0, analyses };
	analyses = an;
	if (data) {
		analyse(an, data, (size_t)st.st_size);
		munmap(data, (size_t)st.st_size);
	}
	return an;
}

/* ---- patching mapped code --------------------------------------------------------------------- */

static struct patched *patched_at(int aspace, uint64_t addr)
{
	for (struct patched *p = patched; p; p = p->next)
		if (p->aspace == aspace && p->addr == addr)
			return p;
	return NULL;
}

static const uint8_t ud2[2] = { 0x0f, 0x0b };

/* Patches the site of file `an` at `offset`, mapped at `addr`, unless the tracee's bytes
 * there already are our UD2 (the original instruction never starts with 0F 0B). */
static int patch_site(struct task *t, uint64_t addr, const struct analysis *an,
		      const struct site *s)
{
	int aspace = t->proc->aspace;
	struct patched *p = patched_at(aspace, addr);
	uint8_t now[2];
	if (p && p->file == an && p->offset == s->offset && !remote_read(t, REMOTE(addr), now, 2) &&
	    !memcmp(now, ud2, 2)) {
		p->seen = true;
		return 0;
	}
	int err = remote_patch_code(t, REMOTE(addr), ud2, sizeof(ud2));
	if (err)
		return err;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			abort();
		p->next = patched;
		patched = p;
	}
	p->aspace = aspace, p->addr = addr, p->trap = s->trap;
	p->file = an, p->offset = s->offset, p->seen = true;
	return 0;
}

/* Sites in a shared mapping run natively: writing there would write the file. Said once
 * per mapping. */
static void shared_mapping_hazard(struct task *t, uint64_t start, uint64_t addr, const char *file)
{
	static struct {
		int aspace;
		uint64_t start;
	} said[64];
	static int n_said;
	for (int i = 0; i < n_said; i++)
		if (said[i].aspace == t->proc->aspace && said[i].start == start)
			return;
	if (n_said < 64)
		said[n_said].aspace = t->proc->aspace, said[n_said++].start = start;
	hazard(t,
	       "CPUID/RDRAND/RDSEED/RDPID at %#llx runs natively: it is in a shared mapping "
	       "of %s, and patching it would change the file",
	       (unsigned long long)addr, file);
}

/* Forgets patches of t's address space whose code is no longer mapped there. */
static void forget_unseen(int aspace)
{
	for (struct patched **pp = &patched; *pp;) {
		struct patched *p = *pp;
		if (p->aspace == aspace && !p->seen) {
			*pp = p->next;
			free(p);
		} else {
			pp = &p->next;
		}
	}
}

/* One line of the maps that patch_in looks at. */
struct code_mapping {
	unsigned long long start, end, off, ino;
	unsigned dev_major, dev_minor;
	char perms[8];
	const char *name; /* a path, or NULL for memory of no file */
};

/* The file mapped: through map_files, or, where that is the privilege of CAP_SYS_ADMIN
 * (detrun without root), by its name when that still names the same inode. */
static int open_mapped(struct task *t, const struct code_mapping *m)
{
	char file[64];
	snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", t->tid, m->start, m->end);
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || (errno != EPERM && errno != EACCES))
		return fd < 0 ? -errno : fd;
	struct stat st;
	fd = open(m->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_ino != m->ino || major(st.st_dev) != m->dev_major ||
	    minor(st.st_dev) != m->dev_minor) {
		close(fd);
		return -ESTALE; /* another file by that name now */
	}
	return fd;
}

/* Patches the sites of one file mapping: 0, or -errno with *step saying what failed. */
static int patch_mapping(struct task *t, const struct code_mapping *m, const char **step)
{
	*step = "open a mapped file to scan its code";
	int err, fd = open_mapped(t, m);
	if (fd < 0)
		return fd;
	struct analysis *an = analysis_of(fd, &err);
	close(fd);
	*step = "read a mapped file to scan its code";
	if (err)
		return err;
	*step = "patch an instruction of the program's code";
	for (int i = 0; an && i < an->n_sites; i++) {
		const struct site *s = &an->sites[i];
		if (s->offset < m->off || s->offset + s->trap.length > m->off + (m->end - m->start))
			continue;
		uint64_t addr = m->start + (s->offset - m->off);
		if (m->perms[3] != 'p')
			shared_mapping_hazard(t, m->start, addr, m->name);
		else if ((err = patch_site(t, addr, an, s)))
			return err;
	}
	return 0;
}

static bool parse_mapping(char *line, struct code_mapping *m)
{
	int name_at = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &m->start, &m->end, m->perms, &m->off,
		   &m->dev_major, &m->dev_minor, &m->ino, &name_at) < 7)
		return false;
	line[strcspn(line, "\n")] = 0;
	m->name = name_at && line[name_at] == '/' ? line + name_at : NULL;
	return true;
}

static int patch_in(struct task *t, uint64_t lo, uint64_t hi, bool full, const char **step)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	*step = "read the maps to scan new code";
	FILE *maps = fopen(path, "re");
	if (!maps)
		return -errno;
	if (full) {
		for (struct patched *p = patched; p; p = p->next)
			if (p->aspace == t->proc->aspace)
				p->seen = false;
		code_ranges_forget(t->proc->aspace);
	}
	int err = 0;
	struct code_mapping m;
	while (!err && fgets(line, sizeof(line), maps)) {
		if (!parse_mapping(line, &m) || m.perms[2] != 'x' || m.end <= lo || m.start >= hi)
			continue;
		code_range_add(t->proc->aspace, m.start, m.end);
		if (m.name && !vdso_code_at(t->proc, m.start))
			err = patch_mapping(t, &m, step);
	}
	if (!err && ferror(maps))
		err = -EIO;
	fclose(maps);
	if (full && !err)
		forget_unseen(t->proc->aspace);
	return err;
}

int cpu_patch_mappings(struct task *t, const char **step)
{
	return patch_in(t, 0, UINT64_MAX, true, step);
}

int cpu_patch_range(struct task *t, uint64_t start, uint64_t end, const char **step)
{
	return patch_in(t, start, end, false, step);
}

const struct cpu_trap *cpu_trap_at(struct task *t, uint64_t addr)
{
	for (struct patched *p = patched; p; p = p->next)
		if (p->aspace == t->proc->aspace && p->addr == addr)
			return &p->trap;
	return NULL;
}

void cpu_patch_inherit(int parent_aspace, int child_aspace)
{
	for (struct code_range *r = code_ranges; r; r = r->next)
		if (r->aspace == parent_aspace)
			code_range_add(child_aspace, r->start, r->end);
	for (struct patched *p = patched; p; p = p->next)
		if (p->aspace == parent_aspace) {
			struct patched *c = calloc(1, sizeof(*c));
			if (!c)
				abort();
			*c = *p;
			c->aspace = child_aspace;
			c->next = patched;
			patched = c;
		}
}
