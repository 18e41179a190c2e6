/* str methods. Strings are UTF-8; positions the Body sees (find, index,
 * start/end arguments) count code points as Python does, and case mapping
 * and character classes follow Unicode (value-unicode.c), one code point to
 * one code point. */
#include "body/library/library.h"

#include <string.h>

#include "util/utf8.h"

#define METHOD(fn)                                                                                 \
        static BodyValue *fn(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,              \
                             BodyValue *kwargs)

static BodyValue *substr(BodyVM *vm, BodyValue *s, size_t off, size_t len)
{
        if (off == 0 && len == s->str.len)
                return bv_ref(s);
        return bv_str_new(vm, s->str.data + off, len);
}

static int add_piece(BodyVM *vm, BodyValue *list, BodyValue *s, size_t off, size_t len)
{
        BodyValue *p = substr(vm, s, off, len);
        if (!p)
                return -1;
        return bv_list_append_take(vm, list, p);
}

static int need_str(BodyVM *vm, BodyValue *v, const char *what)
{
        if (v->kind != BV_STR) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s %s", what, bv_type_name(v));
                return -1;
        }
        return 0;
}

/* The [start:end] window of the optional start and end arguments, as byte
 * offsets. Returns 1 when start lies beyond the end of the string (find
 * then fails even for an empty needle), 0 otherwise, -1 on error. */
static int window(BodyVM *vm, BodyValue *s, BodyValue *start, BodyValue *end, size_t *ret_a,
                  size_t *ret_b)
{
        int64_t len = (int64_t)s->str.cplen, a = 0, b = len;

        if (start && start->kind != BV_NONE && bv__as_index(vm, start, NULL, &a) < 0)
                return -1;
        if (end && end->kind != BV_NONE && bv__as_index(vm, end, NULL, &b) < 0)
                return -1;
        if (a < 0 && (a += len) < 0)
                a = 0;
        if (b < 0 && (b += len) < 0)
                b = 0;
        if (b > len)
                b = len;
        if (a > len)
                return 1;
        if (b < a)
                b = a;
        *ret_a = bv__str_offset(s, (size_t)a);
        *ret_b = bv__str_offset(s, (size_t)b);
        return 0;
}

static const char *search(const char *hay, size_t hlen, const char *needle, size_t nlen,
                          bool reverse)
{
        if (nlen > hlen)
                return NULL;
        if (!reverse)
                return nlen == 0 ? hay : memmem(hay, hlen, needle, nlen);
        for (size_t i = hlen - nlen + 1; i-- > 0;)
                if (memcmp(hay + i, needle, nlen) == 0)
                        return hay + i;
        return NULL;
}

static BodyValue *find_common(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs, const char *name, bool reverse, bool raise)
{
        size_t a, b;
        const char *hit;
        int w;

        if (bv__check_args(vm, name, n, kwargs, 1, 3) < 0 ||
            need_str(vm, args[0], "must be str, not") < 0)
                return NULL;
        w = window(vm, self, n > 1 ? args[1] : NULL, n > 2 ? args[2] : NULL, &a, &b);
        if (w < 0)
                return NULL;
        hit = w ? NULL
                : search(self->str.data + a, b - a, args[0]->str.data, args[0]->str.len, reverse);
        if (!hit) {
                if (raise)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "substring not found");
                return bv_int_new(vm, -1);
        }
        return bv_int_new(vm, (int64_t)bv__str_cp_index(self, (size_t)(hit - self->str.data)));
}

METHOD(m_find)
{
        return find_common(vm, self, args, n, kwargs, "find", false, false);
}

METHOD(m_rfind)
{
        return find_common(vm, self, args, n, kwargs, "rfind", true, false);
}

METHOD(m_index)
{
        return find_common(vm, self, args, n, kwargs, "index", false, true);
}

METHOD(m_rindex)
{
        return find_common(vm, self, args, n, kwargs, "rindex", true, true);
}

METHOD(m_count)
{
        size_t a, b, count = 0;
        BodyValue *sub;
        int w;

        if (bv__check_args(vm, "count", n, kwargs, 1, 3) < 0 ||
            need_str(vm, args[0], "must be str, not") < 0)
                return NULL;
        sub = args[0];
        w = window(vm, self, n > 1 ? args[1] : NULL, n > 2 ? args[2] : NULL, &a, &b);
        if (w < 0)
                return NULL;
        if (w > 0)
                return bv_int_new(vm, 0);
        if (sub->str.len == 0)
                return bv_int_new(
                        vm, (int64_t)(bv__str_cp_index(self, b) - bv__str_cp_index(self, a) + 1));
        while (a + sub->str.len <= b) {
                const char *hit = memmem(self->str.data + a, b - a, sub->str.data, sub->str.len);
                if (!hit)
                        break;
                count++;
                a = (size_t)(hit - self->str.data) + sub->str.len;
        }
        return bv_int_new(vm, (int64_t)count);
}

