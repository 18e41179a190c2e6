/* Result documents in the reference's shape and spelling (see result.h). */
#include "result/result.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/hexid.h"
#include "util/macro.h"
#include "util/pyjson.h"

void result_format_time(const struct timespec *when, char buf[static 32])
{
        struct tm tm;
        long usec = when->tv_nsec / 1000;
        size_t n;

        gmtime_r(&when->tv_sec, &tm);
        n = strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm);
        /* Python's str(datetime) drops the fraction when it is zero. */
        if (usec != 0)
                snprintf(buf + n, 32 - n, ".%06ld", usec);
}

/* Build the common head of a result; `body` is stolen. */
static int result_build(json_t **ret, const char *id, const struct timespec *when,
                        const json_t *source_id, int error_code, json_t *body)
{
        _cleanup_json_ json_t *r = json_object();
        char time_text[32];
        json_t *sid;

        if (!r || !body) {
                json_decref(body);
                return -ENOMEM;
        }
        result_format_time(when, time_text);
        sid = source_id ? json_deep_copy(source_id) : json_string("");
        if (json_object_set_new(r, "FormatVersion", json_string("2.0.0")) < 0 ||
            json_object_set_new(r, "ID", json_string(id)) < 0 ||
            json_object_set_new(r, "SourceID", sid) < 0 ||
            json_object_set_new(r, "Action", json_string("Execution:Result")) < 0 ||
            json_object_set_new(r, "ErrorCode", json_integer(error_code)) < 0 ||
            json_object_set_new(r, "Body", body) < 0 ||
            json_object_set_new(r, "Time", json_string(time_text)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(r);
        return 0;
}

static json_t *copy_or_null(const json_t *v)
{
        return v ? json_deep_copy(v) : json_null();
}

int result_new_success_at(json_t **ret, const char *id, const struct timespec *when,
                          const json_t *source_id, const json_t *body)
{
        return result_build(ret, id, when, source_id, 0, copy_or_null(body));
}

int result_new_error_at(json_t **ret, const char *id, const struct timespec *when,
                        const json_t *source_id, int error_code, const char *message,
                        const json_t *additional_info)
{
        _cleanup_json_ json_t *body = json_object();

        if (!body ||
            json_object_set_new(body, "Message", message ? json_string(message) : json_null()) <
                    0 ||
            json_object_set_new(body, "AdditionalInfo", copy_or_null(additional_info)) < 0)
                return -ENOMEM;
        return result_build(ret, id, when, source_id, error_code, TAKE_PTR(body));
}

static int fresh_id_and_time(char id[static 33], struct timespec *now)
{
        int r = hexid_new(id);
        if (r < 0)
                return r;
        if (clock_gettime(CLOCK_REALTIME, now) < 0)
                return -errno;
        return 0;
}

int result_new_success(json_t **ret, const json_t *source_id, const json_t *body)
{
        struct timespec now;
        char id[33];
        int r = fresh_id_and_time(id, &now);
        if (r < 0)
                return r;
        return result_new_success_at(ret, id, &now, source_id, body);
}

int result_new_error(json_t **ret, const json_t *source_id, int error_code, const char *message,
                     const json_t *additional_info)
{
        struct timespec now;
        char id[33];
        int r = fresh_id_and_time(id, &now);
        if (r < 0)
                return r;
        return result_new_error_at(ret, id, &now, source_id, error_code, message, additional_info);
}

int result_set_reply_to(json_t *result, const json_t *reply_to)
{
        return json_object_set_new(result, "ReplyTo", copy_or_null(reply_to)) < 0 ? -ENOMEM : 0;
}

int result_to_text(const json_t *result, char **ret)
{
        return pyjson_dumps(result, ret);
}

bool result_source_id_is(const json_t *source_id, const char *text)
{
        char buf[32];

        if (json_is_string(source_id))
                return streq(json_string_value(source_id), text);
        if (!json_is_integer(source_id))
                return false;
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(source_id));
        return streq(buf, text);
}
