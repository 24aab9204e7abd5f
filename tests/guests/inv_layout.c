/* Inventory: memory layout. Stack, heap, mmap, PIE code, libc, vDSO addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "selfcheck.h"

int main(void)
{
	int local;
	void *small = malloc(16), *big = malloc(1 << 20);
	void *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(small && big && map != MAP_FAILED, "malloc or mmap failed");
	printf("stack %p heap %p big %p mmap %p main %p printf %p vdso %#lx\n", (void *)&local,
	       small, big, map, (void *)main, (void *)printf, getauxval(AT_SYSINFO_EHDR));
	return 0;
}
