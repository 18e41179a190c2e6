/* The Body corpus: every distinct Body of the real Murano templates plus the
 * Python semantics they rely on, run through body_run and compared with what
 * CPython 3.11 did with the same Body (the YAML files of tests/data/body,
 * whose expectations tests/data/body/tools/expected.py wrote).
 *
 * One Check test per case. A fake host serves each case's canned script
 * replies and records the calls; the case runs with a fresh temporary
 * directory as its working directory, and `@TMP@` in its Body stands for that
 * directory. The result must equal the expected one both as a JSON value and
 * as json.dumps text, byte for byte; an error must have the expected code,
 * Python class name, message, AdditionalInfo and Body line; the calls and the
 * files written must match too. Random uuid4 values and the temporary
 * directory's path are masked as the Python tool masks them.
 *
 * The corpus files are YAML lists, which plan_parse_yaml (mappings only) does
 * not take, so a small strict libyaml loader lives here. It reads the
 * canonical layout expected.py writes: quoted scalars are strings, plain
 * ones follow PyYAML's rules for null, booleans, integers and floats. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "body/body.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/strbuf.h"
#include "test-lib.h"

#define MAX_FILE    (64u << 20)
#define MAX_NESTING 64

static json_t *corpus;             /* array of every case of every file, in file order */
static char session_dir[PATH_MAX]; /* holds each case's directory; removed at exit */

/* ---- a strict YAML reader: libyaml events to jansson values -------------
 * libyaml's rule: each event yaml_parser_parse fills must be released with
 * yaml_event_delete, and the parser with yaml_parser_delete. */

typedef struct Reader {
        yaml_parser_t parser;
        const char *path;
        char error[512];
} Reader;

static bool matches(const char *s, const char *const *words)
{
        for (; *words; words++)
                if (streq(s, *words))
                        return true;
        return false;
}

/* The plain scalars PyYAML resolves to something other than a string, in
 * the forms expected.py writes (and any other form is refused, rather than
 * read differently from PyYAML). */
static json_t *plain_scalar(Reader *r, const char *s, size_t len, size_t line)
{
        static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const trues[] = {"true", "True", "TRUE", NULL};
        static const char *const falses[] = {"false", "False", "FALSE", NULL};
        static const char *const odd[] = {"yes", "Yes", "YES", "no",  "No",  "NO", "on",
                                          "On",  "ON",  "off", "Off", "OFF", NULL};
        size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0, digits = 0, dot = 0;
        char *end = NULL;

        if (strlen(s) != len)
                goto refuse;
        if (matches(s, nulls))
                return json_null();
        if (matches(s, trues))
                return json_true();
        if (matches(s, falses))
                return json_false();
        if (matches(s, odd) || (len > 0 && s[len - 1] == ':'))
                goto refuse;
        for (size_t j = i; j < len; j++) {
                if (s[j] >= '0' && s[j] <= '9')
                        digits++;
                else if (s[j] == '.')
                        dot++;
                else
                        break;
        }
        if (digits > 0 && dot == 0 && digits == len - i) {
                long long v;
                if (len - i > 1 && s[i] == '0')
                        goto refuse; /* PyYAML reads this as octal */
                errno = 0;
                v = strtoll(s, &end, 10);
                if (errno == ERANGE && !*end) /* beyond 64 bits: util/pyjson.h */
                        return pyjson_bigint_new(s + (s[0] == '+'), len - (s[0] == '+'));
                if (errno || *end)
                        goto refuse;
                return json_integer(v);
        }
        if (digits > 0 && dot == 1 && s[i] != '.') {
                /* [-+]?[0-9]+\.[0-9]*([eE][-+][0-9]+)? */
                const char *e = strpbrk(s, "eE");
                if (e && !((e[1] == '+' || e[1] == '-') && e[2] >= '0' && e[2] <= '9'))
                        goto refuse;
                /* No errno check: glibc reports ERANGE for subnormals such
                 * as 5e-324, which PyYAML reads fine. */
                double d = strtod(s, &end);
                if (*end || !isfinite(d))
                        goto refuse;
                return json_real(d);
        }
        if ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')
                goto refuse; /* numbers in forms expected.py never writes */
        return json_stringn(s, len);
refuse:
        snprintf(r->error, sizeof(r->error),
                 "%s:%zu: plain scalar '%.40s' is not in canonical form", r->path, line, s);
        return NULL;
}

