/* The VM and the life cycle of values: accounting, allocation, the
 * iterative free, the end-of-run sweep, and the basic constructors. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/utf8.h"

BodyValue bv__none_value = {.kind = BV_NONE, .immortal = true, .refcnt = 1};
BodyValue bv__true_value = {.kind = BV_BOOL, .immortal = true, .refcnt = 1, .b = true};
BodyValue bv__false_value = {.kind = BV_BOOL, .immortal = true, .refcnt = 1, .b = false};

BodyValue *bv_none(void)
{
        return &bv__none_value;
}

BodyValue *bv_bool(bool b)
{
        return b ? &bv__true_value : &bv__false_value;
}

int bv_vm_init(BodyVM *vm, const BodyLimits *limits, const BodyHost *host,
               const char *const *scripts, size_t n_scripts)
{
        *vm = (BodyVM){.limits = limits ? *limits : BODY_LIMITS_DEFAULT, .host = host};
        if (n_scripts > 0) {
                vm->scripts = calloc(n_scripts, sizeof(char *));
                if (!vm->scripts)
                        return -ENOMEM;
                for (size_t i = 0; i < n_scripts; i++) {
                        vm->scripts[i] = strdup(scripts[i]);
                        if (!vm->scripts[i]) {
                                vm->n_scripts = i;
                                bv_vm_done(vm);
                                return -ENOMEM;
                        }
                }
                vm->n_scripts = n_scripts;
        }
        /* A hash key the Body cannot predict, so that it cannot build keys
         * that all collide and turn dict operations quadratic. */
        if (getrandom(vm->hash_key, sizeof(vm->hash_key), GRND_NONBLOCK) !=
            (ssize_t)sizeof(vm->hash_key)) {
                vm->hash_key[0] = (uint64_t)(uintptr_t)vm ^ 0x736f6d6570736575ULL;
                vm->hash_key[1] = (uint64_t)(uintptr_t)&vm ^ 0x646f72616e646f6dULL;
        }
        /* A Body that runs again after a crash must see the same order of
         * sets and dicts of hashed keys, and the same hash() values. */
        if (host && host->draw) {
                size_t len = sizeof(vm->hash_key);
                char *key = malloc(len);
                int r;

                if (!key) {
                        bv_vm_done(vm);
                        return -ENOMEM;
                }
                memcpy(key, vm->hash_key, len);
                r = host->draw(host->userdata, "hash-key", NULL, &key, &len);
                if (r == 0 && len == sizeof(vm->hash_key))
                        memcpy(vm->hash_key, key, len);
                free(key);
                if (r < 0) {
                        bv_vm_done(vm);
                        return r;
                }
        }
        return 0;
}

static void release_contents(BodyValue *v);

void bv_vm_done(BodyVM *vm)
{
        BodyValue *v;

        bv_exc_clear(vm);
        /* Whatever is still alive is garbage kept by reference cycles (or
         * leaked by a caller). Pin everything first so that releasing the
         * contents of one value never frees another, then free the shells. */
        for (v = vm->live; v; v = v->live_next)
                v->refcnt++;
        for (v = vm->live; v; v = v->live_next)
                release_contents(v);
        while ((v = vm->live)) {
                vm->live = v->live_next;
                bv_mem_free(vm, v, v->mem);
        }
        for (size_t i = 0; i < vm->n_scripts; i++)
                free(vm->scripts[i]);
        free(vm->scripts);
        vm->scripts = NULL;
        vm->n_scripts = 0;
}

int bv_step_slow(BodyVM *vm)
{
        if (vm->steps <= vm->limits.max_steps) {
                if (!atomic_load_explicit(vm->limits.cancel, memory_order_relaxed))
                        return 0;
                bv_raise(vm, BV_EXC_RESOURCE_LIMIT_ERROR, "Body evaluation was cancelled");
                return -1;
        }
        vm->steps = vm->limits.max_steps + 1;
        bv_raise(vm, BV_EXC_RESOURCE_LIMIT_ERROR, "Body exceeded the evaluation step limit (%llu)",
                 (unsigned long long)vm->limits.max_steps);
        return -1;
}

int bv_depth_enter(BodyVM *vm)
{
        if (vm->depth >= vm->limits.max_depth) {
                bv_raise(vm, BV_EXC_RECURSION_ERROR, "maximum recursion depth exceeded");
                return -1;
        }
        vm->depth++;
        return 0;
}

