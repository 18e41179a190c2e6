/* YAML scalars resolved as PyYAML's safe_load resolves them (YAML 1.1).
 *
 * PyYAML decides the type of an untagged plain scalar with regular
 * expressions (yaml/resolver.py) and then builds the value (SafeConstructor
 * in yaml/constructor.py). Both steps are reproduced here by hand, rule for
 * rule, because users copy plans between the Python tools and ours:
 *
 *   null   ~ null Null NULL and the empty scalar
 *   bool   yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF
 *   int    [-+]?0b[01_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+
 *          | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+            (sexagesimal, 1:30 = 90)
 *   float  [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9][0-9_]*([eE][-+][0-9]+)?
 *          | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
 *
 * So 1e3 and 1.0e3 are strings (YAML 1.1 wants a dot and a signed
 * exponent), 0o17 and 08 are strings, 012 is octal 10. Timestamps stay
 * strings: a plan is JSON, which has no dates. */
#include <errno.h>
#include "util/digit.h"
#include "util/gmp-lazy.h"
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/pyjson.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool in_set(char c, const char *set)
{
        return c != '\0' && strchr(set, c) != NULL;
}

static bool equals_any(const char *s, size_t len, const char *const *list)
{
        for (; *list; list++)
                if (strlen(*list) == len && memcmp(*list, s, len) == 0)
                        return true;
        return false;
}

/* Skip "(:[0-5]?[0-9])+" from *i; true when at least one group matched. */
static bool skip_sexagesimal(const char *s, size_t len, size_t *i)
{
        size_t j = *i;
        bool any = false;

        while (j < len && s[j] == ':') {
                size_t k = j + 1, digits = 0;
                while (k + digits < len && is_digit(s[k + digits]))
                        digits++;
                if (digits == 1)
                        j = k + 1;
                else if (digits == 2 && s[k] <= '5')
                        j = k + 2;
                else
                        return false;
                any = true;
        }
        *i = j;
        return any;
}

static size_t skip_set(const char *s, size_t len, size_t i, const char *set)
{
        while (i < len && in_set(s[i], set))
                i++;
        return i;
}

static bool match_int(const char *s, size_t len)
{
        size_t i = 0, j;

        if (i < len && in_set(s[i], "-+"))
                i++;
        if (i >= len)
                return false;
        if (len - i >= 2 && s[i] == '0' && s[i + 1] == 'b')
                return len - i > 2 && skip_set(s, len, i + 2, "01_") == len;
        if (len - i >= 2 && s[i] == '0' && s[i + 1] == 'x')
                return len - i > 2 && skip_set(s, len, i + 2, "0123456789abcdefABCDEF_") == len;
        if (s[i] == '0')
                return len - i == 1 || skip_set(s, len, i + 1, "01234567_") == len;
        if (!in_set(s[i], "123456789"))
                return false;
        j = skip_set(s, len, i + 1, "0123456789_");
        if (j == len)
                return true;
        return skip_sexagesimal(s, len, &j) && j == len;
}

static bool skip_exponent(const char *s, size_t len, size_t *i)
{
        size_t j = *i;

        if (j < len && in_set(s[j], "eE")) {
                if (j + 1 >= len || !in_set(s[j + 1], "-+"))
                        return false;
                j += 2;
                if (j >= len || !is_digit(s[j]))
                        return false;
                while (j < len && is_digit(s[j]))
                        j++;
        }
        *i = j;
        return true;
}

static bool match_float(const char *s, size_t len)
{
        static const char *const inf[] = {".inf", ".Inf", ".INF", NULL};
        static const char *const nan[] = {".nan", ".NaN", ".NAN", NULL};
        size_t i = 0, j;

        if (equals_any(s, len, nan))
                return true;
        if (len > 0 && s[0] == '.' && len > 1 && is_digit(s[1])) {
                j = skip_set(s, len, 1, "0123456789_");
                return skip_exponent(s, len, &j) && j == len;
        }
        if (i < len && in_set(s[i], "-+"))
                i++;
        if (equals_any(s + i, len - i, inf))
                return true;
        if (i >= len || !is_digit(s[i]))
                return false;
        j = skip_set(s, len, i + 1, "0123456789_");
        if (j < len && s[j] == '.') {
                j = skip_set(s, len, j + 1, "0123456789_");
                return skip_exponent(s, len, &j) && j == len;
        }
        if (!skip_sexagesimal(s, len, &j) || j >= len || s[j] != '.')
                return false;
        return skip_set(s, len, j + 1, "0123456789_") == len;
}

/* Copy without underscores, as PyYAML's constructors start. */
static char *strip_underscores(const char *s, size_t len, bool lower)
{
        char *out = malloc(len + 1);
        size_t o = 0;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++)
                if (s[i] != '_')
                        out[o++] = lower && s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
        out[o] = '\0';
        return out;
}

/* Magnitude of s in base; false on a bad digit, an empty string or more
 * than 2^64-1. */