static bool next_event(Reader *r, yaml_event_t *ev)
{
        if (yaml_parser_parse(&r->parser, ev))
                return true;
        snprintf(r->error, sizeof(r->error), "%s:%zu: %s", r->path, r->parser.problem_mark.line + 1,
                 r->parser.problem ? r->parser.problem : "YAML error");
        return false;
}

static json_t *read_node(Reader *r, yaml_event_t *ev, unsigned depth);

static json_t *read_collection(Reader *r, bool mapping, size_t line, unsigned depth)
{
        _cleanup_json_ json_t *out = mapping ? json_object() : json_array();

        if (!out || depth > MAX_NESTING) {
                snprintf(r->error, sizeof(r->error), "%s:%zu: too deep", r->path, line);
                return NULL;
        }
        for (;;) {
                yaml_event_t ev;
                _cleanup_json_ json_t *key = NULL;
                json_t *v;

                if (!next_event(r, &ev))
                        return NULL;
                if (ev.type == (mapping ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT)) {
                        yaml_event_delete(&ev);
                        return TAKE_PTR(out);
                }
                if (mapping) {
                        size_t kline = ev.start_mark.line + 1;
                        key = read_node(r, &ev, depth + 1);
                        if (!key)
                                return NULL;
                        if (!json_is_string(key)) {
                                snprintf(r->error, sizeof(r->error), "%s:%zu: key is not a string",
                                         r->path, kline);
                                return NULL;
                        }
                        if (json_object_get(out, json_string_value(key))) {
                                snprintf(r->error, sizeof(r->error), "%s:%zu: duplicate key '%s'",
                                         r->path, kline, json_string_value(key));
                                return NULL;
                        }
                        if (!next_event(r, &ev))
                                return NULL;
                }
                v = read_node(r, &ev, depth + 1);
                if (!v)
                        return NULL;
                if ((mapping ? json_object_set_new(out, json_string_value(key), v)
                             : json_array_append_new(out, v)) < 0)
                        return NULL;
        }
}

/* Consumes *ev (deletes it on every path). */
static json_t *read_node(Reader *r, yaml_event_t *ev, unsigned depth)
{
        size_t line = ev->start_mark.line + 1;
        json_t *v = NULL;

        switch (ev->type) {
        case YAML_SCALAR_EVENT:
                if (ev->data.scalar.tag)
                        snprintf(r->error, sizeof(r->error), "%s:%zu: tags are not used", r->path,
                                 line);
                else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                        v = plain_scalar(r, (const char *)ev->data.scalar.value,
                                         ev->data.scalar.length, line);
                else
                        v = json_stringn((const char *)ev->data.scalar.value,
                                         ev->data.scalar.length);
                if (!v && !r->error[0])
                        snprintf(r->error, sizeof(r->error), "%s:%zu: not UTF-8", r->path, line);
                yaml_event_delete(ev);
                return v;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
                bool mapping = ev->type == YAML_MAPPING_START_EVENT;
                yaml_event_delete(ev);
                return read_collection(r, mapping, line, depth);
        }
        default:
                snprintf(r->error, sizeof(r->error),
                         "%s:%zu: anchors, aliases and tags are not used", r->path, line);
                yaml_event_delete(ev);
                return NULL;
        }
}

/* The single document of a file; NULL with r->error set on failure. */
static json_t *read_yaml_file(Reader *r)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        json_t *doc = NULL;
        yaml_event_t ev;
        int k;

        if ((k = file_read_all(r->path, MAX_FILE, &text, &len)) < 0) {
                snprintf(r->error, sizeof(r->error), "%s: %s", r->path, strerror(-k));
                return NULL;
        }
        if (!yaml_parser_initialize(&r->parser))
                return NULL;
        yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
        for (;;) {
                if (!next_event(r, &ev))
                        break;
                if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_START_EVENT ||
                    ev.type == YAML_DOCUMENT_END_EVENT) {
                        yaml_event_delete(&ev);
                        continue;
                }
                if (ev.type == YAML_STREAM_END_EVENT) {
                        yaml_event_delete(&ev);
                        if (!doc)
                                doc = json_array(); /* an empty file: no cases */
                        break;
                }
                if (doc) {
                        snprintf(r->error, sizeof(r->error), "%s: more than one document", r->path);
                        yaml_event_delete(&ev);
                        json_decref(TAKE_PTR(doc));
                        break;
                }
                if (!(doc = read_node(r, &ev, 0)))
                        break;
        }
        yaml_parser_delete(&r->parser);
        return doc;
}

