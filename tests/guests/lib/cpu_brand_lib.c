/* A shared library that executes CPUID: loaded by cpu_scan_misses with dlopen. */
#include <cpuid.h>
#include <string.h>

void cpu_brand(char out[49])
{
	unsigned r[12];
	for (unsigned i = 0; i < 3; i++)
		__cpuid(0x80000002 + i, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
	memcpy(out, r, 48);
	out[48] = 0;
}