static bool parse_unsigned(const char *s, size_t len, unsigned base, uint64_t *ret)
{
        uint64_t v = 0;

        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                int d = digit_value(s[i]);
                if (d >= (int)base || __builtin_mul_overflow(v, base, &v) ||
                    __builtin_add_overflow(v, (uint64_t)d, &v))
                        return false;
        }
        *ret = v;
        return true;
}

/* SafeConstructor.construct_yaml_int on the text of a matched integer. */
static PlanScalarError construct_int(const char *s, size_t len, int64_t *ret)
{
        _cleanup_free_ char *v = strip_underscores(s, len, false);
        uint64_t mag = 0;
        bool neg = false, ok;
        char *p;

        if (!v)
                return PLAN_SCALAR_NOMEM;
        p = v;
        if (*p == '-')
                neg = true;
        if (*p == '-' || *p == '+')
                p++;
        if (streq(p, "0"))
                ok = true;
        else if (strncmp(p, "0b", 2) == 0)
                ok = parse_unsigned(p + 2, strlen(p + 2), 2, &mag);
        else if (strncmp(p, "0x", 2) == 0)
                ok = parse_unsigned(p + 2, strlen(p + 2), 16, &mag);
        else if (p[0] == '0')
                ok = parse_unsigned(p, strlen(p), 8, &mag);
        else if (strchr(p, ':')) {
                /* Base 60, most significant part first: 1:30 = 90. */
                ok = true;
                for (char *part = p; ok && part;) {
                        char *colon = strchr(part, ':');
                        size_t n = colon ? (size_t)(colon - part) : strlen(part);
                        uint64_t d;
                        ok = parse_unsigned(part, n, 10, &d) &&
                             !__builtin_mul_overflow(mag, 60, &mag) &&
                             !__builtin_add_overflow(mag, d, &mag);
                        part = colon ? colon + 1 : NULL;
                }
        } else
                ok = parse_unsigned(p, strlen(p), 10, &mag);

        /* A digit string that did not fit is out of range; an empty one
         * ("0x_") is what Python's int() refuses. */
        if (!ok) {
                const char *digits = p;
                if (strncmp(p, "0b", 2) == 0 || strncmp(p, "0x", 2) == 0)
                        digits = p + 2;
                return *digits ? PLAN_SCALAR_RANGE : PLAN_SCALAR_BAD_VALUE;
        }
        if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
                return PLAN_SCALAR_RANGE;
        if (neg)
                *ret = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        else
                *ret = (int64_t)mag;
        return PLAN_SCALAR_OK;
}

/* Python's float() of a decimal literal, independent of LC_NUMERIC. */
static bool decimal_to_double(const char *s, double *ret)
{
        static locale_t c_locale;
        size_t i = 0, digits = 0;
        char *end;

        /* float() also takes "inf", "nan" and "infinity"; we never need a
         * non-finite value from that path, so only decimal syntax passes. */
        if (in_set(s[i], "-+"))
                i++;
        while (is_digit(s[i]))
                i++, digits++;
        if (s[i] == '.')
                for (i++; is_digit(s[i]); i++)
                        digits++;
        if (digits == 0)
                return false;
        if (in_set(s[i], "eE")) {
                i++;
                if (in_set(s[i], "-+"))
                        i++;
                if (!is_digit(s[i]))
                        return false;
                while (is_digit(s[i]))
                        i++;
        }
        if (s[i] != '\0')
                return false;
        if (!c_locale)
                c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        *ret = c_locale ? strtod_l(s, &end, c_locale) : strtod(s, &end);
        return true;
}

/* SafeConstructor.construct_yaml_float: lower-cased, underscores dropped. */
static PlanScalarError construct_float(const char *s, size_t len, double *ret)
{
        _cleanup_free_ char *v = strip_underscores(s, len, true);
        double sign = 1.0, value = 0.0;
        char *p;

        if (!v)
                return PLAN_SCALAR_NOMEM;
        p = v;
        if (*p == '-')
                sign = -1.0;
        if (*p == '-' || *p == '+')
                p++;
        if (streq(p, ".inf"))
                value = INFINITY;
        else if (streq(p, ".nan"))
                value = NAN;
        else if (strchr(p, ':')) {
                /* Python adds the parts least significant first, with a
                 * float base that grows by 60; do the same sums. */
                double base = 1.0;
                char *part;
                while ((part = strrchr(p, ':')) || *p) {
                        double d;
                        char *text = part ? part + 1 : p;
                        if (!decimal_to_double(text, &d))
                                return PLAN_SCALAR_BAD_VALUE;
                        value += d * base;
                        base *= 60;
                        if (!part)
                                break;
                        *part = '\0';
                }
        } else if (!decimal_to_double(p, &value))
                return PLAN_SCALAR_BAD_VALUE;
        *ret = sign * value;
        return PLAN_SCALAR_OK;
}

