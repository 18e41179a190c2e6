/* parser-fstring: adjacent string literals and f-strings.
 *
 * Python 3.11 tokenizes an f-string as one STRING token and splits it
 * afterwards (Parser/string_parser.c): literal text with {{ and }} undoubled,
 * and replacement fields {expr!c:spec} whose expression is compiled as
 * "(expr)" on its own. We do the same, with the same error messages, and
 * parse each expression with a sub-parser over that text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body/syntax/parser.h"
#include "util/macro.h"

typedef struct FParts {
        Parser *p;
        size_t base; /* parts on the parser's stack from here */
        /* Literal text not yet turned into a part. */
        char *lit;
        size_t lit_len, lit_cap;
        int line;
} FParts;

static int lit_append(FParts *f, const char *s, size_t n)
{
        if (f->lit_len + n + 1 > f->lit_cap) {
                size_t nc = f->lit_cap ? f->lit_cap : 64;
                while (nc < f->lit_len + n + 1)
                        nc *= 2;
                char *ns = ast_alloc(f->p->arena, nc);
                if (!ns)
                        return parser_nomem(f->p);
                if (f->lit_len)
                        memcpy(ns, f->lit, f->lit_len);
                f->lit = ns;
                f->lit_cap = nc;
        }
        memcpy(f->lit + f->lit_len, s, n);
        f->lit_len += n;
        f->lit[f->lit_len] = 0;
        return 0;
}

static int lit_flush(FParts *f)
{
        if (f->lit_len == 0)
                return 0;
        AstExpr *e = parser_expr_new(f->p, AST_STR, f->line);
        if (!e)
                return -1;
        e->str.s = f->lit;
        e->str.len = f->lit_len;
        f->lit = NULL;
        f->lit_len = f->lit_cap = 0;
        return parser_push(f->p, e);
}

static int lit_decoded(FParts *f, const char *s, size_t n, bool raw)
{
        if (n == 0)
                return 0;
        char *out;
        size_t len;
        if (lexer_decode_escapes(s, n, raw, f->p->last_line, f->p->arena, f->p->err, &out, &len) <
            0)
                return -1;
        return lit_append(f, out, len);
}

