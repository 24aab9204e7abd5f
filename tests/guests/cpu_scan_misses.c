/* CPUID in code that detrun's scan used to miss. Each mode prints the CPU brand string
 * read through CPUID (under detrun: "detrun virtual CPU"):
 *   nosym          code with neither a symbol nor unwind information
 *   pkey           a private file mapping made executable with pkey_mprotect
 *   mremap         an executable file mapping grown with mremap over its code
 *   dlopen LIB     a library loaded, unloaded and loaded again (at the same address)
 *   readexec       personality(READ_IMPLIES_EXEC): a private file mapping made with
 *                  PROT_READ only, then one made PROT_READ by mprotect, are code */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

/* brand_words(leaf, out): CPUID `leaf` into out[0..3]. Hand-written, with no symbol type
 * or size and no CFI, so neither the symbol tables nor .eh_frame cover it. */
__asm__(".text\n"
	".globl nosym_cpuid\n"
	"nosym_cpuid:\n"
	"	push %rbx\n"
	"	mov %edi, %eax\n"
	"	xor %ecx, %ecx\n"
	"	cpuid\n"
	"	mov %eax, (%rsi)\n"
	"	mov %ebx, 4(%rsi)\n"
	"	mov %ecx, 8(%rsi)\n"
	"	mov %edx, 12(%rsi)\n"
	"	pop %rbx\n"
	"	ret\n");
void nosym_cpuid(unsigned leaf, unsigned out[4]);

/* The same with a proper symbol, for the mapping tests (found by the symbol tables). */
__asm__(".text\n"
	".globl sym_cpuid\n"
	".type sym_cpuid, @function\n"
	"sym_cpuid:\n"
	"	push %rbx\n"
	"	mov %edi, %eax\n"
	"	xor %ecx, %ecx\n"
	"	cpuid\n"
	"	mov %eax, (%rsi)\n"
	"	mov %ebx, 4(%rsi)\n"
	"	mov %ecx, 8(%rsi)\n"
	"	mov %edx, 12(%rsi)\n"
	"	pop %rbx\n"
	"	ret\n"
	".size sym_cpuid, .-sym_cpuid\n");
void sym_cpuid(unsigned leaf, unsigned out[4]);

typedef void cpuid_fn(unsigned leaf, unsigned out[4]);

static void print_brand(const char *what, cpuid_fn *fn)
{
	unsigned r[12];
	char text[49];
	for (unsigned i = 0; i < 3; i++)
		fn(0x80000002 + i, &r[4 * i]);
	memcpy(text, r, 48);
	text[48] = 0;
	printf("%s: %s\n", what, text);
}

/* File offset of sym_cpuid in this program, through its executable PT_LOAD. */
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t *off = data, addr = (uint64_t)(uintptr_t)sym_cpuid;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && addr >= start && addr < start + p->p_memsz) {
			*off = addr - start + p->p_offset;
			return 1;
		}
	}
	return 0;
}

static int map_self(uint64_t *fn_off, size_t *size)
{
	if (!dl_iterate_phdr(phdr_cb, fn_off))
		return -1;
	int fd = open("/proc/self/exe", O_RDONLY);
	*size = (size_t)lseek(fd, 0, SEEK_END);
	return fd;
}

static int by_pkey_mprotect(void)
{
	uint64_t off;
	size_t size;
	int fd = map_self(&off, &size);
	char *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd < 0 || p == MAP_FAILED)
		return 1;
	if (syscall(SYS_pkey_mprotect, p, size, PROT_READ | PROT_EXEC, -1) < 0) {
		perror("pkey_mprotect");
		return 1;
	}
	print_brand("pkey_mprotect", (cpuid_fn *)(p + off));
	return 0;
}

static int by_mremap(void)
{
	uint64_t off;
	size_t size;
	int fd = map_self(&off, &size);
	/* First only the first page (the ELF header, no code), then grown over the code. */
	char *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (fd < 0 || p == MAP_FAILED)
		return 1;
	p = mremap(p, 4096, (size + 4095) & ~4095UL, MREMAP_MAYMOVE);
	if (p == MAP_FAILED) {
		perror("mremap");
		return 1;
	}
	print_brand("mremap", (cpuid_fn *)(p + off));
	return 0;
}

static int by_read_implies_exec(void)
{
	uint64_t off;
	size_t size;
	int fd = map_self(&off, &size);
	if (fd < 0 || personality(personality(0xffffffff) | READ_IMPLIES_EXEC) < 0)
		return 1;
	char *r = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	char *n = mmap(NULL, size, PROT_NONE, MAP_PRIVATE, fd, 0);
	if (r == MAP_FAILED || n == MAP_FAILED || mprotect(n, size, PROT_READ) < 0) {
		perror("mmap");
		return 1;
	}
	print_brand("READ_IMPLIES_EXEC mmap PROT_READ", (cpuid_fn *)(r + off));
	print_brand("READ_IMPLIES_EXEC mprotect PROT_READ", (cpuid_fn *)(n + off));
	return 0;
}

static int by_dlopen(const char *lib)
{
	void *first = NULL;
	for (int round = 1; round <= 2; round++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		void (*brand)(char *) = (void (*)(char *))dlsym(h, "cpu_brand");
		char text[49];
		brand(text);
		if (round == 1)
			first = (void *)brand;
		printf("dlopen round %d%s: %s\n", round,
		       round == 1               ? ""
		       : (void *)brand == first ? " (same address)"
						: " (elsewhere)",
		       text);
		dlclose(h);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nosym";
	if (!strcmp(mode, "nosym")) {
		print_brand("nosym", nosym_cpuid);
		return 0;
	}
	if (!strcmp(mode, "pkey"))
		return by_pkey_mprotect();
	if (!strcmp(mode, "mremap"))
		return by_mremap();
	if (!strcmp(mode, "readexec"))
		return by_read_implies_exec();
	if (!strcmp(mode, "dlopen") && argc > 2)
		return by_dlopen(argv[2]);
	fprintf(stderr, "usage: cpu_scan_misses nosym|pkey|mremap|readexec|dlopen LIB\n");
	return 2;
}