static BodyValue *starts_ends(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs, const char *name, bool ends)
{
        BodyValue *pfx;
        size_t a, b;
        int w;

        if (bv__check_args(vm, name, n, kwargs, 1, 3) < 0)
                return NULL;
        pfx = args[0];
        if (pfx->kind != BV_STR && pfx->kind != BV_TUPLE)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "%s first arg must be str or a tuple of str, not %s", name,
                                bv_type_name(pfx));
        w = window(vm, self, n > 1 ? args[1] : NULL, n > 2 ? args[2] : NULL, &a, &b);
        if (w != 0)
                return w < 0 ? NULL : bv_bool(false);
        for (size_t i = 0; i < (pfx->kind == BV_TUPLE ? pfx->list.len : 1); i++) {
                BodyValue *p = pfx->kind == BV_TUPLE ? pfx->list.items[i] : pfx;
                if (p->kind != BV_STR)
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "tuple for %s must only contain str, not %s", name,
                                        bv_type_name(p));
                if (p->str.len <= b - a && memcmp(self->str.data + (ends ? b - p->str.len : a),
                                                  p->str.data, p->str.len) == 0)
                        return bv_bool(true);
        }
        return bv_bool(false);
}

METHOD(m_startswith)
{
        return starts_ends(vm, self, args, n, kwargs, "startswith", false);
}

METHOD(m_endswith)
{
        return starts_ends(vm, self, args, n, kwargs, "endswith", true);
}

/* Is the code point at s[off] in the strip set (NULL: whitespace)? */
static bool in_chars(BodyValue *chars, uint32_t cp)
{
        size_t off = 0, len;

        if (!chars)
                return bv__unicode_isspace(cp);
        while (off < chars->str.len) {
                if (bv__cp_at(chars->str.data, chars->str.len, off, &len) == cp)
                        return true;
                off += len;
        }
        return false;
}

static size_t prev_cp(const char *s, size_t off)
{
        do
                off--;
        while (off > 0 && ((unsigned char)s[off] & 0xc0) == 0x80);
        return off;
}

static BodyValue *strip_common(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs, const char *name, bool left, bool right)
{
        BodyValue *chars = NULL;
        size_t a = 0, b = self->str.len, len;

        if (bv__check_args(vm, name, n, kwargs, 0, 1) < 0)
                return NULL;
        if (n == 1 && args[0]->kind != BV_NONE) {
                if (args[0]->kind != BV_STR)
                        return bv_raise(vm, BV_EXC_TYPE_ERROR, "%s arg must be None or str", name);
                chars = args[0];
        }
        while (left && a < b && in_chars(chars, bv__cp_at(self->str.data, b, a, &len)))
                a += len;
        while (right && b > a) {
                size_t p = prev_cp(self->str.data, b);
                if (!in_chars(chars, bv__cp_at(self->str.data, b, p, NULL)))
                        break;
                b = p;
        }
        return substr(vm, self, a, b - a);
}

METHOD(m_strip)
{
        return strip_common(vm, self, args, n, kwargs, "strip", true, true);
}

METHOD(m_lstrip)
{
        return strip_common(vm, self, args, n, kwargs, "lstrip", true, false);
}

METHOD(m_rstrip)
{
        return strip_common(vm, self, args, n, kwargs, "rstrip", false, true);
}

static int split_args(BodyVM *vm, const char *name, BodyValue **args, size_t n, BodyValue *kwargs,
                      BodyValue **ret_sep, int64_t *ret_max)
{
        static const char *const names[] = {"sep", "maxsplit"};
        BodyValue *a[2];

        if (bv__parse_args(vm, name, args, n, kwargs, names, 2, 0, 2, a) < 0)
                return -1;
        *ret_sep = a[0] && a[0]->kind != BV_NONE ? a[0] : NULL;
        *ret_max = -1;
        if (*ret_sep && need_str(vm, *ret_sep, "must be str or None, not") < 0)
                return -1;
        if (*ret_sep && (*ret_sep)->str.len == 0) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "empty separator");
                return -1;
        }
        if (a[1] && bv__as_index(vm, a[1], NULL, ret_max) < 0)
                return -1;
        return 0;
}

