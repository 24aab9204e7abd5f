/* Inventory: CPUID fields that name the CPU a task runs on, and the brand string. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	__get_cpuid(1, &a, &b, &c, &d);
	printf("leaf1 signature %08x apic id %u\n", a, b >> 24);
	unsigned brand[12];
	for (unsigned i = 0; i < 3; i++)
		__get_cpuid(0x80000002 + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
			    &brand[4 * i + 3]);
	char text[49];
	memcpy(text, brand, 48);
	text[48] = 0;
	printf("brand %s\n", text);
	return 0;
}
