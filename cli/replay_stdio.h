/* The standard descriptors and the terminal a replay gives the group: as recorded. */
#ifndef DETRUN_CLI_REPLAY_STDIO_H
#define DETRUN_CLI_REPLAY_STDIO_H

#include <stdbool.h>

#include "recorder/log.h"

/* A terminal, or a pipe or socket whose other end is outside the group. */
bool outside_channel(int fd);

/* Sets up the controlling terminal as recorded (none, or a warning where one is missing)
 * and descriptors 0-2 for the replay of the log with header h: standard input as
 * recorded (answered from the log, or the same file), standard output and error of the
 * recorded kind, through a relay to the real ones where those differ (replay_stdio.c),
 * and registers the ones that were outside. Call once, before the group starts. */
void replay_stdio_setup(const Detrun__Log__Header *h);

/* Lets the relay copy the rest and waits for it; run at exit (registered by the setup). */
void replay_stdio_finish(void);

#endif