static int load_corpus(void)
{
        glob_t g = {0};
        json_t *names = json_object();
        int ret = -1;

        corpus = json_array();
        if (glob(TEST_DATA_DIR "/body/*.yaml", 0, NULL, &g) != 0) {
                fprintf(stderr, "no corpus files in %s/body\n", TEST_DATA_DIR);
                goto out;
        }
        for (size_t i = 0; i < g.gl_pathc; i++) {
                Reader r = {.path = g.gl_pathv[i]};
                _cleanup_json_ json_t *doc = read_yaml_file(&r);
                size_t j;
                json_t *c;

                if (!doc || !json_is_array(doc)) {
                        fprintf(stderr, "%s\n", doc ? "a corpus file must be a list" : r.error);
                        goto out;
                }
                json_array_foreach (doc, j, c) {
                        const char *name = json_string_value(json_object_get(c, "name"));
                        if (!name || json_object_get(names, name) ||
                            !json_is_string(json_object_get(c, "body")) ||
                            !(json_object_get(c, "expect") ||
                              json_object_get(c, "expect_override"))) {
                                fprintf(stderr,
                                        "%s[%zu]: missing or duplicate name, body or expect\n",
                                        r.path, j);
                                goto out;
                        }
                        json_object_set_new(names, name, json_true());
                        json_array_append(corpus, c);
                }
        }
        ret = 0;
out:
        globfree(&g);
        json_decref(names);
        return ret;
}

/* ---- masks: the same as expected.py's ----------------------------------- */

static bool hex_at(const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
                        return false;
        return true;
}

static bool uuid4_dashed_at(const char *p, size_t left)
{
        return left >= 36 && hex_at(p, 8) && p[8] == '-' && hex_at(p + 9, 4) && p[13] == '-' &&
               p[14] == '4' && hex_at(p + 15, 3) && p[18] == '-' && strchr("89ab", p[19]) &&
               p[19] && hex_at(p + 20, 3) && p[23] == '-' && hex_at(p + 24, 12);
}

static bool uuid4_hex_at(const char *p, size_t left)
{
        return left >= 32 && hex_at(p, 32) && p[12] == '4' && strchr("89ab", p[16]);
}

/* The temporary directory's path becomes @TMP@, then uuid4 texts become
 * @UUID4@ (dashed) or @UUID4HEX@, leftmost first, dashed form first. */
static char *mask_text(const char *s, size_t len, const char *tmp, size_t *ret_len)
{
        _cleanup_strbuf_ StrBuf a = STRBUF_INIT, b = STRBUF_INIT;
        size_t tl = strlen(tmp), i = 0;
        char *out = NULL;

        while (i < len) {
                if (len - i >= tl && memcmp(s + i, tmp, tl) == 0) {
                        ck_assert_int_eq(strbuf_puts(&a, "@TMP@"), 0);
                        i += tl;
                } else
                        ck_assert_int_eq(strbuf_append(&a, s + i++, 1), 0);
        }
        for (i = 0; i < a.len;) {
                if (uuid4_dashed_at(a.data + i, a.len - i)) {
                        ck_assert_int_eq(strbuf_puts(&b, "@UUID4@"), 0);
                        i += 36;
                } else if (uuid4_hex_at(a.data + i, a.len - i)) {
                        ck_assert_int_eq(strbuf_puts(&b, "@UUID4HEX@"), 0);
                        i += 32;
                } else
                        ck_assert_int_eq(strbuf_append(&b, a.data + i++, 1), 0);
        }
        if (ret_len)
                *ret_len = b.len;
        ck_assert_int_eq(strbuf_steal(&b, &out), 0);
        return out;
}

static json_t *mask_json(const json_t *v, const char *tmp)
{
        json_t *out, *x;
        const char *k;
        size_t i, n;

        switch (json_typeof(v)) {
        case JSON_STRING: {
                if (pyjson_bigint_digits(v))
                        return json_deep_copy(v);
                _cleanup_free_ char *s =
                        mask_text(json_string_value(v), json_string_length(v), tmp, &n);
                return json_stringn(s, n);
        }
        case JSON_ARRAY:
                out = json_array();
                json_array_foreach (v, i, x)
                        json_array_append_new(out, mask_json(x, tmp));
                return out;
        case JSON_OBJECT:
                out = json_object();
                json_object_foreach ((json_t *)v, k, x) {
                        _cleanup_free_ char *mk = mask_text(k, strlen(k), tmp, NULL);
                        json_object_set_new(out, mk, mask_json(x, tmp));
                }
                return out;
        default:
                return json_deep_copy(v);
        }
}

