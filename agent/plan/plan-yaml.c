/* YAML plans, written by hand, read with libyaml's event API.
 *
 * libyaml's memory rule: every event that yaml_parser_parse() fills must be
 * released with yaml_event_delete(), on every path, before the next call;
 * a failed call fills nothing (the event is zeroed, and deleting it is
 * harmless). The parser itself is released with yaml_parser_delete().
 * jansson's rule: json_*_set_new()/append_new() take the value's reference
 * even when they fail.
 *
 * The document is built with an explicit stack of open collections rather
 * than by recursion, so nesting costs no C stack. What PyYAML's safe_load
 * would accept but we refuse, each with a message and a position: aliases
 * (so no expansion bombs), merge keys, duplicate keys (PyYAML keeps the
 * last), collections as keys, more than one document, non-finite floats and
 * integers outside int64 (JSON cannot carry them), tags other than the
 * standard scalar, map and seq ones, and NUL characters. Keys that resolve
 * to non-strings become the strings json.dumps() would write: 1 -> "1",
 * true -> "true", null -> "null", 1.5 -> "1.5". */
#include "plan/plan.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/gmp-lazy.h"
#include "util/pyjson.h"
#include "util/pyrepr.h"
#include "util/strbuf.h"
#include "util/yaml-lazy.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* How much of an offending scalar an error message quotes. */
#define SCALAR_QUOTE_MAX 40

typedef struct Frame {
        json_t *node; /* borrowed: owned by its parent, or by Builder.root */
        char *key;    /* mapping only: the key whose value comes next; owned */
} Frame;

typedef struct Builder {
        const char *data;
        size_t len;
        unsigned max_depth;
        PlanError *err;
        json_t *root; /* owned */
        Frame *frames;
        size_t depth, cap;
        unsigned documents;
} Builder;

static void builder_done(Builder *b)
{
        for (size_t i = 0; i < b->depth; i++)
                free(b->frames[i].key);
        free(b->frames);
        json_decref(b->root);
}

static void parser_deletep(yaml_parser_t **p)
{
        if (*p)
                yaml_parser_delete(*p);
}

static int fail_at(Builder *b, const yaml_mark_t *mark, const char *fmt, ...) _printf_(3, 4);
static int fail_at(Builder *b, const yaml_mark_t *mark, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;
        int line = (int)mark->line + 1, column = (int)mark->column + 1, r;
        char *message;
        va_list ap;

        va_start(ap, fmt);
        r = strbuf_vprintf(&s, fmt, ap);
        va_end(ap);
        if (r >= 0)
                r = strbuf_printf(&s, " (line %d, column %d)", line, column);
        if (r >= 0)
                r = strbuf_steal(&s, &message);
        if (r < 0)
                return -ENOMEM;
        return plan_error_take(b->err, PLAN_CODE_EXCEPTION, line, column, message);
}

/* "!!int" for the standard tags, the tag as written for the others. */
static const char *short_tag(const char *tag, char *buf, size_t size)
{
        if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
                return tag;
        snprintf(buf, size, "!!%s", tag + strlen(TAG_PREFIX));
        return buf;
}

/* Quote a scalar for a message, shortened when long. */
static int quote_scalar(StrBuf *out, const char *s, size_t len)
{
        if (len <= SCALAR_QUOTE_MAX)
                return pyrepr_string(out, s, len);
        /* Cut on a character boundary so that the quote stays UTF-8. */
        len = SCALAR_QUOTE_MAX - 3;
        while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
                len--;
        int r = pyrepr_string(out, s, len);
        return r < 0 ? r : strbuf_puts(out, "...");
}

