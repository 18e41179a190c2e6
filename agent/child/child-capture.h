/* The bounded keeper of one output stream of a child process: it keeps the
 * first limit/2 bytes (the head) and a ring of the last limit - limit/2
 * bytes (the tail), counts everything, and never holds more than the limit,
 * so that a script printing gigabytes costs the agent at most the limit.
 *
 * When bytes were dropped, the finished text is
 *
 *     head + "\n[... N bytes omitted by muranoagent ...]\n" + tail
 *
 * with N the number of bytes dropped from the middle, in decimal. The
 * marker is not counted in the limit. Bytes are kept as they came: no
 * decoding, no stripping. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child/child.h"

typedef struct ChildCapture {
        size_t head_max; /* limit / 2 */
        size_t tail_max; /* limit - limit / 2 */
        char *head;      /* owned; grows up to head_max */
        size_t head_len, head_alloc;
        char *tail; /* owned; linear until full, then a ring whose oldest byte is at tail_start */
        size_t tail_len, tail_alloc, tail_start;
        uint64_t total; /* every byte offered, kept or not */
        bool failed;    /* out of memory once: from then on bytes are only counted */
} ChildCapture;

/* Start empty, keeping at most limit bytes. */
void child_capture_init(ChildCapture *cap, size_t limit);

/* Offer n more bytes of the stream. Returns 0, or -ENOMEM the first time
 * memory runs out; the bytes are counted either way, and after a failure the
 * capture keeps its head and drops everything else (the finished text then
 * says how much was dropped). */
int child_capture_append(ChildCapture *cap, const void *data, size_t n);

/* Build the text (NUL-terminated, never NULL) into *ret and empty the
 * capture. Returns 0, or -ENOMEM with *ret untouched. */
int child_capture_finish(ChildCapture *cap, ChildOutput *ret);

/* Release what the capture holds; it may then be initialised again. */
void child_capture_clear(ChildCapture *cap);
