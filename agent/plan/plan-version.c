/* FormatVersion as the reference reads it: semantic_version.Version (2.x).
 *
 * The reference calls Version(plan.get('FormatVersion', '1.0.0')) and turns
 * whatever that raises into an error result with code 1 and str(exception),
 * so the texts below are the library's and Python's, byte for byte:
 *
 *   Version(None)        ValueError  Call either Version('1.2.3') or Version(major=1, ...).
 *   falsy ("" 0 0.0 False [] {})
 *                        ValueError  Invalid empty version string: <repr>
 *   other non-strings    TypeError   expected string or bytes-like object, got '<type>'
 *   no match             ValueError  Invalid version string: <repr>
 *   "01.0.0"             ValueError  Invalid leading zero in major: <repr>   (minor, patch)
 *   "1.0.0-a..b"         ValueError  Invalid empty identifier '' in 'a..b'  (also build)
 *   "1.0.0-01"           ValueError  Invalid leading zero in identifier '01'
 *
 * The pattern is ^(\d+)\.(\d+)\.(\d+)(?:-([0-9a-zA-Z.-]+))?(?:\+([0-9a-zA-Z.-]+))?$
 * where Python's $ also matches before one final newline ("2.0.0\n" is
 * 2.0.0). Python's \d also matches non-ASCII decimal digits; we take ASCII
 * digits only, so a fullwidth "２.０.０" is an invalid version here (a
 * documented difference). Comparison follows semantic versioning: numbers
 * numerically, a prerelease below its release, build metadata ignored. */
#include <errno.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/pyrepr.h"
#include "util/strbuf.h"
#include "util/pyjson.h"

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
               c == '-';
}

static size_t skip_digits(const char *s, size_t len, size_t i)
{
        while (i < len && is_digit(s[i]))
                i++;
        return i;
}

/* Build "<prefix><repr(a)><middle><repr(b)>" as a code 1 error. */
static int fail(PlanError *err, const char *prefix, const char *a, size_t alen, const char *middle,
                const char *b, size_t blen)
{
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;
        char *message;
        int r;

        r = strbuf_puts(&s, prefix);
        if (r >= 0 && a)
                r = pyrepr_string(&s, a, alen);
        if (r >= 0 && middle)
                r = strbuf_puts(&s, middle);
        if (r >= 0 && b)
                r = pyrepr_string(&s, b, blen);
        if (r >= 0)
                r = strbuf_steal(&s, &message);
        if (r < 0)
                return -ENOMEM;
        return plan_error_take(err, PLAN_CODE_EXCEPTION, 0, 0, message);
}

static int fail_value(PlanError *err, const char *prefix, const json_t *v)
{
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;
        char *message;
        int r;

        r = strbuf_puts(&s, prefix);
        if (r >= 0)
                r = pyrepr_repr(v, &s);
        if (r >= 0)
                r = strbuf_steal(&s, &message);
        if (r < 0)
                return -ENOMEM;
        return plan_error_take(err, PLAN_CODE_EXCEPTION, 0, 0, message);
}

/* semantic_version's _validate_identifiers() on one dot-separated part. */
static int check_identifiers(const char *s, size_t len, bool allow_leading_zeroes, PlanError *err)
{
        size_t start = 0;

        for (size_t i = 0; i <= len; i++) {
                size_t n;
                bool numeric = true;

                if (i < len && s[i] != '.')
                        continue;
                n = i - start;
                if (n == 0)
                        return fail(err, "Invalid empty identifier ", "", 0, " in ", s, len);
                for (size_t k = start; k < i; k++)
                        numeric = numeric && is_digit(s[k]);
                if (!allow_leading_zeroes && numeric && s[start] == '0' && n > 1)
                        return fail(err, "Invalid leading zero in identifier ", s + start, n, NULL,
                                    NULL, 0);
                start = i + 1;
        }
        return 0;
}

static bool is_falsy(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_FALSE:
                return true;
        case JSON_INTEGER:
                return json_integer_value(v) == 0;
        case JSON_REAL:
                return json_real_value(v) == 0.0;
        case JSON_ARRAY:
                return json_array_size(v) == 0;
        case JSON_OBJECT:
                return json_object_size(v) == 0;
        case JSON_STRING:
                return json_string_length(v) == 0;
        default:
                return false;
        }
}

