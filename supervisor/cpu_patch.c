/* Finding CPUID, RDRAND and RDSEED in code the group maps, and turning them into traps.
 *
 * These machines have no CPUID faulting, so the instructions themselves are replaced:
 * UD2 over their first two bytes, and the SIGILL that follows is emulated (sys_cpu.c).
 * A byte is only ever patched where capstone, decoding a whole function from its first
 * instruction, found that exact instruction: function starts come from the ELF symbol
 * tables and from .eh_frame, which covers stripped libraries. A cheap byte scan first
 * picks the few functions worth decoding. Each file is analysed once per run. */
#include "supervisor/cpu_patch.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/remote.h"
#include "supervisor/report.h"

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
	struct patched *next;
};

static struct patched *patched;

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
				add_range(r, n, cap, sym[k].st_value, sym[k].st_value + sym[k].st_size);
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
			if (len == 0 || len == 0xffffffff || (uint64_t)(end - p) < 4 + (uint64_t)len)
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
				uleb(&q, next);                 /* code alignment */
				uleb(&q, next);                 /* data alignment (sleb, skipped) */
				version == 1 ? (void)q++ : (void)uleb(&q, next); /* return register */
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
							if (!read_encoded(&q, next, penc, 0, &ignored))
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
	if (insn->id == X86_INS_CPUID) {
		trap.kind = TRAP_CPUID;
	} else {
		trap.kind = insn->id == X86_INS_RDRAND ? TRAP_RDRAND : TRAP_RDSEED;
		cs_x86 *x86 = &insn->detail->x86;
		if (x86->op_count != 1 || x86->operands[0].type != X86_OP_REG)
			return;
		trap.reg = x86->operands[0].reg;
		trap.width = x86->operands[0].size;
	}
	an->sites = realloc(an->sites, (size_t)(an->n_sites + 1) * sizeof(*an->sites));
	if (!an->sites)
		abort();
	an->sites[an->n_sites++] = (struct site){ offset, trap };
}

/* Decodes function `f` from its start; records every CPUID/RDRAND/RDSEED it contains. */
static void decode_function(csh cs, const struct elf *e, const struct range *f,
			    struct analysis *an)
{
	uint64_t off = elf_offset_of(e, f->start);
	if (!off || off + (f->end - f->start) > e->size)
		return;
	const uint8_t *code = e->data + off;
	size_t size = f->end - f->start;
	uint64_t addr = f->start;
	cs_insn *insn = cs_malloc(cs);
	while (size && cs_disasm_iter(cs, &code, &size, &addr, insn))
		if (insn->id == X86_INS_CPUID || insn->id == X86_INS_RDRAND ||
		    insn->id == X86_INS_RDSEED)
			add_site(an, elf_offset_of(e, insn->address), insn);
	cs_free(insn, 1);
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
	if (!n)
		return;
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
	cs_close(&cs);
	free(fns);
}

static struct analysis *analysis_of(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	int64_t mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	for (struct analysis *a = analyses; a; a = a->next)
		if (a->dev == st.st_dev && a->ino == st.st_ino && a->mtime_ns == mtime &&
		    a->size == st.st_size)
			return a;
	struct analysis *an = calloc(1, sizeof(*an));
	if (!an)
		abort();
	*an = (struct analysis){ st.st_dev, st.st_ino, mtime, st.st_size, NULL, 0, analyses };
	analyses = an;
	void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data != MAP_FAILED) {
		analyse(an, data, (size_t)st.st_size);
		munmap(data, (size_t)st.st_size);
	}
	return an;
}

/* ---- patching mapped code --------------------------------------------------------------------- */

static bool already_patched(int aspace, uint64_t addr)
{
	for (struct patched *p = patched; p; p = p->next)
		if (p->aspace == aspace && p->addr == addr)
			return true;
	return false;
}

static void patch_site(struct task *t, uint64_t addr, const struct cpu_trap *trap)
{
	int aspace = t->proc->aspace;
	if (already_patched(aspace, addr))
		return;
	static const uint8_t ud2[2] = { 0x0f, 0x0b };
	if (remote_write(t, REMOTE(addr), ud2, sizeof(ud2))) {
		task_warn(t, "cannot patch the instruction at %#llx", (unsigned long long)addr);
		return;
	}
	struct patched *p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	*p = (struct patched){ aspace, addr, *trap, patched };
	patched = p;
}

void cpu_patch_mappings(struct task *t)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *maps = fopen(path, "re");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &name_at) < 4 || perms[2] != 'x' || !name_at || line[name_at] != '/')
			continue;
		char file[64];
		snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", t->tid, start, end);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct analysis *an = analysis_of(fd);
		close(fd);
		for (int i = 0; an && i < an->n_sites; i++) {
			const struct site *s = &an->sites[i];
			if (s->offset >= off && s->offset + s->trap.length <= off + (end - start))
				patch_site(t, start + (s->offset - off), &s->trap);
		}
	}
	fclose(maps);
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
