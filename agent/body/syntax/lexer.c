/* lexer: see lexer.h. The structure follows CPython 3.11's tok_get() closely
 * (Parser/tokenizer.c), because its error messages and the lines it blames
 * are part of what a Body author sees. Input is the wrapped Body, which the
 * caller has already checked for NUL bytes and invalid UTF-8 and whose line
 * ends are already plain \n. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body/syntax/lexer.h"
#include "util/macro.h"
#include "util/utf8.h"

static const char *const keywords[_KW_MAX] = {
        [KW_FALSE] = "False",
        [KW_NONE] = "None",
        [KW_TRUE] = "True",
        [KW_AND] = "and",
        [KW_AS] = "as",
        [KW_ASSERT] = "assert",
        [KW_ASYNC] = "async",
        [KW_AWAIT] = "await",
        [KW_BREAK] = "break",
        [KW_CLASS] = "class",
        [KW_CONTINUE] = "continue",
        [KW_DEF] = "def",
        [KW_DEL] = "del",
        [KW_ELIF] = "elif",
        [KW_ELSE] = "else",
        [KW_EXCEPT] = "except",
        [KW_FINALLY] = "finally",
        [KW_FOR] = "for",
        [KW_FROM] = "from",
        [KW_GLOBAL] = "global",
        [KW_IF] = "if",
        [KW_IMPORT] = "import",
        [KW_IN] = "in",
        [KW_IS] = "is",
        [KW_LAMBDA] = "lambda",
        [KW_NONLOCAL] = "nonlocal",
        [KW_NOT] = "not",
        [KW_OR] = "or",
        [KW_PASS] = "pass",
        [KW_RAISE] = "raise",
        [KW_RETURN] = "return",
        [KW_TRY] = "try",
        [KW_WHILE] = "while",
        [KW_WITH] = "with",
        [KW_YIELD] = "yield",
};

static const char *const op_texts[] = {
        [OP_LPAR] = "(",
        [OP_RPAR] = ")",
        [OP_LSQB] = "[",
        [OP_RSQB] = "]",
        [OP_LBRACE] = "{",
        [OP_RBRACE] = "}",
        [OP_COLON] = ":",
        [OP_COMMA] = ",",
        [OP_SEMI] = ";",
        [OP_PLUS] = "+",
        [OP_MINUS] = "-",
        [OP_STAR] = "*",
        [OP_SLASH] = "/",
        [OP_VBAR] = "|",
        [OP_AMPER] = "&",
        [OP_LESS] = "<",
        [OP_GREATER] = ">",
        [OP_EQUAL] = "=",
        [OP_DOT] = ".",
        [OP_PERCENT] = "%",
        [OP_EQEQUAL] = "==",
        [OP_NOTEQUAL] = "!=",
        [OP_LESSEQUAL] = "<=",
        [OP_GREATEREQUAL] = ">=",
        [OP_TILDE] = "~",
        [OP_CIRCUMFLEX] = "^",
        [OP_LEFTSHIFT] = "<<",
        [OP_RIGHTSHIFT] = ">>",
        [OP_DOUBLESTAR] = "**",
        [OP_PLUSEQUAL] = "+=",
        [OP_MINEQUAL] = "-=",
        [OP_STAREQUAL] = "*=",
        [OP_SLASHEQUAL] = "/=",
        [OP_PERCENTEQUAL] = "%=",
        [OP_AMPEREQUAL] = "&=",
        [OP_VBAREQUAL] = "|=",
        [OP_CIRCUMFLEXEQUAL] = "^=",
        [OP_LEFTSHIFTEQUAL] = "<<=",
        [OP_RIGHTSHIFTEQUAL] = ">>=",
        [OP_DOUBLESTAREQUAL] = "**=",
        [OP_DOUBLESLASH] = "//",
        [OP_DOUBLESLASHEQUAL] = "//=",
        [OP_AT] = "@",
        [OP_ATEQUAL] = "@=",
        [OP_RARROW] = "->",
        [OP_ELLIPSIS] = "...",
        [OP_COLONEQUAL] = ":=",
        [OP_UNKNOWN] = "?",
};

const char *lexer_keyword_name(int kw)
{
        return kw >= 0 && kw < _KW_MAX ? keywords[kw] : "?";
}

const char *lexer_op_text(int op)
{
        return op >= 0 && op <= OP_UNKNOWN ? op_texts[op] : "?";
}

void lexer_init(Lexer *lx, const char *src, size_t len, AstError *err)
{
        *lx = (Lexer){
                .src = src,
                .len = len,
                .line = 1,
                .at_bol = true,
                .err = err,
        };
}

int lexer_save(const Lexer *lx, LexState *st)
{
        *st = (LexState){
                .pos = lx->pos,
                .line_start = lx->line_start,
                .line = lx->line,
                .pending = lx->pending,
                .indent = lx->indent,
                .level = lx->level,
                .nonascii_line = lx->nonascii_line,
                .at_bol = lx->at_bol,
                .done = lx->done,
        };
        size_t nl = (size_t)lx->level, ni = (size_t)lx->indent + 1;
        if (nl <= LEX_SAVE_INLINE && ni <= LEX_SAVE_INLINE) {
                st->paren = st->paren_inline;
                st->parenline = st->parenline_inline;
                st->ind = st->ind_inline;
        } else {
                st->heap = malloc(nl * (sizeof(char) + sizeof(int)) + ni * sizeof(int));
                if (!st->heap)
                        return -ENOMEM;
                st->parenline = st->heap;
                st->ind = st->parenline + nl;
                st->paren = (char *)(st->ind + ni);
        }
        memcpy(st->paren, lx->parenstack, nl);
        memcpy(st->parenline, lx->parenline, nl * sizeof(int));
        memcpy(st->ind, lx->indstack, ni * sizeof(int));
        return 0;
}

void lexer_restore(Lexer *lx, const LexState *st)
{
        lx->pos = st->pos;
        lx->line_start = st->line_start;
        lx->line = st->line;
        lx->pending = st->pending;
        lx->indent = st->indent;
        lx->level = st->level;
        lx->nonascii_line = st->nonascii_line;
        lx->at_bol = st->at_bol;
        lx->done = st->done;
        memcpy(lx->parenstack, st->paren, (size_t)st->level);
        memcpy(lx->parenline, st->parenline, (size_t)st->level * sizeof(int));
        memcpy(lx->indstack, st->ind, ((size_t)st->indent + 1) * sizeof(int));
}

void lexer_state_free(LexState *st)
{
        free(st->heap);
        st->heap = NULL;
}

static int peekc(const Lexer *lx, size_t ahead)
{
        size_t p = lx->pos + ahead;
        return p < lx->len ? (unsigned char)lx->src[p] : -1;
}

static int nextc(Lexer *lx)
{
        if (lx->pos >= lx->len)
                return -1;
        int c = (unsigned char)lx->src[lx->pos++];
        if (c == '\n') {
                lx->line++;
                lx->line_start = lx->pos;
        }
        return c;
}

/* The line CPython reports as "detected at": the line of the last character
 * read, which at the very end is the last line, not the one after it. */
