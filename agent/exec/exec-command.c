/* exec-command: running one shell command for an executor and turning what
 * came back into the reference's result object.
 *
 * The reference runs every command with Popen(shell=True,
 * universal_newlines=True): the captured bytes are decoded as UTF-8 text,
 * "\r\n" and "\r" become "\n", and the result keeps `out.strip() if out
 * else None`. Its decoding is strict, so a script that prints bytes that
 * are not UTF-8 makes the whole call fail with UnicodeDecodeError. We
 * decode with replacement instead (one U+FFFD per invalid sequence, as
 * Python's errors="replace" does): the runner may cut long output in the
 * middle of a character, and a deployment should not fail because a tool
 * printed Latin-1 (docs/executors.md, "Differences"). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"
#include "util/utf8.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* How many continuation bytes a lead byte takes, and the range its first
 * one must be in (the others are always 0x80-0xbf): the well-formed UTF-8
 * table of Unicode 3.9. 0 for a byte that cannot start a sequence. */
static int lead_info(unsigned char b, unsigned char *lo, unsigned char *hi)
{
        *lo = 0x80;
        *hi = 0xbf;
        if (b >= 0xc2 && b <= 0xdf)
                return 1;
        if (b == 0xe0)
                *lo = 0xa0;
        else if (b == 0xed)
                *hi = 0x9f;
        if (b >= 0xe0 && b <= 0xef)
                return 2;
        if (b == 0xf0)
                *lo = 0x90;
        else if (b == 0xf4)
                *hi = 0x8f;
        if (b >= 0xf0 && b <= 0xf4)
                return 3;
        return 0;
}

int exec_text_decode(const char *s, size_t len, StrBuf *out)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;
        int r = 0;

        while (i < len && r >= 0) {
                unsigned char lo, hi;
                int need, k = 0;
                size_t j;

                if (u[i] < 0x80) {
                        if (u[i] == '\r') {
                                r = strbuf_putc(out, '\n');
                                i += i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
                        } else {
                                r = strbuf_putc(out, (char)u[i]);
                                i++;
                        }
                        continue;
                }
                need = lead_info(u[i], &lo, &hi);
                for (j = i + 1; k < need && j < len; j++, k++) {
                        if (u[j] < lo || u[j] > hi)
                                break;
                        lo = 0x80;
                        hi = 0xbf;
                }
                /* A bad sequence is replaced as far as it was a valid
                 * beginning (its "maximal subpart"), at least one byte. */
                if (need > 0 && k == need)
                        r = strbuf_append(out, s + i, j - i);
                else
                        r = strbuf_append(out, replacement, 3);
                i = need > 0 ? j : i + 1;
        }
        return r;
}

/* Length of the line break at text[i] as str.splitlines() sees it, 0 if
 * there is none. The text is valid UTF-8. */
static size_t line_break_at(const char *text, size_t len, size_t i)
{
        unsigned char c = (unsigned char)text[i];

        if (c == '\r')
                return i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
        if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e))
                return 1;
        if (c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] == 0x85)
                return 2;
        if (c == 0xe2 && i + 2 < len && (unsigned char)text[i + 1] == 0x80 &&
            ((unsigned char)text[i + 2] == 0xa8 || (unsigned char)text[i + 2] == 0xa9))
                return 3;
        return 0;
}

int exec_text_error_lines(const char *text, size_t len, StrBuf *out)
{
        size_t start = 0, i = 0;
        int r;

        while (start < len) {
                size_t br = 0;
                while (i < len && !(br = line_break_at(text, len, i)))
                        i++;
                if (memmem(text + start, i - start, "ERROR", 5)) {
                        if ((r = strbuf_append(out, text + start, i - start)) < 0 ||
                            (r = strbuf_putc(out, '\n')) < 0)
                                return r;
                }
                i += br;
                start = i;
        }
        return 0;
}

/* Python's str.isspace() set. */
static bool is_py_space(uint32_t c)
{
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
               c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
               c == 0x202f || c == 0x205f || c == 0x3000;
}

