/* Prints where its initial stack put things: a stack variable, the argv[0] and environment
 * strings, and the AT_EXECFN string (the path given to execve). Natively these depend on
 * how the program was started (the path's length moves everything below it); a replay
 * must start it exactly as recorded, so they print the same. */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

extern char **environ;

int main(int argc, char **argv)
{
	int local = argc;
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	printf("argv[0] %s at %p\n", argv[0], (void *)argv[0]);
	printf("execfn %s at %p\n", execfn ? execfn : "(none)", (const void *)execfn);
	printf("environ[0] at %p\n", environ[0] ? (void *)environ[0] : NULL);
	printf("stack variable at %p\n", (void *)&local);
	return 0;
}