/* json.dumps text of v, masked. */
static char *dumps_masked(const json_t *v, const char *tmp)
{
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(pyjson_dumps(v, &text), 0);
        return mask_text(text, strlen(text), tmp, NULL);
}

/* ---- the fake host ------------------------------------------------------ */

typedef struct Fake {
        const json_t *scripts; /* borrowed: the case's replies, by script name */
        json_t *next;          /* script name -> index of its next reply */
        json_t *calls;         /* recorded: {"script", "function", "args", "kwargs"} */
        const char *tmp;
} Fake;

static int fake_call(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        Fake *f = userdata;
        const json_t *replies = json_object_get(f->scripts, call->script), *reply, *r;
        json_int_t idx = json_integer_value(json_object_get(f->next, call->script));

        if (!json_is_array(replies))
                return -ENOENT; /* body_run called a script the plan does not declare */
        json_array_append_new(f->calls,
                              json_pack("{s:s, s:o, s:o, s:o}", "script", call->script, "function",
                                        call->function ? json_string(call->function) : json_null(),
                                        "args", json_deep_copy(call->args), "kwargs",
                                        json_deep_copy(call->kwargs)));
        json_object_set_new(f->next, call->script, json_integer(idx + 1));
        reply = json_array_get(replies, (size_t)idx); /* NULL when they ran out */
        if ((r = json_object_get(reply, "raise"))) {
                const json_t *info = json_object_get(r, "additionalInfo");
                err->code = (int)json_integer_value(json_object_get(r, "code"));
                err->message = strdup(json_string_value(json_object_get(r, "message")));
                err->additional_info = json_is_null(info) || !info ? NULL : json_deep_copy(info);
                return err->message ? 1 : -ENOMEM;
        }
        /* The executor's result, in its key order. */
        if (!(*ret = json_object()))
                return -ENOMEM;
        r = json_object_get(reply, "exitCode");
        json_object_set_new(*ret, "exitCode", r ? json_deep_copy(r) : json_integer(0));
        json_object_set_new(*ret, "stdout",
                            json_deep_copy(json_object_get(reply, "stdout") ?: json_null()));
        json_object_set_new(*ret, "stderr",
                            json_deep_copy(json_object_get(reply, "stderr") ?: json_null()));
        return 0;
}

static const char *fake_cwd(void *userdata)
{
        return ((Fake *)userdata)->tmp;
}

/* ---- the case's temporary directory -------------------------------------- */

static const char *walk_root;
static json_t *walk_files;

static int collect_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;

        if (flag != FTW_F)
                return 0;
        ck_assert_int_eq(file_read_all(path, MAX_FILE, &data, &len), 0);
        json_object_set_new(walk_files, path + strlen(walk_root) + 1,
                            json_stringn(data, len) ?: json_string("<not UTF-8>"));
        return 0;
}

