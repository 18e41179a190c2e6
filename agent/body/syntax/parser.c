/* parser: wrapping, the parse driver, token handling and the statements.
 * See parser.h; the expression grammar is in parser-expr.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body/syntax/parser.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* The reference's _prepare_script() around the Body. */
static const char wrap_head[] = "def __execution_plan_main():\n";
static const char wrap_tail[] = "\ntry:\n"
                                "    __execution_plan_result = __execution_plan_main()\n"
                                "except Exception as e:\n"
                                "    __execution_plan_exception = e\n";

int parser_wrap_body(const char *body, size_t len, char **ret, size_t *ret_len, int *ret_body_lines)
{
        /* str.expandtabs(4): columns count code points and restart after
         * \n and \r. */
        _cleanup_strbuf_ StrBuf exp = STRBUF_INIT;
        size_t col = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)body[i];
                int r;
                if (c == '\t') {
                        size_t n = 4 - col % 4;
                        r = strbuf_append(&exp, "    ", n);
                        col += n;
                } else {
                        r = strbuf_putc(&exp, (char)c);
                        if (c == '\n' || c == '\r')
                                col = 0;
                        else if ((c & 0xc0) != 0x80)
                                col++;
                }
                if (r < 0)
                        return r;
        }
        const char *s = exp.data ? exp.data : "";
        size_t n = exp.len;

        /* The smallest indentation of a line that has something other than
         * a space (the reference tests c != ' ', so a line holding only
         * "\r" counts as unindented). */
        size_t min_indent = SIZE_MAX;
        for (size_t i = 0; i <= n;) {
                size_t e = i;
                while (e < n && s[e] != '\n')
                        e++;
                size_t k = i;
                while (k < e && s[k] == ' ')
                        k++;
                if (k < e && k - i < min_indent)
                        min_indent = k - i;
                i = e + 1;
        }

        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        int lines = 0, r = strbuf_puts(&out, wrap_head);
        for (size_t i = 0; r >= 0 && i <= n;) {
                size_t e = i;
                while (e < n && s[e] != '\n')
                        e++;
                /* line[min_indent:]: the first min_indent characters of
                 * every line are spaces or the line is shorter. */
                size_t skip = e - i < min_indent ? e - i : min_indent;
                if (lines > 0)
                        r = strbuf_putc(&out, '\n');
                if (r >= 0)
                        r = strbuf_puts(&out, "    ");
                if (r >= 0)
                        r = strbuf_append(&out, s + i + skip, e - i - skip);
                lines++;
                i = e + 1;
        }
        if (r >= 0)
                r = strbuf_puts(&out, wrap_tail);
        if (r < 0)
                return r;
        *ret_len = out.len;
        *ret_body_lines = lines;
        return strbuf_steal(&out, ret);
}

/* ---- tokens ------------------------------------------------------------ */

const LexToken *parser_peek(Parser *p, int k)
{
        while (p->ntok <= k) {
                LexToken *t = &p->tok[p->ntok];
                if (lexer_next(&p->lx, t) < 0) {
                        /* The lexer has reported its error; hand out a token
                         * no rule accepts, so that parsing stops here. */
                        p->error_tok = (LexToken){.kind = TOK_ERROR, .line = p->last_line};
                        return &p->error_tok;
                }
                p->ntok++;
                p->n_lexed++;
                if (t->kind == TOK_NEWLINE || t->kind == TOK_INDENT || t->kind == TOK_DEDENT ||
                    t->kind == TOK_ENDMARKER)
                        p->n_structure++;
                if (t->start > p->far)
                        p->far = t->start;
                if (p->spec == 0 && (!p->last_pos || t->start > p->last_pos ||
                                     (t->start == p->last_pos && (int)t->kind != p->last_kind))) {
                        p->last_pos = t->start;
                        p->last_line = t->line;
                        p->last_kind = t->kind;
                }
                if (t->line > p->max_line)
                        p->max_line = t->line;
        }
        return &p->tok[k];
}

void parser_advance(Parser *p)
{
        if (p->ntok == 0)
                return;
        p->prev_level = p->tok[0].level;
        p->prev_line = p->tok[0].end_line;
        memmove(&p->tok[0], &p->tok[1], (size_t)(p->ntok - 1) * sizeof(LexToken));
        p->ntok--;
}

bool parser_is_op(Parser *p, int k, int op)
{
        const LexToken *t = parser_peek(p, k);
        return t->kind == TOK_OP && t->id == op;
}