void *bv_mem_alloc(BodyVM *vm, size_t size)
{
        void *p;

        if (size > vm->limits.max_memory || vm->mem_live > vm->limits.max_memory - size)
                return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                "Body exceeded its memory limit (%zu bytes)",
                                vm->limits.max_memory);
        p = malloc(size ? size : 1);
        if (!p)
                return bv_raise_fatal(vm, -ENOMEM);
        /* Work proportional to data size costs steps too (see bv_step). */
        vm->steps += size >> 10;
        vm->mem_live += size;
        if (vm->mem_live > vm->mem_peak)
                vm->mem_peak = vm->mem_live;
        return p;
}

void *bv_mem_realloc(BodyVM *vm, void *p, size_t old_size, size_t new_size)
{
        void *q;

        if (new_size > old_size) {
                size_t more = new_size - old_size;
                if (more > vm->limits.max_memory || vm->mem_live > vm->limits.max_memory - more)
                        return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                        "Body exceeded its memory limit (%zu bytes)",
                                        vm->limits.max_memory);
        }
        q = realloc(p, new_size ? new_size : 1);
        if (!q)
                return bv_raise_fatal(vm, -ENOMEM);
        if (new_size > old_size)
                vm->steps += (new_size - old_size) >> 10;
        vm->mem_live = vm->mem_live - old_size + new_size;
        if (vm->mem_live > vm->mem_peak)
                vm->mem_peak = vm->mem_live;
        return q;
}

void bv_mem_free(BodyVM *vm, void *p, size_t size)
{
        if (!p)
                return;
        vm->mem_live -= size;
        free(p);
}

BodyValue *bv__alloc(BodyVM *vm, BvKind kind, size_t extra)
{
        BodyValue *v;

        if (extra > SIZE_MAX - sizeof(BodyValue))
                return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                "Body exceeded its memory limit (%zu bytes)",
                                vm->limits.max_memory);
        v = bv_mem_alloc(vm, sizeof(BodyValue) + extra);
        if (!v)
                return NULL;
        memset(v, 0, sizeof(*v));
        v->kind = kind;
        v->refcnt = 1;
        v->vm = vm;
        v->mem = sizeof(BodyValue) + extra;
        v->live_next = vm->live;
        if (vm->live)
                vm->live->live_prev = v;
        vm->live = v;
        return v;
}

static void unlink_live(BodyValue *v)
{
        BodyVM *vm = v->vm;

        if (v->live_prev)
                v->live_prev->live_next = v->live_next;
        else
                vm->live = v->live_next;
        if (v->live_next)
                v->live_next->live_prev = v->live_prev;
        v->live_prev = v->live_next = NULL;
}

/* ---- the release slots of the core's kinds ---- */

void bv__seq_release(BodyValue *v)
{
        for (size_t i = 0; i < v->list.len; i++)
                bv_unref(v->list.items[i]);
        bv_mem_free(v->vm, v->list.items, v->list.cap * sizeof(BodyValue *));
        v->list.items = NULL;
        v->list.len = v->list.cap = 0;
}

void bv__slice_release(BodyValue *v)
{
        bv_unref(TAKE_PTR(v->slice.start));
        bv_unref(TAKE_PTR(v->slice.stop));
        bv_unref(TAKE_PTR(v->slice.step));
}

void bv__dictview_release(BodyValue *v)
{
        bv_unref(TAKE_PTR(v->dictview.dict));
}

void bv__range_release(BodyValue *v)
{
        for (size_t i = 0; i < 4; i++)
                bv_unref(TAKE_PTR(v->range.z[i]));
}

void bv__iter_release(BodyValue *v)
{
        bv_unref(TAKE_PTR(v->iter.src));
        bv_unref(TAKE_PTR(v->iter.fn));
        if (v->iter.its) {
                for (size_t i = 0; i < v->iter.n_its; i++)
                        bv_unref(v->iter.its[i]);
                bv_mem_free(v->vm, v->iter.its, v->iter.n_its * sizeof(BodyValue *));
                v->iter.its = NULL;
                v->iter.n_its = 0;
        }
}

void bv__method_release(BodyValue *v)
{
        bv_unref(TAKE_PTR(v->method.self));
}

void bv__function_release(BodyValue *v)
{
        if (v->function.destroy && v->function.payload)
                v->function.destroy(v->function.payload);
        v->function.payload = NULL;
}

void bv__file_release(BodyValue *v)
{
        if (v->file.fp) {
                fclose(v->file.fp);
                v->vm->open_files--;
        }
        v->file.fp = NULL;
        if (v->file.mem)
                bv_mem_free(v->vm, v->file.mem, v->file.mem_size);
        v->file.mem = NULL;
}

void bv__exc_release(BodyValue *v)
{
        bv_unref(TAKE_PTR(v->exc.args));
        bv_unref(TAKE_PTR(v->exc.filename));
        json_decref(v->exc.additional_info);
        v->exc.additional_info = NULL;
}