/* prefix followed by the scalar's text, quoted as Python would. */
static int fail_scalar(Builder *b, const yaml_event_t *ev, const char *prefix)
{
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;
        int r;

        r = strbuf_puts(&s, prefix);
        if (r >= 0)
                r = quote_scalar(&s, (const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (r < 0)
                return -ENOMEM;
        return fail_at(b, &ev->start_mark, "%s", s.data);
}

static const char *scalar_kind(const PlanScalar *sc)
{
        switch (sc->kind) {
        case PLAN_SCALAR_NULL:
                return "null";
        case PLAN_SCALAR_BOOL:
                return "a boolean";
        case PLAN_SCALAR_INT:
        case PLAN_SCALAR_FLOAT:
                return "a number";
        case PLAN_SCALAR_STR:
        default:
                return "a string";
        }
}

/* Give value (a new reference) to the open collection, or make it the root. */
static int attach(Builder *b, json_t *value)
{
        Frame *top;
        int r;

        if (!value)
                return -ENOMEM;
        if (b->depth == 0) {
                b->root = value;
                return 0;
        }
        top = &b->frames[b->depth - 1];
        if (json_is_array(top->node))
                r = json_array_append_new(top->node, value);
        else {
                r = json_object_set_new(top->node, top->key, value);
                free(top->key);
                top->key = NULL;
        }
        return r < 0 ? -ENOMEM : 0;
}

static bool expecting_key(const Builder *b)
{
        return b->depth > 0 && json_is_object(b->frames[b->depth - 1].node) &&
               !b->frames[b->depth - 1].key;
}

static int on_collection(Builder *b, const yaml_event_t *ev, bool mapping)
{
        const char *tag =
                (const char *)(mapping ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
        const char *what = mapping ? "mapping" : "sequence";
        json_t *node;
        char tagbuf[64];
        int r;

        if (tag && !streq(tag, "!") && !streq(tag, mapping ? TAG_PREFIX "map" : TAG_PREFIX "seq"))
                return fail_at(b, &ev->start_mark,
                               "Plan uses the YAML tag %s on a %s, which is not supported",
                               short_tag(tag, tagbuf, sizeof(tagbuf)), what);
        if (b->depth == 0 && !mapping)
                return fail_at(b, &ev->start_mark, "Plan is not a YAML mapping (got a sequence)");
        if (expecting_key(b))
                return fail_at(b, &ev->start_mark,
                               "Plan uses a %s as a mapping key, which is not supported", what);
        if (b->depth + 1 > b->max_depth)
                return fail_at(b, &ev->start_mark, "Plan is nested deeper than %u levels",
                               b->max_depth);

        if (b->depth == b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 16;
                Frame *f = realloc(b->frames, cap * sizeof(*f));
                if (!f)
                        return -ENOMEM;
                b->frames = f;
                b->cap = cap;
        }
        node = mapping ? json_object() : json_array();
        r = attach(b, node);
        if (r < 0)
                return r;
        b->frames[b->depth++] = (Frame){.node = node, .key = NULL};
        return 0;
}

/* The string json.dumps() writes for a non-string dict key. */
static char *key_text(const PlanScalar *sc, const char *value, size_t len)
{
        char buf[32];
        char *s = NULL;

        switch (sc->kind) {
        case PLAN_SCALAR_STR:
                return strndup(value, len);
        case PLAN_SCALAR_NULL:
                return strdup("null");
        case PLAN_SCALAR_BOOL:
                return strdup(sc->boolean ? "true" : "false");
        case PLAN_SCALAR_INT:
                if (asprintf(&s, "%" PRId64, sc->integer) < 0)
                        return NULL;
                return s;
        case PLAN_SCALAR_FLOAT:
        default:
                pyjson_float(sc->real, buf);
                return strdup(buf);
        }
}

/* Makes key, which it takes (NULL when it could not be made), the key
 * whose value comes next in the open mapping. */
static int set_key(Builder *b, const yaml_event_t *ev, char *key_in)
{
        Frame *top = &b->frames[b->depth - 1];
        _cleanup_free_ char *key = key_in;

        if (!key)
                return -ENOMEM;
        if (json_object_get(top->node, key)) {
                _cleanup_strbuf_ StrBuf s = STRBUF_INIT;
                if (pyrepr_string(&s, key, strlen(key)) < 0)
                        return -ENOMEM;
                return fail_at(b, &ev->start_mark, "Duplicate key %s", s.data);
        }
        top->key = TAKE_PTR(key);
        return 0;
}

static int on_key(Builder *b, const yaml_event_t *ev, const PlanScalar *sc)
{
        return set_key(b, ev,
                       key_text(sc, (const char *)ev->data.scalar.value, ev->data.scalar.length));
}

static int on_scalar(Builder *b, const yaml_event_t *ev)
{
        const char *value = (const char *)ev->data.scalar.value;
        const char *tag = (const char *)ev->data.scalar.tag;
        size_t len = ev->data.scalar.length;
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        PlanScalar sc;
        json_t *v;

        if (memchr(value, '\0', len))
                return fail_at(b, &ev->start_mark,
                               "Plan contains an escaped NUL character, which is not supported");

        switch (plan_scalar_resolve(tag, value, len, plain, &sc)) {
        case PLAN_SCALAR_OK:
                break;
        case PLAN_SCALAR_NOMEM:
                return -ENOMEM;
        case PLAN_SCALAR_BAD_TAG: {
                char tagbuf[64];
                return fail_at(b, &ev->start_mark,
                               "Plan uses the YAML tag %s, which is not supported",
                               short_tag(tag, tagbuf, sizeof(tagbuf)));
        }
        case PLAN_SCALAR_BAD_VALUE: {
                char tagbuf[64], prefix[128];
                /* Untagged text only gets here as an integer PyYAML
                 * cannot build either, such as 0x_. */
                snprintf(prefix, sizeof(prefix), "Plan has an invalid %s value ",
                         short_tag(tag ? tag : TAG_PREFIX "int", tagbuf, sizeof(tagbuf)));
                return fail_scalar(b, ev, prefix);
        }
        case PLAN_SCALAR_RANGE: {
                /* Python's ints have no bound: the value is kept exactly,
                 * as a key in its decimal text (json.dumps writes int keys
                 * so), up to CPython's 4300-digit conversion limit. The text
                 * matched the integer grammar: digits, signs, x, b, _ and :. */
                int r = b->depth == 0 ? 1 : plan_scalar_bigint(value, len, &v);
                if (r < 0)
                        return r;
                if (r == 0 && expecting_key(b)) {
                        /* The big-integer string is 0xFF and the digits. */
                        char *key = strdup(json_string_value(v) + 1);
                        json_decref(v);
                        return set_key(b, ev, key);
                }
                if (r == 0)
                        return attach(b, v);
                if (r == 2)
                        return fail_at(b, &ev->start_mark,
                                       "Integer beyond 64 bits needs GMP, which cannot be "
                                       "loaded: %s",
                                       gmp_lazy_error());
                if (b->depth > 0)
                        return fail_at(b, &ev->start_mark,
                                       "Integer has more than 4300 digits: %.*s...",
                                       SCALAR_QUOTE_MAX - 3, value);
                if (len > SCALAR_QUOTE_MAX)
                        return fail_at(b, &ev->start_mark, "Integer out of range: %.*s...",
                                       SCALAR_QUOTE_MAX - 3, value);
                return fail_at(b, &ev->start_mark, "Integer out of range: %.*s", (int)len, value);
        }
        case PLAN_SCALAR_MERGE:
        default:
                return fail_at(b, &ev->start_mark,
                               "Plan uses a YAML merge key (<<), which is not supported");
        }

        if (b->depth == 0)
                return fail_at(b, &ev->start_mark, "Plan is not a YAML mapping (got %s)",
                               scalar_kind(&sc));
        if (expecting_key(b))
                return on_key(b, ev, &sc);

        switch (sc.kind) {
        case PLAN_SCALAR_NULL:
                v = json_null();
                break;
        case PLAN_SCALAR_BOOL:
                v = json_boolean(sc.boolean);
                break;
        case PLAN_SCALAR_INT:
                v = json_integer(sc.integer);
                break;
        case PLAN_SCALAR_FLOAT:
                if (!isfinite(sc.real))
                        return fail_scalar(b, ev, "Plan has a number that JSON cannot carry: ");
                v = json_real(sc.real);
                break;
        case PLAN_SCALAR_STR:
        default:
                v = json_stringn(value, len);
                break;
        }
        return attach(b, v);
}

static int on_event(Builder *b, const yaml_event_t *ev)
{
        switch (ev->type) {
        case YAML_DOCUMENT_START_EVENT:
                if (b->documents++ > 0)
                        return fail_at(b, &ev->start_mark, "Plan has more than one YAML document");
                return 0;
        case YAML_ALIAS_EVENT:
                return fail_at(b, &ev->start_mark,
                               "Plan uses a YAML alias (*%s), which is not supported",
                               (const char *)ev->data.alias.anchor);
        case YAML_SCALAR_EVENT:
                return on_scalar(b, ev);
        case YAML_SEQUENCE_START_EVENT:
                return on_collection(b, ev, false);
        case YAML_MAPPING_START_EVENT:
                return on_collection(b, ev, true);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                b->depth--;
                free(b->frames[b->depth].key);
                b->frames[b->depth].key = NULL;
                return 0;
        default:
                return 0;
        }
}

static int parser_error(Builder *b, const yaml_parser_t *p)
{
        const char *problem = p->problem ? p->problem : "unknown error";
        yaml_mark_t mark = p->problem_mark;

        switch (p->error) {
        case YAML_MEMORY_ERROR:
                return -ENOMEM;
        case YAML_READER_ERROR: {
                /* The reader counts bytes, not lines. */
                size_t off = p->problem_offset < b->len ? p->problem_offset : b->len;
                int line, column;
                plan_text_position(b->data, off, &line, &column);
                return plan_error_setf(b->err, PLAN_CODE_EXCEPTION, line, column,
                                       "Plan is not valid YAML: %s", problem);
        }
        default:
                if (p->context)
                        return fail_at(b, &mark, "Plan is not valid YAML: %s: %s", p->context,
                                       problem);
                return fail_at(b, &mark, "Plan is not valid YAML: %s", problem);
        }
}

int plan_parse_yaml(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err)
{
        _cleanup_(builder_done) Builder b = {
                .data = data,
                .len = len,
                .max_depth = plan_max_depth(lim),
                .err = err,
        };
        _cleanup_(parser_deletep) yaml_parser_t *parser = NULL;
        yaml_parser_t storage;
        int r;

        r = plan_check_text(data, len, lim, err);
        if (r != 0)
                return r;
        if (yaml_lazy_load() < 0)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0,
                                       "YAML plans need libyaml, which cannot be loaded: %s",
                                       yaml_lazy_error());
        if (!yaml_parser_initialize(&storage))
                return -ENOMEM;
        parser = &storage;
        yaml_parser_set_input_string(parser, (const unsigned char *)data, len);

        for (;;) {
                yaml_event_t ev;
                bool end;

                if (!yaml_parser_parse(parser, &ev))
                        return parser_error(&b, parser);
                r = on_event(&b, &ev);
                end = ev.type == YAML_STREAM_END_EVENT;
                yaml_event_delete(&ev);
                if (r != 0)
                        return r;
                if (end)
                        break;
        }
        if (!b.root)
                return plan_error_setf(err, PLAN_CODE_EXCEPTION, 0, 0, "Plan is empty");
        *ret = TAKE_PTR(b.root);
        return 0;
}
