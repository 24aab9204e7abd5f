/* Inventory: randomness. getrandom, /dev/urandom, /dev/random, AT_RANDOM, RDRAND, RDSEED. */
#include <cpuid.h>
#include <fcntl.h>
#include <immintrin.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <unistd.h>

#include "selfcheck.h"

static void hex(const char *name, const unsigned char *b, int n)
{
	printf("%-12s", name);
	for (int i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
}

static void from_file(const char *path)
{
	unsigned char b[16] = { 0 };
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, b, sizeof(b)) == sizeof(b), "%s unreadable", path);
	hex(path, b, sizeof(b));
	if (fd >= 0)
		close(fd);
}

__attribute__((target("rdrnd,rdseed"))) static void hardware(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	__get_cpuid(1, &a, &b, &c, &d);
	if (c & (1u << 30)) {
		unsigned long long r64;
		unsigned r32;
		unsigned short r16;
		int ok = _rdrand64_step(&r64) & _rdrand32_step(&r32) & _rdrand16_step(&r16);
		printf("rdrand %016llx %08x %04x ok %d\n", r64, r32, r16, ok);
	} else {
		printf("rdrand unsupported\n");
	}
	__get_cpuid_count(7, 0, &a, &b, &c, &d);
	if (b & (1u << 18)) {
		unsigned long long s64;
		printf("rdseed ok %d ", _rdseed64_step(&s64));
		printf("%016llx\n", s64);
	} else {
		printf("rdseed unsupported\n");
	}
}

int main(void)
{
	unsigned char b[16];
	CHECK(getrandom(b, sizeof(b), 0) == sizeof(b), "getrandom gave less than 16 bytes");
	hex("getrandom", b, sizeof(b));
	from_file("/dev/urandom");
	from_file("/dev/random");
	hex("AT_RANDOM", (const unsigned char *)getauxval(AT_RANDOM), 16);
	hardware();
	return 0;
}
