/* How bench-daemon's floor consumers run a message, the one thing they do
 * differently: the durable floor (bench-daemon-spawn.c) runs its script
 * with posix_spawn(), the contained floor (bench-daemon-contained.c)
 * through the agent's runner, as the agent runs a script, and the
 * compatible floor (bench-daemon-compatible.c) runs the plan's own script
 * from its files laid out as the reference lays them out, contained as
 * the contained floor's. The rest, the consumer itself, is
 * bench-daemon-consumer.c. */
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

/* The contained floor's run of script in the directory dir
 * (bench-daemon-contained.c), which consumer_script_run() calls with the
 * current directory and the compatible floor with the script's folder.
 * Returns as consumer_script_run(). */
int contained_run(const char *id, const char *dir, const char *script, char *out, size_t size);

/* The work of one message between the record that it begins and its result
 * (bench-daemon-consumer.c's handle()), with the plan as it came. The
 * durable and the contained floor's (bench-daemon-consumer.c) runs their
 * prepared echo.sh, or sha.sh for the 2 MiB plan, with
 * consumer_script_run();
 * the compatible floor's puts the plan's files in place, runs its script
 * and removes them. Returns as consumer_script_run(). */
int consumer_plan_run(const char *id, const void *plan, size_t len, char *out, size_t size);

/* The result document of the message id, with its ErrorCode code and the
 * script's output (or why it failed) as its Body, in buf (size bytes).
 * The floors' (bench-daemon-consumer.c) is the smallest the bench
 * accepts; the compatible floor's has every field of the agent's.
 * Returns its length, or -1 when it does not fit. */
int consumer_result(const char *id, int code, const char *output, char *buf, size_t size);

/* After the last message. */
void consumer_script_cleanup(void);