static int current_line(const Lexer *lx)
{
        if (lx->pos >= lx->len && lx->pos > 0 && lx->src[lx->pos - 1] == '\n')
                return lx->line - 1;
        return lx->line;
}

static bool is_id_start(int c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 128;
}

static bool is_id_char(int c)
{
        return is_id_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(int c)
{
        return c >= '0' && c <= '9';
}

static bool is_xdigit(int c)
{
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int lex_error(Lexer *lx, AstErrKind kind, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int lex_error(Lexer *lx, AstErrKind kind, int line, const char *fmt, ...)
{
        char buf[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        lx->done = true;
        if (lx->err->kind != AST_ERR_NONE)
                return -1;
        ast_error_set(lx->err, kind, line, "%s", buf);
        lx->err->from_lexer = true;
        return -1;
}

/* The errors CPython's tokenizer only records in tok->done (see AstError). */
static int lex_soft_error(Lexer *lx, AstErrKind kind, int line, const char *msg)
{
        if (lx->err->kind == AST_ERR_NONE) {
                lex_error(lx, kind, line, "%s", msg);
                lx->err->soft = true;
        }
        lx->done = true;
        return -1;
}

/* Consume a line continuation: the backslash under the cursor and the newline
 * after it. 0, or -1 (soft error) when another character follows the
 * backslash or the source ends after it. */
static int lex_continuation(Lexer *lx)
{
        nextc(lx);
        if (peekc(lx, 0) != '\n')
                return lex_soft_error(lx, AST_ERR_SYNTAX, lx->line,
                                      "unexpected character after line continuation character");
        nextc(lx);
        if (peekc(lx, 0) < 0)
                return lex_soft_error(lx, AST_ERR_SYNTAX, current_line(lx),
                                      "unexpected EOF while parsing");
        return 0;
}

/* Code points str.isprintable() rejects among those a source may contain
 * outside strings. This is the part of the Unicode table that matters for
 * the error message; other unassigned or format characters are reported as
 * "invalid character" rather than "invalid non-printable character". */
static bool cp_is_printable(uint32_t cp)
{
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0xa0) || cp == 0xad)
                return false;
        if ((cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
            (cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff ||
            (cp >= 0xe000 && cp <= 0xf8ff) || (cp >= 0xfff9 && cp <= 0xfffb) || cp >= 0xf0000)
                return false;
        return true;
}

/* Letters of the common scripts, which Python accepts in identifiers. We
 * carry no Unicode tables here: other code points outside strings are
 * reported as invalid characters, and identifiers with letters beyond ASCII
 * are reported as unsupported by the parser (see Lexer.nonascii_line). */
static bool cp_is_letter(uint32_t cp)
{
        return (cp >= 0xc0 && cp <= 0x24f && cp != 0xd7 && cp != 0xf7) ||
               (cp >= 0x370 && cp <= 0x3ff && cp != 0x37e && cp != 0x387) ||
               (cp >= 0x400 && cp <= 0x4ff && !(cp >= 0x482 && cp <= 0x489)) ||
               (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x4e00 && cp <= 0x9fff) ||
               (cp >= 0xac00 && cp <= 0xd7a3);
}

static int invalid_character(Lexer *lx, size_t at)
{
        uint32_t cp = '?';
        int n = utf8_decode(lx->src + at, lx->len - at, &cp);
        if (n < 1)
                n = 1;
        if (!cp_is_printable(cp))
                return lex_error(lx, AST_ERR_SYNTAX, lx->line,
                                 "invalid non-printable character U+%04X", (unsigned)cp);
        return lex_error(lx, AST_ERR_SYNTAX, lx->line, "invalid character '%.*s' (U+%04X)", n,
                         lx->src + at, (unsigned)cp);
}

/* CPython's verify_end_of_number(): a number directly followed by a name is
 * an error, except for the keywords that may follow a number in valid code
 * (1if x else y), which only warn. "if", "in" and "is" are recognised by
 * their first two letters, the others only as whole words. */
static int verify_end_of_number(Lexer *lx, const char *kind)
{
        static const char *const words[] = {"and", "else", "for", "or", "not"};
        int c = peekc(lx, 0);
        if (c == 'i') {
                int c2 = peekc(lx, 1);
                if (c2 == 'f' || c2 == 'n' || c2 == 's')
                        return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                size_t n = strlen(words[i]);
                if (lx->pos + n <= lx->len && memcmp(lx->src + lx->pos, words[i], n) == 0 &&
                    !is_id_char(peekc(lx, n)))
                        return 0;
        }
        if (is_id_char(c))
                return lex_error(lx, AST_ERR_SYNTAX, lx->line, "invalid %s literal", kind);
        return 0;
}

/* Digits with single underscores between them; the first digit is read. */
static int decimal_tail(Lexer *lx)
{
        for (;;) {
                while (is_digit(peekc(lx, 0)))
                        nextc(lx);
                if (peekc(lx, 0) != '_')
                        return 0;
                nextc(lx);
                if (!is_digit(peekc(lx, 0)))
                        return lex_error(lx, AST_ERR_SYNTAX, lx->line, "invalid decimal literal");
        }
}

static int lex_radix(Lexer *lx, int radix, const char *kind)
{
        /* The prefix (0x, 0o, 0b) has been read. */
        do {
                if (peekc(lx, 0) == '_')
                        nextc(lx);
                int c = peekc(lx, 0);
                bool good = radix == 16 ? is_xdigit(c) : (c >= '0' && c < '0' + radix);
                if (!good) {
                        if (radix != 16 && is_digit(c))
                                return lex_error(lx, AST_ERR_SYNTAX, lx->line,
                                                 "invalid digit '%c' in %s literal", c, kind);
                        return lex_error(lx, AST_ERR_SYNTAX, lx->line, "invalid %s literal", kind);
                }
                for (;;) {
                        c = peekc(lx, 0);
                        good = radix == 16 ? is_xdigit(c) : (c >= '0' && c < '0' + radix);
                        if (!good)
                                break;
                        nextc(lx);
                }
        } while (peekc(lx, 0) == '_');
        if (radix != 16 && is_digit(peekc(lx, 0)))
                return lex_error(lx, AST_ERR_SYNTAX, lx->line, "invalid digit '%c' in %s literal",
                                 peekc(lx, 0), kind);
        return verify_end_of_number(lx, kind);
}

static int lex_fraction_exponent(Lexer *lx, bool had_dot)
{
        if (had_dot && is_digit(peekc(lx, 0)) && decimal_tail(lx) < 0)
                return -1;
        int c = peekc(lx, 0);
        if (c == 'e' || c == 'E') {
                int c1 = peekc(lx, 1);
                if (c1 == '+' || c1 == '-') {
                        nextc(lx);
                        nextc(lx);
                        if (!is_digit(peekc(lx, 0)))
                                return lex_error(lx, AST_ERR_SYNTAX, lx->line,
                                                 "invalid decimal literal");
                } else if (!is_digit(c1)) {
                        /* "1else": the number ends before the e. */
                        return verify_end_of_number(lx, "decimal");
                } else {
                        nextc(lx);
                }
                if (decimal_tail(lx) < 0)
                        return -1;
                c = peekc(lx, 0);
        }
        if (c == 'j' || c == 'J') {
                nextc(lx);
                return verify_end_of_number(lx, "imaginary");
        }
        return verify_end_of_number(lx, "decimal");
}

static int lex_number(Lexer *lx)
{
        int c = nextc(lx);
        if (c == '.')
                return lex_fraction_exponent(lx, true);
        if (c != '0') {
                if (decimal_tail(lx) < 0)
                        return -1;
                if (peekc(lx, 0) == '.') {
                        nextc(lx);
                        return lex_fraction_exponent(lx, true);
                }
                return lex_fraction_exponent(lx, false);
        }
        c = peekc(lx, 0);
        if (c == 'x' || c == 'X') {
                nextc(lx);
                return lex_radix(lx, 16, "hexadecimal");
        }
        if (c == 'o' || c == 'O') {
                nextc(lx);
                return lex_radix(lx, 8, "octal");
        }
        if (c == 'b' || c == 'B') {
                nextc(lx);
                return lex_radix(lx, 2, "binary");
        }
        /* Zeros, maybe an old-style octal (refused), maybe a float. */
        bool nonzero = false;
        for (;;) {
                c = peekc(lx, 0);
                if (c == '_') {
                        nextc(lx);
                        if (!is_digit(peekc(lx, 0)))
                                return lex_error(lx, AST_ERR_SYNTAX, lx->line,
                                                 "invalid decimal literal");
                        continue;
                }
                if (c != '0')
                        break;
                nextc(lx);
        }
        if (is_digit(peekc(lx, 0))) {
                nonzero = true;
                if (decimal_tail(lx) < 0)
                        return -1;
        }
        c = peekc(lx, 0);
        if (c == '.') {
                nextc(lx);
                return lex_fraction_exponent(lx, true);
        }
        if (c == 'e' || c == 'E' || c == 'j' || c == 'J')
                return lex_fraction_exponent(lx, false);
        if (nonzero)
                return lex_error(lx, AST_ERR_SYNTAX, lx->line,
                                 "leading zeros in decimal integer literals are not permitted; "
                                 "use an 0o prefix for octal integers");
        return verify_end_of_number(lx, "decimal");
}

static int lex_string(Lexer *lx, size_t quote_at)
{
        int start_line = lx->line;
        lx->pos = quote_at;
        int quote = nextc(lx);
        int quote_size = 1, end_quote_size = 0;
        if (peekc(lx, 0) == quote) {
                if (peekc(lx, 1) == quote) {
                        nextc(lx);
                        nextc(lx);
                        quote_size = 3;
                } else {
                        nextc(lx);
                        return 0; /* the empty string */
                }
        }
        while (end_quote_size != quote_size) {
                int c = nextc(lx);
                if (c < 0 || (quote_size == 1 && c == '\n')) {
                        int detected = c < 0 ? current_line(lx) : lx->line - 1;
                        if (quote_size == 3)
                                return lex_error(lx, AST_ERR_SYNTAX, start_line,
                                                 "unterminated triple-quoted string literal "
                                                 "(detected at line %d)",
                                                 detected);
                        return lex_error(lx, AST_ERR_SYNTAX, start_line,
                                         "unterminated string literal (detected at line %d)",
                                         detected);
                }
                if (c == quote) {
                        end_quote_size++;
                } else {
                        end_quote_size = 0;
                        if (c == '\\')
                                nextc(lx);
                }
        }
        return 0;
}

/* Is s[0..n) a string prefix CPython accepts (r, u, b, f and their
 * combinations br, rb, fr, rf in any case)? */
static bool is_string_prefix(const char *s, size_t n)
{
        bool r = false, u = false, b = false, f = false;
        for (size_t i = 0; i < n; i++) {
                switch (s[i] | 0x20) {
                case 'r':
                        if (r)
                                return false;
                        r = true;
                        break;
                case 'u':
                        if (u)
                                return false;
                        u = true;
                        break;
                case 'b':
                        if (b)
                                return false;
                        b = true;
                        break;
                case 'f':
                        if (f)
                                return false;
                        f = true;
                        break;
                default:
                        return false;
                }
        }
        if (u && (r || b || f || n > 1))
                return false;
        if (b && f)
                return false;
        return n <= 2;
}

static int lookup_keyword(const char *s, size_t n)
{
        if (n < 2 || n > 8)
                return -1;
        for (int k = 0; k < _KW_MAX; k++)
                if (strlen(keywords[k]) == n && memcmp(keywords[k], s, n) == 0)
                        return k;
        return -1;
}

struct optab {
        const char *text;
        LexOp op;
};

/* Longest first, so that the first match is the longest. */
static const struct optab ops3[] = {
        {"**=", OP_DOUBLESTAREQUAL}, {"...", OP_ELLIPSIS},        {"//=", OP_DOUBLESLASHEQUAL},
        {"<<=", OP_LEFTSHIFTEQUAL},  {">>=", OP_RIGHTSHIFTEQUAL},
};
static const struct optab ops2[] = {
        {"!=", OP_NOTEQUAL},        {"%=", OP_PERCENTEQUAL}, {"&=", OP_AMPEREQUAL},
        {"**", OP_DOUBLESTAR},      {"*=", OP_STAREQUAL},    {"+=", OP_PLUSEQUAL},
        {"-=", OP_MINEQUAL},        {"->", OP_RARROW},       {"//", OP_DOUBLESLASH},
        {"/=", OP_SLASHEQUAL},      {":=", OP_COLONEQUAL},   {"<<", OP_LEFTSHIFT},
        {"<=", OP_LESSEQUAL},       {"<>", OP_UNKNOWN},      {"==", OP_EQEQUAL},
        {">=", OP_GREATEREQUAL},    {">>", OP_RIGHTSHIFT},   {"@=", OP_ATEQUAL},
        {"^=", OP_CIRCUMFLEXEQUAL}, {"|=", OP_VBAREQUAL},
};

static int one_char_op(int c)
{
        switch (c) {
        case '(':
                return OP_LPAR;
        case ')':
                return OP_RPAR;
        case '[':
                return OP_LSQB;
        case ']':
                return OP_RSQB;
        case '{':
                return OP_LBRACE;
        case '}':
                return OP_RBRACE;
        case ':':
                return OP_COLON;
        case ',':
                return OP_COMMA;
        case ';':
                return OP_SEMI;
        case '+':
                return OP_PLUS;
        case '-':
                return OP_MINUS;
        case '*':
                return OP_STAR;
        case '/':
                return OP_SLASH;
        case '|':
                return OP_VBAR;
        case '&':
                return OP_AMPER;
        case '<':
                return OP_LESS;
        case '>':
                return OP_GREATER;
        case '=':
                return OP_EQUAL;
        case '.':
                return OP_DOT;
        case '%':
                return OP_PERCENT;
        case '~':
                return OP_TILDE;
        case '^':
                return OP_CIRCUMFLEX;
        case '@':
                return OP_AT;
        default:
                return OP_UNKNOWN;
        }
}

static int lex_indentation(Lexer *lx)
{
        int col = 0, cont_col = 0;
        for (;;) {
                int c = peekc(lx, 0);
                if (c == ' ') {
                        col++;
                } else if (c == '\t') {
                        col = (col / 8 + 1) * 8;
                } else if (c == '\014') {
                        col = 0;
                } else if (c == '\\') {
                        /* A backslash in the indentation continues it on the
                         * next line; the first one fixes the column (and,
                         * as in CPython, one in column 0 does not count). */
                        cont_col = cont_col ? cont_col : col;
                        if (lex_continuation(lx) < 0)
                                return -1;
                        continue;
                } else {
                        break;
                }
                nextc(lx);
        }
        if (cont_col)
                col = cont_col;
        int c = peekc(lx, 0);
        /* Lines with only blanks or a comment do not count. */
        if (c == '#' || c == '\n' || lx->level > 0)
                return 0;
        if (col == lx->indstack[lx->indent])
                return 0;
        if (col > lx->indstack[lx->indent]) {
                if (lx->indent + 1 >= LEX_MAX_INDENT)
                        return lex_soft_error(lx, AST_ERR_INDENT, lx->line,
                                              "too many levels of indentation");
                lx->indstack[++lx->indent] = col;
                lx->pending++;
                return 0;
        }
        while (lx->indent > 0 && col < lx->indstack[lx->indent]) {
                lx->indent--;
                lx->pending--;
        }
        if (col != lx->indstack[lx->indent])
                return lex_soft_error(lx, AST_ERR_INDENT, lx->line,
                                      "unindent does not match any outer indentation level");
        return 0;
}

static void make(Lexer *lx, LexToken *tok, LexTokKind kind, int id, size_t start, int line)
{
        *tok = (LexToken){
                .kind = kind,
                .id = id,
                .line = line,
                .end_line = current_line(lx),
                .start = lx->src + start,
                .len = lx->pos - start,
                .level = lx->level,
        };
}

int lexer_next(Lexer *lx, LexToken *tok)
{
        if (lx->done)
                return -1;
        bool blankline = false;
nextline:
        blankline = false;
        if (lx->at_bol) {
                lx->at_bol = false;
                if (lex_indentation(lx) < 0)
                        return -1;
                int c = peekc(lx, 0);
                if ((c == '#' || c == '\n') && lx->level == 0)
                        blankline = true;
        }
        if (lx->pending != 0) {
                if (lx->pending > 0) {
                        lx->pending--;
                        make(lx, tok, TOK_INDENT, 0, lx->pos, lx->line);
                } else {
                        lx->pending++;
                        make(lx, tok, TOK_DEDENT, 0, lx->pos, lx->line);
                }
                return 0;
        }
again:
        while (peekc(lx, 0) == ' ' || peekc(lx, 0) == '\t' || peekc(lx, 0) == '\014')
                nextc(lx);
        if (peekc(lx, 0) == '#')
                while (peekc(lx, 0) >= 0 && peekc(lx, 0) != '\n')
                        nextc(lx);

        size_t start = lx->pos;
        int line = lx->line;
        int c = peekc(lx, 0);
        if (c < 0) {
                if (lx->level > 0) {
                        lx->done = true;
                        if (lx->err->kind == AST_ERR_NONE) {
                                lx->err->kind = AST_ERR_EOF_IN_BRACKETS;
                                lx->err->line = current_line(lx);
                                lx->err->from_lexer = true;
                        }
                        return -1;
                }
                make(lx, tok, TOK_ENDMARKER, 0, start, current_line(lx));
                return 0;
        }

        if (is_id_start(c)) {
                while (is_id_char(peekc(lx, 0)))
                        nextc(lx);
                int q = peekc(lx, 0);
                if ((q == '\'' || q == '"') && is_string_prefix(lx->src + start, lx->pos - start)) {
                        if (lex_string(lx, lx->pos) < 0)
                                return -1;
                        make(lx, tok, TOK_STRING, 0, start, line);
                        return 0;
                }
                for (size_t i = start; i < lx->pos;) {
                        uint32_t cp;
                        int n = utf8_decode(lx->src + i, lx->pos - i, &cp);
                        if (n < 1 || (cp >= 128 && !cp_is_letter(cp)))
                                return invalid_character(lx, i);
                        if (cp >= 128 && !lx->nonascii_line)
                                lx->nonascii_line = line;
                        i += (size_t)n;
                }
                int kw = lookup_keyword(lx->src + start, lx->pos - start);
                if (kw >= 0)
                        make(lx, tok, TOK_KEYWORD, kw, start, line);
                else
                        make(lx, tok, TOK_NAME, 0, start, line);
                return 0;
        }

        if (c == '\n') {
                nextc(lx);
                lx->at_bol = true;
                if (blankline || lx->level > 0)
                        goto nextline;
                make(lx, tok, TOK_NEWLINE, 0, start, line);
                tok->len = 1;
                return 0;
        }

        if (c == '.' && is_digit(peekc(lx, 1))) {
                if (lex_number(lx) < 0)
                        return -1;
                make(lx, tok, TOK_NUMBER, 0, start, line);
                return 0;
        }
        if (is_digit(c)) {
                if (lex_number(lx) < 0)
                        return -1;
                make(lx, tok, TOK_NUMBER, 0, start, line);
                return 0;
        }
        if (c == '\'' || c == '"') {
                if (lex_string(lx, start) < 0)
                        return -1;
                make(lx, tok, TOK_STRING, 0, start, line);
                return 0;
        }
        if (c == '\\') {
                if (lex_continuation(lx) < 0)
                        return -1;
                goto again;
        }

        /* Operators, longest match first. */
        for (size_t i = 0; i < ELEMENTSOF(ops3); i++)
                if (lx->pos + 3 <= lx->len && memcmp(lx->src + lx->pos, ops3[i].text, 3) == 0) {
                        lx->pos += 3;
                        make(lx, tok, TOK_OP, ops3[i].op, start, line);
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(ops2); i++)
                if (lx->pos + 2 <= lx->len && memcmp(lx->src + lx->pos, ops2[i].text, 2) == 0) {
                        lx->pos += 2;
                        make(lx, tok, TOK_OP, ops2[i].op, start, line);
                        return 0;
                }

        if (c < 0x20 || c == 0x7f)
                return invalid_character(lx, start);

        switch (c) {
        case '(':
        case '[':
        case '{':
                if (lx->level >= LEX_MAX_LEVEL)
                        return lex_error(lx, AST_ERR_SYNTAX, line, "too many nested parentheses");
                lx->parenstack[lx->level] = (char)c;
                lx->parenline[lx->level] = line;
                lx->level++;
                break;
        case ')':
        case ']':
        case '}': {
                if (lx->level == 0)
                        return lex_error(lx, AST_ERR_SYNTAX, line, "unmatched '%c'", c);
                lx->level--;
                int open = lx->parenstack[lx->level];
                if (!((open == '(' && c == ')') || (open == '[' && c == ']') ||
                      (open == '{' && c == '}'))) {
                        if (lx->parenline[lx->level] != line)
                                return lex_error(lx, AST_ERR_SYNTAX, line,
                                                 "closing parenthesis '%c' does not match "
                                                 "opening parenthesis '%c' on line %d",
                                                 c, open, lx->parenline[lx->level]);
                        return lex_error(lx, AST_ERR_SYNTAX, line,
                                         "closing parenthesis '%c' does not match opening "
                                         "parenthesis '%c'",
                                         c, open);
                }
                break;
        }
        default:
                break;
        }
        nextc(lx);
        make(lx, tok, TOK_OP, one_char_op(c), start, line);
        return 0;
}
