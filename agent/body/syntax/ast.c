/* ast: the arena, compile errors and identifier interning (see ast.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "body/syntax/ast.h"

struct AstArenaChunk {
        AstArenaChunk *next;
        size_t size;
        max_align_t data[];
};

#define ARENA_CHUNK (16u << 10)

void *ast_alloc(AstArena *a, size_t n)
{
        n = (n + 7) & ~(size_t)7;
        if (!a->head || a->cap - a->used < n) {
                size_t size = n > ARENA_CHUNK / 2 ? n : ARENA_CHUNK;
                AstArenaChunk *c = malloc(sizeof(*c) + size);
                if (!c)
                        return NULL;
                c->size = size;
                if (a->head && n > ARENA_CHUNK / 2) {
                        /* A big block gets a chunk of its own behind the
                         * current one, which stays open for small nodes. */
                        c->next = a->head->next;
                        a->head->next = c;
                        memset(c->data, 0, n);
                        return c->data;
                }
                c->next = a->head;
                a->head = c;
                a->used = 0;
                a->cap = size;
        }
        void *p = (char *)a->head->data + a->used;
        a->used += n;
        memset(p, 0, n);
        return p;
}

char *ast_strndup(AstArena *a, const char *s, size_t n)
{
        char *p = ast_alloc(a, n + 1);
        if (!p)
                return NULL;
        memcpy(p, s, n);
        p[n] = 0;
        return p;
}

void ast_arena_free(AstArena *a)
{
        AstArenaChunk *c = a->head;
        while (c) {
                AstArenaChunk *next = c->next;
                free(c);
                c = next;
        }
        *a = (AstArena){0};
}

static int error_setv(AstError *e, AstErrKind kind, int line, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

static int error_setv(AstError *e, AstErrKind kind, int line, const char *fmt, va_list ap)
{
        free(e->msg);
        e->msg = NULL;
        e->kind = kind;
        e->line = line;
        e->generic = false;
        e->soft = false;
        e->from_lexer = false;
        e->sticky = false;
        e->final = false;
        if (vasprintf(&e->msg, fmt, ap) < 0) {
                e->msg = NULL;
                e->kind = AST_ERR_NOMEM;
        }
        return -1;
}

int ast_error_set(AstError *e, AstErrKind kind, int line, const char *fmt, ...)
{
        if (e->kind != AST_ERR_NONE)
                return -1;
        va_list ap;
        va_start(ap, fmt);
        error_setv(e, kind, line, fmt, ap);
        va_end(ap);
        return -1;
}

int ast_error_replace(AstError *e, AstErrKind kind, int line, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        error_setv(e, kind, line, fmt, ap);
        va_end(ap);
        return -1;
}

void ast_error_clear(AstError *e)
{
        free(e->msg);
        *e = (AstError){0};
}

const char *ast_error_type(const AstError *e)
{
        switch (e->kind) {
        case AST_ERR_INDENT:
                return "IndentationError";
        case AST_ERR_RECURSION:
                return "RecursionError";
        case AST_ERR_VALUE:
                return "ValueError";
        case AST_ERR_NOMEM:
                return "MemoryError";
        default:
                return "SyntaxError";
        }
}

static uint64_t hash_bytes(const char *s, size_t n)
{
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char)s[i];
                h *= 1099511628211ull;
        }
        return h;
}

const char *ast_intern(AstInterner *in, AstArena *a, const char *s, size_t n)
{
        if (in->count * 2 >= in->n_slots) {
                size_t nn = in->n_slots ? in->n_slots * 2 : 64;
                const char **ns = calloc(nn, sizeof(*ns));
                if (!ns)
                        return NULL;
                for (size_t i = 0; i < in->n_slots; i++) {
                        const char *k = in->slots[i];
                        if (!k)
                                continue;
                        size_t j = hash_bytes(k, strlen(k)) & (nn - 1);
                        while (ns[j])
                                j = (j + 1) & (nn - 1);
                        ns[j] = k;
                }
                free(in->slots);
                in->slots = ns;
                in->n_slots = nn;
        }
        size_t j = hash_bytes(s, n) & (in->n_slots - 1);
        while (in->slots[j]) {
                const char *k = in->slots[j];
                if (strncmp(k, s, n) == 0 && k[n] == 0)
                        return k;
                j = (j + 1) & (in->n_slots - 1);
        }
        char *k = ast_strndup(a, s, n);
        if (!k)
                return NULL;
        in->slots[j] = k;
        in->count++;
        return k;
}

void ast_interner_free(AstInterner *in)
{
        free(in->slots);
        *in = (AstInterner){0};
}

static size_t ptr_hash(const char *p, size_t mask)
{
        uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
        return (size_t)(h >> 32) & mask;
}

/* Rebuild the open-addressing index of a scope's slots (slot + 1, 0 empty). */
static int scope_reindex(AstScope *s, AstArena *a, int cap)
{
        size_t n = 1;
        while (n < (size_t)cap * 2)
                n <<= 1;
        int *index = ast_alloc(a, n * sizeof(*index));
        if (!index)
                return -1;
        for (int i = 0; i < s->n_slots; i++) {
                size_t j = ptr_hash(s->slots[i], n - 1);
                while (index[j])
                        j = (j + 1) & (n - 1);
                index[j] = i + 1;
        }
        s->index = index;
        s->n_index = n;
        return 0;
}

int ast_scope_slot(AstScope *s, AstArena *a, const char *name, bool add)
{
        /* Names are interned, so pointers compare. Most scopes hold a handful
         * of names and a scan is fastest; big ones get a hash index so that
         * a Body with thousands of names still compiles in linear time. */
        if (s->index) {
                size_t j = ptr_hash(name, s->n_index - 1);
                while (s->index[j]) {
                        if (s->slots[s->index[j] - 1] == name)
                                return s->index[j] - 1;
                        j = (j + 1) & (s->n_index - 1);
                }
        } else {
                for (int i = 0; i < s->n_slots; i++)
                        if (s->slots[i] == name)
                                return i;
        }
        if (!add)
                return -1;
        if (s->n_slots == s->cap_slots) {
                int nc = s->cap_slots ? s->cap_slots * 2 : 8;
                const char **ns = ast_alloc(a, (size_t)nc * sizeof(*ns));
                if (!ns)
                        return -2;
                if (s->n_slots)
                        memcpy(ns, s->slots, (size_t)s->n_slots * sizeof(*ns));
                s->slots = ns;
                s->cap_slots = nc;
                if (nc > 16 && scope_reindex(s, a, nc) < 0)
                        return -2;
        }
        s->slots[s->n_slots] = name;
        if (s->index) {
                size_t j = ptr_hash(name, s->n_index - 1);
                while (s->index[j])
                        j = (j + 1) & (s->n_index - 1);
                s->index[j] = s->n_slots + 1;
        }
        return s->n_slots++;
}
