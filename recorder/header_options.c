#include "recorder/header_options.h"

void header_options_to(Detrun__Log__Header *h, const struct tracer_options *opt)
{
#define TO_HEADER(type, name, comment) h->name = opt->name;
	TRACER_OPTIONS(TO_HEADER)
#undef TO_HEADER
}

void header_options_from(const Detrun__Log__Header *h, struct tracer_options *opt)
{
#define FROM_HEADER(type, name, comment) opt->name = (type)h->name;
	TRACER_OPTIONS(FROM_HEADER)
#undef FROM_HEADER
	if (opt->jobs == 0) /* a log from before --jobs: one task at a time */
		opt->jobs = 1;
}

bool header_options_equal(const Detrun__Log__Header *h, const struct tracer_options *opt)
{
	/* Compared as options, each field in its own type (the seed is signed in the log). */
	struct tracer_options logged;
	header_options_from(h, &logged);
	bool same = true;
#define SAME(type, name, comment) same = same && logged.name == opt->name;
	TRACER_OPTIONS(SAME)
#undef SAME
	return same;
}
