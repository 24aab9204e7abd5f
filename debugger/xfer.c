/* The objects gdb reads with qXfer: the target description, the auxiliary vector, the
 * executable's path and the thread list. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "debugger/internal.h"
#include "engine/auxv.h"
#include "engine/tracer.h"
#include "engine/vdso.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "vkernel/task.h"

/* One piece of an object gdb reads with qXfer: "m" more follows, "l" the last. */
static void send_xfer(const char *data, size_t size, const char *range)
{
	const char *p = range;
	uint64_t off = hex_number(&p);
	if (*p == ',')
		p++;
	uint64_t len = hex_number(&p);
	if (len > PACKET_MAX / 2)
		len = PACKET_MAX / 2;
	static char out[PACKET_MAX];
	if (off >= size) {
		server_send("l", 1);
		return;
	}
	size_t n = size - off < len ? size - off : len;
	out[0] = off + n < size ? 'm' : 'l';
	memcpy(out + 1, data + off, n);
	server_send(out, n + 1);
}

static size_t read_proc(struct task *t, const char *what, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", t->tid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t got;
	while (fd >= 0 && n < size && (got = read(fd, buf + n, size - n)) > 0)
		n += (size_t)got;
	if (fd >= 0)
		close(fd);
	return n;
}

/* The auxiliary vector as the program got it: gdb would otherwise look for the vDSO's
 * symbols at the host's, which detrun unmapped at the exec, and say "Failed to read a
 * valid object file image". */
static size_t program_auxv(struct task *t, char *buf, size_t size)
{
	size_t n = read_proc(t, "auxv", buf, size);
	if (!tracer_opts->keep_vdso)
		auxv_show_program_vdso(buf, n, vdso_ehdr(t->proc));
	return n;
}

static void xfer_threads(const char *range)
{
	static char xml[PACKET_MAX];
	size_t n = (size_t)snprintf(xml, sizeof(xml), "<?xml version=\"1.0\"?><threads>");
	for (struct task *t = sched_first(); t && n < sizeof(xml) - 200; t = t->next) {
		if ((t->state != TASK_STOPPED && t->state != TASK_RUNNING) || !procs_followed(t))
			continue;
		char comm[32] = "", id[40];
		size_t len = read_proc(t, "comm", comm, sizeof(comm) - 1);
		while (len > 0 &&
		       (comm[len - 1] == '\n' || comm[len - 1] == '<' || comm[len - 1] == '&'))
			len--;
		comm[len] = 0;
		for (char *c = comm; *c; c++)
			if (*c == '<' || *c == '&' || *c == '"')
				*c = '_';
		procs_ptid(t, id, sizeof(id));
		n += (size_t)snprintf(xml + n, sizeof(xml) - n,
				      "<thread id=\"%s\" core=\"0\" name=\"%s\"/>", id, comm);
	}
	n += (size_t)snprintf(xml + n, sizeof(xml) - n, "</threads>");
	send_xfer(xml, n, range);
}

void xfer_answer(struct task *t, const char *q)
{
	static char buf[PACKET_MAX];
	if (!strncmp(q, "features:read:target.xml:", 25)) {
		send_xfer(target_xml(), strlen(target_xml()), q + 25);
	} else if (!strncmp(q, "auxv:read::", 11)) {
		send_xfer(buf, program_auxv(t, buf, sizeof(buf)), q + 11);
	} else if (!strncmp(q, "exec-file:read:", 15)) {
		char path[64];
		struct task *of = procs_find_process(q + 15); /* the annex: a pid, or none */
		snprintf(path, sizeof(path), "/proc/%d/exe", (of ? of : t)->tid);
		ssize_t n = readlink(path, buf, sizeof(buf) - 1);
		const char *range = strchr(q + 15, ':');
		send_xfer(buf, n > 0 ? (size_t)n : 0, range ? range + 1 : "0,0");
	} else if (!strncmp(q, "threads:read::", 14)) {
		xfer_threads(q + 14);
	} else {
		server_send("", 0);
	}
}
