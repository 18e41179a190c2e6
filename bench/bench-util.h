/* What the benches share: a monotonic clock in milliseconds, the
 * comparison qsort() needs to take medians of doubles, writing a file
 * whole, and the 2 MiB plan's text around its Base64. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Write len bytes of data to path (created or truncated, with mode).
 * Returns 0 or -errno. */
static inline int bench_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        size_t done = 0;
        int rc = 0;

        if (fd < 0)
                return -errno;
        while (done < len) {
                ssize_t n = write(fd, (const char *)data + done, len - done);
                if (n < 0) {
                        rc = -errno;
                        break;
                }
                done += (size_t)n;
        }
        if (close(fd) < 0 && rc == 0)
                rc = -errno;
        return rc;
}

/* The plan the 2 MiB benches send, up to its file's Base64 text: its Body
 * returns what `sha256sum data.bin` prints. After the text come "\\n\"}},
 * and the plan's ID, Stamp and Action. */
#define BENCH_SHA_PLAN_HEAD                                                                        \
        "{\"FormatVersion\": \"2.1.0\", \"Version\": \"1.0.0\", \"Name\": \"bench sha\","          \
        " \"Body\": \"return sha().stdout\","                                                      \
        " \"Scripts\": {\"sha\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","              \
        " \"EntryPoint\": \"shaFile\", \"Files\": [\"dataFile\"],"                                 \
        " \"Options\": {\"captureStdout\": true, \"captureStderr\": true}}},"                      \
        " \"Files\": {\"shaFile\": {\"Name\": \"sha.sh\", \"BodyType\": \"Text\","                 \
        " \"Body\": \"#!/bin/sh\\nsha256sum data.bin\\n\"},"                                       \
        " \"dataFile\": {\"Name\": \"data.bin\", \"BodyType\": \"Base64\", \"Body\": \""
