/* parser-memo: what the parser remembers by position.
 *
 * The `expression` memo: the positions where an expression was parsed
 * without the specialised checks (see parser_expression()).
 *
 * Failures of bracketed parts. The parser tries some things more than
 * once: a call trailer that does not parse is dropped from the primary, and
 * then CPython's error rules parse the same brackets again as an expression
 * (invalid_expression, invalid_legacy_expression); a comprehension's
 * targets are parsed again as an expression when no 'in' follows
 * (invalid_for_target); and so on. Each level of unclosed brackets inside
 * such a part doubled the work, so that a kilobyte of unbalanced brackets
 * took seconds, and a little more took hours, to refuse. CPython does not
 * have the problem because its parser memoizes rules by position.
 *
 * Here a call or subscript trailer, or a bracketed atom, that failed with
 * the generic "invalid syntax" is remembered by the position of its opening
 * bracket. A later parse of the same part fails at once, but only where
 * that cannot change anything the parse would have done:
 *
 * - A failed parse leaves nothing behind but its error (which for a
 *   trailer the caller drops, and for an atom is raised again), the
 *   furthest line read (Parser.max_line, which is set again), and things
 *   that the first parse recorded already and of which only the first
 *   record counts (unsupported constructs, late errors, `expression` memo
 *   entries).
 * - It is replayed only in what stands for CPython's second pass
 *   (p->spec > 0), where the furthest token read (Parser.last_pos) does not
 *   move, so that the generic error falls at the same place with or without
 *   the parse.
 * - The parse must take the same path as before: with the specialised
 *   checks on or off as then (no_invalid); with no `expression` memo entry
 *   added since in the part (an entry turns the checks off at its
 *   position), nor during the first parse itself; with room for the same
 *   recursion depth; and with every generic error a SyntaxError, not an
 *   IndentationError: the parse read no NEWLINE, INDENT, DEDENT or
 *   ENDMARKER, and the furthest token read was no INDENT or DEDENT then and
 *   is none now.
 *
 * Inside brackets the tokenizer emits none of those tokens, so in practice
 * every bracketed part that fails generically is remembered. */
#include <stdint.h>
#include <stdlib.h>

#include "body/syntax/parser.h"

/* ---- the `expression` memo ---------------------------------------------- */

bool parser_memo_has(Parser *p, const char *pos)
{
        if (!p->memo)
                return false;
        size_t mask = p->cap_memo - 1, j = ((uintptr_t)pos >> 2) & mask;
        while (p->memo[j]) {
                if (p->memo[j] == pos)
                        return true;
                j = (j + 1) & mask;
        }
        return false;
}

/* Entries by offset in the text, as a Fenwick tree: how many lie between
 * two positions (see span_entries()). Allocated with the first entry. */
static void count_entry(Parser *p, const char *pos)
{
        size_t n = p->lx.len + 1;
        if (!p->memo_counts && !p->memo_counts_failed) {
                p->memo_counts = calloc(n + 1, sizeof(*p->memo_counts));
                p->memo_counts_failed = !p->memo_counts;
        }
        if (!p->memo_counts)
                return;
        for (size_t i = (size_t)(pos - p->lx.src) + 1; i <= n; i += i & -i)
                p->memo_counts[i]++;
}

/* Entries at offsets below `end`. */
static uint32_t entries_below(const Parser *p, size_t end)
{
        uint32_t c = 0;
        for (size_t i = end; i > 0; i -= i & -i)
                c += p->memo_counts[i];
        return c;
}

/* Entries from `from` to `to`, both included. */
static uint32_t span_entries(const Parser *p, const char *from, const char *to)
{
        if (!p->memo_counts)
                return 0;
        return entries_below(p, (size_t)(to - p->lx.src) + 1) -
               entries_below(p, (size_t)(from - p->lx.src));
}

void parser_memo_add(Parser *p, const char *pos)
{
        if (parser_memo_has(p, pos))
                return;
        if ((p->n_memo + 1) * 2 > p->cap_memo) {
                size_t nc = p->cap_memo ? p->cap_memo * 2 : 64;
                const char **nm = calloc(nc, sizeof(*nm));
                if (!nm)
                        return; /* only the choice of message suffers */
                for (size_t i = 0; i < p->cap_memo; i++)
                        if (p->memo[i]) {
                                size_t j = ((uintptr_t)p->memo[i] >> 2) & (nc - 1);
                                while (nm[j])
                                        j = (j + 1) & (nc - 1);
                                nm[j] = p->memo[i];
                        }
                free(p->memo);
                p->memo = nm;
                p->cap_memo = nc;
        }
        size_t mask = p->cap_memo - 1, j = ((uintptr_t)pos >> 2) & mask;
        while (p->memo[j])
                j = (j + 1) & mask;
        p->memo[j] = pos;
        p->n_memo++;
        count_entry(p, pos);
}

/* ---- failures ------------------------------------------------------------ */

typedef struct ParserFailure {
        const char *pos;  /* NULL: free slot */
        const char *end;  /* the furthest token the parse read */
        uint8_t key;      /* rule, and whether the checks were off */
        size_t n_memo;    /* `expression` memo entries then... */
        uint32_t n_span;  /* ...and those from pos to end */
        int depth_needed; /* recursion the parse went below its start */
        int max_line;     /* Parser.max_line after it */
} ParserFailure;

static uint8_t failure_key(ParserMemoRule rule, bool no_invalid)
{
        return (uint8_t)((unsigned)rule << 1 | (no_invalid ? 1u : 0u));
}

