/* Looks for the vDSO the way a program that does not trust the auxiliary vector would: in
 * /proc/self/maps (then getauxval, then by mapping one again with arch_prctl), finds
 * __vdso_clock_gettime through its ELF dynamic symbols and reads the clocks there, without
 * a syscall. Prints what it found and read. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ARCH_MAP_VDSO_64 0x2003

/* AT_SYSINFO_EHDR as /proc/self/auxv gives it, which some runtimes read instead of the
 * stack's vector; 0 if absent. */
static uintptr_t from_proc_auxv(void)
{
	FILE *f = fopen("/proc/self/auxv", "r");
	uint64_t pair[2] = { 0 };
	uintptr_t at = 0;
	while (f && fread(pair, sizeof(pair), 1, f) == 1 && pair[0] != AT_NULL)
		if (pair[0] == AT_SYSINFO_EHDR)
			at = (uintptr_t)pair[1];
	if (f)
		fclose(f);
	return at;
}

static uintptr_t from_maps(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t start = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name)) {
			sscanf(line, "%lx", &start);
			break;
		}
	if (f)
		fclose(f);
	return start;
}

/* The address of `symbol` in the vDSO image at `base`, through PT_DYNAMIC. */
static void *vdso_symbol(uintptr_t base, const char *symbol)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	uintptr_t load = 0, dyn = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !load)
			load = base + ph[i].p_offset - ph[i].p_vaddr;
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = ph[i].p_offset;
	}
	if (!dyn)
		return NULL;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;
	for (const Elf64_Dyn *d = (const Elf64_Dyn *)(base + dyn); d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			sym = (const Elf64_Sym *)(load + d->d_un.d_ptr);
		if (d->d_tag == DT_STRTAB)
			str = (const char *)(load + d->d_un.d_ptr);
		if (d->d_tag == DT_HASH)
			hash = (const uint32_t *)(load + d->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	for (uint32_t i = 0; i < hash[1]; i++)
		if (sym[i].st_name && !strcmp(str + sym[i].st_name, symbol))
			return (void *)(load + sym[i].st_value);
	return NULL;
}

static void read_clocks(const char *how, uintptr_t base)
{
	int (*gettime)(clockid_t, struct timespec *) = (int (*)(clockid_t, struct timespec *))
		vdso_symbol(base, "__vdso_clock_gettime");
	if (!gettime) {
		printf("%s: vDSO without __vdso_clock_gettime\n", how);
		return;
	}
	struct timespec rt, mono;
	gettime(CLOCK_REALTIME, &rt);
	gettime(CLOCK_MONOTONIC, &mono);
	printf("%s: vDSO realtime %lld.%09ld monotonic %lld.%09ld\n", how, (long long)rt.tv_sec,
	       rt.tv_nsec, (long long)mono.tv_sec, mono.tv_nsec);
}

int main(void)
{
	uintptr_t maps = from_maps("[vdso]"), aux = getauxval(AT_SYSINFO_EHDR);
	printf("vvar pages %s\n", from_maps("[vvar") ? "mapped" : "absent");
	printf("/proc/self/auxv %s\n",
	       from_proc_auxv() == aux ? "names the same vDSO as getauxval" : "names another vDSO");
	if (maps) {
		read_clocks("maps", maps);
	} else if (aux) {
		read_clocks("auxv", aux);
	} else {
		long r = syscall(SYS_arch_prctl, ARCH_MAP_VDSO_64, 0x7f0000000000UL);
		if (r >= 0)
			read_clocks("arch_prctl", (uintptr_t)r);
		else
			printf("no vDSO\n");
	}
	return 0;
}