int exec_text_result(const char *text, size_t len, json_t **ret)
{
        size_t a = 0, b = len;
        uint32_t cp;
        json_t *v;
        int n;

        if (!text || len == 0) {
                *ret = json_null();
                return 0;
        }
        while (a < b && (n = utf8_decode(text + a, b - a, &cp)) > 0 && is_py_space(cp))
                a += (size_t)n;
        while (b > a) {
                size_t c = b - 1;
                while (c > a && ((unsigned char)text[c] & 0xc0) == 0x80)
                        c--;
                if (utf8_decode(text + c, b - c, &cp) <= 0 || !is_py_space(cp))
                        break;
                b = c;
        }
        v = json_stringn(text + a, b - a);
        if (!v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

static int failure_error(const char *name, const ProcResult *pr, const json_t *partial,
                         BodyCallError *err)
{
        json_t *info = NULL;

        if (pr->failure_kind == PROC_FAIL_TIMEOUT || pr->failure_kind == PROC_FAIL_STOPPED) {
                /* What the command printed before it was ended helps to see
                 * where it hung; there is no exit code to give. */
                info = json_deep_copy(partial);
                if (!info || json_object_set_new(info, "exitCode", json_null()) < 0) {
                        json_decref(info);
                        return -ENOMEM;
                }
        }
        switch (pr->failure_kind) {
        case PROC_FAIL_TIMEOUT:
                return exec_error(err, EXEC_ERROR_TIMEOUT, info, "Script %s timed out: %s", name,
                                  pr->failure);
        case PROC_FAIL_STOPPED:
                return exec_error(err, EXEC_ERROR_STOPPED, info, "Script %s was stopped: %s", name,
                                  pr->failure);
        default:
                return exec_error(err, EXEC_ERROR_SPAWN, info, "Script %s could not be started: %s",
                                  name, pr->failure);
        }
}

static int build_result(const Exec *e, const ExecCommand *c, const ProcResult *pr, json_t **ret)
{
        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        _cleanup_strbuf_ StrBuf err = STRBUF_INIT;
        _cleanup_json_ json_t *result = NULL;
        json_t *jout = NULL, *jerr = NULL;
        int r;

        if (e->capture_stdout &&
            (r = exec_text_decode(pr->out, pr->out ? pr->out_len : 0, &out)) < 0)
                return r;
        if (e->capture_stderr &&
            (r = exec_text_decode(pr->err, pr->err ? pr->err_len : 0, &err)) < 0)
                return r;
        /* The reference appends these lines only when stderr is captured;
         * it crashes when stdout is not (docs/executors.md). */
        if (c->error_lines && e->capture_stdout && e->capture_stderr &&
            (r = exec_text_error_lines(out.data, out.len, &err)) < 0)
                return r;
        result = json_object();
        if (!result)
                return -ENOMEM;
        if ((r = exec_text_result(e->capture_stdout ? out.data : NULL, out.len, &jout)) < 0)
                return r;
        if (json_object_set_new(result, "exitCode", json_integer(pr->exit_code)) < 0 ||
            json_object_set_new(result, "stdout", jout) < 0)
                return -ENOMEM;
        if ((r = exec_text_result(e->capture_stderr ? err.data : NULL, err.len, &jerr)) < 0)
                return r;
        if (json_object_set_new(result, "stderr", jerr) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(result);
        return 0;
}

/* verifyExitcode: 1 with "Script {name} returned error code" (code 100,
 * AdditionalInfo = the result) when it is on and the exit code is not 0. */
static int verify(const Exec *e, const char *name, const json_t *result, BodyCallError *err)
{
        json_t *info;

        if (!e->verify_exitcode || json_integer_value(json_object_get(result, "exitCode")) == 0)
                return 0;
        info = json_deep_copy(result);
        if (!info)
                return -ENOMEM;
        return exec_error(err, EXEC_ERROR_SCRIPT, info, "Script %s returned error code", name);
}

int exec_command(const Exec *e, const ExecCommand *c, const ProcRunner *runner, json_t **ret_result,
                 BodyCallError *ret_err)
{
        _cleanup_free_ char *what = NULL;
        const char *argv[] = {"/bin/sh", "-c", c->shell, NULL};
        ProcRequest req = {
                .argv = argv,
                .cwd = c->cwd,
                .capture_stdout = e->capture_stdout,
                .capture_stderr = e->capture_stderr,
        };
        _cleanup_(proc_result_clear) ProcResult pr = {0};
        _cleanup_json_ json_t *result = NULL;
        int r;

        r = c->step ? asprintf(&what, "script %s (%s)", e->script, c->step)
                    : asprintf(&what, "script %s", e->script);
        if (r < 0) {
                what = NULL;
                return -ENOMEM;
        }
        req.what = what;
        r = runner->run(runner->userdata, &req, &pr);
        if (r < 0)
                return r;
        if ((r = build_result(e, c, &pr, &result)) < 0)
                return r;
        if (pr.failure)
                return failure_error(c->name, &pr, result, ret_err);
        if ((r = verify(e, c->name, result, ret_err)) != 0)
                return r;
        *ret_result = TAKE_PTR(result);
        return 0;
}

int exec_recipe_command(const Exec *e, const char *shell, const char *dir, const char *step,
                        const ProcRunner *runner, json_t **ret_result, BodyCallError *ret_err)
{
        const ExecCommand c = {
                .shell = shell,
                .cwd = dir,
                .step = step,
                .name = e->entry_point,
                .error_lines = true,
        };

        return exec_command(e, &c, runner, ret_result, ret_err);
}