static size_t failure_hash(const char *pos, uint8_t key, size_t mask)
{
        uint64_t h = (uint64_t)(uintptr_t)pos * 2 + key;
        h ^= h >> 29;
        h *= 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
        return (size_t)h & mask;
}

static ParserFailure *failure_find(Parser *p, const char *pos, uint8_t key)
{
        if (!p->fails)
                return NULL;
        size_t mask = p->cap_fails - 1;
        for (size_t j = failure_hash(pos, key, mask); p->fails[j].pos; j = (j + 1) & mask)
                if (p->fails[j].pos == pos && p->fails[j].key == key)
                        return &p->fails[j];
        return NULL;
}

/* The slot for (pos, key), new or not; NULL when memory runs out, which
 * only costs time. */
static ParserFailure *failure_slot(Parser *p, const char *pos, uint8_t key)
{
        ParserFailure *f = failure_find(p, pos, key);
        if (f)
                return f;
        if ((p->n_fails + 1) * 2 > p->cap_fails) {
                size_t nc = p->cap_fails ? p->cap_fails * 2 : 64;
                ParserFailure *nf = calloc(nc, sizeof(*nf));
                if (!nf)
                        return NULL;
                for (size_t i = 0; i < p->cap_fails; i++) {
                        if (!p->fails[i].pos)
                                continue;
                        size_t j = failure_hash(p->fails[i].pos, p->fails[i].key, nc - 1);
                        while (nf[j].pos)
                                j = (j + 1) & (nc - 1);
                        nf[j] = p->fails[i];
                }
                free(p->fails);
                p->fails = nf;
                p->cap_fails = nc;
        }
        size_t mask = p->cap_fails - 1, j = failure_hash(pos, key, mask);
        while (p->fails[j].pos)
                j = (j + 1) & mask;
        p->n_fails++;
        p->fails[j] = (ParserFailure){.pos = pos, .key = key};
        return &p->fails[j];
}

/* A generic error raised now would be an IndentationError. */
static bool at_indent(const Parser *p)
{
        return p->last_kind == TOK_INDENT || p->last_kind == TOK_DEDENT;
}

/* Has the `expression` memo changed where the failed parse looked? With
 * the checks off, `expression` looks it up only at Parser.memo_skip, which
 * is before any bracket inside the expression, so it does not matter then. */
static bool memo_changed(const Parser *p, const ParserFailure *f)
{
        if (f->key & 1)
                return false;
        if (p->memo_counts_failed)
                return p->n_memo != f->n_memo;
        return span_entries(p, f->pos, f->end) != f->n_span;
}

bool parser_memo_failed(Parser *p, ParserMemoRule rule, const char *pos)
{
        if (p->spec == 0 || p->err->kind != AST_ERR_NONE || at_indent(p))
                return false;
        const ParserFailure *f = failure_find(p, pos, failure_key(rule, p->no_invalid > 0));
        if (!f || memo_changed(p, f) || p->depth + f->depth_needed > AST_MAX_DEPTH)
                return false;
        if (f->max_line > p->max_line)
                p->max_line = f->max_line;
        /* The parse that this stands for is part of any parse around it,
         * which may be remembered in turn. */
        if (f->end > p->far)
                p->far = f->end;
        if (p->depth + f->depth_needed > p->peak_depth)
                p->peak_depth = p->depth + f->depth_needed;
        return true;
}

void parser_memo_begin(Parser *p, ParserProbe *pr, ParserMemoRule rule, const char *pos)
{
        *pr = (ParserProbe){
                .pos = pos,
                .rule = rule,
                .on = p->err->kind == AST_ERR_NONE && !at_indent(p),
                .no_invalid = p->no_invalid > 0,
                .n_memo = p->n_memo,
                .n_structure = p->n_structure,
                .depth = p->depth,
                .outer_peak = p->peak_depth,
                .outer_far = p->far,
        };
        p->peak_depth = p->depth;
        /* The tokens read ahead already are the parse's too. */
        p->far = p->ntok > 0 ? p->tok[p->ntok - 1].start : pos;
}

void parser_memo_end(Parser *p, const ParserProbe *pr, bool failed)
{
        int needed = p->peak_depth - pr->depth;
        const char *end = p->far;
        if (pr->outer_peak > p->peak_depth)
                p->peak_depth = pr->outer_peak;
        if (pr->outer_far > p->far)
                p->far = pr->outer_far;
        if (!pr->on || !failed || !parser_error_is_soft(p) || !p->err->generic ||
            p->n_structure != pr->n_structure)
                return;
        /* With the checks on, an entry the parse added changed its path
         * after that point, and a parse that starts with it would differ. */
        if (!pr->no_invalid && p->n_memo != pr->n_memo)
                return;
        ParserFailure *f = failure_slot(p, pr->pos, failure_key(pr->rule, pr->no_invalid));
        if (!f)
                return;
        f->end = end;
        f->n_memo = p->n_memo;
        f->n_span = span_entries(p, pr->pos, end);
        f->depth_needed = needed;
        f->max_line = p->max_line;
}

void parser_memo_free(Parser *p)
{
        free(p->memo);
        p->memo = NULL;
        p->n_memo = p->cap_memo = 0;
        free(p->memo_counts);
        p->memo_counts = NULL;
        free(p->fails);
        p->fails = NULL;
        p->n_fails = p->cap_fails = 0;
}
