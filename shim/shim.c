#include "shim/shim.h"

#include "recorder/fingerprint.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const struct shim_ops passthrough = { .name = "passthrough" };
static const struct shim_ops *active = &passthrough;
static void (*abort_hook)(struct task *t, const char *why);

void shim_set(const struct shim_ops *ops)
{
	active = ops ? ops : &passthrough;
}

const struct shim_ops *shim_get(void)
{
	return active;
}

bool shim_intercepts(void)
{
	return active != &passthrough;
}

void shim_set_abort(void (*abort_run)(struct task *t, const char *why))
{
	abort_hook = abort_run;
}

static bool output_held;

void shim_hold_output(bool held)
{
	output_held = held;
}

bool shim_output_held(void)
{
	return output_held;
}

static const struct shim_outside *outside;

void shim_set_outside(const struct shim_outside *o)
{
	outside = o;
}

const struct shim_outside *shim_outside(void)
{
	return outside;
}

void shim_abort(struct task *t, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (abort_hook)
		abort_hook(t, why);
	fprintf(stderr, "detrun: %s\n", why);
	exit(125);
}

static uint64_t running_digest = FNV64_INIT;

uint64_t shim_digest_event(uint64_t time, int vtid, long nr)
{
	running_digest = shim_digest_step(running_digest, time, vtid, nr);
	return running_digest;
}

uint64_t shim_digest_step(uint64_t digest, uint64_t time, int vtid, long nr)
{
	int64_t event[3] = { (int64_t)time, vtid, nr };
	return fnv64(digest, event, sizeof(event));
}
