/* A breakpoint on an instruction detrun emulates (rdtsc traps, or is patched): stepping
 * over it under gdb must still run the emulation, not decode the int3. */
#include <stdio.h>

__attribute__((noinline)) unsigned long long tick(void)
{
	unsigned lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((unsigned long long)hi << 32) | lo;
}

int main(void)
{
	unsigned long long last = 0;
	int rising = 1;
	for (int i = 0; i < 3; i++) {
		unsigned long long now = tick();
		rising &= now > last;
		last = now;
	}
	printf(rising ? "DBG-RDTSC-OK\n" : "DBG-RDTSC-FAILED\n");
	return 0;
}
