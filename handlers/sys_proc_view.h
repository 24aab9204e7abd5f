/* What a rewritten /proc view says (sys_proc.c), for the snapshots that give it to the
 * program (sys_proc_snapshot.c). */
#ifndef DETRUN_HANDLERS_SYS_PROC_VIEW_H
#define DETRUN_HANDLERS_SYS_PROC_VIEW_H

#include <stddef.h>

struct task;

enum proc_view {
	VIEW_NONE,
	VIEW_STAT,
	VIEW_STATM,
	VIEW_STATUS,
	VIEW_MAPS,
	VIEW_AUXV,
	VIEW_MOUNTINFO,
	VIEW_FDINFO,
	VIEW_UUID,
	VIEW_BOOT_ID,
};

/* A view's text, NUL-terminated (buf is malloc'd: the caller frees it). */
struct view_text {
	char *buf;
	size_t len, cap;
};

/* Which view supervisor descriptor fd is; its path (in the group's /proc) in link. */
enum proc_view proc_view_of(int fd, char *link, size_t size);
/* The text of view `view` (the kernel's file fd, at link) rewritten for t: 0, or -1 when
 * the kernel's text cannot be read. */
int proc_view_text(struct task *t, int fd, enum proc_view view, const char *link,
		   struct view_text *o);

#endif
