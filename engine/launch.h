/*
 * Starting the first process of the group: traced from its first instruction, filter
 * installed before exec, dies with detrun.
 *
 * When detrun may create namespaces (root), the program runs as pid 2 of a fresh PID
 * namespace whose init (pid 1) is a small reaper forked by detrun, in its own mount and UTS
 * namespaces: pids then follow creation order, /proc shows only the group, the hostname is
 * fixed, the CPU count files (/proc/cpuinfo, /sys/devices/system/cpu/{online,possible,
 * present}) describe the virtual CPUs instead of the host's, the machine's figures in /proc
 * (meminfo, stat, uptime ...) are virtual, and /sys holds nothing else.
 */
#ifndef DETRUN_SUPERVISOR_LAUNCH_H
#define DETRUN_SUPERVISOR_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launch_options {
	int cpus;               /* virtual CPU count shown in /proc and /sys */
	bool namespaces;        /* run in fresh PID, mount and UTS namespaces */
	bool shim_intercepts;   /* external calls stop (the filter's EXTERNAL rows) */
	bool parallel;          /* processes run at once (--jobs above 1): ALLOW rows stop */
	bool no_terminal;       /* the group gives up the controlling terminal (foreground.h) */
	void (*in_child)(void); /* undoes detrun's own signal handlers in the child */
};

struct launch {
	pid_t pid;         /* the program's host pid */
	pid_t init_pid;    /* the namespace's reaper, or 0 */
	int exec_error_fd; /* the child writes errno here if execve fails */
	bool namespaced;   /* namespaces were created */
};

#define DETRUN_HOSTNAME "detrun"

/* Returns 0 with the child seized and about to exec, or -errno. */
int launch_program(const char *path, char **argv, const struct launch_options *lo,
		   struct launch *out);
/* After the child is gone: the errno of a failed execve, or 0. */
int launch_exec_error(struct launch *l);

/* A mount point (or root) from mountinfo, with its octal escapes (\040 for a space)
 * undone in place. */
void unescape_mount_point(char *s);

/* Resolves PROG like execvp. 0 with `path` filled, or -ENOENT / -EACCES / -EISDIR. */
int resolve_program(const char *prog, char *path, size_t size);

#endif
