/* Hashing and the insertion-ordered hash map behind dict, Bunch and set.
 *
 * Layout as CPython 3.6+: an array of entries in insertion order, and an
 * open-addressing index of positions into it. Hashes are SipHash-1-3 with
 * a random key per VM, and equal numbers hash alike (1 == 1.0 == True). */
#include "body/values/value-internal.h"

#include <math.h>
#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
        do {                                                                                       \
                v0 += v1;                                                                          \
                v1 = ROTL(v1, 13);                                                                 \
                v1 ^= v0;                                                                          \
                v0 = ROTL(v0, 32);                                                                 \
                v2 += v3;                                                                          \
                v3 = ROTL(v3, 16);                                                                 \
                v3 ^= v2;                                                                          \
                v0 += v3;                                                                          \
                v3 = ROTL(v3, 21);                                                                 \
                v3 ^= v0;                                                                          \
                v2 += v1;                                                                          \
                v1 = ROTL(v1, 17);                                                                 \
                v1 ^= v2;                                                                          \
                v2 = ROTL(v2, 32);                                                                 \
        } while (0)

static uint64_t siphash13(const uint64_t key[2], const void *data, size_t len)
{
        const uint8_t *p = data;
        uint64_t v0 = 0x736f6d6570736575ULL ^ key[0];
        uint64_t v1 = 0x646f72616e646f6dULL ^ key[1];
        uint64_t v2 = 0x6c7967656e657261ULL ^ key[0];
        uint64_t v3 = 0x7465646279746573ULL ^ key[1];
        uint64_t b = (uint64_t)len << 56, m;
        size_t i, tail = len & 7;

        for (i = 0; i + 8 <= len; i += 8) {
                memcpy(&m, p + i, 8);
                v3 ^= m;
                SIPROUND;
                v0 ^= m;
        }
        for (size_t k = 0; k < tail; k++)
                b |= (uint64_t)p[i + k] << (8 * k);
        v3 ^= b;
        SIPROUND;
        v0 ^= b;
        v2 ^= 0xff;
        SIPROUND;
        SIPROUND;
        SIPROUND;
        return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t hash_int(BodyVM *vm, int64_t i)
{
        return siphash13(vm->hash_key, &i, sizeof(i));
}

/* An int beyond int64 hashes its limbs and sign; an integral float beyond
 * int64 hashes as the equal int, so that 2**64 == 2.0**64 are one key. */
static uint64_t hash_big(BodyVM *vm, const BodyValue *v)
{
        const void *data;
        size_t len;
        uint64_t neg = bv__int_hash_words(v, &data, &len);

        return siphash13(vm->hash_key, data, len) ^ (neg * 0x9e3779b97f4a7c15ULL);
}

static uint64_t hash_big_double(BodyVM *vm, double f)
{
        /* An integral |f| >= 2**63 is m * 2**shift with a 53-bit m and
         * shift >= 11: its limbs are made here, as mpz_set_d() would make
         * them, without loading GMP for a float key. */
        mp_limb_t limbs[1024 / GMP_NUMB_BITS + 2] = {0};
        int e;
        double fr = frexp(fabs(f), &e);
        uint64_t m = (uint64_t)ldexp(fr, 53);
        unsigned shift = (unsigned)(e - 53), k = shift / GMP_NUMB_BITS, b = shift % GMP_NUMB_BITS;
        mp_size_t n;
        BodyValue tmp = {.kind = BV_INT, .big = true};

        _Static_assert(GMP_NUMB_BITS == 64, "limbs of 64 bits");
        limbs[k] = (mp_limb_t)(m << b);
        if (b)
                limbs[k + 1] = (mp_limb_t)(m >> (64 - b));
        n = limbs[k + 1] ? (mp_size_t)k + 2 : (mp_size_t)k + 1;
        tmp.z.limbs = limbs;
        tmp.z.size = f < 0 ? -n : n;
        return hash_big(vm, &tmp);
}

static uint64_t hash_ptr(BodyVM *vm, const void *p)
{
        uintptr_t u = (uintptr_t)p;
        return siphash13(vm->hash_key, &u, sizeof(u));
}

/* A range in the int form hashes as an equal int64 range does when its
 * key (len, start, step) fits in int64. */
static int range_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        BodyValue *key[3];
        int64_t parts[3];
        bool small = true;
        uint64_t h = 0x345678ULL;

        if (bv__range_key(vm, v, key) < 0)
                return -1;
        for (size_t i = 0; i < 3; i++) {
                small = small && !bv__is_big(key[i]);
                parts[i] = bv__int_of(key[i]);
        }
        if (small) {
                h = siphash13(vm->hash_key, parts, sizeof(parts));
        } else {
                for (size_t i = 0; i < 3; i++) {
                        uint64_t hi = 0;
                        if (bv_hash(vm, key[i], &hi) < 0)
                                h = 0; /* ints always hash */
                        h = (h ^ hi) * 0x100000001b3ULL;
                        h ^= h >> 29;
                }
        }
        for (size_t i = 0; i < 3; i++)
                bv_unref(key[i]);
        *ret = h;
        return 0;
}

