/* URLs of downloadable files: the reference's kind detection and validity
 * test, and keeping passwords out of messages.
 *
 * The reference reads a URL three ways (files_manager.py at murano-agent
 * 9ae3969): _url() asks urllib.parse.urlsplit() for a scheme or a netloc,
 * _is_git_repository() looks at prefixes and a suffix, and
 * _is_svn_repository() runs re.search() with two patterns. Each is
 * reproduced on the bytes of the URL; every test involved looks at ASCII
 * characters only, so bytes and code points give the same answers. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "files/files-internal.h"
#include "util/utf8.h"

static bool has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* re.search("https?://(.*)/svn/(.*)", url): "http://" or "https://"
 * anywhere, then "/svn/" later on the same line ('.' does not match a
 * newline; the trailing (.*) may match nothing). */
static bool matches_http_svn(const char *url)
{
        for (const char *p = strstr(url, "http"); p; p = strstr(p + 1, "http")) {
                const char *rest = p + 4;
                const char *nl, *svn;

                if (*rest == 's')
                        rest++;
                if (!has_prefix(rest, "://"))
                        continue;
                rest += 3;
                svn = strstr(rest, "/svn/");
                nl = strchr(rest, '\n');
                if (svn && (!nl || svn < nl))
                        return true;
        }
        return false;
}

FilesUrlKind files_url_kind(const char *url)
{
        if (has_prefix(url, "git://") || has_prefix(url, "git+http://") ||
            has_prefix(url, "git+https:/") || has_suffix(url, ".git"))
                return FILES_URL_GIT;
        /* re.search("svn://(.*)"): (.*) may match nothing. */
        if (matches_http_svn(url) || strstr(url, "svn://"))
                return FILES_URL_SVN;
        return FILES_URL_HTTP;
}

static bool is_scheme_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '+' || c == '-' || c == '.';
}

static bool is_alpha(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int files_url_check(const char *url)
{
        _cleanup_free_ char *clean = NULL;
        const char *colon, *rest, *end;
        bool scheme = false, open_br = false, close_br = false;
        size_t n = 0;

        /* urlsplit() (CPython 3.11) first strips leading C0 controls and
         * spaces, and removes every tab, CR and LF. */
        while (*url && (unsigned char)*url <= ' ')
                url++;
        clean = malloc(strlen(url) + 1);
        if (!clean)
                return -ENOMEM;
        for (const char *p = url; *p; p++)
                if (*p != '\t' && *p != '\r' && *p != '\n')
                        clean[n++] = *p;
        clean[n] = 0;

        /* A scheme: an ASCII letter, then scheme characters up to the first
         * ':'. Nothing needs to follow it ("x:" has the scheme "x"). */
        rest = clean;
        colon = strchr(clean, ':');
        if (colon && colon > clean && is_alpha(clean[0])) {
                const char *p = clean;
                while (p < colon && is_scheme_char(*p))
                        p++;
                if (p == colon) {
                        scheme = true;
                        rest = colon + 1;
                }
        }

        /* A netloc is what follows "//" up to '/', '?' or '#'; urlsplit
         * raises for an unbalanced bracket in it, scheme or not. */
        if (!has_prefix(rest, "//"))
                return scheme ? 0 : FILES_URL_NO_LOCATION;
        rest += 2;
        end = rest + strcspn(rest, "/?#");
        for (const char *p = rest; p < end; p++) {
                open_br |= *p == '[';
                close_br |= *p == ']';
        }
        if (open_br != close_br)
                return FILES_URL_BAD_IPV6;
        return scheme || end > rest ? 0 : FILES_URL_NO_LOCATION;
}

/* The userinfo of url's netloc: what precedes the last '@' of the part
 * after "scheme://" up to the next '/', '?' or '#'. */
static bool url_userinfo(const char *url, const char **ret, size_t *ret_len)
{
        const char *start = strstr(url, "://"), *end, *at = NULL;

        if (!start)
                return false;
        start += 3;
        end = start + strcspn(start, "/?#");
        for (const char *p = start; p < end; p++)
                if (*p == '@')
                        at = p;
        if (!at)
                return false;
        *ret = start;
        *ret_len = (size_t)(at - start);
        return true;
}

bool files_url_password(const char *url, const char **ret, size_t *ret_len)
{
        const char *info, *colon;
        size_t len;

        if (!url_userinfo(url, &info, &len))
                return false;
        colon = memchr(info, ':', len);
        if (!colon || colon + 1 == info + len)
                return false;
        *ret = colon + 1;
        *ret_len = (size_t)(info + len - colon - 1);
        return true;
}

char *files_url_mask(const char *url)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        const char *pw;
        size_t pw_len;
        char *s;

        if (!files_url_password(url, &pw, &pw_len))
                return strdup(url);
        if (strbuf_append(&b, url, (size_t)(pw - url)) < 0 || strbuf_puts(&b, "***") < 0 ||
            strbuf_puts(&b, pw + pw_len) < 0 || strbuf_steal(&b, &s) < 0)
                return NULL;
        return s;
}

int files_text_scrub(StrBuf *out, const char *text, size_t len, const char *url)
{
        const char *pw = NULL;
        size_t pw_len = 0;
        size_t i = 0;
        int r;

        if (url && !files_url_password(url, &pw, &pw_len))
                pw = NULL;
        while (i < len) {
                uint32_t cp;
                int n;

                if (pw && len - i >= pw_len && memcmp(text + i, pw, pw_len) == 0) {
                        if ((r = strbuf_puts(out, "***")) < 0)
                                return r;
                        i += pw_len;
                        continue;
                }
                n = utf8_decode(text + i, len - i, &cp);
                if (n < 0 || cp == 0)
                        r = strbuf_putc(out, '?');
                else
                        r = strbuf_append(out, text + i, (size_t)n);
                if (r < 0)
                        return r;
                i += n < 0 ? 1 : (size_t)n;
        }
        return 0;
}

const char *files_url_last_piece(const char *url)
{
        const char *slash = strrchr(url, '/');
        return slash ? slash + 1 : url;
}
