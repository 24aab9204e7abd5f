/* e2e guest: prints one line and exits with the given status.
 * usage: exit_code CODE */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : 0;
	printf("exiting with %d\n", code);
	fflush(stdout);
	exit(code);
}