/* ---- the hash slots of the core's kinds ---- */

int bv__none_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        *ret = hash_int(vm, INT64_MIN + 7);
        return 0;
}

int bv__int_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        *ret = bv__is_big(v) ? hash_big(vm, v) : hash_int(vm, bv__int_of(v));
        return 0;
}

int bv__float_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        double f = v->f;

        if (f == floor(f) && f >= -0x1p63 && f < 0x1p63) {
                *ret = hash_int(vm, (int64_t)f);
        } else if (isfinite(f) && f == floor(f)) {
                *ret = hash_big_double(vm, f);
        } else {
                uint64_t bits;
                memcpy(&bits, &f, sizeof(bits));
                *ret = siphash13(vm->hash_key, &bits, sizeof(bits));
        }
        return 0;
}

int bv__str_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        *ret = siphash13(vm->hash_key, v->str.data, v->str.len);
        return 0;
}

int bv__tuple_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        uint64_t h = 0x345678ULL + v->list.len;

        if (bv_depth_enter(vm) < 0)
                return -1;
        for (size_t i = 0; i < v->list.len; i++) {
                uint64_t hi;
                if (bv_hash(vm, v->list.items[i], &hi) < 0) {
                        bv_depth_leave(vm);
                        return -1;
                }
                h = (h ^ hi) * 0x100000001b3ULL;
                h ^= h >> 29;
        }
        bv_depth_leave(vm);
        *ret = h;
        return 0;
}

int bv__range_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        if (v->range.z[0])
                return range_hash(vm, v, ret);
        int64_t parts[3] = {v->range.len, v->range.len ? v->range.start : 0,
                            v->range.len > 1 ? v->range.step : 0};
        *ret = siphash13(vm->hash_key, parts, sizeof(parts));
        return 0;
}

int bv__uuid_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        *ret = siphash13(vm->hash_key, v->uuid, sizeof(v->uuid));
        return 0;
}

int bv__method_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        *ret = hash_ptr(vm, v->method.self) ^ hash_ptr(vm, v->method.def);
        return 0;
}

int bv__unhashable(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        bv_raise(vm, BV_EXC_TYPE_ERROR, "unhashable type: '%s'", bv_type_name(v));
        return -1;
}

int bv_hash(BodyVM *vm, BodyValue *v, uint64_t *ret)
{
        const BvType *t = bv__type(v);

        if (t->hash)
                return t->hash(vm, v, ret);
        *ret = hash_ptr(vm, v);
        return 0;
}

/* ---- the map ---- */

#define SLOT_EMPTY   0u
#define SLOT_DELETED UINT32_MAX

static bool key_is_str(const BodyValue *k, const char *s, size_t len)
{
        return k->kind == BV_STR && k->str.len == len && memcmp(k->str.data, s, len) == 0;
}

/* Find key in the index: returns the entry position, -1 when absent (and
 * *ret_slot is where it would go), -2 on error. */
static int64_t find(BodyVM *vm, BvDict *d, BodyValue *key, uint64_t hash, size_t *ret_slot)
{
        size_t mask, i, perturb = hash, first_free = SIZE_MAX;

        if (d->n_index == 0) {
                if (ret_slot)
                        *ret_slot = SIZE_MAX;
                return -1;
        }
        mask = d->n_index - 1;
        i = hash & mask;
        for (;;) {
                uint32_t s = d->index[i];
                if (s == SLOT_EMPTY) {
                        if (ret_slot)
                                *ret_slot = first_free != SIZE_MAX ? first_free : i;
                        return -1;
                }
                if (s == SLOT_DELETED) {
                        if (first_free == SIZE_MAX)
                                first_free = i;
                } else {
                        BvDictEntry *e = &d->entries[s - 1];
                        if (e->key == key)
                                return s - 1;
                        if (e->hash == hash) {
                                int r = bv_eq(vm, e->key, key);
                                if (r < 0)
                                        return -2;
                                if (r > 0)
                                        return s - 1;
                        }
                }
                perturb >>= 5;
                i = (i * 5 + 1 + perturb) & mask;
        }
}

