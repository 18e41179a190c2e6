/* How bench-daemon's floor consumers run a message's script, the one thing
 * they do differently: the durable floor (bench-daemon-spawn.c) with
 * posix_spawn(), the contained floor (bench-daemon-contained.c) through the
 * agent's runner, as the agent runs a script. The rest, the consumer
 * itself, is bench-daemon-consumer.c. */
#pragma once

#include <stddef.h>

/* consumer_script_run(): the consumer cannot go on (the script could not
 * be contained as the agent contains it); it stops with exit status 1. */
#define CONSUMER_SCRIPT_FATAL (-2)

/* The program's name, for its messages. */
extern const char consumer_name[];

/* Before the first message. Returns 0, or -1 (said on stderr). */
int consumer_script_setup(void);

/* The script in the current directory, run for the message id as each
 * floor runs it; its stdout goes to out (size bytes, NUL-terminated; the
 * consumer drops a final newline).
 * Returns 0; -1 when the script could not run or failed (the message gets
 * an error result); or CONSUMER_SCRIPT_FATAL (said on stderr). */
int consumer_script_run(const char *id, const char *script, char *out, size_t size);

/* After the last message. */
void consumer_script_cleanup(void);
