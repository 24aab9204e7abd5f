// Leaks memory on two call paths and prints a line: a list whose head leaks directly and
// its nodes indirectly, and a string that a stale slot of the stack keeps reachable (the
// exit path's frames run over it: LeakSanitizer scans them), natively as under detrun. Built with AddressSanitizer: at exit LeakSanitizer stops the world with
// ptrace, reports the leaks on stderr and exits 1.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *volatile sink;

struct node {
	struct node *next;
	char name[24];
};

__attribute__((noinline)) static void leak_string(void)
{
	char *s = malloc(77);
	strcpy(s, "never freed");
	printf("asan_leak: %s\n", s);
	sink = s; /* nothing keeps it alive, but the compiler keeps it */
	sink = NULL;
}

__attribute__((noinline)) static void leak_list(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = calloc(1, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "node %d", i);
		x->next = head;
		head = x;
	}
	printf("asan_leak: list of %d\n", n);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	leak_string();
	leak_list(3);
	return 0;
}
