/* Starting the first process of the group: traced from its first instruction, filter
 * installed before exec, dies with detrun. */
#ifndef DETRUN_SUPERVISOR_LAUNCH_H
#define DETRUN_SUPERVISOR_LAUNCH_H

#include <sys/types.h>

struct launch {
	pid_t pid;
	int exec_error_fd; /* the child writes errno here if execve fails */
};

/* Returns 0 with the child seized and about to exec, or -errno. */
int launch_program(const char *path, char **argv, struct launch *out);
/* After the child is gone: the errno of a failed execve, or 0. */
int launch_exec_error(struct launch *l);

/* Resolves PROG like execvp: "" on failure with *err set to ENOENT or EACCES. */
int resolve_program(const char *prog, char *path, size_t size);

#endif
