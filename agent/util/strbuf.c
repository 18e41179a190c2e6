/* Growable, NUL-terminated byte buffer (see strbuf.h). */
#include "util/strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int strbuf_reserve(StrBuf *b, size_t extra)
{
        size_t need, cap;
        char *p;

        if (extra > SIZE_MAX - b->len - 1)
                return -ENOMEM;
        need = b->len + extra + 1;
        if (b->limit > 0 && need - 1 > b->limit)
                return -E2BIG;
        if (need <= b->cap)
                return 0;
        cap = b->cap ? b->cap : 64;
        while (cap < need)
                cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        p = realloc(b->data, cap);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->cap = cap;
        return 0;
}

int strbuf_append(StrBuf *b, const char *s, size_t n)
{
        int r = strbuf_reserve(b, n);
        if (r < 0)
                return r;
        if (n > 0)
                memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int strbuf_puts(StrBuf *b, const char *s)
{
        return strbuf_append(b, s, strlen(s));
}

int strbuf_putc(StrBuf *b, char c)
{
        return strbuf_append(b, &c, 1);
}

int strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap)
{
        va_list aq;
        int n, r;

        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0)
                return -EINVAL;
        r = strbuf_reserve(b, (size_t)n);
        if (r < 0)
                return r;
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
        return 0;
}

int strbuf_printf(StrBuf *b, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = strbuf_vprintf(b, fmt, ap);
        va_end(ap);
        return r;
}

void strbuf_reset(StrBuf *b)
{
        b->len = 0;
        if (b->data)
                b->data[0] = '\0';
}

int strbuf_steal(StrBuf *b, char **ret)
{
        if (!b->data) {
                char *e = strdup("");
                if (!e)
                        return -ENOMEM;
                *ret = e;
                return 0;
        }
        *ret = b->data;
        b->data = NULL;
        b->len = b->cap = 0;
        return 0;
}

void strbuf_free(StrBuf *b)
{
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
}