static int fs_error(Parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An error of the f-string splitter, at the furthest token read as CPython
 * places it (the token after the strings is on the string's last line). */
static int fs_error(Parser *p, const char *fmt, ...)
{
        char buf[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        bool saved = p->in_fstring;
        p->in_fstring = true;
        parser_error(p, p->last_line, "%s", buf);
        p->in_fstring = saved;
        return -1;
}

/* Parse "(expr)" with a parser of its own. */
static AstExpr *compile_expr(Parser *p, const char *s, size_t n, int line)
{
        bool blank = true;
        for (size_t i = 0; i < n; i++)
                if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '\014')
                        blank = false;
        if (blank) {
                fs_error(p, "empty expression not allowed");
                return NULL;
        }
        char *text = ast_alloc(p->arena, n + 3);
        if (!text) {
                parser_nomem(p);
                return NULL;
        }
        text[0] = '(';
        memcpy(text + 1, s, n);
        text[n + 1] = ')';
        text[n + 2] = 0;
        Parser sub = {
                .arena = p->arena,
                .interner = p->interner,
                .err = p->err,
                .depth = p->depth,
                .peak_depth = p->depth,
                .in_fstring = true,
        };
        lexer_init(&sub.lx, text, n + 2, p->err);
        sub.far = text;
        sub.lx.line = line;
        sub.last_line = line;
        sub.max_line = p->max_line;
        AstExpr *e = parser_star_expressions(&sub);
        if (e) {
                const LexToken *t = parser_peek(&sub, 0);
                if (t->kind != TOK_ENDMARKER && t->kind != TOK_NEWLINE) {
                        parser_generic_error(&sub);
                        e = NULL;
                }
        }
        if (!e && p->err->kind == AST_ERR_EOF_IN_BRACKETS) {
                /* "(expr" cannot happen: the braces were balanced. */
                ast_error_replace(p->err, AST_ERR_SYNTAX, line, "f-string: invalid syntax");
        }
        if (sub.late && !p->late) {
                p->late = sub.late;
                p->late_line = sub.late_line;
                sub.late = NULL;
        }
        if (sub.unsupported && !p->unsupported) {
                p->unsupported = sub.unsupported;
                p->unsupported_line = sub.unsupported_line;
                sub.unsupported = NULL;
        }
        if (sub.max_line > p->max_line)
                p->max_line = sub.max_line;
        if (sub.peak_depth > p->peak_depth)
                p->peak_depth = sub.peak_depth;
        p->n_lexed += sub.n_lexed;
        free(sub.late);
        free(sub.unsupported);
        free(sub.stack);
        parser_memo_free(&sub);
        return e;
}

static int fstring_parse(FParts *f, const char **str, const char *end, bool raw, int lvl,
                         const char *tok_start, int tok_line);

static int count_lines(const char *from, const char *to)
{
        int n = 0;
        for (const char *c = from; c < to; c++)
                n += *c == '\n';
        return n;
}

/* fstring_find_expr(): at '{', one replacement field. */
static int find_expr(FParts *f, const char **str, const char *end, bool raw, int lvl,
                     const char *tok_start, int tok_line)
{
        Parser *p = f->p;
        if (lvl >= 2)
                return fs_error(p, "expressions nested too deeply");
        (*str)++;
        const char *expr_start = *str;
        char parens[LEX_MAX_LEVEL];
        int depth = 0, quote = 0, string_type = 0;
        for (; *str < end; (*str)++) {
                char ch = **str;
                if (ch == '\\')
                        return parser_error(p, p->last_line,
                                            "f-string expression part cannot include a backslash");
                if (quote) {
                        if (ch == quote) {
                                if (string_type == 3) {
                                        if (*str + 2 < end && (*str)[1] == ch && (*str)[2] == ch) {
                                                *str += 2;
                                                quote = 0;
                                        }
                                } else {
                                        quote = 0;
                                }
                        }
                        continue;
                }
                if (ch == '\'' || ch == '"') {
                        if (*str + 2 < end && (*str)[1] == ch && (*str)[2] == ch) {
                                string_type = 3;
                                *str += 2;
                        } else {
                                string_type = 1;
                        }
                        quote = ch;
                } else if (ch == '[' || ch == '{' || ch == '(') {
                        if (depth >= LEX_MAX_LEVEL)
                                return fs_error(p, "too many nested parenthesis");
                        parens[depth++] = ch;
                } else if (ch == '#') {
                        return parser_error(p, p->last_line,
                                            "f-string expression part cannot include '#'");
                } else if (depth == 0 && (ch == '!' || ch == ':' || ch == '}' || ch == '=' ||
                                          ch == '>' || ch == '<')) {
                        if (*str + 1 < end) {
                                char next = (*str)[1];
                                if ((ch == '!' || ch == '=' || ch == '<' || ch == '>') &&
                                    next == '=') {
                                        (*str)++;
                                        continue;
                                }
                        }
                        if (ch == '>' || ch == '<')
                                continue;
                        break;
                } else if (ch == ']' || ch == '}' || ch == ')') {
                        if (depth == 0)
                                return fs_error(p, "unmatched '%c'", ch);
                        int open = parens[--depth];
                        if (!((open == '(' && ch == ')') || (open == '[' && ch == ']') ||
                              (open == '{' && ch == '}')))
                                return fs_error(p,
                                                "closing parenthesis '%c' does not match opening "
                                                "parenthesis '%c'",
                                                ch, open);
                }
        }
        const char *expr_end = *str;
        if (quote)
                return fs_error(p, "unterminated string");
        if (depth)
                return fs_error(p, "unmatched '%c'", parens[depth - 1]);
        if (*str >= end)
                return fs_error(p, "expecting '}'");
        if (expr_start == expr_end && (**str == '!' || **str == ':' || **str == '='))
                return fs_error(p, "expression required before '%c'", **str);
        int line = tok_line + count_lines(tok_start, expr_start);
        AstExpr *value = compile_expr(p, expr_start, (size_t)(expr_end - expr_start), line);
        if (!value)
                return -1;
        bool self_doc = false;
        if (**str == '=') {
                (*str)++;
                while (*str < end && (**str == ' ' || **str == '\t' || **str == '\n' ||
                                      **str == '\r' || **str == '\f' || **str == '\v'))
                        (*str)++;
                if (*str >= end)
                        return fs_error(p, "expecting '}'");
                if (lit_append(f, expr_start, (size_t)(*str - expr_start)) < 0)
                        return -1;
                self_doc = true;
        }
        int conversion = 0;
        if (**str == '!') {
                (*str)++;
                if (*str >= end)
                        return fs_error(p, "expecting '}'");
                conversion = (unsigned char)**str;
                (*str)++;
                if (conversion != 's' && conversion != 'r' && conversion != 'a')
                        return fs_error(p,
                                        "invalid conversion character: expected 's', 'r', or 'a'");
        }
        AstExpr *spec = NULL;
        if (*str < end && **str == ':') {
                (*str)++;
                if (*str >= end)
                        return fs_error(p, "expecting '}'");
                FParts sf = {.p = p, .base = p->n_stack, .line = f->line};
                if (fstring_parse(&sf, str, end, raw, lvl + 1, tok_start, tok_line) < 0 ||
                    lit_flush(&sf) < 0) {
                        p->n_stack = sf.base;
                        return -1;
                }
                spec = parser_expr_new(p, AST_FSTRING, f->line);
                if (!spec) {
                        p->n_stack = sf.base;
                        return -1;
                }
                spec->seq.n = (int)(p->n_stack - sf.base);
                spec->seq.items = (AstExpr **)parser_collect(p, sf.base);
                if (!spec->seq.items || parser_fix_depth(p, spec) < 0)
                        return -1;
        }
        if (*str >= end || **str != '}')
                return fs_error(p, "expecting '}'");
        (*str)++;
        if (self_doc && !spec && !conversion)
                conversion = 'r';
        if (lit_flush(f) < 0)
                return -1;
        AstExpr *fv = parser_expr_new(p, AST_FVALUE, value->line);
        if (!fv)
                return -1;
        fv->op = (uint8_t)conversion;
        fv->fvalue.value = value;
        fv->fvalue.spec = spec;
        if (parser_fix_depth(p, fv) < 0)
                return -1;
        return parser_push(p, fv);
}

/* _PyPegen_FstringParser_ConcatFstring(): literal text and fields up to the
 * end (lvl 0) or the '}' that ends a format spec (lvl 1). */
static int fstring_parse(FParts *f, const char **str, const char *end, bool raw, int lvl,
                         const char *tok_start, int tok_line)
{
        Parser *p = f->p;
        for (;;) {
                /* fstring_find_literal() */
                const char *s = *str, *lit_start = s;
                bool doubled = false;
                while (s < end) {
                        char ch = *s++;
                        if (!raw && ch == '\\' && s < end) {
                                ch = *s++;
                                if (ch == 'N') {
                                        if (s < end && *s++ == '{')
                                                while (s < end && *s++ != '}')
                                                        ;
                                        continue;
                                }
                        }
                        if (ch == '{' || ch == '}') {
                                if (lvl == 0) {
                                        if (s < end && *s == ch) {
                                                if (lit_decoded(f, lit_start,
                                                                (size_t)(s - lit_start), raw) < 0)
                                                        return -1;
                                                *str = s + 1;
                                                doubled = true;
                                                break;
                                        }
                                        if (ch == '}') {
                                                *str = s - 1;
                                                return fs_error(p, "single '}' is not allowed");
                                        }
                                }
                                s--;
                                break;
                        }
                }
                if (doubled)
                        continue;
                *str = s;
                if (lit_decoded(f, lit_start, (size_t)(s - lit_start), raw) < 0)
                        return -1;
                if (*str >= end || **str == '}')
                        break;
                if (find_expr(f, str, end, raw, lvl, tok_start, tok_line) < 0)
                        return -1;
        }
        if (lvl != 0 && (*str >= end || **str != '}'))
                return fs_error(p, "expecting '}'");
        return 0;
}

AstExpr *parser_strings(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        size_t base = p->n_stack;
        bool any_f = false, any_bytes = false, any_str = false;
        FParts f = {.p = p, .base = base, .line = line};
        /* CPython decodes the strings in the action of its `strings` rule,
         * once the token after them has been read: its errors are reported
         * on that token's line. Gather the tokens first. */
        LexToken *toks = NULL;
        size_t n = 0, cap = 0;
        while (parser_peek(p, 0)->kind == TOK_STRING) {
                if (parser_reserve(p, &toks, n, &cap, sizeof(*toks)) < 0)
                        goto fail;
                toks[n++] = *parser_peek(p, 0);
                parser_advance(p);
        }
        if (parser_failed(parser_peek(p, 0)))
                goto fail;
        for (size_t i = 0; i < n; i++) {
                LexToken t = toks[i];
                t.line = p->last_line;
                LexString ls;
                if (lexer_decode_string(&t, p->arena, p->err, &ls) < 0)
                        goto fail;
                any_bytes |= ls.bytes;
                any_str |= !ls.bytes;
                if (!ls.fstring) {
                        if (lit_append(&f, ls.s, ls.len) < 0)
                                goto fail;
                        continue;
                }
                any_f = true;
                /* The fields' lines count from the token's first line, which
                 * the text starts on after the prefix and quotes. */
                const char *str = ls.s, *end = ls.s + ls.len;
                if (fstring_parse(&f, &str, end, ls.raw, 0, ls.s, toks[i].line) < 0)
                        goto fail;
        }
        if (any_bytes && any_str) {
                parser_error(p, p->last_line, "cannot mix bytes and nonbytes literals");
                goto fail;
        }
        if (any_bytes)
                parser_unsupported(p, line, "bytes literals are");
        if (!any_f) {
                AstExpr *e = parser_expr_new(p, AST_STR, line);
                if (!e)
                        goto fail;
                e->str.s = f.lit ? f.lit : "";
                e->str.len = f.lit_len;
                p->n_stack = base;
                return e;
        }
        if (lit_flush(&f) < 0)
                goto fail;
        AstExpr *e = parser_expr_new(p, AST_FSTRING, line);
        if (!e)
                goto fail;
        e->seq.n = (int)(p->n_stack - base);
        e->seq.items = (AstExpr **)parser_collect(p, base);
        if (!e->seq.items || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
fail:
        /* CPython decodes strings in the action of its `strings` rule, so
         * these errors stand even inside a speculative parse. */
        p->err->sticky = true;
        p->n_stack = base;
        return NULL;
}