/* Drop what v holds (references, arrays, the FILE) but not v itself. */
static void release_contents(BodyValue *v)
{
        const BvType *t = bv__type(v);

        if (t->release)
                t->release(v);
}

void bv_free_value(BodyValue *v)
{
        BodyVM *vm = v->vm;

        /* Freeing a value releases its children, which may free theirs: a
         * list nested a million deep would overflow the C stack if that
         * recursed. Queue the values instead and free them in a loop. */
        unlink_live(v);
        v->live_next = vm->free_queue;
        vm->free_queue = v;
        if (vm->freeing)
                return;
        vm->freeing = true;
        while ((v = vm->free_queue)) {
                vm->free_queue = v->live_next;
                release_contents(v);
                bv_mem_free(vm, v, v->mem);
        }
        vm->freeing = false;
}

/* ---- constructors ---- */

BodyValue *bv_int_new(BodyVM *vm, int64_t i)
{
        BodyValue *v = bv__alloc(vm, BV_INT, 0);
        if (v)
                v->i = i;
        return v;
}

BodyValue *bv_float_new(BodyVM *vm, double f)
{
        BodyValue *v = bv__alloc(vm, BV_FLOAT, 0);
        if (v)
                v->f = f;
        return v;
}

int bv__check_string_size(BodyVM *vm, uint64_t len)
{
        if (len > vm->limits.max_string) {
                bv_raise(vm, BV_EXC_MEMORY_ERROR,
                         "a string of %llu bytes exceeds the Body string limit (%zu bytes)",
                         (unsigned long long)len, vm->limits.max_string);
                return -1;
        }
        return 0;
}

int bv__draw(BodyVM *vm, const char *kind, const char *what, char **value, size_t *len)
{
        int r;

        if (!vm->host || !vm->host->draw)
                return 0;
        r = vm->host->draw(vm->host->userdata, kind, what, value, len);
        if (r < 0) {
                bv_raise_fatal(vm, r);
                return -1;
        }
        return 0;
}

int bv__buf_error(BodyVM *vm, int r)
{
        if (r == -E2BIG)
                bv_raise(vm, BV_EXC_MEMORY_ERROR,
                         "a string would exceed the Body string limit (%zu bytes)",
                         vm->limits.max_string);
        else if (!vm->exc)
                bv_raise_fatal(vm, r < 0 ? r : -ENOMEM);
        return -1;
}

BodyValue *bv__str_alloc(BodyVM *vm, size_t len)
{
        BodyValue *v;

        if (bv__check_string_size(vm, len) < 0)
                return NULL;
        v = bv__alloc(vm, BV_STR, len + 1);
        if (!v)
                return NULL;
        v->str.data = (char *)(v + 1);
        v->str.len = len;
        v->str.data[len] = '\0';
        return v;
}

void bv__str_finish(BodyValue *s)
{
        s->str.cplen = utf8_length(s->str.data, s->str.len);
}

BodyValue *bv_str_new(BodyVM *vm, const char *s, size_t len)
{
        BodyValue *v = bv__str_alloc(vm, len);
        if (!v)
                return NULL;
        if (len > 0)
                memcpy(v->str.data, s, len);
        bv__str_finish(v);
        return v;
}

BodyValue *bv_str_new_cstr(BodyVM *vm, const char *s)
{
        return bv_str_new(vm, s, strlen(s));
}

BodyValue *bv_str_new_checked(BodyVM *vm, const char *s, size_t len)
{
        size_t off;

        if (!utf8_valid(s, len, &off))
                return bv_raise(vm, BV_EXC_UNICODE_DECODE_ERROR,
                                "'utf-8' codec can't decode byte 0x%02x in position %zu: "
                                "invalid utf-8 data",
                                (unsigned)(unsigned char)s[off], off);
        return bv_str_new(vm, s, len);
}

BodyValue *bv_str_from_buf(BodyVM *vm, StrBuf *b)
{
        BodyValue *v = bv_str_new(vm, b->data ? b->data : "", b->len);
        strbuf_reset(b);
        return v;
}

BodyValue *bv_list_new(BodyVM *vm, size_t capacity)
{
        BodyValue *v = bv__alloc(vm, BV_LIST, 0);
        if (!v)
                return NULL;
        if (capacity > 0 && bv__list_reserve(vm, v, capacity) < 0) {
                bv_unref(v);
                return NULL;
        }
        return v;
}

