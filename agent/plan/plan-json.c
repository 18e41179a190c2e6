/* JSON plans, as they arrive from the wire, parsed with jansson.
 *
 * jansson's memory rule: json_loadb() hands out a new reference, which
 * becomes the caller's; values reached through json_object_get() and
 * friends are borrowed. jansson's messages are kept for plain syntax errors
 * and replaced by our own wording where the cause is something an operator
 * should hear in plain words (a duplicate key, a NUL, a huge number). */
#include "plan/plan.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/pyrepr.h"
#include "util/strbuf.h"

/* How much of an offending number an error message quotes. */
#define NUMBER_QUOTE_MAX 40

/* The offset of the first c in data[from..len), or len. */
static size_t find_byte(const char *data, size_t from, size_t len, char c)
{
        const char *p = memchr(data + from, c, len - from);

        return p ? (size_t)(p - data) : len;
}

/* jansson would stop at its own depth limit, but only after recursing that
 * deep; a scan of the brackets outside strings is cheap and lets us name
 * the limit and the place. */
static int check_depth(const char *data, size_t len, unsigned max, PlanError *err)
{
        bool in_string = false;
        unsigned depth = 0;
        /* The next '"' and '\\' at or after i inside strings (len: none),
         * found with memchr: a large plan is mostly one long string. Each
         * search starts past the last one found, so the scan stays linear. */
        size_t next_quote = 0, next_backslash = 0;

        for (size_t i = 0; i < len; i++) {
                char c = data[i];

                if (in_string) {
                        if (next_quote < i)
                                next_quote = find_byte(data, i, len, '"');
                        if (next_backslash < i)
                                next_backslash = find_byte(data, i, len, '\\');
                        if (next_backslash < next_quote)
                                i = next_backslash + 1; /* and the loop skips what it escapes */
                        else if (next_quote < len) {
                                i = next_quote;
                                in_string = false;
                        } else
                                break;
                } else if (c == '"')
                        in_string = true;
                else if (c == '[' || c == '{') {
                        if (++depth > max) {
                                int line, column;
                                plan_text_position(data, i, &line, &column);
                                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                                       "Plan is nested deeper than %u levels", max);
                        }
                } else if ((c == ']' || c == '}') && depth > 0)
                        depth--;
        }
        return 0;
}

/* jansson reports a duplicate key at the end of the key's string literal;
 * walk back to its opening quote and decode the literal for the message. */
static int duplicate_key(const char *data, size_t end, PlanError *err)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_json_ json_t *key = NULL;
        int line = 0, column = 0, r;
        size_t start = end;
        char *message;

        if (end >= 2 && data[end - 1] == '"') {
                for (size_t i = end - 1; i-- > 0;) {
                        size_t slashes = 0;
                        if (data[i] != '"')
                                continue;
                        while (slashes < i && data[i - 1 - slashes] == '\\')
                                slashes++;
                        if (slashes % 2 == 0) {
                                start = i;
                                break;
                        }
                }
        }
        if (start < end)
                key = json_loadb(data + start, end - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (!key || !json_is_string(key))
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0, "Duplicate key");

        plan_text_position(data, start, &line, &column);
        r = strbuf_puts(&b, "Duplicate key ");
        if (r >= 0)
                r = pyrepr_string(&b, json_string_value(key), json_string_length(key));
        if (r >= 0)
                r = strbuf_printf(&b, " (line %d, column %d)", line, column);
        if (r >= 0)
                r = strbuf_steal(&b, &message);
        if (r < 0)
                return -ENOMEM;
        return plan_error_take(err, PLAN_CODE_EXCEPTION, line, column, message);
}

/* jansson reports an overflowing number at its end; quote the number. */
static int number_overflow(const char *data, size_t end, PlanError *err)
{
        size_t start = end, n;
        bool real = false;
        int line, column;

        while (start > 0 && data[start - 1] != '\0' && strchr("0123456789+-.eE", data[start - 1]))
                start--;
        for (size_t i = start; i < end; i++)
                if (strchr(".eE", data[i]))
                        real = true;
        n = end - start;
        plan_text_position(data, start, &line, &column);
        if (n > NUMBER_QUOTE_MAX)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                       "%s out of range: %.*s...", real ? "Number" : "Integer",
                                       NUMBER_QUOTE_MAX - 3, data + start);
        return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column, "%s out of range: %.*s",
                               real ? "Number" : "Integer", (int)n, data + start);
}

static int translate_error(const char *data, size_t len, const json_error_t *je, PlanError *err)
{
        size_t pos = je->position > 0 && (size_t)je->position <= len ? (size_t)je->position : 0;
        int column = je->column > 0 ? je->column : 1;
        int line = je->line > 0 ? je->line : 1;

        switch (json_error_code(je)) {
        case json_error_out_of_memory:
                return -ENOMEM;
        case json_error_duplicate_key:
                return duplicate_key(data, pos, err);
        case json_error_null_character:
        case json_error_null_byte_in_key:
                return plan_error_setf(
                        err, PLAN_CODE_EXCEPTION, line, column,
                        "Plan contains an escaped NUL character, which is not supported");
        case json_error_numeric_overflow:
                return number_overflow(data, pos, err);
        case json_error_stack_overflow:
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                       "Plan is nested deeper than %d levels",
                                       PLAN_JANSSON_MAX_DEPTH);
        default:
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                       "Plan is not valid JSON: %s", je->text);
        }
}

static const char *kind(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        default:
                return "null";
        }
}

int plan_parse_json(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err)
{
        _cleanup_json_ json_t *doc = NULL;
        json_error_t je;
        int r;

        r = plan_check_text(data, len, lim, err);
        if (r != 0)
                return r;
        /* Python's json.loads() refuses the mark too ("Unexpected UTF-8
         * BOM"); say so rather than jansson's "'[' or '{' expected". */
        if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 1, 1,
                                       "Plan is not valid JSON: unexpected UTF-8 byte order mark");
        r = check_depth(data, len, plan_max_depth(lim), err);
        if (r != 0)
                return r;

        /* Duplicate keys are an error here, where Python keeps the last one:
         * two values for one key in a plan is a mistake worth reporting.
         * NUL characters stay refused (no JSON_ALLOW_NUL): every consumer
         * of plan strings (file names, command lines, the Body) is C text. */
        doc = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        if (!doc)
                return translate_error(data, len, &je, err);
        if (!json_is_object(doc))
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "Plan is not a JSON object (got %s)", kind(doc));
        *ret = TAKE_PTR(doc);
        return 0;
}
