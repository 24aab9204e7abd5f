/* Prints where the stack, the heap, a mapping, this program and libc were placed, and the
 * personality as the program sees it. Run through `setarch x86_64`, which sets
 * personality(PER_LINUX) (no ADDR_NO_RANDOMIZE) before exec. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/personality.h>

int main(void)
{
	int local;
	void *heap = malloc(16);
	void *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("stack %p heap %p mmap %p main %p libc %p\n", (void *)&local, heap, map,
	       (void *)main, (void *)printf);
	printf("personality %#x\n", personality(0xffffffff));
	return 0;
}