static bool space_at(BodyValue *s, size_t off, size_t *len)
{
        return bv__unicode_isspace(bv__cp_at(s->str.data, s->str.len, off, len));
}

METHOD(m_split)
{
        _cleanup_bv_ BodyValue *list = bv_list_new(vm, 0);
        BodyValue *sep;
        int64_t max;
        size_t off = 0, len = self->str.len, l;

        if (!list || split_args(vm, "split", args, n, kwargs, &sep, &max) < 0)
                return NULL;
        if (sep) {
                for (; max != 0; max--) {
                        const char *hit = memmem(self->str.data + off, len - off, sep->str.data,
                                                 sep->str.len);
                        if (!hit)
                                break;
                        if (add_piece(vm, list, self, off, (size_t)(hit - self->str.data) - off) <
                                    0 ||
                            bv_step(vm) < 0)
                                return NULL;
                        off = (size_t)(hit - self->str.data) + sep->str.len;
                }
                return add_piece(vm, list, self, off, len - off) < 0 ? NULL : TAKE_PTR(list);
        }
        for (;;) {
                size_t start;
                while (off < len && space_at(self, off, &l))
                        off += l;
                if (off >= len)
                        break;
                if (max == 0) {
                        /* The rest, trailing whitespace included, is the last item. */
                        if (add_piece(vm, list, self, off, len - off) < 0)
                                return NULL;
                        break;
                }
                start = off;
                while (off < len && !space_at(self, off, &l))
                        off += l;
                if (add_piece(vm, list, self, start, off - start) < 0 || bv_step(vm) < 0)
                        return NULL;
                if (max > 0)
                        max--;
        }
        return TAKE_PTR(list);
}

METHOD(m_rsplit)
{
        _cleanup_bv_ BodyValue *list = bv_list_new(vm, 0);
        BodyValue *sep;
        int64_t max;
        size_t end = self->str.len;

        if (!list || split_args(vm, "rsplit", args, n, kwargs, &sep, &max) < 0)
                return NULL;
        if (sep) {
                for (; max != 0; max--) {
                        const char *hit =
                                search(self->str.data, end, sep->str.data, sep->str.len, true);
                        size_t at;
                        if (!hit)
                                break;
                        at = (size_t)(hit - self->str.data);
                        if (add_piece(vm, list, self, at + sep->str.len, end - at - sep->str.len) <
                                    0 ||
                            bv_step(vm) < 0)
                                return NULL;
                        end = at;
                }
                if (add_piece(vm, list, self, 0, end) < 0)
                        return NULL;
        } else {
                for (;;) {
                        size_t stop;
                        while (end > 0 && space_at(self, prev_cp(self->str.data, end), NULL))
                                end = prev_cp(self->str.data, end);
                        if (end == 0)
                                break;
                        if (max == 0) {
                                if (add_piece(vm, list, self, 0, end) < 0)
                                        return NULL;
                                break;
                        }
                        stop = end;
                        while (end > 0 && !space_at(self, prev_cp(self->str.data, end), NULL))
                                end = prev_cp(self->str.data, end);
                        if (add_piece(vm, list, self, end, stop - end) < 0 || bv_step(vm) < 0)
                                return NULL;
                        if (max > 0)
                                max--;
                }
        }
        /* Collected right to left. */
        for (size_t i = 0, j = list->list.len; i + 1 < j; i++, j--) {
                BodyValue *t = list->list.items[i];
                list->list.items[i] = list->list.items[j - 1];
                list->list.items[j - 1] = t;
        }
        return TAKE_PTR(list);
}

