/* Base64 speed: encoding, the lenient decoder and the canonical one over
 * the text of a 2 MiB body (2.8 MB of Base64, what a 2 MiB plan's file
 * costs), best of several runs, in MB of Base64 text per second.
 *
 *   bench-base64 [BYTES] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/base64.h"

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const char *what, size_t text_len, double best)
{
        printf("%-20s %8.3f ms  %8.0f MB/s\n", what, best * 1e3, (double)text_len / best / 1e6);
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2u << 20;
        int runs = argc > 2 ? atoi(argv[2]) : 15;
        unsigned char *data = malloc(n ? n : 1);
        char *text = malloc(base64_encoded_len(n) + 1);
        double best_enc = 1e9, best_dec = 1e9, best_can = 1e9;
        size_t len = 0;
        unsigned seed = 1;

        if (!data || !text)
                return 1;
        for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                data[i] = (unsigned char)(seed >> 16);
        }
        for (int r = 0; r < runs; r++) {
                char *out = NULL, *out2 = NULL, *why = NULL;
                size_t out_len = 0, out2_len = 0;
                double t0, t1, t2, t3;
                int rd, rc;

                /* Only the calls are timed; the checks come after. */
                t0 = now_s();
                len = base64_encode(text, data, n);
                t1 = now_s();
                rd = base64_decode(text, len, &out, &out_len, &why);
                t2 = now_s();
                rc = base64_decode_canonical(text, len, &out2, &out2_len);
                t3 = now_s();
                if (rd != 0 || rc != 0 || out_len != n || out2_len != n ||
                    memcmp(out, data, n) != 0 || memcmp(out2, data, n) != 0) {
                        fprintf(stderr, "bench-base64: wrong result\n");
                        return 1;
                }
                free(out);
                free(out2);
                if (t1 - t0 < best_enc)
                        best_enc = t1 - t0;
                if (t2 - t1 < best_dec)
                        best_dec = t2 - t1;
                if (t3 - t2 < best_can)
                        best_can = t3 - t2;
        }
        printf("%zu bytes, %zu bytes of Base64, best of %d\n", n, len, runs);
        report("encode", len, best_enc);
        report("decode", len, best_dec);
        report("decode_canonical", len, best_can);
        free(data);
        free(text);
        return 0;
}
