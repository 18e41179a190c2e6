/* Progress events: their JSON, their description for people, and the
 * bound on output chunks (see progress.h). */
#include "progress/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/macro.h"
#include "util/strbuf.h"
#include "util/utf8.h"

static const char *const kind_names[] = {
        [PROGRESS_ACCEPTED] = "accepted",
        [PROGRESS_SCRIPT_STARTED] = "script_started",
        [PROGRESS_OUTPUT] = "output",
        [PROGRESS_SCRIPT_FINISHED] = "script_finished",
        [PROGRESS_PLAN_FINISHED] = "plan_finished",
};

/* "2026-11-28T08:15:02.120Z" */
static void iso_ms(int64_t ms, char buf[32])
{
        time_t t = (time_t)(ms / 1000);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
                snprintf(buf, 32, "?");
                return;
        }
        snprintf(buf + 19, 13, ".%03dZ", (int)(ms % 1000));
}

static int set_text(json_t *o, const char *key, const char *text, size_t len)
{
        _cleanup_free_ char *clean = NULL;
        size_t n;

        if (!text)
                return json_object_set_new(o, key, json_null());
        if (utf8_sanitize(text, len, &clean, &n) < 0)
                return -1;
        return json_object_set_new(o, key, json_stringn(clean, n));
}

static int add_fields(json_t *o, const ProgressEvent *e)
{
        int r = 0;

        switch (e->kind) {
        case PROGRESS_ACCEPTED:
                break;
        case PROGRESS_SCRIPT_STARTED:
                r |= set_text(o, "script", e->script, e->script ? strlen(e->script) : 0);
                r |= json_object_set_new(o, "pid", json_integer(e->pid));
                break;
        case PROGRESS_OUTPUT:
                r |= set_text(o, "script", e->script, e->script ? strlen(e->script) : 0);
                r |= json_object_set_new(o, "stream",
                                         json_string(e->stream == 2 ? "stderr" : "stdout"));
                r |= set_text(o, "text", e->text ? e->text : "", e->text_len);
                r |= json_object_set_new(o, "dropped", json_integer((json_int_t)e->dropped));
                break;
        case PROGRESS_SCRIPT_FINISHED:
                r |= set_text(o, "script", e->script, e->script ? strlen(e->script) : 0);
                r |= json_object_set_new(o, "exit_code", json_integer(e->exit_code));
                r |= json_object_set_new(o, "duration_ms",
                                         json_integer((json_int_t)e->duration_ms));
                r |= set_text(o, "failure", e->failure, e->failure ? strlen(e->failure) : 0);
                break;
        case PROGRESS_PLAN_FINISHED:
                r |= json_object_set_new(o, "error_code", json_integer(e->error_code));
                r |= json_object_set_new(o, "duration_ms",
                                         json_integer((json_int_t)e->duration_ms));
                break;
        }
        return r;
}