static int64_t find_str(BvDict *d, const char *s, size_t len, uint64_t hash)
{
        size_t mask, i, perturb = hash;

        if (d->n_index == 0)
                return -1;
        mask = d->n_index - 1;
        i = hash & mask;
        for (;;) {
                uint32_t slot = d->index[i];
                if (slot == SLOT_EMPTY)
                        return -1;
                if (slot != SLOT_DELETED) {
                        BvDictEntry *e = &d->entries[slot - 1];
                        if (e->hash == hash && key_is_str(e->key, s, len))
                                return slot - 1;
                }
                perturb >>= 5;
                i = (i * 5 + 1 + perturb) & mask;
        }
}

/* Compact the entries and rebuild an index large enough for `need` live
 * keys at a load factor under 2/3. */
static int resize(BodyVM *vm, BodyValue *dv, size_t need)
{
        BvDict *d = &dv->dict;
        size_t n_index = 8, cap, j = 0;
        uint32_t *index;
        BvDictEntry *entries;

        while (n_index * 2 < need * 3)
                n_index *= 2;
        if (n_index > (size_t)UINT32_MAX / 2) {
                bv_raise(vm, BV_EXC_MEMORY_ERROR, "Body exceeded its memory limit (%zu bytes)",
                         vm->limits.max_memory);
                return -1;
        }
        cap = n_index * 2 / 3 + 1;
        entries = bv_mem_alloc(vm, cap * sizeof(BvDictEntry));
        if (!entries)
                return -1;
        index = bv_mem_alloc(vm, n_index * sizeof(uint32_t));
        if (!index) {
                bv_mem_free(vm, entries, cap * sizeof(BvDictEntry));
                return -1;
        }
        memset(index, 0, n_index * sizeof(uint32_t));
        for (size_t i = 0; i < d->n_entries; i++) {
                BvDictEntry *e = &d->entries[i];
                size_t mask = n_index - 1, k, perturb;
                if (!e->key)
                        continue;
                entries[j] = *e;
                perturb = e->hash;
                k = e->hash & mask;
                while (index[k] != SLOT_EMPTY) {
                        perturb >>= 5;
                        k = (k * 5 + 1 + perturb) & mask;
                }
                index[k] = (uint32_t)j + 1;
                j++;
        }
        bv_mem_free(vm, d->entries, d->cap_entries * sizeof(BvDictEntry));
        bv_mem_free(vm, d->index, d->n_index * sizeof(uint32_t));
        d->entries = entries;
        d->cap_entries = cap;
        d->n_entries = j;
        d->index = index;
        d->n_index = n_index;
        return 0;
}

static int insert(BodyVM *vm, BodyValue *dv, BodyValue *key, BodyValue *value)
{
        BvDict *d = &dv->dict;
        uint64_t hash;
        size_t slot;
        int64_t pos;

        if (bv_hash(vm, key, &hash) < 0)
                return -1;
        pos = find(vm, d, key, hash, &slot);
        if (pos == -2)
                return -1;
        if (pos >= 0) {
                BvDictEntry *e = &d->entries[pos];
                BodyValue *old = e->value;
                e->value = bv_ref(value);
                bv_unref(old);
                return 0;
        }
        if (d->n_entries >= d->cap_entries) {
                if (resize(vm, dv, d->len + 1) < 0)
                        return -1;
                pos = find(vm, d, key, hash, &slot);
                if (pos == -2)
                        return -1;
        }
        d->entries[d->n_entries] =
                (BvDictEntry){.key = bv_ref(key), .value = bv_ref(value), .hash = hash};
        d->index[slot] = (uint32_t)d->n_entries + 1;
        d->n_entries++;
        d->len++;
        d->version++;
        return 0;
}

int bv_dict_lookup(BodyVM *vm, BodyValue *dict, BodyValue *key, BodyValue **ret)
{
        uint64_t hash;
        int64_t pos;

        if (bv_hash(vm, key, &hash) < 0)
                return -1;
        pos = find(vm, &dict->dict, key, hash, NULL);
        if (pos == -2)
                return -1;
        if (pos < 0)
                return 0;
        if (ret)
                *ret = dict->dict.entries[pos].value;
        return 1;
}

BodyValue *bv_dict_get_str(BodyValue *dict, const char *key)
{
        size_t len = strlen(key);
        int64_t pos = find_str(&dict->dict, key, len, siphash13(dict->vm->hash_key, key, len));
        return pos < 0 ? NULL : dict->dict.entries[pos].value;
}

int bv_dict_set(BodyVM *vm, BodyValue *dict, BodyValue *key, BodyValue *value)
{
        return insert(vm, dict, key, value);
}

int bv_dict_set_str(BodyVM *vm, BodyValue *dict, const char *key, BodyValue *value)
{
        _cleanup_bv_ BodyValue *k = bv_str_new_cstr(vm, key);
        if (!k)
                return -1;
        return insert(vm, dict, k, value);
}

int bv_set_add(BodyVM *vm, BodyValue *set, BodyValue *item)
{
        return insert(vm, set, item, NULL);
}

