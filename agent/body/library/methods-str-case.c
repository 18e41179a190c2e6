/* str methods about characters and layout: case mapping, the is*()
 * classes, padding (ljust, rjust, center, zfill), partition and
 * expandtabs. */
#include "body/library/library.h"

#include <string.h>

#include "util/utf8.h"

#define METHOD(fn)                                                                                 \
        static BodyValue *fn(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,              \
                             BodyValue *kwargs)

typedef enum CaseOp {
        CASE_LOWER,
        CASE_UPPER,
        CASE_SWAP,
        CASE_TITLE,
        CASE_CAPITALIZE,
} CaseOp;

static bool is_cased(uint32_t cp)
{
        return bv__unicode_lower(cp) != cp || bv__unicode_upper(cp) != cp;
}

static BodyValue *map_case(BodyVM *vm, BodyValue *s, CaseOp op)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
        size_t off = 0, len;
        bool prev_cased = false, first = true;

        while (off < s->str.len) {
                uint32_t cp = bv__cp_at(s->str.data, s->str.len, off, &len), m;
                char enc[4];
                int r;
                switch (op) {
                case CASE_LOWER:
                        m = bv__unicode_lower(cp);
                        break;
                case CASE_UPPER:
                        m = bv__unicode_upper(cp);
                        break;
                case CASE_SWAP:
                        m = bv__unicode_lower(cp);
                        if (m == cp)
                                m = bv__unicode_upper(cp);
                        break;
                case CASE_TITLE:
                        m = prev_cased ? bv__unicode_lower(cp) : bv__unicode_upper(cp);
                        prev_cased = is_cased(cp) || bv__unicode_isalpha(cp);
                        break;
                default:
                        m = first ? bv__unicode_upper(cp) : bv__unicode_lower(cp);
                        break;
                }
                first = false;
                r = strbuf_append(&b, enc, (size_t)utf8_encode(m, enc));
                if (r < 0)
                        return bv__buf_error(vm, r), NULL;
                off += len;
        }
        return bv_str_from_buf(vm, &b);
}