int progress_encode(const ProgressEvent *e, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *o = NULL;
        char when[32];
        char *text;

        if ((unsigned)e->kind >= ELEMENTSOF(kind_names))
                return -EINVAL;
        iso_ms(e->time_ms, when);
        o = json_object();
        if (!o || json_object_set_new(o, "progress", json_integer(PROGRESS_FORMAT)) < 0 ||
            set_text(o, "plan", e->plan ? e->plan : "", e->plan ? strlen(e->plan) : 0) < 0 ||
            json_object_set_new(o, "seq", json_integer((json_int_t)e->seq)) < 0 ||
            json_object_set_new(o, "event", json_string(kind_names[e->kind])) < 0 ||
            json_object_set_new(o, "time", json_string(when)) < 0 || add_fields(o, e) != 0)
                return -ENOMEM;
        text = json_dumps(o, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        *ret = text;
        *ret_len = strlen(text);
        return 0;
}

int progress_batch_add(ProgressBatch *b, const ProgressEvent *e)
{
        _cleanup_free_ char *text = NULL;
        size_t len, need;
        int r;

        r = progress_encode(e, &text, &len);
        if (r < 0)
                return r;
        /* "[" or ",", the event, and room for "]" and a NUL. */
        need = b->len + 1 + len + 2;
        if (need > b->cap) {
                size_t cap = b->cap ? b->cap : 1024;
                char *p;
                while (cap < need)
                        cap *= 2;
                p = realloc(b->text, cap);
                if (!p)
                        return -ENOMEM;
                b->text = p;
                b->cap = cap;
        }
        b->text[b->len++] = b->n == 0 ? '[' : ',';
        memcpy(b->text + b->len, text, len);
        b->len += len;
        b->n++;
        return 0;
}

bool progress_batch_full(const ProgressBatch *b)
{
        return b->n >= PROGRESS_BATCH_EVENTS || b->len >= PROGRESS_BATCH_BYTES;
}

void progress_batch_take(ProgressBatch *b, const char **ret, size_t *ret_len)
{
        *ret = NULL;
        *ret_len = 0;
        if (b->n == 0)
                return;
        b->text[b->len++] = ']';
        b->text[b->len] = '\0';
        *ret = b->text;
        *ret_len = b->len;
        b->len = 0;
        b->n = 0;
}

void progress_batch_clear(ProgressBatch *b)
{
        free(b->text);
        *b = (ProgressBatch){0};
}

bool progress_is_event(const json_t *doc, const char *plan)
{
        const json_t *p = json_object_get(doc, "plan");

        return json_integer_value(json_object_get(doc, "progress")) == PROGRESS_FORMAT &&
               json_is_string(p) && json_is_integer(json_object_get(doc, "seq")) &&
               json_is_string(json_object_get(doc, "event")) &&
               (!plan || streq(json_string_value(p), plan));
}

static const char *get_str(const json_t *doc, const char *key)
{
        const char *s = json_string_value(json_object_get(doc, key));
        return s ? s : "?";
}

static json_int_t get_int(const json_t *doc, const char *key)
{
        return json_integer_value(json_object_get(doc, key));
}

/* Each line of an output chunk, prefixed. */
static int describe_output(StrBuf *b, const char *head, const json_t *doc)
{
        const char *text = get_str(doc, "text");
        const char *prefix = streq(get_str(doc, "stream"), "stderr") ? "!" : "|";
        json_int_t dropped = get_int(doc, "dropped");
        int r = 0;

        if (dropped > 0)
                r = strbuf_printf(b, "%s[%" JSON_INTEGER_FORMAT " bytes of output left out]\n",
                                  head, dropped);
        while (r >= 0 && *text) {
                size_t n = strcspn(text, "\n");
                r = strbuf_printf(b, "%s%s %.*s\n", head, prefix, (int)n, text);
                text += n + (text[n] == '\n');
        }
        return r;
}

int progress_describe(const json_t *doc, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        const char *event = get_str(doc, "event");
        const char *time = get_str(doc, "time");
        char head[320];
        int r;

        /* "08:15:02.120 #3 script deploy " */
        snprintf(head, sizeof(head), "%.12s #%" JSON_INTEGER_FORMAT " ",
                 strlen(time) >= 23 ? time + 11 : time, get_int(doc, "seq"));
        if (streq(event, "accepted"))
                r = strbuf_printf(&b, "%splan %s accepted\n", head, get_str(doc, "plan"));
        else if (streq(event, "script_started"))
                r = strbuf_printf(&b, "%s%s started (pid %" JSON_INTEGER_FORMAT ")\n", head,
                                  get_str(doc, "script"), get_int(doc, "pid"));
        else if (streq(event, "output")) {
                size_t n = strlen(head);
                snprintf(head + n, sizeof(head) - n, "%s ", get_str(doc, "script"));
                r = describe_output(&b, head, doc);
        } else if (streq(event, "script_finished")) {
                const char *failure = json_string_value(json_object_get(doc, "failure"));
                r = strbuf_printf(
                        &b, "%s%s finished: exit code %" JSON_INTEGER_FORMAT " in %.1f s%s%s\n",
                        head, get_str(doc, "script"), get_int(doc, "exit_code"),
                        (double)get_int(doc, "duration_ms") / 1000, failure ? "; " : "",
                        failure ? failure : "");
        } else if (streq(event, "plan_finished"))
                r = strbuf_printf(
                        &b, "%splan %s finished: ErrorCode %" JSON_INTEGER_FORMAT " in %.1f s\n",
                        head, get_str(doc, "plan"), get_int(doc, "error_code"),
                        (double)get_int(doc, "duration_ms") / 1000);
        else
                r = strbuf_printf(&b, "%s%s\n", head, event);
        if (r < 0 || strbuf_steal(&b, ret) < 0)
                return -ENOMEM;
        return 0;
}

void progress_output_add(ProgressOutput *po, const char *data, size_t len)
{
        size_t room = PROGRESS_CHUNK_MAX - po->len;
        size_t n = len < room ? len : room;

        memcpy(po->buf + po->len, data, n);
        po->len += n;
        po->dropped += len - n;
}

bool progress_output_take(ProgressOutput *po, bool final, char *out, size_t *ret_len,
                          uint64_t *ret_dropped)
{
        size_t keep = final ? 0 : utf8_incomplete_tail(po->buf, po->len);
        size_t n = po->len - keep;

        /* Bytes dropped after a kept partial sequence make it useless. */
        if (keep > 0 && po->dropped > 0) {
                po->dropped += keep;
                keep = 0;
        }
        if (n == 0 && po->dropped == 0)
                return false;
        memcpy(out, po->buf, n);
        *ret_len = n;
        *ret_dropped = po->dropped;
        memmove(po->buf, po->buf + n, keep);
        po->len = keep;
        po->dropped = 0;
        return true;
}