bool parser_is_kw(Parser *p, int k, int kw)
{
        const LexToken *t = parser_peek(p, k);
        return t->kind == TOK_KEYWORD && t->id == kw;
}

bool parser_accept_op(Parser *p, int op)
{
        if (!parser_is_op(p, 0, op))
                return false;
        parser_advance(p);
        return true;
}

int parser_expect_op(Parser *p, int op)
{
        return parser_accept_op(p, op) ? 0 : parser_generic_error(p);
}

bool parser_accept_kw(Parser *p, int kw)
{
        if (!parser_is_kw(p, 0, kw))
                return false;
        parser_advance(p);
        return true;
}

int parser_mark(Parser *p, ParserMark *m)
{
        parser_mark_done(m);
        if (lexer_save(&p->lx, &m->lx) < 0) {
                lexer_state_free(&m->lx);
                return parser_nomem(p);
        }
        m->saved = true;
        memcpy(m->tok, p->tok, sizeof(m->tok));
        m->ntok = p->ntok;
        m->prev_level = p->prev_level;
        m->prev_line = p->prev_line;
        m->n_stack = p->n_stack;
        return 0;
}

void parser_mark_done(ParserMark *m)
{
        if (m->saved)
                lexer_state_free(&m->lx);
        m->saved = false;
}

/* Go back to a mark after a speculative parse. Its error, if any, is
 * dropped, except a tokenizer error, which CPython raises wherever its
 * lookahead meets it; then the reset does not happen and -1 is returned. */
bool parser_error_is_soft(Parser *p)
{
        AstError *e = p->err;
        return e->kind == AST_ERR_NONE ||
               (!e->from_lexer && !e->sticky &&
                (e->kind == AST_ERR_SYNTAX || e->kind == AST_ERR_INDENT));
}

int parser_reset(Parser *p, const ParserMark *m)
{
        if (p->err->kind != AST_ERR_NONE) {
                if (!parser_error_is_soft(p))
                        return -1;
                ast_error_clear(p->err);
        }
        if (!m->saved)
                return parser_nomem(p);
        lexer_restore(&p->lx, &m->lx);
        memcpy(p->tok, m->tok, sizeof(m->tok));
        p->ntok = m->ntok;
        p->prev_level = m->prev_level;
        p->prev_line = m->prev_line;
        p->n_stack = m->n_stack;
        return 0;
}

const char *parser_name(Parser *p, const LexToken *t)
{
        const char *s = ast_intern(p->interner, p->arena, t->start, t->len);
        if (!s)
                parser_nomem(p);
        return s;
}

/* ---- errors -------------------------------------------------------------- */

static int perror_v(Parser *p, AstErrKind kind, int line, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

static int perror_v(Parser *p, AstErrKind kind, int line, const char *fmt, va_list ap)
{
        if (p->err->kind != AST_ERR_NONE)
                return -1;
        char buf[512];
        vsnprintf(buf, sizeof buf, fmt, ap);
        return ast_error_set(p->err, kind, line, "%s%s", p->in_fstring ? "f-string: " : "", buf);
}

int parser_error(Parser *p, int line, const char *fmt, ...)
{
        /* CPython's specialised messages come from rules that a
         * *_without_invalid parse does not try: there it just fails. */
        if (p->no_invalid > 0)
                return parser_generic_error(p);
        va_list ap;
        va_start(ap, fmt);
        perror_v(p, AST_ERR_SYNTAX, line, fmt, ap);
        va_end(ap);
        return -1;
}

int parser_expected_block(Parser *p, int line, const char *what, int what_line)
{
        if (p->no_invalid > 0)
                return parser_generic_error(p);
        return ast_error_set(p->err, AST_ERR_INDENT, line,
                             "%sexpected an indented block after %s on line %d",
                             p->in_fstring ? "f-string: " : "", what, what_line);
}

int parser_generic_error(Parser *p)
{
        if (p->err->kind != AST_ERR_NONE)
                return -1;
        if (p->last_kind == TOK_INDENT || p->last_kind == TOK_DEDENT) {
                ast_error_set(p->err, AST_ERR_INDENT, p->last_line, "%s",
                              p->last_kind == TOK_INDENT ? "unexpected indent"
                                                         : "unexpected unindent");
                p->err->final = true;
                return -1;
        }
        return parser_generic_error_at(p, p->last_line);
}

int parser_generic_error_at(Parser *p, int line)
{
        if (p->err->kind != AST_ERR_NONE)
                return -1;
        ast_error_set(p->err, AST_ERR_SYNTAX, line, "%sinvalid syntax",
                      p->in_fstring ? "f-string: " : "");
        p->err->generic = true;
        return -1;
}

void parser_unsupported(Parser *p, int line, const char *what)
{
        if (p->unsupported)
                return;
        if (asprintf(&p->unsupported, "%s not supported by muranoagent's Body interpreter", what) <
            0)
                p->unsupported = NULL;
        p->unsupported_line = line;
}

void parser_late_error(Parser *p, int line, const char *fmt, ...)
{
        if (p->late)
                return;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&p->late, fmt, ap) < 0)
                p->late = NULL;
        va_end(ap);
        p->late_line = line;
}

