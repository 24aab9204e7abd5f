/* What the command line (cli/) asks of the debugger: its own arguments, and attaching it. */
#ifndef DETRUN_DEBUGGER_DEBUGGER_H
#define DETRUN_DEBUGGER_DEBUGGER_H

#include <stdbool.h>

/* Called first in main (debugger/): takes detrun's own debugging arguments (--gdb[=PORT],
 * the `debug` subcommand, the hidden re-execution state) out of argv and, when one asks
 * for a debugger, registers it. For `detrun debug` it starts gdb. Exits with a one-line
 * message on bad input. Returns whether a debugger serves this run. */
bool debugger_init(int *argc, char ***argv);

#endif
