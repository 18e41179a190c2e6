/* JSON plans, as they arrive from the wire, parsed with jansson.
 *
 * jansson's memory rule: json_loadb() hands out a new reference, which
 * becomes the caller's; values reached through json_object_get() and
 * friends are borrowed. jansson's messages are kept for plain syntax errors
 * and replaced by our own wording where the cause is something an operator
 * should hear in plain words (a duplicate key, a NUL, a huge number).
 *
 * Long runs of string text skip jansson's lexer (plan-json-runs.c); the
 * plain parse of the whole text stays the reference, and decides whenever
 * the shortened text is refused, so that errors and their places are the
 * plain parse's. */
#include "plan/plan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/pyjson.h"
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

/* Whether the six bytes \u0000 appear in data. A backslash is rare in a
 * plan (a Base64 file has none), so each is found with memchr() and looked
 * at: on a 2.8 MB Base64 plan 0.09 ms, where memmem() took 0.6 ms. */
static bool has_escaped_nul(const char *data, size_t len)
{
        for (size_t i = find_byte(data, 0, len, '\\'); i < len;
             i = find_byte(data, i + 1, len, '\\'))
                if (len - i >= 6 && memcmp(data + i, "\\u0000", 6) == 0)
                        return true;
        return false;
}

/* Whether the string that ended just before i is an object key: the next
 * byte that is not JSON white space is ':'. */
static bool is_key(const char *data, size_t i, size_t len)
{
        while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
                i++;
        return i < len && data[i] == ':';
}

/* jansson would stop at its own depth limit, but only after recursing that
 * deep; a scan of the brackets outside strings is cheap and lets us name
 * the limit and the place. The same scan notes the runs of at least
 * min_run bytes of string text that jansson need not lex (plan-json-runs.c):
 * between a string's quotes and escapes, without control characters, and
 * not in an object key (a string followed by ':'). */