int plan_version_parse(const json_t *value, PlanVersion *ret, PlanError *err)
{
        static const char *const parts[] = {"major", "minor", "patch"};
        const char *s = "1.0.0", *num[3], *build = NULL;
        size_t len = strlen(s), numlen[3], i = 0, end, build_len = 0;
        const char *pre = NULL;
        size_t pre_len = 0;
        int r;

        if (value && json_is_null(value))
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "Call either Version('1.2.3') or Version(major=1, ...).");
        if (value && is_falsy(value))
                return fail_value(err, "Invalid empty version string: ", value);
        if (value && !pyjson_is_string(value))
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "expected string or bytes-like object, got '%s'",
                                       pyrepr_type_name(value));
        if (value) {
                s = json_string_value(value);
                len = json_string_length(value);
        }

        end = len > 0 && s[len - 1] == '\n' ? len - 1 : len;
        for (int k = 0; k < 3; k++) {
                size_t j = skip_digits(s, end, i);
                if (j == i || (k < 2 && (j >= end || s[j] != '.')))
                        return fail(err, "Invalid version string: ", s, len, NULL, NULL, 0);
                num[k] = s + i;
                numlen[k] = j - i;
                i = k < 2 ? j + 1 : j;
        }
        if (i < end && s[i] == '-' && i + 1 < end && is_ident_char(s[i + 1])) {
                pre = s + i + 1;
                for (i++; i < end && is_ident_char(s[i]); i++)
                        ;
                pre_len = (size_t)(s + i - pre);
        }
        if (i < end && s[i] == '+' && i + 1 < end && is_ident_char(s[i + 1])) {
                build = s + i + 1;
                for (i++; i < end && is_ident_char(s[i]); i++)
                        ;
                build_len = (size_t)(s + i - build);
        }
        if (i != end)
                return fail(err, "Invalid version string: ", s, len, NULL, NULL, 0);

        for (int k = 0; k < 3; k++)
                if (numlen[k] > 1 && num[k][0] == '0') {
                        char prefix[48];
                        snprintf(prefix, sizeof(prefix), "Invalid leading zero in %s: ", parts[k]);
                        return fail(err, prefix, s, len, NULL, NULL, 0);
                }
        if (pre && (r = check_identifiers(pre, pre_len, false, err)) != 0)
                return r;
        if (build && (r = check_identifiers(build, build_len, true, err)) != 0)
                return r;

        *ret = (PlanVersion){
                .text = s,
                .text_len = end,
                .major = num[0],
                .major_len = numlen[0],
                .minor = num[1],
                .minor_len = numlen[1],
                .patch = num[2],
                .patch_len = numlen[2],
                .prerelease = pre,
                .prerelease_len = pre_len,
        };
        return 0;
}

/* A number without leading zeros against a small one. */
static int cmp_number(const char *digits, size_t len, unsigned n)
{
        unsigned long long v = 0;

        if (len > 12)
                return 1;
        for (size_t i = 0; i < len; i++)
                v = v * 10 + (unsigned)(digits[i] - '0');
        return v < n ? -1 : v > n ? 1 : 0;
}

static int cmp_numbers(const PlanVersion *v, unsigned maj, unsigned min, unsigned pat)
{
        int c = cmp_number(v->major, v->major_len, maj);

        if (c == 0)
                c = cmp_number(v->minor, v->minor_len, min);
        if (c == 0)
                c = cmp_number(v->patch, v->patch_len, pat);
        return c;
}

int plan_version_cmp(const PlanVersion *v, unsigned maj, unsigned min, unsigned pat)
{
        int c = cmp_numbers(v, maj, min, pat);

        if (c == 0 && v->prerelease)
                return -1;
        return c;
}

bool plan_version_lt(const PlanVersion *v, unsigned maj, unsigned min, unsigned pat)
{
        if (v->prerelease && cmp_numbers(v, maj, min, pat) == 0)
                return false;
        return plan_version_cmp(v, maj, min, pat) < 0;
}