int parser_enter(Parser *p)
{
        if (++p->depth > AST_MAX_DEPTH) {
                p->depth--;
                if (p->err->kind == AST_ERR_NONE)
                        ast_error_set(p->err, AST_ERR_RECURSION, 0,
                                      "maximum recursion depth exceeded during compilation");
                return -1;
        }
        if (p->depth > p->peak_depth)
                p->peak_depth = p->depth;
        return 0;
}

AstExpr *parser_nested(Parser *p, AstExpr *(*rule)(Parser *p))
{
        if (parser_enter(p) < 0)
                return NULL;
        AstExpr *e = rule(p);
        parser_leave(p);
        return e;
}

int parser_nomem(Parser *p)
{
        return ast_error_replace(p->err, AST_ERR_NOMEM, 0, "out of memory");
}

/* ---- arrays and nodes -------------------------------------------------- */

int parser_push(Parser *p, void *item)
{
        if (p->n_stack == p->cap_stack) {
                size_t nc = p->cap_stack ? p->cap_stack * 2 : 64;
                void **ns = realloc(p->stack, nc * sizeof(*ns));
                if (!ns)
                        return parser_nomem(p);
                p->stack = ns;
                p->cap_stack = nc;
        }
        p->stack[p->n_stack++] = item;
        return 0;
}

int parser_reserve(Parser *p, void *items, size_t n, size_t *cap, size_t size)
{
        if (n < *cap)
                return 0;
        size_t nc = *cap ? *cap * 2 : 8;
        void *old, *na = ast_alloc(p->arena, nc * size);
        if (!na)
                return parser_nomem(p);
        memcpy(&old, items, sizeof(old));
        if (n)
                memcpy(na, old, n * size);
        memcpy(items, &na, sizeof(na));
        *cap = nc;
        return 0;
}

void **parser_collect(Parser *p, size_t base)
{
        size_t n = p->n_stack - base;
        void **a = ast_alloc(p->arena, (n ? n : 1) * sizeof(*a));
        if (!a) {
                parser_nomem(p);
                p->n_stack = base;
                return NULL;
        }
        if (n > 0)
                memcpy(a, p->stack + base, n * sizeof(*a));
        p->n_stack = base;
        return a;
}

AstExpr *parser_expr_new(Parser *p, int kind, int line)
{
        AstExpr *e = ast_alloc(p->arena, sizeof(*e));
        if (!e) {
                parser_nomem(p);
                return NULL;
        }
        e->kind = (uint8_t)kind;
        e->line = line;
        e->depth = 1;
        return e;
}

AstStmt *parser_stmt_new(Parser *p, int kind, int line)
{
        AstStmt *s = ast_alloc(p->arena, sizeof(*s));
        if (!s) {
                parser_nomem(p);
                return NULL;
        }
        s->kind = (uint8_t)kind;
        s->line = line;
        return s;
}

int parser_set_depth(Parser *p, AstExpr *e, int depth)
{
        if (depth > AST_MAX_DEPTH) {
                if (p->err->kind == AST_ERR_NONE)
                        ast_error_set(p->err, AST_ERR_RECURSION, 0,
                                      "maximum recursion depth exceeded during compilation");
                return -1;
        }
        e->depth = (uint16_t)depth;
        return 0;
}

/* ---- the driver -------------------------------------------------------- */

/* CPython's _PyPegen_tokenize_full_source_to_check_for_errors(): after an
 * error of the parser (not of the tokenizer), the rest of the text is
 * tokenized; a tokenizer error there is reported instead, and so is a
 * bracket left open on a line before the furthest token the parser read. */
