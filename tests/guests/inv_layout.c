/* Inventory: memory layout. Stack, heap, mmap, PIE code, libc, vDSO addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>

int main(void)
{
	int local;
	void *small = malloc(16), *big = malloc(1 << 20);
	void *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("stack %p heap %p big %p mmap %p main %p printf %p vdso %#lx\n", (void *)&local,
	       small, big, map, (void *)main, (void *)printf, getauxval(AT_SYSINFO_EHDR));
	return 0;
}
