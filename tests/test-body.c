/* Unit tests of the Body interpreter's language mechanics: wrapping, the
 * lexer, the parser's SyntaxErrors, and the evaluator (scopes, closures,
 * unpacking, loops, exceptions, with, f-strings, comprehensions, calls),
 * the limits and the host interface. The big corpus of real Bodies is
 * test-body-corpus.c.
 *
 * The tables give a Body and what body_run must make of it: the result as
 * json.dumps text, or the exception's class, str() and Body line. Their
 * expectations were taken from CPython 3.11.2 running the same Body wrapped
 * as the reference agent wraps it (with this file's fake scripts); where the
 * interpreter deliberately differs (docs/body.md) the entry says so. */
#include <check.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "body/body.h"
#include "body/syntax/lexer.h"
#include "body/syntax/parser.h"
#include "test-lib.h"
#include "util/macro.h"
#include "util/pyjson.h"

/* ---- a fake host ----------------------------------------------------------
 * deploy, setup and fail are the plan's scripts. A call returns
 * {"exitCode": 0, "stdout": "<script>:<number of positional args>",
 * "stderr": null}; fail raises a script failure (ErrorCode 100). Every call
 * is recorded. */

typedef struct FakeHost {
        json_t *calls; /* array of {"script", "function", "args", "kwargs"} */
        int fatal;     /* non-zero: call_script returns this (a negative errno) */
        const char *cwd;
} FakeHost;

static int fake_call(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        FakeHost *h = userdata;
        if (h->fatal)
                return h->fatal;
        json_array_append_new(h->calls, json_pack("{s:s,s:s?,s:O,s:O}", "script", call->script,
                                                  "function", call->function, "args", call->args,
                                                  "kwargs", call->kwargs));
        if (streq(call->script, "fail")) {
                err->code = 100;
                err->message = strdup("Script fail returned error code");
                err->additional_info = json_pack("{s:i,s:s}", "exitCode", 3, "stderr", "boom");
                return 1;
        }
        char out[64];
        snprintf(out, sizeof out, "%s:%zu", call->script, json_array_size(call->args));
        *ret = json_pack("{s:i,s:s,s:n}", "exitCode", 0, "stdout", out, "stderr");
        return 0;
}

static const char *fake_cwd(void *userdata)
{
        return ((FakeHost *)userdata)->cwd;
}

static const char *const scripts[] = {"deploy", "setup", "fail"};

static const char parameters[] = "{\"appName\": \"app\", \"n\": 3, \"lst\": [1, 2], "
                                 "\"d\": {\"k\": \"v\"}, \"flag\": true, \"empty\": \"\"}";

/* Run a Body with the fake host; returns body_run's result. */
static int run_body(const char *body, size_t len, const BodyLimits *limits, FakeHost *h,
                    BodyOutcome *o)
{
        json_t *params = json_loads(parameters, 0, NULL);
        ck_assert_ptr_nonnull(params);
        BodyHost host = {.userdata = h, .call_script = fake_call, .cwd = fake_cwd};
        int r = body_run(body, len, params, scripts, ELEMENTSOF(scripts), &host, limits, o);
        json_decref(params);
        return r;
}

typedef struct Case {
        const char *body;
        const char *json;    /* success: json.dumps of the result */
        const char *exc;     /* error: the exception's class */
        const char *message; /* error: str(exception) */
        int line;            /* error: Body line */
} Case;

static void check_case(const Case *c, int i)
{
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        int r = run_body(c->body, strlen(c->body), NULL, &h, &o);
        ck_assert_msg(r == 0, "case %d: body_run returned %d", i, r);
        if (c->json) {
                ck_assert_msg(o.error_code == 0, "case %d (%s): expected %s, got %s: %s", i,
                              c->body, c->json, o.exc_type, o.message);
                _cleanup_free_ char *text = NULL;
                ck_assert_int_eq(pyjson_dumps(o.value, &text), 0);
                ck_assert_msg(streq(text, c->json), "case %d (%s): expected %s, got %s", i, c->body,
                              c->json, text);
        } else {
                ck_assert_msg(o.error_code != 0, "case %d (%s): expected %s, got success", i,
                              c->body, c->exc);
                ck_assert_msg(streq(o.exc_type, c->exc) && streq(o.message, c->message) &&
                                      o.line == c->line,
                              "case %d (%s):\n  expected %s: %s (line %d)\n  got      %s: %s "
                              "(line %d)",
                              i, c->body, c->exc, c->message, c->line, o.exc_type, o.message,
                              o.line);
        }
        body_outcome_clear(&o);
        json_decref(h.calls);
}

/* Python 3.11's own SyntaxError and IndentationError for malformed Bodies:
 * class, message (with the wrapped line CPython prints) and Body line. */