static bool line_break(uint32_t cp)
{
        return cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c || cp == 0x1c || cp == 0x1d ||
               cp == 0x1e || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

METHOD(m_splitlines)
{
        static const char *const names[] = {"keepends"};
        _cleanup_bv_ BodyValue *list = bv_list_new(vm, 0);
        BodyValue *a[1];
        bool keep;
        size_t off = 0, start = 0, len = self->str.len, l;

        if (!list || bv__parse_args(vm, "splitlines", args, n, kwargs, names, 1, 0, 1, a) < 0)
                return NULL;
        keep = a[0] && bv_truthy(a[0]);
        while (off < len) {
                uint32_t cp = bv__cp_at(self->str.data, len, off, &l);
                size_t eol;
                if (!line_break(cp)) {
                        off += l;
                        continue;
                }
                eol = off;
                off += l;
                if (cp == '\r' && off < len && self->str.data[off] == '\n')
                        off++;
                if (add_piece(vm, list, self, start, (keep ? off : eol) - start) < 0 ||
                    bv_step(vm) < 0)
                        return NULL;
                start = off;
        }
        if (start < len && add_piece(vm, list, self, start, len - start) < 0)
                return NULL;
        return TAKE_PTR(list);
}

METHOD(m_join)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
        BodyValue **items;
        size_t count;
        int r = 0;

        if (bv__check_args(vm, "join", n, kwargs, 1, 1) < 0 ||
            bv__collect(vm, args[0], &items, &count) < 0)
                return NULL;
        for (size_t i = 0; i < count && r >= 0; i++) {
                if (items[i]->kind != BV_STR) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "sequence item %zu: expected str instance, %s found", i,
                                 bv_type_name(items[i]));
                        r = -1;
                        break;
                }
                if (i > 0)
                        r = strbuf_append(&b, self->str.data, self->str.len);
                if (r >= 0)
                        r = strbuf_append(&b, items[i]->str.data, items[i]->str.len);
                if (r < 0)
                        bv__buf_error(vm, r);
        }
        bv__free_items(vm, items, count);
        if (r < 0)
                return NULL;
        return bv_str_from_buf(vm, &b);
}

METHOD(m_replace)
{
        BodyValue *old, *new;
        int64_t max = -1;
        uint64_t hits = 0, total;
        size_t off = 0;
        BodyValue *r;
        char *p;

        if (bv__check_args(vm, "replace", n, kwargs, 2, 3) < 0 ||
            need_str(vm, args[0], "replace() argument 1 must be str, not") < 0 ||
            need_str(vm, args[1], "replace() argument 2 must be str, not") < 0)
                return NULL;
        old = args[0];
        new = args[1];
        if (n == 3 && bv__as_index(vm, args[2], NULL, &max) < 0)
                return NULL;
        /* Count first, so that the size is known (and checked) before
         * anything is allocated. */
        if (old->str.len == 0) {
                hits = self->str.cplen + 1;
                if (max >= 0 && (uint64_t)max < hits)
                        hits = (uint64_t)max;
        } else {
                const char *h;
                while ((max < 0 || hits < (uint64_t)max) &&
                       (h = memmem(self->str.data + off, self->str.len - off, old->str.data,
                                   old->str.len))) {
                        hits++;
                        off = (size_t)(h - self->str.data) + old->str.len;
                }
        }
        if (hits == 0)
                return bv_ref(self);
        total = self->str.len + hits * new->str.len - hits * old->str.len;
        if (new->str.len > 0 && hits > UINT64_MAX / new->str.len)
                total = UINT64_MAX;
        if (bv__check_string_size(vm, total) < 0 || !(r = bv__str_alloc(vm, (size_t)total)))
                return NULL;
        p = r->str.data;
        off = 0;
        for (uint64_t k = 0; k < hits; k++) {
                size_t at;
                if (old->str.len == 0) {
                        at = off;
                        memcpy(p, new->str.data, new->str.len);
                        p += new->str.len;
                        if (off < self->str.len) {
                                size_t l;
                                bv__cp_at(self->str.data, self->str.len, off, &l);
                                memcpy(p, self->str.data + off, l);
                                p += l;
                                off += l;
                        }
                        continue;
                }
                at = (size_t)((const char *)memmem(self->str.data + off, self->str.len - off,
                                                   old->str.data, old->str.len) -
                              self->str.data);
                memcpy(p, self->str.data + off, at - off);
                p += at - off;
                memcpy(p, new->str.data, new->str.len);
                p += new->str.len;
                off = at + old->str.len;
        }
        memcpy(p, self->str.data + off, self->str.len - off);
        bv__str_finish(r);
        return r;
}

METHOD(m_format)
{
        return bv__str_format(vm, self, args, n, kwargs);
}

const BvBuiltinDef bv__str_methods[] = {
        {"count", m_count},
        {"endswith", m_endswith},
        {"find", m_find},
        {"format", m_format},
        {"index", m_index},
        {"join", m_join},
        {"lstrip", m_lstrip},
        {"replace", m_replace},
        {"rfind", m_rfind},
        {"rindex", m_rindex},
        {"rsplit", m_rsplit},
        {"rstrip", m_rstrip},
        {"split", m_split},
        {"splitlines", m_splitlines},
        {"startswith", m_startswith},
        {"strip", m_strip},
        {NULL, NULL},
};