static void write_file(const char *root, const char *name, const char *content, size_t len)
{
        char path[PATH_MAX];

        ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", root, name), (int)sizeof(path));
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(content, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

static char *replace_all(const char *s, const char *from, const char *to)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        const char *p;
        char *out = NULL;

        while ((p = strstr(s, from))) {
                ck_assert_int_eq(strbuf_append(&b, s, (size_t)(p - s)), 0);
                ck_assert_int_eq(strbuf_puts(&b, to), 0);
                s = p + strlen(from);
        }
        ck_assert_int_eq(strbuf_puts(&b, s), 0);
        ck_assert_int_eq(strbuf_steal(&b, &out), 0);
        return out;
}

/* ---- one case ------------------------------------------------------------ */

static void apply_limits(BodyLimits *lim, const json_t *spec, const char *tmp, char **root)
{
        const json_t *v;

        if ((v = json_object_get(spec, "max_steps")))
                lim->max_steps = (uint64_t)json_integer_value(v);
        if ((v = json_object_get(spec, "max_depth")))
                lim->max_depth = (unsigned)json_integer_value(v);
        if ((v = json_object_get(spec, "max_memory")))
                lim->max_memory = (size_t)json_integer_value(v);
        if ((v = json_object_get(spec, "max_string")))
                lim->max_string = (size_t)json_integer_value(v);
        if ((v = json_object_get(spec, "open_root")))
                lim->open_root = *root = replace_all(json_string_value(v), "@TMP@", tmp);
}

static void check_error(const char *name, const BodyOutcome *o, const json_t *want, const char *tmp)
{
        const json_t *info = json_object_get(want, "additionalInfo");
        const json_t *line = json_object_get(want, "line");
        _cleanup_free_ char *msg = NULL;

        ck_assert_msg(o->error_code != 0, "%s: expected error %s, got success", name,
                      json_string_value(json_object_get(want, "type")));
        msg = o->message ? mask_text(o->message, strlen(o->message), tmp, NULL) : strdup("(null)");
        ck_assert_msg(o->error_code == json_integer_value(json_object_get(want, "code")),
                      "%s: error code %d, expected %lld (%s: %s)", name, o->error_code,
                      (long long)json_integer_value(json_object_get(want, "code")), o->exc_type,
                      msg);
        ck_assert_msg(o->exc_type &&
                              streq(o->exc_type, json_string_value(json_object_get(want, "type"))),
                      "%s: exception type %s, expected %s (message: %s)", name, o->exc_type,
                      json_string_value(json_object_get(want, "type")), msg);
        ck_assert_msg(streq(msg, json_string_value(json_object_get(want, "message"))),
                      "%s: message\n  got:      %s\n  expected: %s", name, msg,
                      json_string_value(json_object_get(want, "message")));
        if (info && !json_is_null(info)) {
                _cleanup_json_ json_t *got =
                        o->additional_info ? mask_json(o->additional_info, tmp) : json_null();
                _cleanup_free_ char *g = dumps_masked(got, tmp), *w = dumps_masked(info, tmp);
                ck_assert_msg(json_equal(got, info) && streq(g, w),
                              "%s: additionalInfo\n  got:      %s\n  expected: %s", name, g, w);
        } else
                ck_assert_msg(!o->additional_info || json_is_null(o->additional_info),
                              "%s: unexpected additionalInfo", name);
        if (line)
                ck_assert_msg(o->line == json_integer_value(line),
                              "%s: error line %d, expected %lld (%s)", name, o->line,
                              (long long)json_integer_value(line), msg);
}

static void check_result(const char *name, const BodyOutcome *o, const json_t *want,
                         const char *tmp)
{
        _cleanup_json_ json_t *got = NULL;
        _cleanup_free_ char *text = NULL;
        const char *want_text = json_string_value(json_object_get(want, "result_json"));

        ck_assert_msg(o->error_code == 0, "%s: expected success, got error %d %s: %s (line %d)",
                      name, o->error_code, o->exc_type, o->message, o->line);
        ck_assert_msg(o->value != NULL, "%s: success without a value", name);
        got = mask_json(o->value, tmp);
        text = dumps_masked(o->value, tmp);
        ck_assert_msg(streq(text, want_text), "%s: result\n  got:      %s\n  expected: %s", name,
                      text, want_text);
        ck_assert_msg(json_equal(got, json_object_get(want, "result")),
                      "%s: result is not json_equal to the expected value", name);
}

static void check_files(const char *name, const json_t *c, const json_t *want, const char *tmp)
{
        const json_t *before = json_object_get(c, "files"), *v;
        _cleanup_json_ json_t *written = json_object();
        _cleanup_json_ json_t *expected = json_deep_copy(json_object_get(want, "files"));
        _cleanup_free_ char *g = NULL, *w = NULL;
        const char *k;

        walk_root = tmp;
        walk_files = json_object();
        ck_assert_int_eq(nftw(tmp, collect_entry, 16, FTW_PHYS), 0);
        json_object_foreach (walk_files, k, v) {
                if (json_equal(json_object_get(before, k), v))
                        continue; /* pre-created and left alone */
                _cleanup_free_ char *mk = mask_text(k, strlen(k), tmp, NULL);
                json_object_set_new(written, mk, mask_json(v, tmp));
        }
        json_decref(walk_files);
        walk_files = NULL;
        if (!expected)
                expected = json_object();
        ck_assert_int_eq(pyjson_dumps(written, &g), 0);
        ck_assert_int_eq(pyjson_dumps(expected, &w), 0);
        ck_assert_msg(json_equal(written, expected),
                      "%s: files written\n  got:      %s\n  expected: %s", name, g, w);
}

START_TEST(test_case)
{
        const json_t *c = json_array_get(corpus, (size_t)_i);
        const char *name = json_string_value(json_object_get(c, "name"));
        const json_t *want = json_object_get(c, "expect_override") ?: json_object_get(c, "expect");
        const json_t *scripts = json_object_get(c, "scripts"), *params, *v, *calls;
        const char *k;
        char tmp[PATH_MAX];
        _cleanup_free_ char *body = NULL, *root = NULL, *got_calls = NULL, *want_calls = NULL;
        _cleanup_free_ const char **names = NULL;
        _cleanup_json_ json_t *masked_calls = NULL;
        Fake fake = {.scripts = scripts, .next = json_object(), .calls = json_array(), .tmp = tmp};
        BodyHost host = {.userdata = &fake, .call_script = fake_call, .cwd = fake_cwd};
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        BodyOutcome o = {0};
        size_t n = 0;
        int r;

        ck_assert_int_lt(snprintf(tmp, sizeof(tmp), "%s/case-XXXXXX", session_dir),
                         (int)sizeof(tmp));
        ck_assert_ptr_nonnull(mkdtemp(tmp));
        json_object_foreach ((json_t *)json_object_get(c, "files"), k, v)
                write_file(tmp, k, json_string_value(v), json_string_length(v));

        body = replace_all(json_string_value(json_object_get(c, "body")), "@TMP@", tmp);
        params = json_object_get(c, "parameters");
        names = calloc(json_object_size(scripts) + 1, sizeof(*names));
        ck_assert_ptr_nonnull(names);
        json_object_foreach ((json_t *)scripts, k, v)
                names[n++] = k;
        apply_limits(&lim, json_object_get(c, "limits"), tmp, &root);

        r = body_run(body, strlen(body), json_is_null(params) ? NULL : params, names, n, &host,
                     &lim, &o);
        ck_assert_msg(r == 0, "%s: body_run failed: %s", name, strerror(-r));

        if (json_object_get(want, "error"))
                check_error(name, &o, json_object_get(want, "error"), tmp);
        else
                check_result(name, &o, want, tmp);

        calls = json_object_get(want, "calls");
        masked_calls = mask_json(fake.calls, tmp);
        got_calls = dumps_masked(fake.calls, tmp);
        ck_assert_int_eq(pyjson_dumps(calls ?: json_array(), &want_calls), 0);
        ck_assert_msg(streq(got_calls, want_calls) && json_equal(masked_calls, calls),
                      "%s: calls\n  got:      %s\n  expected: %s", name, got_calls, want_calls);
        check_files(name, c, want, tmp);

        body_outcome_clear(&o);
        json_decref(fake.next);
        json_decref(fake.calls);
}
END_TEST

/* The corpus itself: big enough, and every case well formed for the runner. */
START_TEST(test_corpus_shape)
{
        size_t i;
        json_t *c;

        ck_assert_uint_ge(json_array_size(corpus), 150);
        json_array_foreach (corpus, i, c) {
                const json_t *want =
                        json_object_get(c, "expect_override") ?: json_object_get(c, "expect");
                const char *name = json_string_value(json_object_get(c, "name"));
                ck_assert_msg(json_is_object(want), "%s: no expect", name);
                ck_assert_msg(json_is_array(json_object_get(want, "calls")), "%s: no calls", name);
                ck_assert_msg(json_object_get(want, "error") ||
                                      json_is_string(json_object_get(want, "result_json")),
                              "%s: neither error nor result_json", name);
        }
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_corpus_shape);
        tcase_add_loop_test(tc, test_case, 0, (int)json_array_size(corpus));
}

int main(void)
{
        int ret;

        /* Each case's directory lives in this one, which goes at the end even
         * when a case failed (a failing forked test never reaches its own
         * clean-up). */
        snprintf(session_dir, sizeof(session_dir), "%s/body-corpus-XXXXXX",
                 getenv("TMPDIR") ?: "/tmp");
        if (load_corpus() < 0 || !mkdtemp(session_dir)) {
                json_decref(corpus);
                return EXIT_FAILURE;
        }
        ret = check_main_one("body-corpus", "corpus", NULL, NULL, 60, add_tests);
        json_decref(corpus);
        if (rm_rf(session_dir) < 0)
                ret = EXIT_FAILURE;
        return ret;
}
