/* Subcommands that the command line (main.c) runs but other folders implement: the
 * supervisor declares them so that it depends on no header of theirs
 * (tests/check_includes.py). */
#ifndef DETRUN_SUPERVISOR_COMMANDS_H
#define DETRUN_SUPERVISOR_COMMANDS_H

#include <stddef.h>

#include "common/options.h"

/* `detrun replicate ...` (replicate/command.c): >= 0 an exit code; -1 run PROGRAM with
 * `opt` (path and argv set). */
int replicate_command(int argc, char **argv, struct tracer_options *opt, char *path,
		      size_t path_len, char ***prog_argv);

#endif
