/* bench-daemon's plans and results (see bench-daemon-plan.h). */
#include "bench-daemon-plan.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

static const char echo_format[] =
        "{\"FormatVersion\": \"2.1.0\", \"Version\": \"1.0.0\", \"Name\": \"bench echo\","
        " \"Body\": \"return echo().stdout\","
        " \"Scripts\": {\"echo\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","
        " \"EntryPoint\": \"echoFile\", \"Files\": [],"
        " \"Options\": {\"captureStdout\": true, \"captureStderr\": true}}},"
        " \"Files\": {\"echoFile\": {\"Name\": \"echo.sh\", \"BodyType\": \"Text\","
        " \"Body\": \"#!/bin/sh\\necho hello\\n\"}},"
        " \"ID\": \"%s\", \"Stamp\": %lld, \"Action\": \"Execute\"}";

/* The sha plan around the Base64 text: before it, then after it. */
static const char sha_head[] = BENCH_SHA_PLAN_HEAD;
static const char sha_tail_format[] =
        "\\n\"}}, \"ID\": \"%s\", \"Stamp\": %lld, \"Action\": \"Execute\"}";

void plans_init(Plans *p)
{
        struct timespec now;

        clock_gettime(CLOCK_REALTIME, &now);
        *p = (Plans){.next_stamp = (long long)now.tv_sec * 10000 + now.tv_nsec / 100000};
}

void plans_clear(Plans *p)
{
        free(p->b64);
        p->b64 = NULL;
}

int plans_make_data(Plans *p, const char *data_path)
{
        unsigned char *data, md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;
        size_t got = 0;
        int rc;

        data = malloc(PLANS_DATA_SIZE);
        /* EVP_EncodeBlock writes 4 characters per 3 bytes and a NUL. */
        p->b64 = malloc((PLANS_DATA_SIZE + 2) / 3 * 4 + 1);
        if (!data || !p->b64) {
                free(data);
                return -ENOMEM;
        }
        while (got < PLANS_DATA_SIZE) {
                ssize_t n = getrandom(data + got, PLANS_DATA_SIZE - got, 0);
                if (n < 0) {
                        free(data);
                        return -errno;
                }
                got += (size_t)n;
        }
        EVP_EncodeBlock((unsigned char *)p->b64, data, PLANS_DATA_SIZE);
        if (!EVP_Digest(data, PLANS_DATA_SIZE, md, &md_len, EVP_sha256(), NULL)) {
                free(data);
                return -EIO;
        }
        for (unsigned i = 0; i < md_len; i++)
                snprintf(p->sha_output + 2 * i, 3, "%02x", md[i]);
        /* sha256sum's line: the digest, two spaces, the name. */
        strcat(p->sha_output, "  data.bin");
        rc = data_path ? bench_write_file(data_path, data, PLANS_DATA_SIZE, 0644) : 0;
        free(data);
        return rc;
}

char *plans_echo(Plans *p, const char *id, size_t *ret_len)
{
        char *text = NULL;
        int n = asprintf(&text, echo_format, id, p->next_stamp);

        if (n < 0)
                return NULL;
        p->next_stamp++;
        *ret_len = (size_t)n;
        return text;
}

char *plans_sha(Plans *p, const char *id, size_t *ret_len)
{
        size_t head = sizeof(sha_head) - 1, b64 = strlen(p->b64), tail_max;
        char *text;
        int n;

        tail_max = sizeof(sha_tail_format) + strlen(id) + 32;
        text = malloc(head + b64 + tail_max);
        if (!text)
                return NULL;
        memcpy(text, sha_head, head);
        memcpy(text + head, p->b64, b64);
        n = snprintf(text + head + b64, tail_max, sha_tail_format, id, p->next_stamp);
        if (n < 0 || (size_t)n >= tail_max) {
                free(text);
                return NULL;
        }
        p->next_stamp++;
        *ret_len = head + b64 + (size_t)n;
        return text;
}

int plans_source_id(const char *result, size_t len, char *buf, size_t size)
{
        json_t *doc = json_loadb(result, len, 0, NULL);
        const char *sid = json_string_value(json_object_get(doc, "SourceID"));
        int rc = -1;

        if (sid && strlen(sid) < size) {
                memcpy(buf, sid, strlen(sid) + 1);
                rc = 0;
        }
        json_decref(doc);
        return rc;
}

static int why(char **ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(char **ret, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret, fmt, ap) < 0)
                *ret = NULL;
        va_end(ap);
        return 1;
}

int plans_check(const char *result, size_t len, const char *id, const char *want, char **ret_why)
{
        json_t *doc = json_loadb(result, len, 0, NULL);
        const char *sid, *body;
        json_int_t code;
        int rc = 0;

        *ret_why = NULL;
        if (!json_is_object(doc)) {
                json_decref(doc);
                return why(ret_why, "the result is not a JSON object");
        }
        sid = json_string_value(json_object_get(doc, "SourceID"));
        body = json_string_value(json_object_get(doc, "Body"));
        code = json_integer_value(json_object_get(doc, "ErrorCode"));
        if (!sid || strcmp(sid, id) != 0)
                rc = why(ret_why, "SourceID %s, not %s", sid ? sid : "(none)", id);
        else if (code != 0 || !body)
                rc = why(ret_why, "plan %s failed: %.300s", id, result);
        else if (strcmp(body, want) != 0)
                rc = why(ret_why, "Body \"%.200s\", not \"%s\"", body, want);
        json_decref(doc);
        return rc;
}
