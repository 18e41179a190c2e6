/* Plan errors, the checks both parsers share, and reading plan files. */
#include "plan/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"

void plan_error_clear(PlanError *err)
{
        if (!err)
                return;
        free(err->message);
        *err = PLAN_ERROR_INIT;
}

int plan_error_take(PlanError *err, int code, int line, int column, char *message)
{
        if (!err) {
                free(message);
                return PLAN_INVALID;
        }
        plan_error_clear(err);
        err->code = code;
        err->message = message;
        err->line = line;
        err->column = column;
        return PLAN_INVALID;
}

int plan_error_setf(PlanError *err, int code, int line, int column, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *message;
        va_list ap;
        int r;

        if (!err)
                return PLAN_INVALID;
        va_start(ap, fmt);
        r = strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (r >= 0 && line > 0)
                r = strbuf_printf(&b, " (line %d, column %d)", line, column);
        if (r >= 0)
                r = strbuf_steal(&b, &message);
        if (r < 0)
                return -ENOMEM;
        return plan_error_take(err, code, line, column, message);
}

void plan_text_position(const char *data, size_t offset, int *ret_line, int *ret_column)
{
        int line = 1, column = 1;
        size_t i = 0;

        while (i < offset) {
                uint32_t cp;
                int n = utf8_decode(data + i, offset - i, &cp);

                if (n <= 0)
                        n = 1;
                if (data[i] == '\n') {
                        line++;
                        column = 1;
                } else
                        column++;
                i += (size_t)n;
        }
        *ret_line = line;
        *ret_column = column;
}

unsigned plan_max_depth(const PlanLimits *lim)
{
        unsigned d = lim ? lim->max_depth : PLAN_LIMITS_DEFAULT.max_depth;

        return d < PLAN_JANSSON_MAX_DEPTH ? d : PLAN_JANSSON_MAX_DEPTH;
}

int plan_check_text(const char *data, size_t len, const PlanLimits *lim, PlanError *err)
{
        size_t max = lim ? lim->max_bytes : PLAN_LIMITS_DEFAULT.max_bytes;
        const char *nul;
        size_t bad = len, i;
        int line, column;

        if (len > max)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "Plan is larger than %zu bytes", max);

        /* Report whichever comes first: a NUL byte is valid UTF-8. */
        nul = memchr(data, '\0', len);
        if (utf8_valid(data, len, &bad))
                bad = len;
        if (nul && (size_t)(nul - data) < bad) {
                size_t off = (size_t)(nul - data);
                plan_text_position(data, off, &line, &column);
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                       "Plan contains a NUL byte at byte offset %zu", off);
        }
        if (bad < len) {
                plan_text_position(data, bad, &line, &column);
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, line, column,
                                       "Plan is not valid UTF-8 at byte offset %zu", bad);
        }

        for (i = 0; i < len; i++)
                if (!strchr(" \t\r\n", data[i]))
                        return 0;
        return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0, "Plan is empty");
}

int plan_parse_file(const char *path, const PlanLimits *lim, json_t **ret, PlanError *err)
{
        size_t max = lim ? lim->max_bytes : PLAN_LIMITS_DEFAULT.max_bytes;
        _cleanup_free_ char *data = NULL;
        size_t len = 0, i;
        int r;

        r = file_read_all(path, max, &data, &len);
        if (r == -EFBIG)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "Plan is larger than %zu bytes", max);
        if (r < 0)
                return r;

        /* JSON whitespace only: anything else that precedes a '{' (a byte
         * order mark, a comment) is YAML, which also reads flow mappings. */
        for (i = 0; i < len && strchr(" \t\r\n", data[i]) && data[i] != '\0'; i++)
                ;
        if (i < len && data[i] == '{')
                return plan_parse_json(data, len, lim, ret, err);
        return plan_parse_yaml(data, len, lim, ret, err);
}
