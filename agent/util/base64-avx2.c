/* Base64's whole blocks with AVX2, for base64.c (see base64-internal.h).
 *
 * A plan.json carries a 2 MiB plan's body as 3.7 MB of Base64 and the
 * plan's file comes as 2.8 MB of it, so both loops run on every large
 * plan. These are the well-known vector forms (Wojciech Muła and Daniel
 * Lemire, "Faster Base64 Encoding and Decoding using AVX2 Instructions",
 * 2018): 24 bytes to 32 characters and back per step, at several times
 * the table loops' speed. They do only the common case, whole blocks of
 * alphabet characters; everything else (a stray byte, padding, the tail)
 * stays with base64.c's loops, which decide what CPython would do. The
 * functions are compiled for AVX2 alone and called only where the CPU has
 * it (base64_avx2_usable()). */
#include "util/base64-internal.h"

#if BASE64_HAVE_AVX2

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

bool base64_avx2_usable(void)
{
        static int usable = -1;

        /* A race here writes the same answer twice. */
        if (usable < 0)
                usable = __builtin_cpu_supports("avx2") ? 1 : 0;
        return usable;
}

/* The 6-bit values of 24 bytes, one per byte of the result: each 128-bit
 * lane holds 12 bytes, spread as b1 b0 b2 b1 per group of three, and two
 * multiplies move each group's four fields into their bytes. */
AVX2 static inline __m256i encode_split(__m256i in)
{
        const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
                                                1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
        __m256i t0, t1, t2, t3;

        in = _mm256_shuffle_epi8(in, spread);
        t0 = _mm256_and_si256(in, _mm256_set1_epi32(0x0fc0fc00));
        t1 = _mm256_mulhi_epu16(t0, _mm256_set1_epi32(0x04000040));
        t2 = _mm256_and_si256(in, _mm256_set1_epi32(0x003f03f0));
        t3 = _mm256_mullo_epi16(t2, _mm256_set1_epi32(0x01000010));
        return _mm256_or_si256(t1, t3);
}

/* 6-bit values to characters: the offset to add is picked by range (0-25
 * 'A', 26-51 'a', 52-61 '0', 62 '+', 63 '/'). */
AVX2 static inline __m256i encode_chars(__m256i v)
{
        const __m256i offsets = _mm256_setr_epi8(
                'A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 0, 0, 'A', 'a' - 26, '0' - 52,
                '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                '0' - 52, '+' - 62, '/' - 63, 0, 0);
        /* 0 for 0-25, 1 for 26-51, 2-13 for 52-63. */
        __m256i index = _mm256_subs_epu8(v, _mm256_set1_epi8(51));

        index = _mm256_sub_epi8(index, _mm256_cmpgt_epi8(v, _mm256_set1_epi8(25)));
        return _mm256_add_epi8(v, _mm256_shuffle_epi8(offsets, index));
}

AVX2 size_t base64_avx2_encode(char *out, const unsigned char *in, size_t len)
{
        size_t i = 0;

        /* 24 bytes a step, read as two 16-byte loads (the second at +12),
         * so 28 must be there. */
        for (; len - i >= 28; i += 24, out += 32) {
                __m128i lo = _mm_loadu_si128((const __m128i *)(in + i));
                __m128i hi = _mm_loadu_si128((const __m128i *)(in + i + 12));
                __m256i v = _mm256_set_m128i(hi, lo);

                _mm256_storeu_si256((__m256i *)out, encode_chars(encode_split(v)));
        }
        return i;
}

AVX2 size_t base64_avx2_decode(const unsigned char *text, size_t len, unsigned char *out,
                               size_t room)
{
        /* A byte is in the alphabet exactly when the bits its high nibble
         * picks from hi_bits and its low nibble from lo_bits have none in
         * common; then roll (by the high nibble, and '/' apart) turns it
         * into its value. */
        const __m256i lo_bits =
                _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13,
                                 0x1a, 0x1b, 0x1b, 0x1b, 0x1a, 0x15, 0x11, 0x11, 0x11, 0x11, 0x11,
                                 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a, 0x1b, 0x1b, 0x1b, 0x1a);
        const __m256i hi_bits =
                _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10,
                                 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x01, 0x02, 0x04, 0x08,
                                 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
        const __m256i roll =
                _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16,
                                 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
        const __m256i nibble = _mm256_set1_epi8(0x0f), slash = _mm256_set1_epi8('/');
        /* Each lane's 12 bytes to its front, then the lanes together. */
        const __m256i pack =
                _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6,
                                 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, -1, -1);
        size_t i = 0;

        /* 32 characters a step, stored as 32 bytes of which 24 count. */
        for (; len - i >= 32 && room >= 32; i += 32, out += 24, room -= 24) {
                __m256i s = _mm256_loadu_si256((const __m256i *)(text + i));
                __m256i hi = _mm256_and_si256(_mm256_srli_epi32(s, 4), nibble);
                __m256i lo = _mm256_and_si256(s, nibble);
                __m256i v, merged;

                if (!_mm256_testz_si256(_mm256_shuffle_epi8(lo_bits, lo),
                                        _mm256_shuffle_epi8(hi_bits, hi)))
                        break;
                v = _mm256_add_epi8(
                        s, _mm256_shuffle_epi8(roll,
                                               _mm256_add_epi8(_mm256_cmpeq_epi8(s, slash), hi)));
                /* Four 6-bit values to three bytes: pairs into 12 bits,
                 * then the two halves into 24. */
                merged = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
                merged = _mm256_madd_epi16(merged, _mm256_set1_epi32(0x00011000));
                merged = _mm256_shuffle_epi8(merged, pack);
                merged = _mm256_permutevar8x32_epi32(merged, lanes);
                _mm256_storeu_si256((__m256i *)out, merged);
        }
        return i;
}

#endif
