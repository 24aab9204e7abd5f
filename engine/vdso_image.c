/* The vDSO built from engine/vdso/ (CMake), embedded as bytes: engine/vdso.c copies it
 * into each address space it gives a vDSO. */
#include <stddef.h>

#ifndef VDSO_IMAGE
#error "VDSO_IMAGE names the built vDSO (CMakeLists.txt)"
#endif

extern const unsigned char vdso_image_start[], vdso_image_end[];

__asm__(".section .rodata\n"
	".balign 64\n"
	".globl vdso_image_start\n"
	".globl vdso_image_end\n"
	"vdso_image_start:\n"
	".incbin \"" VDSO_IMAGE "\"\n"
	"vdso_image_end:\n"
	".previous\n");

size_t vdso_image_size(void)
{
	return (size_t)(vdso_image_end - vdso_image_start);
}