static const Case syntax_cases[] = {
        {" ", NULL, "IndentationError",
         "expected an indented block after function definition on line 1 (<string>, line 3)", 1},
        {"return deploy(args.appName", NULL, "SyntaxError",
         "'(' was never closed (<string>, line 2)", 1},
        {"return deploy(args.appName))", NULL, "SyntaxError", "unmatched ')' (<string>, line 2)",
         1},
        {"return [1, 2)", NULL, "SyntaxError",
         "closing parenthesis ')' does not match opening parenthesis '[' (<string>, line 2)", 1},
        {"return (1,\n2]", NULL, "SyntaxError",
         "closing parenthesis ']' does not match opening parenthesis '(' on line 2 (<string>, line "
         "3)",
         2},
        {"return 'abc", NULL, "SyntaxError",
         "unterminated string literal (detected at line 2) (<string>, line 2)", 1},
        {"return \"\"\"abc", NULL, "SyntaxError",
         "unterminated triple-quoted string literal (detected at line 6) (<string>, line 2)", 1},
        {"x = 1\n  y = 2", NULL, "IndentationError", "unexpected indent (<string>, line 3)", 2},
        {"if x:\n    y = 1\n  z = 2", NULL, "IndentationError",
         "unindent does not match any outer indentation level (<string>, line 4)", 3},
        {"if args.flag\n    deploy()", NULL, "SyntaxError", "expected ':' (<string>, line 2)", 1},
        {"for x in args.lst\n    pass", NULL, "SyntaxError", "expected ':' (<string>, line 2)", 1},
        {"while x\n    pass", NULL, "SyntaxError", "expected ':' (<string>, line 2)", 1},
        {"with open(x) as f\n    pass", NULL, "SyntaxError", "expected ':' (<string>, line 2)", 1},
        {"try\n    pass\nexcept:\n    pass", NULL, "SyntaxError", "expected ':' (<string>, line 2)",
         1},
        {"return a b", NULL, "SyntaxError", "invalid syntax (<string>, line 2)", 1},
        {"return deploy(args.a args.b)", NULL, "SyntaxError",
         "invalid syntax. Perhaps you forgot a comma? (<string>, line 2)", 1},
        {"return [1, 2 3]", NULL, "SyntaxError",
         "invalid syntax. Perhaps you forgot a comma? (<string>, line 2)", 1},
        {"x = (1 2)", NULL, "SyntaxError",
         "invalid syntax. Perhaps you forgot a comma? (<string>, line 2)", 1},
        {"return "
         "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
         "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
         "((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
         ")))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
         ")))))))))))))))))))))))))))))))))",
         NULL, "SyntaxError", "'(' was never closed (<string>, line 2)", 1},
        {"if x:\npass", NULL, "IndentationError",
         "expected an indented block after 'if' statement on line 2 (<string>, line 3)", 2},
        {"for x in y:\npass", NULL, "IndentationError",
         "expected an indented block after 'for' statement on line 2 (<string>, line 3)", 2},
        {"while x:\npass", NULL, "IndentationError",
         "expected an indented block after 'while' statement on line 2 (<string>, line 3)", 2},
        {"with f() as x:\npass", NULL, "IndentationError",
         "expected an indented block after 'with' statement on line 2 (<string>, line 3)", 2},
        {"try:\npass", NULL, "IndentationError",
         "expected an indented block after 'try' statement on line 2 (<string>, line 3)", 2},
        {"try:\n    pass\nexcept:\npass", NULL, "IndentationError",
         "expected an indented block after 'except' statement on line 4 (<string>, line 5)", 4},
        {"try:\n    pass\nfinally:\npass", NULL, "IndentationError",
         "expected an indented block after 'finally' statement on line 4 (<string>, line 5)", 4},
        {"if x:\n    pass\nelse:\npass", NULL, "IndentationError",
         "expected an indented block after 'else' statement on line 4 (<string>, line 5)", 4},
        {"if x:\n    pass\nelif y:\npass", NULL, "IndentationError",
         "expected an indented block after 'elif' statement on line 4 (<string>, line 5)", 4},
        {"match x:\ncase 1:\n    pass", NULL, "IndentationError",
         "expected an indented block after 'match' statement on line 2 (<string>, line 3)", 2},
        {"def f():\nreturn 1", NULL, "IndentationError",
         "expected an indented block after function definition on line 2 (<string>, line 3)", 2},
        {"print \"hello\"", NULL, "SyntaxError",
         "Missing parentheses in call to 'print'. Did you mean print(...)? (<string>, line 2)", 1},
        {"exec \"code\"", NULL, "SyntaxError",
         "Missing parentheses in call to 'exec'. Did you mean exec(...)? (<string>, line 2)", 1},
        {"return 1 \\ 2", NULL, "SyntaxError",
         "unexpected character after line continuation character (<string>, line 2)", 1},
        {"return 1 \xe2\x82\xac"
         " 2",
         NULL, "SyntaxError",
         "invalid character '\xe2\x82\xac"
         "' (U+20AC) (<string>, line 2)",
         1},
        {"return 1 $ 2", NULL, "SyntaxError", "invalid syntax (<string>, line 2)", 1},
        {"return 0b12", NULL, "SyntaxError",
         "invalid digit '2' in binary literal (<string>, line 2)", 1},
        {"return 0b", NULL, "SyntaxError", "invalid binary literal (<string>, line 2)", 1},
        {"return 0o8", NULL, "SyntaxError", "invalid digit '8' in octal literal (<string>, line 2)",
         1},
        {"return 0x", NULL, "SyntaxError", "invalid hexadecimal literal (<string>, line 2)", 1},
        {"return 1_000_", NULL, "SyntaxError", "invalid decimal literal (<string>, line 2)", 1},
        {"return 1abc", NULL, "SyntaxError", "invalid decimal literal (<string>, line 2)", 1},
        {"return 012", NULL, "SyntaxError",
         "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal "
         "integers (<string>, line 2)",
         1},
        {"return 1 if x", NULL, "SyntaxError",
         "expected 'else' after 'if' expression (<string>, line 2)", 1},
        {"return f'{x'", NULL, "SyntaxError", "f-string: expecting '}' (<string>, line 2)", 1},
        {"return f'}'", NULL, "SyntaxError",
         "f-string: single '}' is not allowed (<string>, line 2)", 1},
        {"return f'{}'", NULL, "SyntaxError",
         "f-string: empty expression not allowed (<string>, line 2)", 1},
        {"return f'{x!z}'", NULL, "SyntaxError",
         "f-string: invalid conversion character: expected 's', 'r', or 'a' (<string>, line 2)", 1},
        {"return f'{1+}'", NULL, "SyntaxError", "f-string: invalid syntax (<string>, line 2)", 1},
        {"return f'{a b}'", NULL, "SyntaxError",
         "f-string: invalid syntax. Perhaps you forgot a comma? (<string>, line 2)", 1},
        {"return f'{x#}'", NULL, "SyntaxError",
         "f-string expression part cannot include '#' (<string>, line 2)", 1},
        {"return f'{\"a\" if x else \"\\\\n\"}'", NULL, "SyntaxError",
         "f-string expression part cannot include a backslash (<string>, line 2)", 1},
        {"return f'{x:{y:{z}}}'", NULL, "SyntaxError",
         "f-string: expressions nested too deeply (<string>, line 2)", 1},
        {"return f'{!r}'", NULL, "SyntaxError",
         "f-string: expression required before '!' (<string>, line 2)", 1},
        {"return '\\x4'", NULL, "SyntaxError",
         "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated "
         "\\xXX escape (<string>, line 2)",
         1},
        {"return '\\u12'", NULL, "SyntaxError",
         "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-3: truncated "
         "\\uXXXX escape (<string>, line 2)",
         1},
        {"return '\\U00110000'", NULL, "SyntaxError",
         "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-9: illegal "
         "Unicode character (<string>, line 2)",
         1},
        {"return '\\N{BULLET'", NULL, "SyntaxError",
         "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-8: malformed \\N "
         "character escape (<string>, line 2)",
         1},
        {"deploy() = 1", NULL, "SyntaxError",
         "cannot assign to function call here. Maybe you meant '==' instead of '='? (<string>, "
         "line 2)",
         1},
        {"1 = x", NULL, "SyntaxError",
         "cannot assign to literal here. Maybe you meant '==' instead of '='? (<string>, line 2)",
         1},
        {"a + 1 = 2", NULL, "SyntaxError",
         "cannot assign to expression here. Maybe you meant '==' instead of '='? (<string>, line "
         "2)",
         1},
        {"x = 1 = 2", NULL, "SyntaxError", "cannot assign to literal (<string>, line 2)", 1},
        {"x + 1 += 1", NULL, "SyntaxError",
         "'expression' is an illegal expression for augmented assignment (<string>, line 2)", 1},
        {"True += 1", NULL, "SyntaxError",
         "'True' is an illegal expression for augmented assignment (<string>, line 2)", 1},
        {"None = 1", NULL, "SyntaxError", "cannot assign to None (<string>, line 2)", 1},
        {"del deploy()", NULL, "SyntaxError", "cannot delete function call (<string>, line 2)", 1},
        {"for deploy() in x:\n    pass", NULL, "SyntaxError",
         "cannot assign to function call (<string>, line 2)", 1},
        {"with open(x) as deploy():\n    pass", NULL, "SyntaxError",
         "cannot assign to function call (<string>, line 2)", 1},
        {"[x for x in y] = 1", NULL, "SyntaxError",
         "cannot assign to list comprehension here. Maybe you meant '==' instead of '='? "
         "(<string>, line 2)",
         1},
        {"if x = 1:\n    pass", NULL, "SyntaxError",
         "invalid syntax. Maybe you meant '==' or ':=' instead of '='? (<string>, line 2)", 1},
        {"if x.y = 1:\n    pass", NULL, "SyntaxError",
         "cannot assign to attribute here. Maybe you meant '==' instead of '='? (<string>, line 2)",
         1},
        {"return deploy(a.b=1)", NULL, "SyntaxError",
         "expression cannot contain assignment, perhaps you meant \"==\"? (<string>, line 2)", 1},
        {"return deploy(True=1)", NULL, "SyntaxError", "cannot assign to True (<string>, line 2)",
         1},
        {"return deploy(a=1, b)", NULL, "SyntaxError",
         "positional argument follows keyword argument (<string>, line 2)", 1},
        {"return deploy(**a, b)", NULL, "SyntaxError",
         "positional argument follows keyword argument unpacking (<string>, line 2)", 1},
        {"return deploy(**a, *b)", NULL, "SyntaxError",
         "iterable argument unpacking follows keyword argument unpacking (<string>, line 2)", 1},
        {"return deploy(x for x in y, 1)", NULL, "SyntaxError",
         "Generator expression must be parenthesized (<string>, line 2)", 1},
        {"return deploy(a=1, a=2)", NULL, "SyntaxError",
         "keyword argument repeated: a (<string>, line 2)", 1},
        {"def f(a=1, b):\n    pass", NULL, "SyntaxError",
         "non-default argument follows default argument (<string>, line 2)", 1},
        {"f = lambda a=1, b: 0", NULL, "SyntaxError",
         "non-default argument follows default argument (<string>, line 2)", 1},
        {"def f(a, a):\n    pass", NULL, "SyntaxError",
         "duplicate argument 'a' in function definition (<string>, line 2)", 1},
        {"def f(*):\n    pass", NULL, "SyntaxError",
         "named arguments must follow bare * (<string>, line 2)", 1},
        {"def f(*a=1):\n    pass", NULL, "SyntaxError",
         "var-positional argument cannot have default value (<string>, line 2)", 1},
        {"def f(**a=1):\n    pass", NULL, "SyntaxError",
         "var-keyword argument cannot have default value (<string>, line 2)", 1},
        {"def f(**a, b):\n    pass", NULL, "SyntaxError",
         "arguments cannot follow var-keyword argument (<string>, line 2)", 1},
        {"def f(*a, *b):\n    pass", NULL, "SyntaxError",
         "* argument may appear only once (<string>, line 2)", 1},
        {"def f:\n    pass", NULL, "SyntaxError", "expected '(' (<string>, line 2)", 1},
        {"def f()\n    pass", NULL, "SyntaxError", "expected ':' (<string>, line 2)", 1},
        {"try:\n    pass\nx = 1", NULL, "SyntaxError",
         "expected 'except' or 'finally' block (<string>, line 4)", 3},
        {"try:\n    pass\nexcept A, B:\n    pass", NULL, "SyntaxError",
         "multiple exception types must be parenthesized (<string>, line 4)", 3},
        {"break", NULL, "SyntaxError", "'break' outside loop (<string>, line 2)", 1},
        {"continue", NULL, "SyntaxError", "'continue' not properly in loop (<string>, line 2)", 1},
        {"for x in y:\n    def f():\n        continue", NULL, "SyntaxError",
         "'continue' not properly in loop (<string>, line 4)", 3},
        {"*a = args.lst", NULL, "SyntaxError",
         "starred assignment target must be in a list or tuple (<string>, line 2)", 1},
        {"*a, *b = args.lst", NULL, "SyntaxError",
         "multiple starred expressions in assignment (<string>, line 2)", 1},
        {"from json import *", NULL, "SyntaxError",
         "import * only allowed at module level (<string>, line 2)", 1},
        {"a, b: int = 1", NULL, "SyntaxError",
         "only single target (not tuple) can be annotated (<string>, line 2)", 1},
        {"x + 1: int", NULL, "SyntaxError", "illegal target for annotation (<string>, line 2)", 1},
        {"return (*a)", NULL, "SyntaxError",
         "cannot use starred expression here (<string>, line 2)", 1},
        {"return (**a)", NULL, "SyntaxError",
         "cannot use double starred expression here (<string>, line 2)", 1},
        {"return [*a for a in b]", NULL, "SyntaxError",
         "iterable unpacking cannot be used in comprehension (<string>, line 2)", 1},
        {"return [a, b for a in c]", NULL, "SyntaxError",
         "did you forget parentheses around the comprehension target? (<string>, line 2)", 1},
        {"return {1: *a}", NULL, "SyntaxError",
         "cannot use a starred expression in a dictionary value (<string>, line 2)", 1},
        {"return {1:}", NULL, "SyntaxError",
         "expression expected after dictionary key and ':' (<string>, line 2)", 1},
        {"return {1: 2, 3}", NULL, "SyntaxError",
         "':' expected after dictionary key (<string>, line 2)", 1},
        {"from json import dumps,", NULL, "SyntaxError",
         "trailing comma not allowed without surrounding parentheses (<string>, line 2)", 1},
        {"return 'a' b'b'", NULL, "SyntaxError",
         "cannot mix bytes and nonbytes literals (<string>, line 2)", 1},
        {"return *args.lst", NULL, "SyntaxError",
         "can't use starred expression here (<string>, line 2)", 1},
        {"x = 1return 2", NULL, "SyntaxError", "invalid decimal literal (<string>, line 2)", 1},
        {"return 'a\\x00'", "\"a\\u0000\"", NULL, NULL, 0},
        {"return (x := 1) if x[0] := 1 else 2\n", NULL, "SyntaxError",
         "expected 'else' after 'if' expression (<string>, line 2)", 1},
};