static PlanScalarError construct_bool(const char *s, size_t len, bool *ret)
{
        static const char *const yes[] = {"yes", "true", "on", NULL};
        static const char *const no[] = {"no", "false", "off", NULL};
        char lower[8];

        if (len >= sizeof(lower))
                return PLAN_SCALAR_BAD_VALUE;
        for (size_t i = 0; i < len; i++)
                lower[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
        if (equals_any(lower, len, yes))
                *ret = true;
        else if (equals_any(lower, len, no))
                *ret = false;
        else
                return PLAN_SCALAR_BAD_VALUE;
        return PLAN_SCALAR_OK;
}

static PlanScalarError resolve_plain(const char *s, size_t len, PlanScalar *ret)
{
        static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const bools[] = {"yes",  "Yes",  "YES",   "no",    "No",    "NO", "true",
                                            "True", "TRUE", "false", "False", "FALSE", "on", "On",
                                            "ON",   "off",  "Off",   "OFF",   NULL};

        if (equals_any(s, len, nulls)) {
                ret->kind = PLAN_SCALAR_NULL;
                return PLAN_SCALAR_OK;
        }
        if (equals_any(s, len, bools)) {
                ret->kind = PLAN_SCALAR_BOOL;
                return construct_bool(s, len, &ret->boolean);
        }
        if (len == 2 && memcmp(s, "<<", 2) == 0)
                return PLAN_SCALAR_MERGE;
        if (match_int(s, len)) {
                ret->kind = PLAN_SCALAR_INT;
                return construct_int(s, len, &ret->integer);
        }
        if (match_float(s, len)) {
                ret->kind = PLAN_SCALAR_FLOAT;
                return construct_float(s, len, &ret->real);
        }
        ret->kind = PLAN_SCALAR_STR;
        return PLAN_SCALAR_OK;
}

PlanScalarError plan_scalar_resolve(const char *tag, const char *value, size_t len, bool plain,
                                    PlanScalar *ret)
{
        const char *name;

        *ret = (PlanScalar){.kind = PLAN_SCALAR_STR};
        /* No tag, or the non-specific "!": PyYAML resolves only plain
         * scalars; quoted and block scalars are strings. */
        if (!tag || streq(tag, "!"))
                return plain ? resolve_plain(value, len, ret) : PLAN_SCALAR_OK;
        if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
                return PLAN_SCALAR_BAD_TAG;
        name = tag + strlen(TAG_PREFIX);
        if (streq(name, "str"))
                return PLAN_SCALAR_OK;
        if (streq(name, "null")) {
                ret->kind = PLAN_SCALAR_NULL;
                return PLAN_SCALAR_OK;
        }
        if (streq(name, "bool")) {
                ret->kind = PLAN_SCALAR_BOOL;
                return construct_bool(value, len, &ret->boolean);
        }
        if (streq(name, "int")) {
                /* The forms an untagged integer may take, also when quoted. */
                if (!match_int(value, len))
                        return PLAN_SCALAR_BAD_VALUE;
                ret->kind = PLAN_SCALAR_INT;
                return construct_int(value, len, &ret->integer);
        }
        if (streq(name, "float")) {
                ret->kind = PLAN_SCALAR_FLOAT;
                return construct_float(value, len, &ret->real);
        }
        return PLAN_SCALAR_BAD_TAG;
}

int plan_scalar_bigint(const char *value, size_t len, json_t **ret)
{
        _cleanup_free_ char *v = strip_underscores(value, len, false);
        void (*gmp_free)(void *, size_t);
        bool neg = false;
        char *p, *digits;
        int base = 10, r = 0;
        mpz_t z, part;

        if (!v)
                return -ENOMEM;
        p = v;
        if (*p == '-')
                neg = true;
        if (*p == '-' || *p == '+')
                p++;
        if (strncmp(p, "0b", 2) == 0 || strncmp(p, "0x", 2) == 0) {
                base = p[1] == 'b' ? 2 : 16;
                p += 2;
        } else if (p[0] == '0') {
                base = 8;
        }
        /* construct_int() has checked the digits; only their count is
         * left to check, for decimal text as int() does. */
        if (base == 10 && !strchr(p, ':') && strlen(p) > 4300)
                return 1;
        if (gmp_lazy_load() < 0)
                return 2;
        mpz_inits(z, part, NULL);
        if (strchr(p, ':')) {
                /* Base 60, most significant part first. */
                for (char *q = p; q;) {
                        char *colon = strchr(q, ':');
                        if (colon)
                                *colon = '\0';
                        mpz_set_str(part, q, 10);
                        mpz_mul_ui(z, z, 60);
                        mpz_add(z, z, part);
                        q = colon ? colon + 1 : NULL;
                }
        } else {
                mpz_set_str(z, p, base);
        }
        if (neg)
                mpz_neg(z, z);
        if (mpz_sizeinbase(z, 10) > 4301) {
                mpz_clears(z, part, NULL);
                return 1;
        }
        digits = mpz_get_str(NULL, 10, z);
        mpz_clears(z, part, NULL);
        *ret = pyjson_bigint_new(digits, strlen(digits));
        if (!*ret)
                r = -ENOMEM;
        mp_get_memory_functions(NULL, NULL, &gmp_free);
        gmp_free(digits, strlen(digits) + 1);
        return r;
}