int bv_dict_delete(BodyVM *vm, BodyValue *dict, BodyValue *key)
{
        BvDict *d = &dict->dict;
        size_t mask, i, perturb;
        uint64_t hash;
        int64_t pos;
        BodyValue *k, *v;

        if (bv_hash(vm, key, &hash) < 0)
                return -1;
        pos = find(vm, d, key, hash, NULL);
        if (pos == -2)
                return -1;
        if (pos < 0)
                return 0;
        /* Find the index slot that points at pos and mark it deleted. */
        mask = d->n_index - 1;
        perturb = hash;
        i = hash & mask;
        while (d->index[i] != (uint32_t)pos + 1) {
                perturb >>= 5;
                i = (i * 5 + 1 + perturb) & mask;
        }
        d->index[i] = SLOT_DELETED;
        k = d->entries[pos].key;
        v = d->entries[pos].value;
        d->entries[pos].key = NULL;
        d->entries[pos].value = NULL;
        d->len--;
        d->version++;
        bv_unref(k);
        bv_unref(v);
        return 1;
}

bool bv_dict_next(BodyValue *dict, size_t *pos, BodyValue **ret_key, BodyValue **ret_value)
{
        BvDict *d = &dict->dict;

        while (*pos < d->n_entries) {
                BvDictEntry *e = &d->entries[(*pos)++];
                if (!e->key)
                        continue;
                if (ret_key)
                        *ret_key = e->key;
                if (ret_value)
                        *ret_value = e->value;
                return true;
        }
        return false;
}

void bv__dict_clear(BodyValue *dict)
{
        BvDict *d = &dict->dict;
        BodyVM *vm = dict->vm;
        BvDictEntry *entries = d->entries;
        size_t n = d->n_entries;

        bv_mem_free(vm, d->index, d->n_index * sizeof(uint32_t));
        d->entries = NULL;
        d->index = NULL;
        d->n_index = 0;
        d->n_entries = 0;
        d->len = 0;
        d->version++;
        /* Release after the dict is consistent: an unref may free values
         * that look at nothing here, but the order keeps it obviously safe. */
        for (size_t i = 0; i < n; i++) {
                bv_unref(entries[i].key);
                bv_unref(entries[i].value);
        }
        bv_mem_free(vm, entries, d->cap_entries * sizeof(BvDictEntry));
        d->cap_entries = 0;
}

BodyValue *bv__dict_copy(BodyVM *vm, BodyValue *dict)
{
        _cleanup_bv_ BodyValue *c = dict->kind == BV_SET ? bv_set_new(vm) : bv_dict_new(vm);
        size_t pos = 0;
        BodyValue *k, *v;

        if (!c)
                return NULL;
        if (dict->dict.len > 0 && resize(vm, c, dict->dict.len) < 0)
                return NULL;
        while (bv_dict_next(dict, &pos, &k, &v))
                if (insert(vm, c, k, v) < 0)
                        return NULL;
        return TAKE_PTR(c);
}

int bv__dict_update(BodyVM *vm, BodyValue *dict, BodyValue *other, BodyValue *kwargs)
{
        size_t pos = 0;
        BodyValue *k, *v;

        if (other && other->kind == BV_DICT) {
                while (bv_dict_next(other, &pos, &k, &v))
                        if (insert(vm, dict, k, v) < 0)
                                return -1;
        } else if (other) {
                _cleanup_bv_ BodyValue *it = bv_iter(vm, other);
                size_t idx = 0;
                if (!it)
                        return -1;
                for (;; idx++) {
                        _cleanup_bv_ BodyValue *item = NULL;
                        _cleanup_bv_ BodyValue *seq = NULL;
                        int r = bv_next(vm, it, &item);
                        if (r < 0)
                                return -1;
                        if (r == 0)
                                break;
                        if (bv_step(vm) < 0)
                                return -1;
                        seq = bv_tuple_from_iterable(vm, item);
                        if (!seq) {
                                bv_exc_clear(vm);
                                bv_raise(vm, BV_EXC_TYPE_ERROR,
                                         "cannot convert dictionary update sequence element "
                                         "#%zu to a sequence",
                                         idx);
                                return -1;
                        }
                        if (seq->list.len != 2) {
                                bv_raise(vm, BV_EXC_VALUE_ERROR,
                                         "dictionary update sequence element #%zu has length "
                                         "%zu; 2 is required",
                                         idx, seq->list.len);
                                return -1;
                        }
                        if (insert(vm, dict, seq->list.items[0], seq->list.items[1]) < 0)
                                return -1;
                }
        }
        pos = 0;
        if (kwargs)
                while (bv_dict_next(kwargs, &pos, &k, &v))
                        if (insert(vm, dict, k, v) < 0)
                                return -1;
        return 0;
}