START_TEST(test_syntax)
{
        check_case(&syntax_cases[_i], _i);
}
END_TEST

/* Valid Python outside the subset: reported after the whole program has
 * parsed, so a real syntax error elsewhere still wins (last entries). */
static const Case unsupported_cases[] = {
        {"class A:\n    pass", NULL, "SyntaxError",
         "'class' definitions are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"def f():\n    yield 1\nreturn f()", NULL, "SyntaxError",
         "'yield' expressions are not supported by muranoagent's Body interpreter (<string>, line "
         "3)",
         2},
        {"global x", NULL, "SyntaxError",
         "'global' statements are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"def f():\n    nonlocal x", NULL, "SyntaxError",
         "'nonlocal' statements are not supported by muranoagent's Body interpreter (<string>, "
         "line 3)",
         2},
        {"async def f():\n    pass", NULL, "SyntaxError",
         "'async' statements are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"@staticmethod\ndef f():\n    pass", NULL, "SyntaxError",
         "decorators are not supported by muranoagent's Body interpreter (<string>, line 2)", 1},
        {"match args.n:\n    case 3:\n        pass", NULL, "SyntaxError",
         "'match' statements are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"return (x := 1)", NULL, "SyntaxError",
         "assignment expressions (:=) are not supported by muranoagent's Body interpreter "
         "(<string>, line 2)",
         1},
        {"return b'bytes'", NULL, "SyntaxError",
         "bytes literals are not supported by muranoagent's Body interpreter (<string>, line 2)",
         1},
        {"return '\\N{BULLET}'", NULL, "SyntaxError",
         "\\N{...} escapes are not supported by muranoagent's Body interpreter (<string>, line 2)",
         1},
        {"return '\\ud800'", NULL, "SyntaxError",
         "lone surrogate escapes (\\ud800) are not supported by muranoagent's Body interpreter "
         "(<string>, line 2)",
         1},
        {"return 1j", NULL, "SyntaxError",
         "complex numbers (1j) are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"\xc3\xa9"
         " = 1",
         NULL, "SyntaxError",
         "identifiers beyond ASCII are not supported by muranoagent's Body interpreter (<string>, "
         "line 2)",
         1},
        {"return ...", NULL, "SyntaxError",
         "the Ellipsis literal (...) is not supported by muranoagent's Body interpreter (<string>, "
         "line 2)",
         1},
        {"return args.n @ args.n", NULL, "SyntaxError",
         "the '@' operator is not supported by muranoagent's Body interpreter (<string>, line 2)",
         1},
        {"from . import x", NULL, "SyntaxError",
         "relative imports are not supported by muranoagent's Body interpreter (<string>, line 2)",
         1},
        {"x: int = 1", NULL, "SyntaxError",
         "variable annotations are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"def f(a: int):\n    pass", NULL, "SyntaxError",
         "function annotations are not supported by muranoagent's Body interpreter (<string>, line "
         "2)",
         1},
        {"def f(a, /, b):\n    pass", NULL, "SyntaxError",
         "positional-only parameters are not supported by muranoagent's Body interpreter "
         "(<string>, line 2)",
         1},
        {"try:\n    pass\nexcept* ValueError:\n    pass", NULL, "SyntaxError",
         "'except*' clauses are not supported by muranoagent's Body interpreter (<string>, line 4)",
         3},
        {"x = 1\nreturn x +\n", NULL, "SyntaxError", "invalid syntax (<string>, line 3)", 2},
        {"class A:\n    pass\nreturn x +", NULL, "SyntaxError", "invalid syntax (<string>, line 4)",
         3},
        {"def f():\n    yield\nreturn (", NULL, "SyntaxError",
         "'(' was never closed (<string>, line 4)", 3},
};

START_TEST(test_unsupported)
{
        check_case(&unsupported_cases[_i], _i);
}
END_TEST

/* The evaluator. Deliberate differences from CPython: the Body's budget
 * (MemoryError, ResourceLimitError) for ints CPython would spend minutes or
 * all its memory on, imports beyond json and uuid, ResourceLimitError that no
 * except clause catches, and ImportError's "(unknown location)". */
