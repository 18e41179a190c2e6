/* A growable byte buffer that is always NUL-terminated. Appends report -ENOMEM
 * rather than aborting; a buffer may carry a size cap, past which appends
 * fail with -E2BIG so that no user-controlled text grows without bound. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "util/macro.h"

typedef struct StrBuf {
        char *data; /* owned; NULL until the first append */
        size_t len;
        size_t cap;
        size_t limit; /* 0 = no limit */
} StrBuf;

#define STRBUF_INIT                                                                                \
        {                                                                                          \
                NULL, 0, 0, 0                                                                      \
        }

int strbuf_append(StrBuf *b, const char *s, size_t n);
int strbuf_puts(StrBuf *b, const char *s);
int strbuf_putc(StrBuf *b, char c);
int strbuf_printf(StrBuf *b, const char *fmt, ...) _printf_(2, 3);
int strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap) _printf_(2, 0);
/* Empty the buffer but keep its memory. */
void strbuf_reset(StrBuf *b);
/* Give the text to the caller (never NULL on success: "" for an empty buffer). */
int strbuf_steal(StrBuf *b, char **ret);
void strbuf_free(StrBuf *b);

static inline void strbuf_freep(StrBuf *b)
{
        strbuf_free(b);
}
#define _cleanup_strbuf_ _cleanup_(strbuf_freep)
