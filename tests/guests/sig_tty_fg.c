/* Is this process in its terminal's foreground? Prints "foreground: yes" or "no". */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("foreground: %s\n", tcgetpgrp(0) == getpgrp() ? "yes" : "no");
	return 0;
}
