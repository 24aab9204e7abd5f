/* A 64-bit program making a 32-bit (int 0x80) and an x32 system call: both getpid. */
#include <stdio.h>

static long int80(long nr)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr) : "memory");
	return ret;
}

static long x32(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr | 0x40000000L) : "rcx", "r11", "memory");
	return ret;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	long r = int80(20); /* i386 getpid */
	printf("int 0x80 getpid: %s\n", r == -38 ? "ENOSYS" : r > 0 ? "a pid" : "error");
	r = x32(39); /* x32 getpid */
	printf("x32 getpid: %s\n", r == -38 ? "ENOSYS" : r > 0 ? "a pid" : "error");
	printf("still running\n");
	return 0;
}
