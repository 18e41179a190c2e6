/* Base64's vector loops, for base64.c alone (base64-avx2.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define BASE64_HAVE_AVX2 1
#else
#define BASE64_HAVE_AVX2 0
#endif

#if BASE64_HAVE_AVX2
/* Whether this CPU runs the functions below. */
bool base64_avx2_usable(void);

/* Encode in[0..k) to out (k / 3 * 4 characters) for the largest k, a
 * multiple of 24, that leaves at least 4 bytes of in after it (the loads
 * read past each block); returns k. */
size_t base64_avx2_encode(char *out, const unsigned char *in, size_t len);

/* Decode whole blocks of 32 alphabet characters from the start of
 * text[0..len) into out (24 bytes each), while out has room for a 32-byte
 * store (room bytes); stops before the first block that holds any other
 * byte. Returns the characters taken, a multiple of 32. */
size_t base64_avx2_decode(const unsigned char *text, size_t len, unsigned char *out, size_t room);
#endif
