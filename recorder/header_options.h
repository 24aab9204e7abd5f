/*
 * The run's options in a log's header: the one place that maps them. Record writes them,
 * replay reads them back, a replicate follower compares them with its own: all three go
 * through the list common/options.h generates the options from, so none can forget one.
 */
#ifndef DETRUN_RECORDER_HEADER_OPTIONS_H
#define DETRUN_RECORDER_HEADER_OPTIONS_H

#include <stdbool.h>

#include "common/options.h"
#include "proto/log.pb-c.h"

void header_options_to(Detrun__Log__Header *h, const struct tracer_options *opt);
void header_options_from(const Detrun__Log__Header *h, struct tracer_options *opt);
/* Does the header hold exactly these options? */
bool header_options_equal(const Detrun__Log__Header *h, const struct tracer_options *opt);

#endif