static void check_rest_of_source(Parser *p)
{
        AstError probe = {0};
        p->lx.err = &probe;
        LexToken t;
        while (lexer_next(&p->lx, &t) == 0 && t.kind != TOK_ENDMARKER)
                ;
        p->lx.err = p->err;
        if (probe.kind != AST_ERR_NONE && probe.kind != AST_ERR_EOF_IN_BRACKETS && !probe.soft) {
                ast_error_replace(p->err, probe.kind, probe.line, "%s", probe.msg);
        } else if (probe.kind != AST_ERR_NONE && p->lx.level > 0) {
                /* Any other stop of the tokenizer inside brackets. */
                int l = p->lx.parenline[p->lx.level - 1];
                if (p->max_line > l)
                        ast_error_replace(p->err, AST_ERR_SYNTAX, l, "'%c' was never closed",
                                          p->lx.parenstack[p->lx.level - 1]);
        }
        ast_error_clear(&probe);
}

static void finish_error(Parser *p)
{
        AstError *e = p->err;
        if (e->kind == AST_ERR_EOF_IN_BRACKETS) {
                /* The parser read up to the end inside brackets. */
                if (p->lx.level > 0) {
                        int l = p->lx.parenline[p->lx.level - 1];
                        ast_error_replace(e, AST_ERR_SYNTAX, l, "'%c' was never closed",
                                          p->lx.parenstack[p->lx.level - 1]);
                } else {
                        ast_error_replace(e, AST_ERR_SYNTAX, e->line,
                                          "unexpected EOF while parsing");
                }
                return;
        }
        if (!e->from_lexer && !e->final && !p->lx.done &&
            (e->kind == AST_ERR_SYNTAX || e->kind == AST_ERR_INDENT))
                check_rest_of_source(p);
}

int parser_compile(const char *text, size_t len, AstArena *arena, AstModule *ret, AstError *err)
{
        return parser_compile_stats(text, len, arena, ret, err, NULL);
}

int parser_compile_stats(const char *text, size_t len, AstArena *arena, AstModule *ret,
                         AstError *err, ParserStats *stats)
{
        if (stats)
                *stats = (ParserStats){0};
        if (memchr(text, 0, len))
                return ast_error_set(err, AST_ERR_VALUE, 0,
                                     "source code string cannot contain null bytes");
        size_t bad;
        if (!utf8_valid(text, len, &bad)) {
                int line = 1;
                for (size_t i = 0; i < bad; i++)
                        line += text[i] == '\n';
                return ast_error_set(err, AST_ERR_SYNTAX, line,
                                     "(unicode error) 'utf-8' codec can't decode byte 0x%02x",
                                     (unsigned char)text[bad]);
        }
        /* compile() reads universal newlines: \r\n and a lone \r end a line. */
        char *norm = ast_alloc(arena, len + 1);
        if (!norm)
                return ast_error_set(err, AST_ERR_NOMEM, 0, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
                if (text[i] == '\r') {
                        norm[n++] = '\n';
                        if (i + 1 < len && text[i + 1] == '\n')
                                i++;
                } else {
                        norm[n++] = text[i];
                }
        }
        if (n == 0 || norm[n - 1] != '\n')
                norm[n++] = '\n';

        AstInterner interner = {0};
        Parser p = {
                .arena = arena,
                .interner = &interner,
                .err = err,
        };
        lexer_init(&p.lx, norm, n, err);
        p.far = norm;
        AstModule m = {0};
        m.scope.is_module = true;
        int r = parser_statements(&p, TOK_ENDMARKER, &m.body, &m.n_body);
        if (r < 0 && err->kind == AST_ERR_NONE)
                parser_generic_error(&p);
        if (p.lx.nonascii_line)
                parser_unsupported(&p, p.lx.nonascii_line, "identifiers beyond ASCII are");
        if (r < 0)
                finish_error(&p);
        else if (p.late)
                ast_error_set(err, AST_ERR_SYNTAX, p.late_line, "%s", p.late);
        else if (p.unsupported)
                ast_error_set(err, AST_ERR_SYNTAX, p.unsupported_line, "%s", p.unsupported);
        free(p.late);
        free(p.unsupported);
        free(p.stack);
        parser_memo_free(&p);
        if (stats)
                stats->tokens = p.n_lexed;
        if (err->kind == AST_ERR_NONE && ast_resolve(&m, arena, err) < 0)
                r = -1;
        ast_interner_free(&interner);
        if (err->kind != AST_ERR_NONE)
                return -1;
        *ret = m;
        return 0;
}