METHOD(m_lower)
{
        if (bv__check_args(vm, "lower", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_LOWER);
}

METHOD(m_casefold)
{
        if (bv__check_args(vm, "casefold", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_LOWER);
}

METHOD(m_upper)
{
        if (bv__check_args(vm, "upper", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_UPPER);
}

METHOD(m_swapcase)
{
        if (bv__check_args(vm, "swapcase", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_SWAP);
}

METHOD(m_title)
{
        if (bv__check_args(vm, "title", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_TITLE);
}

METHOD(m_capitalize)
{
        if (bv__check_args(vm, "capitalize", n, kwargs, 0, 0) < 0)
                return NULL;
        return map_case(vm, self, CASE_CAPITALIZE);
}

typedef bool (*CharClass)(uint32_t cp);

static bool is_alnum(uint32_t cp)
{
        return bv__unicode_isalpha(cp) || bv__unicode_isdigit(cp);
}

static bool is_upper_cp(uint32_t cp)
{
        return bv__unicode_lower(cp) != cp;
}

static bool is_lower_cp(uint32_t cp)
{
        return bv__unicode_upper(cp) != cp;
}

/* True when the string is not empty and every code point is in the class. */
static BodyValue *all_chars(BodyVM *vm, BodyValue *s, size_t n, BodyValue *kwargs, const char *name,
                            CharClass cls)
{
        size_t off = 0, len;

        if (bv__check_args(vm, name, n, kwargs, 0, 0) < 0)
                return NULL;
        if (s->str.len == 0)
                return bv_bool(false);
        while (off < s->str.len) {
                if (!cls(bv__cp_at(s->str.data, s->str.len, off, &len)))
                        return bv_bool(false);
                off += len;
        }
        return bv_bool(true);
}

METHOD(m_isdigit)
{
        return all_chars(vm, self, n, kwargs, "isdigit", bv__unicode_isdigit);
}

METHOD(m_isdecimal)
{
        return all_chars(vm, self, n, kwargs, "isdecimal", bv__unicode_isdigit);
}

METHOD(m_isnumeric)
{
        return all_chars(vm, self, n, kwargs, "isnumeric", bv__unicode_isdigit);
}

METHOD(m_isalpha)
{
        return all_chars(vm, self, n, kwargs, "isalpha", bv__unicode_isalpha);
}

METHOD(m_isalnum)
{
        return all_chars(vm, self, n, kwargs, "isalnum", is_alnum);
}

METHOD(m_isspace)
{
        return all_chars(vm, self, n, kwargs, "isspace", bv__unicode_isspace);
}

/* isupper/islower: at least one cased character, and no cased character of
 * the other case. */
static BodyValue *case_test(BodyVM *vm, BodyValue *s, size_t n, BodyValue *kwargs, const char *name,
                            CharClass wrong, CharClass right)
{
        size_t off = 0, len;
        bool any = false;

        if (bv__check_args(vm, name, n, kwargs, 0, 0) < 0)
                return NULL;
        while (off < s->str.len) {
                uint32_t cp = bv__cp_at(s->str.data, s->str.len, off, &len);
                if (wrong(cp))
                        return bv_bool(false);
                any |= right(cp);
                off += len;
        }
        return bv_bool(any);
}

METHOD(m_isupper)
{
        return case_test(vm, self, n, kwargs, "isupper", is_lower_cp, is_upper_cp);
}

METHOD(m_islower)
{
        return case_test(vm, self, n, kwargs, "islower", is_upper_cp, is_lower_cp);
}

/* ---- layout ---- */

static int fill_arg(BodyVM *vm, BodyValue **args, size_t n, const char *name, size_t max,
                    int64_t *width, const char **fill, size_t *fill_len)
{
        if (bv__check_args(vm, name, n, NULL, 1, max) < 0 ||
            bv__as_index(vm, args[0], NULL, width) < 0)
                return -1;
        *fill = " ";
        *fill_len = 1;
        if (n == 2) {
                if (args[1]->kind != BV_STR || args[1]->str.cplen != 1) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "The fill character must be exactly one character long");
                        return -1;
                }
                *fill = args[1]->str.data;
                *fill_len = args[1]->str.len;
        }
        return 0;
}

static BodyValue *pad(BodyVM *vm, BodyValue *s, size_t left, size_t right, const char *fill,
                      size_t fill_len)
{
        uint64_t total = s->str.len + ((uint64_t)left + right) * fill_len;
        BodyValue *r;
        char *p;

        if (bv__check_string_size(vm, total) < 0 || !(r = bv__str_alloc(vm, (size_t)total)))
                return NULL;
        p = r->str.data;
        for (size_t i = 0; i < left; i++, p += fill_len)
                memcpy(p, fill, fill_len);
        memcpy(p, s->str.data, s->str.len);
        p += s->str.len;
        for (size_t i = 0; i < right; i++, p += fill_len)
                memcpy(p, fill, fill_len);
        r->str.cplen = s->str.cplen + left + right;
        return r;
}

static BodyValue *justify(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs, const char *name, int where)
{
        int64_t width;
        const char *fill;
        size_t fill_len, extra, left;

        if (bv__no_kwargs(vm, name, kwargs) < 0 ||
            fill_arg(vm, args, n, name, 2, &width, &fill, &fill_len) < 0)
                return NULL;
        if (width <= (int64_t)self->str.cplen)
                return bv_ref(self);
        if ((uint64_t)width > vm->limits.max_string &&
            bv__check_string_size(vm, (uint64_t)width) < 0)
                return NULL;
        extra = (size_t)width - self->str.cplen;
        if (where < 0)
                left = 0;
        else if (where > 0)
                left = extra;
        else /* CPython's centering puts the odd space on the right, mostly. */
                left = extra / 2 + (extra & (size_t)width & 1);
        return pad(vm, self, left, extra - left, fill, fill_len);
}

METHOD(m_ljust)
{
        return justify(vm, self, args, n, kwargs, "ljust", -1);
}

METHOD(m_rjust)
{
        return justify(vm, self, args, n, kwargs, "rjust", 1);
}

METHOD(m_center)
{
        return justify(vm, self, args, n, kwargs, "center", 0);
}

METHOD(m_zfill)
{
        int64_t width;
        const char *fill;
        size_t fill_len, extra;
        BodyValue *r;

        if (bv__no_kwargs(vm, "zfill", kwargs) < 0 ||
            fill_arg(vm, args, n, "zfill", 1, &width, &fill, &fill_len) < 0)
                return NULL;
        if (width <= (int64_t)self->str.cplen)
                return bv_ref(self);
        if (bv__check_string_size(vm, (uint64_t)width) < 0)
                return NULL;
        extra = (size_t)width - self->str.cplen;
        r = pad(vm, self, extra, 0, "0", 1);
        /* A sign moves to the front: "-42" -> "-0042". */
        if (r && self->str.len > 0 && (self->str.data[0] == '-' || self->str.data[0] == '+')) {
                r->str.data[0] = self->str.data[0];
                r->str.data[extra] = '0';
        }
        return r;
}

static BodyValue *partition(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                            BodyValue *kwargs, const char *name, bool reverse)
{
        BodyValue *sep, *parts[3] = {NULL, NULL, NULL}, *r = NULL;
        const char *hit = NULL;
        size_t at;

        if (bv__check_args(vm, name, n, kwargs, 1, 1) < 0)
                return NULL;
        sep = args[0];
        if (sep->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "must be str, not %s", bv_type_name(sep));
        if (sep->str.len == 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "empty separator");
        if (!reverse) {
                hit = memmem(self->str.data, self->str.len, sep->str.data, sep->str.len);
        } else if (sep->str.len <= self->str.len) {
                for (size_t i = self->str.len - sep->str.len + 1; i-- > 0 && !hit;)
                        if (memcmp(self->str.data + i, sep->str.data, sep->str.len) == 0)
                                hit = self->str.data + i;
        }
        if (!hit) {
                BodyValue *empty = bv_str_new(vm, "", 0);
                if (!empty)
                        return NULL;
                parts[0] = reverse ? bv_ref(empty) : bv_ref(self);
                parts[1] = bv_ref(empty);
                parts[2] = reverse ? bv_ref(self) : bv_ref(empty);
                bv_unref(empty);
        } else {
                at = (size_t)(hit - self->str.data);
                parts[0] = bv_str_new(vm, self->str.data, at);
                parts[1] = bv_ref(sep);
                parts[2] = bv_str_new(vm, hit + sep->str.len, self->str.len - at - sep->str.len);
        }
        if (parts[0] && parts[2])
                r = bv_tuple_new(vm, parts, 3);
        for (int i = 0; i < 3; i++)
                bv_unref(parts[i]);
        return r;
}

METHOD(m_partition)
{
        return partition(vm, self, args, n, kwargs, "partition", false);
}

METHOD(m_rpartition)
{
        return partition(vm, self, args, n, kwargs, "rpartition", true);
}

METHOD(m_expandtabs)
{
        static const char *const names[] = {"tabsize"};
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
        BodyValue *a[1];
        int64_t tab = 8;
        size_t col = 0, off = 0, len;

        if (bv__parse_args(vm, "expandtabs", args, n, kwargs, names, 1, 0, 1, a) < 0)
                return NULL;
        if (a[0] && bv__as_index(vm, a[0], NULL, &tab) < 0)
                return NULL;
        while (off < self->str.len) {
                int r = 0;
                bv__cp_at(self->str.data, self->str.len, off, &len);
                if (self->str.data[off] == '\t') {
                        if (tab > 0) {
                                size_t k = (size_t)tab - col % (size_t)tab;
                                if (bv__check_string_size(vm, b.len + k) < 0)
                                        return NULL;
                                for (; k > 0 && r >= 0; k--, col++)
                                        r = strbuf_putc(&b, ' ');
                        }
                } else {
                        r = strbuf_append(&b, self->str.data + off, len);
                        col = self->str.data[off] == '\n' || self->str.data[off] == '\r' ? 0
                                                                                         : col + 1;
                }
                if (r < 0)
                        return bv__buf_error(vm, r), NULL;
                off += len;
        }
        return bv_str_from_buf(vm, &b);
}

const BvBuiltinDef bv__str_case_methods[] = {
        {"capitalize", m_capitalize}, {"casefold", m_casefold},
        {"center", m_center},         {"expandtabs", m_expandtabs},
        {"isalnum", m_isalnum},       {"isalpha", m_isalpha},
        {"isdecimal", m_isdecimal},   {"isdigit", m_isdigit},
        {"islower", m_islower},       {"isnumeric", m_isnumeric},
        {"isspace", m_isspace},       {"isupper", m_isupper},
        {"ljust", m_ljust},           {"lower", m_lower},
        {"partition", m_partition},   {"rjust", m_rjust},
        {"rpartition", m_rpartition}, {"swapcase", m_swapcase},
        {"title", m_title},           {"upper", m_upper},
        {"zfill", m_zfill},           {NULL, NULL},
};
