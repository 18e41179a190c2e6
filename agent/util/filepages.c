/* Giving back an idle process's unwritten file mappings (see filepages.h). */
#include "util/filepages.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "util/fileio.h"
#include "util/macro.h"

/* /proc/self/smaps of an idle daemon is some 50 KB (66 mappings, about
 * 800 bytes each); a process with 80,000 mappings is not one to walk. */
#define SMAPS_MAX (64u << 20)

typedef struct Mapping {
        uintptr_t from, to;
        bool candidate; /* private, unwritable, of a file */
        bool has_rss, has_anon, has_swap;
        uint64_t rss, anon, swap; /* KiB */
} Mapping;

/* Parse hexadecimal digits at *p (at least one, no overflow) and move *p
 * past them. */
static bool parse_hex(const char **p, const char *end, uint64_t *ret)
{
        uint64_t v = 0;
        const char *s = *p;

        for (; s < end && isxdigit((unsigned char)*s); s++) {
                int d = isdigit((unsigned char)*s) ? *s - '0'
                                                   : (tolower((unsigned char)*s) - 'a' + 10);

                if (v > (UINT64_MAX - (uint64_t)d) / 16)
                        return false;
                v = v * 16 + (uint64_t)d;
        }
        if (s == *p)
                return false;
        *p = s;
        *ret = v;
        return true;
}

static bool parse_dec(const char **p, const char *end, uint64_t *ret)
{
        uint64_t v = 0;
        const char *s = *p;

        for (; s < end && isdigit((unsigned char)*s); s++) {
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        if (s == *p)
                return false;
        *p = s;
        *ret = v;
        return true;
}

/* Skip at least one blank. */
static bool skip_blanks(const char **p, const char *end)
{
        const char *s = *p;

        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s == *p)
                return false;
        *p = s;
        return true;
}

/* A mapping's first line: "from-to perms offset major:minor inode
 * [pathname]", the pathname being the rest of the line (it may hold
 * blanks, and ends in " (deleted)" for a file since removed). Returns
 * false when line is not one (a field's line starts with its name). */
static bool parse_header(const char *s, const char *end, Mapping *m)
{
        uint64_t from, to, offset, major, minor, inode;
        const char *perms;

        if (!parse_hex(&s, end, &from) || s == end || *s++ != '-' || !parse_hex(&s, end, &to) ||
            !skip_blanks(&s, end) || end - s < 4)
                return false;
        perms = s;
        s += 4;
        if (!skip_blanks(&s, end) || !parse_hex(&s, end, &offset) || !skip_blanks(&s, end) ||
            !parse_hex(&s, end, &major) || s == end || *s++ != ':' || !parse_hex(&s, end, &minor) ||
            !skip_blanks(&s, end) || !parse_dec(&s, end, &inode))
                return false;
        (void)offset, (void)major, (void)minor;
        *m = (Mapping){.from = (uintptr_t)from, .to = (uintptr_t)to};
        if (from >= to || from != (uintptr_t)from || to != (uintptr_t)to || inode == 0)
                return true;
        if (s < end && !skip_blanks(&s, end))
                return true; /* junk after the inode */
        m->candidate = perms[1] == '-' && perms[3] == 'p' && s < end && *s == '/';
        return true;
}

/* "Name:   N kB": *value for name. */
static void parse_field(const char *s, const char *end, const char *name, bool *has,
                        uint64_t *value)
{
        size_t n = strlen(name);

        if ((size_t)(end - s) <= n || memcmp(s, name, n) != 0 || s[n] != ':')
                return;
        s += n + 1;
        if (!skip_blanks(&s, end) || !parse_dec(&s, end, value))
                return;
        if (end - s != 3 || memcmp(s, " kB", 3) != 0)
                return;
        *has = true;
}

static size_t emit(const Mapping *m, FilePagesFn fn, void *userdata)
{
        if (!m->candidate || !m->has_rss || !m->has_anon || !m->has_swap || m->rss == 0 ||
            m->anon != 0 || m->swap != 0)
                return 0;
        fn(m->from, m->to, m->rss, userdata);
        return 1;
}

size_t filepages_parse(const char *text, size_t len, FilePagesFn fn, void *userdata)
{
        const char *p = text, *end = text + len;
        Mapping m = {0};
        size_t n = 0;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                const char *le = eol ? eol : end;
                Mapping next;

                if (parse_header(p, le, &next)) {
                        n += emit(&m, fn, userdata);
                        m = next;
                } else if (m.candidate) {
                        parse_field(p, le, "Rss", &m.has_rss, &m.rss);
                        parse_field(p, le, "Anonymous", &m.has_anon, &m.anon);
                        parse_field(p, le, "Swap", &m.has_swap, &m.swap);
                }
                p = eol ? eol + 1 : end;
        }
        return n + emit(&m, fn, userdata);
}

static void release_one(uintptr_t from, uintptr_t to, uint64_t rss_kib, void *userdata)
{
        FilePagesStats *st = userdata;

        if (madvise((void *)from, to - from, MADV_DONTNEED) < 0) {
                st->failed++;
                return;
        }
        st->mappings++;
        st->kib += rss_kib;
}

int filepages_release(FilePagesStats *ret)
{
        _cleanup_free_ char *text = NULL;
        FilePagesStats st = {0};
        size_t len;
        int r;

        /* All of it before anything is dropped: a mapping is judged by
         * all its lines, and smaps is made as it is read. */
        r = file_read_all("/proc/self/smaps", SMAPS_MAX, &text, &len);
        if (r < 0)
                return r;
        (void)filepages_parse(text, len, release_one, &st);
        *ret = st;
        return 0;
}