int bv__list_reserve(BodyVM *vm, BodyValue *list, size_t need)
{
        size_t cap;
        BodyValue **items;

        if (need <= list->list.cap)
                return 0;
        if (need > SIZE_MAX / sizeof(BodyValue *) / 2) {
                bv_raise(vm, BV_EXC_MEMORY_ERROR, "Body exceeded its memory limit (%zu bytes)",
                         vm->limits.max_memory);
                return -1;
        }
        cap = list->list.cap < 4 ? 4 : list->list.cap + list->list.cap / 2;
        if (cap < need)
                cap = need;
        items = bv_mem_realloc(vm, list->list.items, list->list.cap * sizeof(BodyValue *),
                               cap * sizeof(BodyValue *));
        if (!items)
                return -1;
        list->list.items = items;
        list->list.cap = cap;
        return 0;
}

int bv_list_append(BodyVM *vm, BodyValue *list, BodyValue *item)
{
        if (bv__list_reserve(vm, list, list->list.len + 1) < 0)
                return -1;
        list->list.items[list->list.len++] = bv_ref(item);
        return 0;
}

int bv_list_append_take(BodyVM *vm, BodyValue *list, BodyValue *item)
{
        int r = bv_list_append(vm, list, item);
        bv_unref(item);
        return r;
}

BodyValue *bv_tuple_new(BodyVM *vm, BodyValue *const *items, size_t n)
{
        BodyValue *v = bv__alloc(vm, BV_TUPLE, 0);
        if (!v)
                return NULL;
        if (n > 0) {
                if (bv__list_reserve(vm, v, n) < 0) {
                        bv_unref(v);
                        return NULL;
                }
                for (size_t i = 0; i < n; i++)
                        v->list.items[i] = bv_ref(items[i]);
                v->list.len = n;
        }
        return v;
}

BodyValue *bv_tuple_pair(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        BodyValue *items[2] = {a, b};
        return bv_tuple_new(vm, items, 2);
}

BodyValue *bv_dict_new(BodyVM *vm)
{
        return bv__alloc(vm, BV_DICT, 0);
}

BodyValue *bv_set_new(BodyVM *vm)
{
        return bv__alloc(vm, BV_SET, 0);
}

BodyValue *bv_slice_new(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step)
{
        BodyValue *v = bv__alloc(vm, BV_SLICE, 0);
        if (!v)
                return NULL;
        v->slice.start = bv_ref(start ? start : bv_none());
        v->slice.stop = bv_ref(stop ? stop : bv_none());
        v->slice.step = bv_ref(step ? step : bv_none());
        return v;
}

BodyValue *bv_function_new(BodyVM *vm, const char *qualname, void *payload,
                           void (*destroy)(void *payload))
{
        size_t len = strlen(qualname);
        BodyValue *v = bv__alloc(vm, BV_FUNCTION, len + 1);
        if (!v) {
                if (destroy && payload)
                        destroy(payload);
                return NULL;
        }
        v->function.qualname = memcpy(v + 1, qualname, len + 1);
        v->function.payload = payload;
        v->function.destroy = destroy;
        return v;
}

BodyValue *bv__method_new(BodyVM *vm, const BvBuiltinDef *def, BodyValue *self)
{
        BodyValue *v = bv__alloc(vm, BV_METHOD, 0);
        if (!v)
                return NULL;
        v->method.def = def;
        v->method.self = bv_ref(self);
        return v;
}

static BodyValue *script_new(BodyVM *vm, const char *name, const char *function)
{
        size_t ln = strlen(name), lf = function ? strlen(function) + 1 : 0;
        BodyValue *v = bv__alloc(vm, BV_SCRIPT, ln + 1 + lf);
        if (!v)
                return NULL;
        v->script.name = memcpy(v + 1, name, ln + 1);
        if (function)
                v->script.function = memcpy(v->script.name + ln + 1, function, lf);
        return v;
}

BodyValue *bv_script_new(BodyVM *vm, const char *name)
{
        return script_new(vm, name, NULL);
}

BodyValue *bv__script_function(BodyVM *vm, BodyValue *script, const char *function)
{
        return script_new(vm, script->script.name, function);
}

BodyValue *bv_args_new(BodyVM *vm, const json_t *parameters)
{
        _cleanup_bv_ BodyValue *args = NULL;
        _cleanup_bv_ BodyValue *v = NULL;

        if (parameters && json_is_object(parameters))
                return bv_from_json(vm, parameters, true);
        /* Bunch(Parameters or {}): a falsy Parameters gives an empty Bunch;
         * anything else goes through dict() and fails as it would there. */
        args = bv_dict_new(vm);
        if (!args)
                return NULL;
        args->dict.bunch = true;
        if (!parameters)
                return TAKE_PTR(args);
        v = bv_from_json(vm, parameters, false);
        if (!v)
                return NULL;
        if (bv_truthy(v) && bv__dict_update(vm, args, v, NULL) < 0)
                return NULL;
        return TAKE_PTR(args);
}