static const Case runtime_cases[] = {
        {"return deploy(args.appName).stdout", "\"deploy:1\"", NULL, NULL, 0},
        {"deploy()", "null", NULL, NULL, 0},
        {"return", "null", NULL, NULL, 0},
        {"return args.missing", NULL, "KeyError", "'missing'", 1},
        {"return args.d['k'] + args.appName", "\"vapp\"", NULL, NULL, 0},
        {"x = 1\nx += 2\nx *= 3\nx -= 1\nx //= 3\nx %= 5\nx **= 3\nx <<= 2\nx |= 1\nx ^= 3\nx &= "
         "14\nx >>= 1\nreturn x",
         "1", NULL, NULL, 0},
        {"x = 7\nx /= 2\nreturn x", "3.5", NULL, NULL, 0},
        {"a, b = 1, 2\na, b = b, a\nreturn [a, b]", "[2, 1]", NULL, NULL, 0},
        {"(a, b), [c, d] = (1, 2), 'xy'\nreturn [a, b, c, d]", "[1, 2, \"x\", \"y\"]", NULL, NULL,
         0},
        {"a, *b = [1, 2, 3]\n*c, d = 'xyz'\ne, *f, g = range(5)\nreturn [a, b, c, d, e, f, g]",
         "[1, [2, 3], [\"x\", \"y\"], \"z\", 0, [1, 2, 3], 4]", NULL, NULL, 0},
        {"a, *b, c = [1]", NULL, "ValueError",
         "not enough values to unpack (expected at least 2, got 1)", 1},
        {"a, b = [1, 2, 3]", NULL, "ValueError", "too many values to unpack (expected 2)", 1},
        {"a, b, c = [1, 2]", NULL, "ValueError", "not enough values to unpack (expected 3, got 2)",
         1},
        {"a, b = 5", NULL, "TypeError", "cannot unpack non-iterable int object", 1},
        {"x = y = [1]\nx.append(2)\nreturn y", "[1, 2]", NULL, NULL, 0},
        {"l = []\nfor i in range(5):\n    if i == 1:\n        continue\n    if i == 3:\n        "
         "break\n    l.append(i)\nelse:\n    l.append('else')\nreturn l",
         "[0, 2]", NULL, NULL, 0},
        {"l = []\nfor i in range(3):\n    l.append(i)\nelse:\n    l.append('else')\nreturn l",
         "[0, 1, 2, \"else\"]", NULL, NULL, 0},
        {"i = 0\nwhile i < 10:\n    i += 1\n    if i > 5:\n        break\nelse:\n    i = "
         "-1\nreturn i",
         "6", NULL, NULL, 0},
        {"i = 0\nwhile i < 3:\n    i += 1\nelse:\n    i = -1\nreturn i", "-1", NULL, NULL, 0},
        {"for k, v in sorted(args.d.items()):\n    pass\nreturn k, v", "[\"k\", \"v\"]", NULL, NULL,
         0},
        {"for x in 5:\n    pass", NULL, "TypeError", "'int' object is not iterable", 1},
        {"if args.flag:\n    r = 'yes'\nelse:\n    r = 'no'\nif args.empty:\n    r += '!'\nelif "
         "args.n > 2:\n    r += '?'\nreturn r",
         "\"yes?\"", NULL, NULL, 0},
        {"x = 1; y = 2; return x + y", "3", NULL, NULL, 0},
        {"def f(x, y=10, *rest, z=5, **kw):\n    return [x, y, list(rest), z, "
         "sorted(kw.items())]\nreturn [f(1), f(1, 2, 3, 4, z=0, q=9), f(x=7)]",
         "[[1, 10, [], 5, []], [1, 2, [3, 4], 0, [[\"q\", 9]]], [7, 10, [], 5, []]]", NULL, NULL,
         0},
        {"def f(a, b):\n    return a\nreturn f(1)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() missing 1 required positional argument: 'b'", 3},
        {"def f(a, b, c):\n    return a\nreturn f()", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() missing 3 required positional arguments: 'a', 'b', "
         "and 'c'",
         3},
        {"def f(a):\n    return a\nreturn f(1, 2)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() takes 1 positional argument but 2 were given", 3},
        {"def f(a, b=1):\n    return a\nreturn f(1, 2, 3)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() takes from 1 to 2 positional arguments but 3 were "
         "given",
         3},
        {"def f(a, *, k):\n    return a\nreturn f(1, 2, k=3)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() takes 1 positional argument but 2 positional "
         "arguments (and 1 keyword-only argument) were given",
         3},
        {"def f(a):\n    return a\nreturn f(1, a=2)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() got multiple values for argument 'a'", 3},
        {"def f(a):\n    return a\nreturn f(b=2)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() got an unexpected keyword argument 'b'", 3},
        {"def f(*, a):\n    return a\nreturn f()", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() missing 1 required keyword-only argument: 'a'", 3},
        {"g = lambda x: x\nreturn g()", NULL, "TypeError",
         "__execution_plan_main.<locals>.<lambda>() missing 1 required positional argument: 'x'",
         2},
        {"def outer():\n    def inner(x):\n        return x\n    return inner()\nreturn outer()",
         NULL, "TypeError",
         "__execution_plan_main.<locals>.outer.<locals>.inner() missing 1 required positional "
         "argument: 'x'",
         4},
        {"def f(a, b):\n    return [a, b]\nreturn f(*[1], **{'b': 2})", "[1, 2]", NULL, NULL, 0},
        {"def f(**kw):\n    return sorted(kw)\nreturn f(**{'a': 1}, b=2)", "[\"a\", \"b\"]", NULL,
         NULL, 0},
        {"def f(**kw):\n    return kw\nreturn f(**{'a': 1}, a=2)", NULL, "TypeError",
         "__execution_plan_main.<locals>.f() got multiple values for keyword argument 'a'", 3},
        {"return deploy(*5)", NULL, "TypeError",
         "ScriptRunner() argument after * must be an iterable, not int", 1},
        {"return deploy(**5)", NULL, "TypeError",
         "ScriptRunner() argument after ** must be a mapping, not int", 1},
        {"def outer():\n    n = 0\n    def inc():\n        return n + 1\n    n = 5\n    return "
         "inc()\nreturn outer()",
         "6", NULL, NULL, 0},
        {"def f():\n    return x\nx = 1\ny = x\ndel x\nreturn f()", NULL, "NameError",
         "cannot access free variable 'x' where it is not associated with a value in enclosing "
         "scope",
         2},
        {"def f():\n    def g():\n        return z\n    return g()\n    z = 1\nreturn f()", NULL,
         "NameError",
         "cannot access free variable 'z' where it is not associated with a value in enclosing "
         "scope",
         3},
        {"x = y\ny = 1", NULL, "UnboundLocalError",
         "cannot access local variable 'y' where it is not associated with a value", 1},
        {"x = 5\ndef f():\n    return x\nreturn f()", "5", NULL, NULL, 0},
        {"def f():\n    return undefined_name\nreturn f()", NULL, "NameError",
         "name 'undefined_name' is not defined", 2},
        {"def f():\n    x = 1\n    def g():\n        def h():\n            return x\n        "
         "return h()\n    return g()\nreturn f()",
         "1", NULL, NULL, 0},
        {"def make(n):\n    return lambda x: x + n\nadd2 = make(2)\nadd3 = make(3)\nreturn "
         "add2(1), add3(1)",
         "[3, 4]", NULL, NULL, 0},
        {"fs = [lambda i=i: i * 2 for i in range(3)]\nreturn [f() for f in fs]", "[0, 2, 4]", NULL,
         NULL, 0},
        {"fs = [lambda: i for i in range(3)]\nreturn [f() for f in fs]", "[2, 2, 2]", NULL, NULL,
         0},
        {"def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\nreturn fact(10)", "3628800",
         NULL, NULL, 0},
        {"def fact(n):\n    return n * fact(n - 1)\nreturn fact(5)", NULL, "RecursionError",
         "maximum recursion depth exceeded", 2},
        {"return (lambda x, y=2: x * y)(3)", "6", NULL, NULL, 0},
        {"return [(x, y) for x in range(3) for y in range(x) if y != 1]", "[[1, 0], [2, 0]]", NULL,
         NULL, 0},
        {"return {x: x * x for x in range(4) if x % 2 == 0}", "{\"0\": 0, \"2\": 4}", NULL, NULL,
         0},
        {"return sorted({c for c in 'hello'})", "[\"e\", \"h\", \"l\", \"o\"]", NULL, NULL, 0},
        {"return list(x * 2 for x in [1, 2, 3])", "[2, 4, 6]", NULL, NULL, 0},
        {"return ' '.join(str(x) for x in range(4))", "\"0 1 2 3\"", NULL, NULL, 0},
        {"x = 10\nreturn [x for x in range(3)] + [x]", "[0, 1, 2, 10]", NULL, NULL, 0},
        {"return [undefined for x in range(1)]", NULL, "NameError",
         "name 'undefined' is not defined", 1},
        {"return [x for x in undefined]", NULL, "NameError", "name 'undefined' is not defined", 1},
        {"return [y for x in [[1, 2], [3]] for y in x]", "[1, 2, 3]", NULL, NULL, 0},
        {"try:\n    raise ValueError('bad')\nexcept ValueError as e:\n    return str(e)", "\"bad\"",
         NULL, NULL, 0},
        {"try:\n    raise ValueError\nexcept ValueError as e:\n    return [str(e), repr(e)]",
         "[\"\", \"ValueError()\"]", NULL, NULL, 0},
        {"try:\n    1 / 0\nexcept (TypeError, ZeroDivisionError) as e:\n    return "
         "type(e).__name__",
         "\"ZeroDivisionError\"", NULL, NULL, 0},
        {"try:\n    1/0\nexcept ZeroDivisionError as e:\n    pass\nreturn e", NULL,
         "UnboundLocalError",
         "cannot access local variable 'e' where it is not associated with a value", 5},
        {"log = []\ntry:\n    log.append('try')\nexcept Exception:\n    "
         "log.append('except')\nelse:\n    log.append('else')\nfinally:\n    "
         "log.append('finally')\nreturn log",
         "[\"try\", \"else\", \"finally\"]", NULL, NULL, 0},
        {"log = []\ntry:\n    try:\n        raise KeyError('k')\n    finally:\n        "
         "log.append('inner finally')\nexcept KeyError as e:\n    log.append(repr(e))\nreturn log",
         "[\"inner finally\", \"KeyError('k')\"]", NULL, NULL, 0},
        {"def f():\n    try:\n        return 'try'\n    finally:\n        return 'finally'\nreturn "
         "f()",
         "\"finally\"", NULL, NULL, 0},
        {"def f():\n    for i in range(3):\n        try:\n            return i\n        finally:\n "
         "           if i == 0:\n                continue\n    return 'end'\nreturn f()",
         "1", NULL, NULL, 0},
        {"def f():\n    try:\n        1/0\n    finally:\n        return 'swallowed'\nreturn f()",
         "\"swallowed\"", NULL, NULL, 0},
        {"def f():\n    log = []\n    for i in range(3):\n        try:\n            if i == 1:\n   "
         "             break\n        finally:\n            log.append(i)\n    return log\nreturn "
         "f()",
         "[0, 1]", NULL, NULL, 0},
        {"try:\n    try:\n        {}['x']\n    except KeyError:\n        raise\nexcept LookupError "
         "as e:\n    return repr(e)",
         "\"KeyError('x')\"", NULL, NULL, 0},
        {"try:\n    1/0\nexcept ZeroDivisionError:\n    raise", NULL, "ZeroDivisionError",
         "division by zero", 2},
        {"def f():\n    return 1/0\ntry:\n    f()\nexcept ZeroDivisionError:\n    raise", NULL,
         "ZeroDivisionError", "division by zero", 2},
        {"try:\n    {}['a']\nexcept KeyError as e:\n    raise ValueError('x')", NULL, "ValueError",
         "x", 4},
        {"raise", NULL, "RuntimeError", "No active exception to reraise", 1},
        {"raise KeyError('x')", NULL, "KeyError", "'x'", 1},
        {"raise Exception", NULL, "Exception", "", 1},
        {"raise 5", NULL, "TypeError", "exceptions must derive from BaseException", 1},
        {"raise ValueError from 5", NULL, "TypeError",
         "exception causes must derive from BaseException", 1},
        {"raise ValueError('a') from None", NULL, "ValueError", "a", 1},
        {"try:\n    raise ValueError('x')\nexcept:\n    return 'bare'", "\"bare\"", NULL, NULL, 0},
        {"try:\n    int('q')\nexcept TypeError:\n    return 'wrong'", NULL, "ValueError",
         "invalid literal for int() with base 10: 'q'", 2},
        {"try:\n    int('q')\nexcept 5:\n    return 'wrong'", NULL, "TypeError",
         "catching classes that do not inherit from BaseException is not allowed", 3},
        {"try:\n    x = 1\nexcept ValueError:\n    pass\nelse:\n    return 'else'", "\"else\"",
         NULL, NULL, 0},
        {"try:\n    while True:\n        pass\nexcept Exception:\n    return 'caught'", NULL,
         "ResourceLimitError", "Body exceeded the evaluation step limit (10000000)", 4},
        {"with 5 as f:\n    pass", NULL, "TypeError",
         "'int' object does not support the context manager protocol", 1},
        {"assert True\nassert 1 == 1, 'no'\nreturn 'ok'", "\"ok\"", NULL, NULL, 0},
        {"assert 1 == 2", NULL, "AssertionError", "", 1},
        {"assert 1 == 2, 'bad ' + 'news'", NULL, "AssertionError", "bad news", 1},
        {"return not None, not 0, not [], not [0]", "[true, true, true, false]", NULL, NULL, 0},
        {"return 1 and 2, 0 and 2, 0 or '', 0 or 'x', None or 0", "[2, 0, \"\", \"x\", 0]", NULL,
         NULL, 0},
        {"return 1 < 2 < 3, 1 < 3 < 2, 1 == 1.0, 'a' in 'abc', 3 not in [1, 2], None is None, 1 is "
         "not None",
         "[true, false, true, true, true, true, true]", NULL, NULL, 0},
        {"return 1 if 0 else 2 if 1 else 3", "2", NULL, NULL, 0},
        {"return -2 ** 2, (-2) ** 2, 2 ** -1, -7 // 2, -7 % 3, 7 % -3, ~5, +3, 1 + 2 * 3 - 4 / 2",
         "[-4, 4, 0.5, -4, 2, -2, -6, 3, 5.0]", NULL, NULL, 0},
        {"return 3 > 2 == True", "false", NULL, NULL, 0},
        {"return [1, 2, 3][::-1], 'hello'[1:3], [1, 2, 3][-1], 'h\xc3\xa9"
         "llo'[1]",
         "[[3, 2, 1], \"el\", 3, \"\\u00e9\"]", NULL, NULL, 0},
        {"x = [0] * 3\nx[1] = 5\nx[0:1] = [7, 8]\nreturn x", "[7, 8, 5, 0]", NULL, NULL, 0},
        {"x = [1, 2, 3]\ndel x[0], x[-1]\nreturn x", "[2]", NULL, NULL, 0},
        {"d = {'a': 1, 'b': 2}\ndel d['a']\nreturn d", "{\"b\": 2}", NULL, NULL, 0},
        {"x = 1\ndel x\nreturn x", NULL, "UnboundLocalError",
         "cannot access local variable 'x' where it is not associated with a value", 3},
        {"d = {}\nd['a'] = d.get('a', 0) + 1\nd['a'] += 10\nreturn d", "{\"a\": 11}", NULL, NULL,
         0},
        {"l = [1, 2, 3]\nl[1] += 5\nl[-1] *= 2\nreturn l", "[1, 7, 6]", NULL, NULL, 0},
        {"args.newKey = 5\nreturn args.newKey", "5", NULL, NULL, 0},
        {"args.n += 1\nreturn args.n", "4", NULL, NULL, 0},
        {"x = None\nx.foo", NULL, "AttributeError", "'NoneType' object has no attribute 'foo'", 2},
        {"x = 1\nx.y = 2", NULL, "AttributeError", "'int' object has no attribute 'y'", 2},
        {"return [1, 2].iteritems()", NULL, "AttributeError",
         "'list' object has no attribute 'iteritems'", 1},
        {"return args.d.iteritems()", NULL, "AttributeError",
         "'dict' object has no attribute 'iteritems'", 1},
        {"return 1 / 0", NULL, "ZeroDivisionError", "division by zero", 1},
        {"return 'a' + 1", NULL, "TypeError", "can only concatenate str (not \"int\") to str", 1},
        {"return len(5)", NULL, "TypeError", "object of type 'int' has no len()", 1},
        {"return {'a': 1}['b']", NULL, "KeyError", "'b'", 1},
        {"return [i for i in range(3)][5]", NULL, "IndexError", "list index out of range", 1},
        {"return (1, 2), {1: 'a', True: 'b', None: 'c', 2.5: 'd'}",
         "[[1, 2], {\"1\": \"b\", \"null\": \"c\", \"2.5\": \"d\"}]", NULL, NULL, 0},
        {"return set()", NULL, "TypeError", "Object of type set is not JSON serializable", 0},
        {"return print", NULL, "TypeError",
         "Object of type builtin_function_or_method is not JSON serializable", 0},
        {"return (lambda: undefined)()", NULL, "NameError", "name 'undefined' is not defined", 1},
        {"return f'{args.appName!r:>10}|{3.14159:.2f}|{\"x\"!s}|{{}}|{1+1}'",
         "\"     'app'|3.14|x|{}|2\"", NULL, NULL, 0},
        {"name = 'w'\nreturn f'{name=}', f'{name = !s}', f'{3.0=:.1f}', f'{name!a}', f'{\"\xc3\xa9"
         "\"!a}'",
         "[\"name='w'\", \"name = w\", \"3.0=3.0\", \"'w'\", \"'\\\\xe9'\"]", NULL, NULL, 0},
        {"width = 6\nreturn f'{\"x\":>{width}}|{12:0{width}d}'", "\"     x|000012\"", NULL, NULL,
         0},
        {"return f'{args.d[\"k\"]}-{args.lst[0]:+d}'", "\"v-+1\"", NULL, NULL, 0},
        {"return 'abc' 'def', \"a\" 'b' f'{1}'", "[\"abcdef\", \"ab1\"]", NULL, NULL, 0},
        {"return '\\t\\n\\\\\\'\"\\x41\\101\\u00e9\\U0001F600', r'\\n', len('\\N')", NULL,
         "SyntaxError",
         "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: malformed \\N "
         "character escape (<string>, line 2)",
         1},
        {"return 0x1f, 0o17, 0b101, 1_000, 1e3, 1.5e-3, .5, 5., 0_0",
         "[31, 15, 5, 1000, 1000.0, 0.0015, 0.5, 5.0, 0]", NULL, NULL, 0},
        {"return -9223372036854775808, 9223372036854775807",
         "[-9223372036854775808, 9223372036854775807]", NULL, NULL, 0},
        {"return 9223372036854775808", "9223372036854775808", NULL, NULL, 0},
        {"return 2 ** 63", "9223372036854775808", NULL, NULL, 0},
        {"return -9223372036854775809, 0x"
         "ffffffffffffffffffffffffffffffffffffffff"
         ", 1_000_000_000_000_000_000_000, 0b1"
         "0000000000000000000000000000000000000000000000000000000000000000000000"
         ", -(-9223372036854775808), 9223372036854775807 + 1 - 1",
         "[-9223372036854775809, 1461501637330902918203684832716283019655932542975, "
         "1000000000000000000000, 1180591620717411303424, 9223372036854775808, "
         "9223372036854775807]",
         NULL, NULL, 0},
        {"x = 1\nreturn " DIGITS_4301, NULL, "SyntaxError",
         "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; "
         "use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge "
         "integer literals to avoid decimal conversion limits. (<string>, line 3)",
         2},
        {"x = 10 ** (10 ** 8)", NULL, "ResourceLimitError",
         "Body exceeded the evaluation step limit (10000000)", 1},
        {"x = 1 << (1 << 40)", NULL, "MemoryError",
         "Body exceeded its memory limit (268435456 bytes)", 1},
        {"try:\n  x = 2 ** (2 ** 64)\nexcept MemoryError:\n  x = 0", NULL, "MemoryError",
         "Body exceeded its memory limit (268435456 bytes)", 2},
        {"import json\nreturn json.loads('[18446744073709551616, -1e2, {\"a\": "
         "-99999999999999999999}]'), "
         "json.dumps([2 ** 64, -2 ** 64])",
         "[[18446744073709551616, -100.0, {\"a\": -99999999999999999999}], "
         "\"[18446744073709551616, "
         "-18446744073709551616]\"]",
         NULL, NULL, 0},
        {"import json\nreturn json.loads('1' * 4301)", NULL, "ValueError",
         "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; "
         "use sys.set_int_max_str_digits() to increase the limit",
         2},
        {"r = range(2 ** 64, 2 ** 64 + 3)\nl = []\nfor x in r:\n    l.append(x)\n"
         "return l, r[-1] in r, len(r), list(reversed(r))[0], r[::-1][0], r.index(2 ** 64 + 1), "
         "r == range(2 ** 64, 2 ** 64 + 3), bool(range(2 ** 64, 2 ** 64)), repr(r)",
         "[[18446744073709551616, 18446744073709551617, 18446744073709551618], true, 3, "
         "18446744073709551618, 18446744073709551618, 1, true, false, "
         "\"range(18446744073709551616, 18446744073709551619)\"]",
         NULL, NULL, 0},
        {"r = range(2 ** 64)\nx = r[-1]\nreturn len(r)", NULL, "OverflowError",
         "Python int too large to convert to C ssize_t", 3},
        {"return str(10 ** 4300)", NULL, "ValueError",
         "Exceeds the limit (4300 digits) for integer string conversion; use "
         "sys.set_int_max_str_digits() to increase the limit",
         1},
        {"return len(str(10 ** 4299)), {2 ** 64: 'a', 2.0 ** 64: 'b', True: 'c', 1.0: 'd'}",
         "[4300, {\"18446744073709551616\": \"b\", \"true\": \"d\"}]", NULL, NULL, 0},
        {"import json\nimport uuid\nreturn json.dumps({'a': [1, 2.5, None, True]}), "
         "len(uuid.uuid4().hex)",
         "[\"{\\\"a\\\": [1, 2.5, null, true]}\", 32]", NULL, NULL, 0},
        {"from json import dumps as d, loads\nreturn d(loads('[1, \"x\"]'))", "\"[1, \\\"x\\\"]\"",
         NULL, NULL, 0},
        {"import json as j, uuid\nreturn j.dumps([1]), type(uuid).__name__",
         "[\"[1]\", \"module\"]", NULL, NULL, 0},
        {"import os", NULL, "ImportError",
         "module 'os' is not available in muranoagent's Body interpreter (only json and uuid can "
         "be imported)",
         1},
        {"from json import nothing", NULL, "ImportError",
         "cannot import name 'nothing' from 'json' (unknown location)", 1},
        {"import json.foo", NULL, "ModuleNotFoundError", "No module named 'json.foo'", 1},
        {"try:\n    fail()\nexcept Exception as e:\n    return str(e)",
         "\"Script fail returned error code\"", NULL, NULL, 0},
        {"fail()", NULL, "CustomException", "Script fail returned error code", 1},
        {"return deploy.someFunction('a', 'b').stdout", "\"deploy:2\"", NULL, NULL, 0},
        {"return deploy(*['a', 'b'], **{'k': 1}).stdout", "\"deploy:2\"", NULL, NULL, 0},
        {"return setup(args).stdout, setup().exitCode", "[\"setup:1\", 0]", NULL, NULL, 0},
        {"x = [3, 1, 2]\nx.sort(key=lambda v: -v)\nreturn x, sorted(x, reverse=True), "
         "list(map(lambda v: v + 1, x)), list(filter(None, [0, 1, 2]))",
         "[[3, 2, 1], [3, 2, 1], [4, 3, 2], [1, 2]]", NULL, NULL, 0},
        {"def f(n):\n    if n == 0:\n        return 0\n    return f(n - 1)\nreturn f(50)", "0",
         NULL, NULL, 0},
        {"def g():\n    pass\nreturn g()", "null", NULL, NULL, 0},
        {"def f():\n    l = [1, 2]\n    return [y for y in l if y in l]\nreturn f()", "[1, 2]",
         NULL, NULL, 0},
        {"x = 1\ndef f():\n    print(x)\n    x = 2\nreturn f()", NULL, "UnboundLocalError",
         "cannot access local variable 'x' where it is not associated with a value", 3},
        {"return [[[[[[[[[[1]]]]]]]]]]", "[[[[[[[[[[1]]]]]]]]]]", NULL, NULL, 0},
        {"def f():\n    return 1\ndef f():\n    return 2\nreturn f()", "2", NULL, NULL, 0},
        {"return (1,), (), [], {}, (1)", "[[1], [], [], {}, 1]", NULL, NULL, 0},
        {"return {**{'a': 1}, 'b': 2, **args.d}", "{\"a\": 1, \"b\": 2, \"k\": \"v\"}", NULL, NULL,
         0},
        {"return [*range(2), *'ab'], (*[1], 2), {*[1, 1], 2}", NULL, "TypeError",
         "Object of type set is not JSON serializable", 0},
        {"return {**5}", NULL, "TypeError", "'int' object is not a mapping", 1},
        {"if args.flag and args.n > 1 or args.missing:\n    return 'short'", "\"short\"", NULL,
         NULL, 0},
        {"return args.appName if args.flag else args.missing", "\"app\"", NULL, NULL, 0},
        {"return 1 if args.empty else args.missing\n", NULL, "KeyError", "'missing'", 1},
};

START_TEST(test_runtime)
{
        check_case(&runtime_cases[_i], _i);
}
END_TEST

/* ---- wrapping and the lexer ------------------------------------------------ */

START_TEST(test_wrap)
{
        /* expandtabs(4), then the smallest indentation of a non-blank line
         * goes, and every line gets four spaces (as CPython showed). */
        _cleanup_free_ char *text = NULL;
        size_t len;
        int lines;
        ck_assert_int_eq(parser_wrap_body("  a\n\tb\n", 7, &text, &len, &lines), 0);
        ck_assert_str_eq(text, "def __execution_plan_main():\n    a\n      b\n    \ntry:\n"
                               "    __execution_plan_result = __execution_plan_main()\n"
                               "except Exception as e:\n"
                               "    __execution_plan_exception = e\n");
        ck_assert_uint_eq(len, strlen(text));
        ck_assert_int_eq(lines, 3);
        free(text);
        text = NULL;
        /* \r is not a space: a line holding only "\r" counts as unindented. */
        ck_assert_int_eq(parser_wrap_body("x\r\n  y", 6, &text, &len, &lines), 0);
        ck_assert_str_eq(text, "def __execution_plan_main():\n    x\r\n      y\ntry:\n"
                               "    __execution_plan_result = __execution_plan_main()\n"
                               "except Exception as e:\n"
                               "    __execution_plan_exception = e\n");
        ck_assert_int_eq(lines, 2);
}
END_TEST

static void tokens(const char *src, const int *expect, size_t n)
{
        AstError err = {0};
        Lexer lx;
        lexer_init(&lx, src, strlen(src), &err);
        for (size_t i = 0; i < n; i++) {
                LexToken t;
                ck_assert_int_eq(lexer_next(&lx, &t), 0);
                ck_assert_msg((int)t.kind == expect[i], "token %zu of %s: kind %d, expected %d", i,
                              src, t.kind, expect[i]);
        }
        ast_error_clear(&err);
}

START_TEST(test_lexer_tokens)
{
        /* Brackets join lines; a blank or comment-only line does not count;
         * a dedent closes every level it leaves. */
        static const int a[] = {TOK_NAME,   TOK_OP, TOK_OP,      TOK_NUMBER,   TOK_OP,
                                TOK_NUMBER, TOK_OP, TOK_NEWLINE, TOK_ENDMARKER};
        tokens("x = (1,\n   2)\n", a, ELEMENTSOF(a));
        static const int b[] = {TOK_KEYWORD, TOK_NAME,     TOK_OP,     TOK_NEWLINE, TOK_INDENT,
                                TOK_KEYWORD, TOK_NAME,     TOK_OP,     TOK_NEWLINE, TOK_INDENT,
                                TOK_NAME,    TOK_NEWLINE,  TOK_DEDENT, TOK_DEDENT,  TOK_NAME,
                                TOK_NEWLINE, TOK_ENDMARKER};
        tokens("if x:\n  # note\n  if y:\n\n      z\nw\n", b, ELEMENTSOF(b));
        /* A backslash joins lines; strings keep their prefixes and quotes. */
        static const int c[] = {TOK_NAME,   TOK_OP,      TOK_STRING,   TOK_OP,
                                TOK_STRING, TOK_NEWLINE, TOK_ENDMARKER};
        tokens("s = rb'a' + \\\n  f\"\"\"x\ny\"\"\"\n", c, ELEMENTSOF(c));
}
END_TEST

START_TEST(test_number_literals)
{
        static const Case cases[] = {
                {"return 0x_ff, 0O17, 0b1_0, 1_000_000, 00, 0.5e-1_0, 1e400 > 1e308",
                 "[255, 15, 2, 1000000, 0, 5e-11, true]", NULL, NULL, 0},
                {"return 9223372036854775807, -9223372036854775808",
                 "[9223372036854775807, -9223372036854775808]", NULL, NULL, 0},
                {"return 1if 1 else 2", "1", NULL, NULL, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                check_case(&cases[i], (int)i);
}
END_TEST

START_TEST(test_source_encoding)
{
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        /* compile() refuses NUL bytes with a ValueError, before parsing. */
        static const char nul[] = "return 1\0";
        ck_assert_int_eq(run_body(nul, sizeof nul - 1, NULL, &h, &o), 0);
        ck_assert_str_eq(o.exc_type, "ValueError");
        ck_assert_str_eq(o.message, "source code string cannot contain null bytes");
        ck_assert_int_eq(o.line, 0);
        body_outcome_clear(&o);
        /* Universal newlines: \r\n is one line end, and a lone \r is one too,
         * which leaves what follows it outside the wrapper's def. */
        ck_assert_int_eq(run_body("x = 1\r\nreturn x\r\n", 17, NULL, &h, &o), 0);
        ck_assert_int_eq(o.error_code, 0);
        ck_assert_int_eq(json_integer_value(o.value), 1);
        body_outcome_clear(&o);
        ck_assert_int_eq(run_body("x = 1\rreturn x", 14, NULL, &h, &o), 0);
        ck_assert_str_eq(o.message, "'return' outside function (<string>, line 3)");
        body_outcome_clear(&o);
        /* Text after a \r runs at module level, before the function. */
        ck_assert_int_eq(run_body("return args.n\rargs.n = 9", 24, NULL, &h, &o), 0);
        ck_assert_int_eq(json_integer_value(o.value), 9);
        body_outcome_clear(&o);
        /* Non-ASCII text in strings is fine. */
        static const char utf8[] = "return len('h\xc3\xa9llo'), 'h\xc3\xa9llo'[1]";
        ck_assert_int_eq(run_body(utf8, sizeof utf8 - 1, NULL, &h, &o), 0);
        _cleanup_free_ char *text = NULL;
        ck_assert_int_eq(pyjson_dumps(o.value, &text), 0);
        ck_assert_str_eq(text, "[5, \"\\u00e9\"]");
        body_outcome_clear(&o);
        /* Body is NULL: the same as an empty Body. */
        ck_assert_int_eq(run_body(NULL, 0, NULL, &h, &o), 0);
        ck_assert_str_eq(o.message, "expected an indented block after function definition on "
                                    "line 1 (<string>, line 3)");
        ck_assert_int_eq(o.line, 1);
        body_outcome_clear(&o);
        json_decref(h.calls);
}
END_TEST

/* ---- the host -------------------------------------------------------------- */

START_TEST(test_script_calls)
{
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        const char *body = "deploy('a', 1, k=[1, (2, 3)])\n"
                           "r = setup.configure(x=True, **{'y': None})\n"
                           "return r.stdout, r['exitCode'], r.stderr";
        ck_assert_int_eq(run_body(body, strlen(body), NULL, &h, &o), 0);
        ck_assert_int_eq(o.error_code, 0);
        _cleanup_free_ char *calls = NULL, *value = NULL;
        ck_assert_int_eq(pyjson_dumps(h.calls, &calls), 0);
        ck_assert_str_eq(calls, "[{\"script\": \"deploy\", \"function\": null, "
                                "\"args\": [\"a\", 1], \"kwargs\": {\"k\": [1, [2, 3]]}}, "
                                "{\"script\": \"setup\", \"function\": \"configure\", "
                                "\"args\": [], \"kwargs\": {\"x\": true, \"y\": null}}]");
        ck_assert_int_eq(pyjson_dumps(o.value, &value), 0);
        ck_assert_str_eq(value, "[\"setup:0\", 0, null]");
        body_outcome_clear(&o);
        json_decref(h.calls);
}
END_TEST

START_TEST(test_script_failure)
{
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        /* Uncaught, a script failure keeps its own code and AdditionalInfo. */
        ck_assert_int_eq(run_body("x = 1\nfail()", 12, NULL, &h, &o), 0);
        ck_assert_int_eq(o.error_code, 100);
        ck_assert_str_eq(o.exc_type, "CustomException");
        ck_assert_str_eq(o.message, "Script fail returned error code");
        ck_assert_int_eq(o.line, 2);
        ck_assert_ptr_nonnull(o.additional_info);
        ck_assert_int_eq(json_integer_value(json_object_get(o.additional_info, "exitCode")), 3);
        body_outcome_clear(&o);
        /* A failure of the agent itself ends the evaluation with its errno,
         * whatever the Body tries to catch. */
        h.fatal = -EIO;
        const char *body = "try:\n    deploy()\nexcept:\n    return 'caught'";
        ck_assert_int_eq(run_body(body, strlen(body), NULL, &h, &o), -EIO);
        json_decref(h.calls);
}
END_TEST

static char tmpdir[64];

static void make_tmpdir(void)
{
        strcpy(tmpdir, "/tmp/test-body-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
        char path[128];
        snprintf(path, sizeof path, "%s/out.txt", tmpdir);
        unlink(path);
        rmdir(tmpdir);
}

START_TEST(test_with_files)
{
        make_tmpdir();
        FakeHost h = {.calls = json_array(), .cwd = tmpdir};
        static const Case cases[] = {
                /* Relative paths resolve against the host's directory. */
                {"with open('out.txt', 'w') as f:\n    f.write('hi')\n"
                 "with open('out.txt') as f:\n    return f.read()",
                 "\"hi\"", NULL, NULL, 0},
                /* The file is closed when the block returns... */
                {"def g():\n    with open('out.txt') as f:\n        return f\nreturn g().closed",
                 "true", NULL, NULL, 0},
                /* ...and when it raises, and the exception goes on. */
                {"try:\n    with open('out.txt') as f:\n        1 / 0\nexcept ZeroDivisionError as "
                 "e:\n"
                 "    return f.closed, str(e)",
                 "[true, \"division by zero\"]", NULL, NULL, 0},
                {"with open('out.txt') as f, open('out.txt') as g:\n    pass\nreturn f.closed, "
                 "g.closed",
                 "[true, true]", NULL, NULL, 0},
                {"with open('out.txt') as f:\n    pass\nwith f:\n    pass", NULL, "ValueError",
                 "I/O operation on closed file.", 3},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BodyOutcome o;
                const Case *c = &cases[i];
                ck_assert_int_eq(run_body(c->body, strlen(c->body), NULL, &h, &o), 0);
                if (c->json) {
                        ck_assert_msg(o.error_code == 0, "case %zu: %s: %s", i, o.exc_type,
                                      o.message);
                        _cleanup_free_ char *text = NULL;
                        ck_assert_int_eq(pyjson_dumps(o.value, &text), 0);
                        ck_assert_str_eq(text, c->json);
                } else {
                        ck_assert_str_eq(o.exc_type, c->exc);
                        ck_assert_str_eq(o.message, c->message);
                        ck_assert_int_eq(o.line, c->line);
                }
                body_outcome_clear(&o);
        }
        json_decref(h.calls);
        remove_tmpdir();
}
END_TEST

/* ---- limits ---------------------------------------------------------------- */

static double elapsed_ms(const struct timespec *a)
{
        struct timespec b;
        clock_gettime(CLOCK_MONOTONIC, &b);
        return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static void expect_error(const char *body, const BodyLimits *lim, const char *exc,
                         const char *message)
{
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        ck_assert_int_eq(run_body(body, strlen(body), lim, &h, &o), 0);
        ck_assert_msg(o.error_code == 1, "%s: expected %s, got code %d", body, exc, o.error_code);
        ck_assert_str_eq(o.exc_type, exc);
        if (message)
                ck_assert_str_eq(o.message, message);
        body_outcome_clear(&o);
        json_decref(h.calls);
}

START_TEST(test_step_limit)
{
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        lim.max_steps = 1000;
        const char *msg = "Body exceeded the evaluation step limit (1000)";
        expect_error("while True:\n    pass", &lim, "ResourceLimitError", msg);
        expect_error("for i in range(10 ** 9):\n    continue", &lim, "ResourceLimitError", msg);
        expect_error("return [i for i in range(10 ** 9)]", &lim, "ResourceLimitError", msg);
        /* No except clause catches a resource limit, and finally blocks
         * cannot keep the Body going. */
        expect_error("while True:\n    try:\n        while True:\n            pass\n"
                     "    except:\n        pass\n    finally:\n        continue",
                     &lim, "ResourceLimitError", msg);
        /* Builtins that loop over data count steps too. */
        expect_error("return sum(range(10 ** 9))", &lim, "ResourceLimitError", msg);
}
END_TEST

START_TEST(test_depth_limit)
{
        const char *body = "def f(n):\n    return f(n + 1)\nreturn f(0)";
        expect_error(body, NULL, "RecursionError", "maximum recursion depth exceeded");
        /* RecursionError cannot be caught either. */
        expect_error("def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n"
                     "        return 'caught'\nreturn f(0)",
                     NULL, "RecursionError", "maximum recursion depth exceeded");
        /* Whatever the configuration says, the C stack stays bounded. */
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        lim.max_depth = 100000000;
        expect_error(body, &lim, "RecursionError", "maximum recursion depth exceeded");
        /* Expression nesting counts too: 300 nested operators at the
         * default (CPython would evaluate this one). */
        char deep[1300] = "return ";
        for (int i = 0; i < 300; i++)
                strcat(deep, "not ");
        strcat(deep, "1");
        expect_error(deep, NULL, "RecursionError", "maximum recursion depth exceeded");
}
END_TEST

START_TEST(test_memory_limits)
{
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        lim.max_memory = 1u << 20;
        expect_error("l = []\nwhile True:\n    l.append('x' * 1000)", &lim, "MemoryError",
                     "Body exceeded its memory limit (1048576 bytes)");
        /* A string beyond max_string fails before anything is allocated. */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        expect_error("return 'x' * 10 ** 12", NULL, "MemoryError",
                     "a string of 1000000000000 bytes exceeds the Body string limit "
                     "(67108864 bytes)");
        ck_assert_msg(elapsed_ms(&t) < 1000, "'x' * 10 ** 12 took %.0f ms", elapsed_ms(&t));
}
END_TEST

/* Hostile nesting: refused quickly, without deep recursion. */
START_TEST(test_hostile_nesting)
{
        static const struct {
                const char *unit, *tail, *exc, *message;
        } cases[] = {
                {"(", "1", "SyntaxError", "too many nested parentheses (<string>, line 2)"},
                {"[", "", "SyntaxError", "too many nested parentheses (<string>, line 2)"},
                {"not ", "1", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
                {"-", "1", "RecursionError", "maximum recursion depth exceeded during compilation"},
                {"1+", "1", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
                {"a.", "b", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
                {"lambda: ", "1", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
                {"x if y else ", "1", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
                {"2**", "1", "RecursionError",
                 "maximum recursion depth exceeded during compilation"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t n = 100000, ul = strlen(cases[i].unit);
                char *body = malloc(n * ul + 32);
                ck_assert_ptr_nonnull(body);
                strcpy(body, "return ");
                char *p = body + 7;
                for (size_t k = 0; k < n; k++, p += ul)
                        memcpy(p, cases[i].unit, ul);
                strcpy(p, cases[i].tail);
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                expect_error(body, NULL, cases[i].exc, cases[i].message);
                ck_assert_msg(elapsed_ms(&t) < 5000, "%s: %.0f ms", cases[i].unit, elapsed_ms(&t));
                free(body);
        }
        /* Python's limits themselves: 200 brackets and 99 blocks are fine. */
        char body[8192] = "return ";
        for (int i = 0; i < 200; i++)
                strcat(body, "(");
        strcat(body, "7");
        for (int i = 0; i < 200; i++)
                strcat(body, ")");
        FakeHost h = {.calls = json_array()};
        BodyOutcome o;
        ck_assert_int_eq(run_body(body, strlen(body), NULL, &h, &o), 0);
        ck_assert_int_eq(json_integer_value(o.value), 7);
        body_outcome_clear(&o);
        body[0] = 0;
        for (int i = 0; i < 100; i++) {
                for (int k = 0; k < i; k++)
                        strcat(body, " ");
                strcat(body, "if 1:\n");
        }
        expect_error(body, NULL, "IndentationError",
                     "too many levels of indentation (<string>, line 101)");
        json_decref(h.calls);
}
END_TEST

/* Tokens in one pass over text, up to the end or the first tokenizer error. */
static uint64_t one_pass_tokens(const char *text, size_t len)
{
        Lexer lx;
        AstError err = {0};
        LexToken t;
        uint64_t n = 0;
        lexer_init(&lx, text, len, &err);
        while (lexer_next(&lx, &t) == 0 && t.kind != TOK_ENDMARKER)
                n++;
        ast_error_clear(&err);
        return n + 1;
}

/* Unbalanced brackets that CPython's error rules make the parser read more
 * than once (a failed call trailer read again as a parenthesized
 * expression, comprehension targets read again as an expression...). Each
 * level of nesting used to double the work: the first case, reduced from a
 * fuzzer finding (tests/fuzz/corpus-body/slow-parse-unbalanced-brackets),
 * took a million tokens, and the others would take longer than anyone
 * waits. The parser remembers which bracketed parts failed
 * (parser-memo.c): it must now lex at most a few times the tokens of one
 * pass, and report what CPython 3.11 reports. */
START_TEST(test_backtracking)
{
        static const struct {
                const char *head, *unit, *tail;
                int n;
                const char *message;
                int line;
        } cases[] = {
                {"",
                 "n[q[r[a(a(t(a(t(e(t(r[i(()for r[i(()for r(y(()for t(()for s((s)for r[i(s()for "
                 "r[i((((s)for r(y(s()for r[i(((t(e(((t(a(t(e(((t(a[i((((s()for v[i((((s)for "
                 "s.r(d.s((gs.er(y((",
                 "", 1, "'(' was never closed", 2},
                {"", "print(", ":", 150, "invalid syntax", 2},
                {"", "print [", " = ", 150, "invalid syntax", 2},
                {"", "a[b:c(", ":", 90, "invalid syntax", 2},
                {"", "[x for a[", " = ", 90, "invalid syntax", 2},
                {"", "a if b else c(", ":", 150, "invalid syntax", 2},
                {"return [x ", "for s[v((e)for r(y(a)\n", "if a else b del", 40,
                 "'(' was never closed", 41},
        };
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t hl = strlen(cases[i].head), ul = strlen(cases[i].unit);
                size_t len = hl + (size_t)cases[i].n * ul + strlen(cases[i].tail);
                _cleanup_free_ char *body = malloc(len + 1);
                ck_assert_ptr_nonnull(body);
                char *p = stpcpy(body, cases[i].head);
                for (int k = 0; k < cases[i].n; k++)
                        p = stpcpy(p, cases[i].unit);
                strcpy(p, cases[i].tail);

                _cleanup_free_ char *text = NULL;
                size_t text_len;
                int lines;
                ck_assert_int_eq(parser_wrap_body(body, len, &text, &text_len, &lines), 0);
                AstArena arena = {0};
                AstError err = {0};
                AstModule mod;
                ParserStats stats;
                ck_assert_int_eq(parser_compile_stats(text, text_len, &arena, &mod, &err, &stats),
                                 -1);
                ck_assert_str_eq(ast_error_type(&err), "SyntaxError");
                ck_assert_str_eq(err.msg, cases[i].message);
                ck_assert_int_eq(err.line, cases[i].line);
                uint64_t once = one_pass_tokens(text, text_len);
                ck_assert_msg(stats.tokens <= 16 * once, "case %zu: %llu tokens for %llu", i,
                              (unsigned long long)stats.tokens, (unsigned long long)once);
                ast_error_clear(&err);
                ast_arena_free(&arena);

                char message[128];
                snprintf(message, sizeof message, "%s (<string>, line %d)", cases[i].message,
                         cases[i].line);
                expect_error(body, NULL, "SyntaxError", message);
        }
        /* Milliseconds now; hours before. */
        ck_assert_msg(elapsed_ms(&t) < 2000, "%.0f ms", elapsed_ms(&t));
}
END_TEST

START_TEST(test_cancel)
{
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        atomic_int cancel;

        /* Another thread (the runner's loop) sets the flag; the Body stops at
         * its next poll, and no except clause can keep it going. */
        atomic_init(&cancel, 1);
        lim.cancel = &cancel;
        expect_error("while True:\n    try:\n        pass\n    except:\n        pass", &lim,
                     "ResourceLimitError", "Body evaluation was cancelled");
        /* An unset flag changes nothing. */
        atomic_store(&cancel, 0);
        lim.max_steps = 5000;
        expect_error("while True:\n    pass", &lim, "ResourceLimitError",
                     "Body exceeded the evaluation step limit (5000)");
}
END_TEST

START_TEST(test_large_copies_cost_steps)
{
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        struct timespec t;

        /* Each round copies 2 MiB: without a charge per KiB allocated this
         * loop would run for hours within 10000 steps. */
        lim.max_steps = 10000;
        clock_gettime(CLOCK_MONOTONIC, &t);
        expect_error("s = 'x' * (1 << 20)\nwhile True:\n    t = s + s", &lim, "ResourceLimitError",
                     "Body exceeded the evaluation step limit (10000)");
}
END_TEST

START_TEST(test_outcome_clear)
{
        BodyOutcome o = {.exc_type = strdup("X"), .message = strdup("y"), .value = json_true()};
        body_outcome_clear(&o);
        ck_assert_ptr_null(o.exc_type);
        body_outcome_clear(&o);
        body_outcome_clear(NULL);
}
END_TEST

static Suite *body_suite(void)
{
        Suite *s = suite_create("body");
        TCase *tc = tcase_create("lexer");
        tcase_add_test(tc, test_wrap);
        tcase_add_test(tc, test_lexer_tokens);
        tcase_add_test(tc, test_number_literals);
        tcase_add_test(tc, test_source_encoding);
        suite_add_tcase(s, tc);

        tc = tcase_create("syntax");
        tcase_add_loop_test(tc, test_syntax, 0, ELEMENTSOF(syntax_cases));
        tcase_add_loop_test(tc, test_unsupported, 0, ELEMENTSOF(unsupported_cases));
        suite_add_tcase(s, tc);

        tc = tcase_create("eval");
        tcase_add_loop_test(tc, test_runtime, 0, ELEMENTSOF(runtime_cases));
        tcase_add_test(tc, test_script_calls);
        tcase_add_test(tc, test_script_failure);
        tcase_add_test(tc, test_with_files);
        tcase_add_test(tc, test_outcome_clear);
        suite_add_tcase(s, tc);

        tc = tcase_create("limits");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_step_limit);
        tcase_add_test(tc, test_depth_limit);
        tcase_add_test(tc, test_memory_limits);
        tcase_add_test(tc, test_hostile_nesting);
        tcase_add_test(tc, test_backtracking);
        tcase_add_test(tc, test_cancel);
        tcase_add_test(tc, test_large_copies_cost_steps);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(body_suite());
}