static int scan_text(const char *data, size_t len, unsigned max, size_t min_run, PlanRuns *runs,
                     PlanError *err)
{
        bool in_string = false;
        unsigned depth = 0;
        /* The next '"' and '\\' at or after i inside strings (len: none),
         * found with memchr: a large plan is mostly one long string. Each
         * search starts past the last one found, so the scan stays linear. */
        size_t next_quote = 0, next_backslash = 0;
        /* Where a run may start (past an escape's \uXXXX digits), and the
         * number of runs before the current string's. */
        size_t run_from = 0, runs_before = 0;
        int r;

        for (size_t i = 0; i < len; i++) {
                char c = data[i];

                if (in_string) {
                        size_t start, end;

                        if (next_quote < i)
                                next_quote = find_byte(data, i, len, '"');
                        if (next_backslash < i)
                                next_backslash = find_byte(data, i, len, '\\');
                        start = i > run_from ? i : run_from;
                        end = next_backslash < next_quote ? next_backslash : next_quote;
                        if (end < len && start < end && end - start >= min_run &&
                            plan_runs_plain(data + start, end - start)) {
                                r = plan_runs_add(runs, start, end - start);
                                if (r < 0)
                                        return r;
                        }
                        if (next_backslash < next_quote) {
                                i = next_backslash + 1; /* and the loop skips what it escapes */
                                run_from = i + (i < len && data[i] == 'u' ? 5 : 1);
                        } else if (next_quote < len) {
                                i = next_quote;
                                in_string = false;
                                if (runs->n > runs_before && is_key(data, i + 1, len))
                                        runs->n = runs_before;
                        } else
                                break;
                } else if (c == '"') {
                        in_string = true;
                        run_from = i + 1;
                        runs_before = runs->n;
                } else if (c == '[' || c == '{') {
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

/* jansson reports an overflowing number at its end; quote the number.
 * Integers of any size are kept (pyjson_loadb()) unless they pass
 * CPython's 4300-digit limit, which json.loads() keeps too. */
static int number_overflow(const char *data, size_t end, PlanError *err)
{
        size_t start = end, n;
        bool real = false;
        int line, column;
        const char *what;

        while (start > 0 && data[start - 1] != '\0' && strchr("0123456789+-.eE", data[start - 1]))
                start--;
        for (size_t i = start; i < end; i++)
                if (strchr(".eE", data[i]))
                        real = true;
        n = end - start;
        what = real ? "Number out of range" : "Integer has more than 4300 digits";
        plan_text_position(data, start, &line, &column);
        if (n > NUMBER_QUOTE_MAX)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column, "%s: %.*s...", what,
                                       NUMBER_QUOTE_MAX - 3, data + start);
        return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column, "%s: %.*s", what, (int)n,
                               data + start);
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

/* The parse with the runs kept away from jansson: 0 with *ret, 1 when the
 * plain parse must decide (jansson refused the text, or a placeholder went
 * astray), or -ENOMEM. jansson's errors are not used: positions in the
 * shortened text would not be the plan's. With keep, the Files' bodies
 * keep their placeholders, and *ret_kept counts them. */
static int parse_stand_in(const char *data, size_t len, const PlanRuns *runs, bool keep,
                          json_t **ret, size_t *ret_kept)
{
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *text = NULL;
        size_t text_len;
        int r;

        r = plan_runs_stand_in(data, len, runs, &text, &text_len);
        if (r < 0)
                return r;
        doc = json_loadb(text, text_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL,
                         NULL);
        if (!doc)
                return 1;
        r = plan_runs_restore(doc, data, runs, keep, ret_kept);
        if (r != 0)
                return r;
        *ret = TAKE_PTR(doc);
        return 0;
}

struct PlanText {
        char *data;
        PlanRuns runs;
};

PlanText *plan_text_free(PlanText *t)
{
        if (t) {
                free(t->data);
                plan_runs_clear(&t->runs);
                free(t);
        }
        return NULL;
}

int plan_text_pieces(const PlanText *t, const json_t *s,
                     int (*fn)(void *userdata, const char *piece, size_t len), void *userdata)
{
        const char *value = json_string_value(s);
        size_t len = json_string_length(s);

        if (!value)
                return -EINVAL;
        if (!t || !memchr(value, '\0', len))
                return fn(userdata, value, len);
        return plan_runs_pieces(t->data, &t->runs, s, fn, userdata);
}

/* Both parses; with ret_text, the Files' bodies may stay in *text. */
static int parse_json(const char *data, size_t len, const PlanLimits *lim, size_t min_run,
                      json_t **ret, size_t *ret_runs, char **text, PlanText **ret_text,
                      PlanError *err)
{
        _cleanup_(plan_runs_clear) PlanRuns runs = {0};
        _cleanup_json_ json_t *doc = NULL;
        size_t used = 0, kept = 0;
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
        r = scan_text(data, len, plan_max_depth(lim), min_run ? min_run : 1, &runs, err);
        if (r != 0)
                return r;

        /* The placeholders are escaped NULs, so the text must have none of
         * its own (they are refused below, as they always are). */
        if (runs.n > 0 && !has_escaped_nul(data, len)) {
                r = parse_stand_in(data, len, &runs, ret_text != NULL, &doc, &kept);
                if (r < 0)
                        return r;
                if (r == 0)
                        used = runs.n;
        }

        /* Duplicate keys are an error here, where Python keeps the last one:
         * two values for one key in a plan is a mistake worth reporting.
         * NUL characters stay refused (no JSON_ALLOW_NUL): every consumer
         * of plan strings (file names, command lines, the Body) is C text. */
        if (!doc) {
                doc = pyjson_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
                if (!doc)
                        return translate_error(data, len, &je, err);
        }
        if (!json_is_object(doc))
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "Plan is not a JSON object (got %s)", kind(doc));
        if (kept > 0) {
                PlanText *t = malloc(sizeof(*t));

                if (!t)
                        return -ENOMEM;
                *t = (PlanText){.data = TAKE_PTR(*text), .runs = runs};
                runs = (PlanRuns){0};
                *ret_text = t;
        } else if (ret_text)
                *ret_text = NULL;
        if (ret_runs)
                *ret_runs = used;
        *ret = TAKE_PTR(doc);
        return 0;
}

int plan_parse_json_runs(const char *data, size_t len, const PlanLimits *lim, size_t min_run,
                         json_t **ret, size_t *ret_runs, PlanError *err)
{
        return parse_json(data, len, lim, min_run, ret, ret_runs, NULL, NULL, err);
}

int plan_parse_json_kept_runs(char **text, size_t len, const PlanLimits *lim, size_t min_run,
                              json_t **ret, PlanText **ret_text, PlanError *err)
{
        return parse_json(*text, len, lim, min_run, ret, NULL, text, ret_text, err);
}

int plan_parse_json_kept(char **text, size_t len, const PlanLimits *lim, json_t **ret,
                         PlanText **ret_text, PlanError *err)
{
        return plan_parse_json_kept_runs(text, len, lim, PLAN_JSON_LONG_RUN, ret, ret_text, err);
}

int plan_parse_json(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err)
{
        return plan_parse_json_runs(data, len, lim, PLAN_JSON_LONG_RUN, ret, NULL, err);
}
