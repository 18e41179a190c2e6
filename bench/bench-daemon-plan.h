/* bench-daemon's plans and the check of their results. Two plans, shaped
 * as the engine's build_execution_plan() makes them (FormatVersion 2.1.0,
 * then ID, Stamp and Action appended, json.dumps separators):
 *
 *   echo  Body `return echo().stdout`; echo.sh: `echo hello`
 *   sha   Body `return sha().stdout`; sha.sh: `sha256sum data.bin`, with
 *         data.bin a Base64 file of 2 MiB of random bytes
 *
 * Stamps increase by one from int(time.time() * 10000) at start, so every
 * plan passes the agent's replay protection, as the engine's do. */
#pragma once

#include <stddef.h>

#define PLANS_DATA_SIZE (2u * 1024 * 1024)

typedef struct Plans {
        long long next_stamp;
        char *b64;            /* data.bin in Base64, one line; NULL before plans_make_data() */
        char sha_output[128]; /* what sha.sh prints, without the newline */
} Plans;

void plans_init(Plans *p);
void plans_clear(Plans *p);

/* The 2 MiB of random bytes: written to data_path unless it is NULL (for
 * the baseline's sha.sh), kept in Base64 for the sha plan, and their SHA-256. */
int plans_make_data(Plans *p, const char *data_path);

/* The plan's text (NUL-terminated; *ret_len its length), or NULL. */
char *plans_echo(Plans *p, const char *id, size_t *ret_len);
char *plans_sha(Plans *p, const char *id, size_t *ret_len);

/* The result's SourceID, when it is a string that fits size: 0, else -1. */
int plans_source_id(const char *result, size_t len, char *buf, size_t size);

/* 0 when the result document is a success for plan id whose Body is the
 * string want; else 1 and *ret_why says what differs (free it). */
int plans_check(const char *result, size_t len, const char *id, const char *want, char **ret_why);
