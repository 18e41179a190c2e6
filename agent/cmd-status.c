/* muranoagent status [--json]: one request on the control socket, and its
 * answer printed (see cmd-status.h). The human form is made from the same
 * JSON document that --json prints, so the two never disagree. */
#include "cmd-status.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "control/control.h"
#include "util/macro.h"

/* "3.2 s", "4 min 12 s", "2 h 5 min", "3 d 4 h". */
static const char *duration(json_t *ms_value, char *buf, size_t size)
{
        json_int_t ms = json_integer_value(ms_value);
        json_int_t s = ms / 1000;

        if (!json_is_integer(ms_value))
                snprintf(buf, size, "?");
        else if (s < 60)
                snprintf(buf, size, "%.1f s", (double)ms / 1000);
        else if (s < 3600)
                snprintf(buf, size, "%" JSON_INTEGER_FORMAT " min %" JSON_INTEGER_FORMAT " s",
                         s / 60, s % 60);
        else if (s < 86400)
                snprintf(buf, size, "%" JSON_INTEGER_FORMAT " h %" JSON_INTEGER_FORMAT " min",
                         s / 3600, s % 3600 / 60);
        else
                snprintf(buf, size, "%" JSON_INTEGER_FORMAT " d %" JSON_INTEGER_FORMAT " h",
                         s / 86400, s % 86400 / 3600);
        return buf;
}

static const char *str(const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? s : "?";
}

static json_int_t num(const json_t *obj, const char *key)
{
        return json_integer_value(json_object_get(obj, key));
}

static void print_broker(const json_t *b)
{
        char d[32];
        const char *state = str(b, "state");

        if (streq(state, "connected"))
                printf("broker:  connected to %s since %s (%s), heartbeat %" JSON_INTEGER_FORMAT
                       " s, queue '%s', connection #%" JSON_INTEGER_FORMAT,
                       str(b, "host"), str(b, "since"),
                       duration(json_object_get(b, "for_ms"), d, sizeof(d)), num(b, "heartbeat_s"),
                       str(b, "queue"), num(b, "connection"));
        else
                printf("broker:  %s since %s (%s), queue '%s'",
                       streq(state, "connecting") ? "CONNECTING" : "DISCONNECTED", str(b, "since"),
                       duration(json_object_get(b, "for_ms"), d, sizeof(d)), str(b, "queue"));
        if (num(b, "reconnects") > 0)
                printf(", %" JSON_INTEGER_FORMAT " connection(s) lost since start",
                       num(b, "reconnects"));
        printf("\n");
        if (json_is_string(json_object_get(b, "last_error")))
                printf("         last error: %s\n", str(b, "last_error"));
}

static void print_plan(const json_t *p)
{
        const json_t *script = json_object_get(p, "script");
        const json_t *tail = json_object_get(p, "output_tail");
        const json_t *line;
        size_t i;
        char d[32];

        if (!json_is_object(p)) {
                printf("plan:    none running\n");
                return;
        }
        printf("plan:    %s, running for %s (since %s)\n", str(p, "id"),
               duration(json_object_get(p, "elapsed_ms"), d, sizeof(d)), str(p, "since"));
        if (json_is_string(json_object_get(p, "cancelled_by")))
                printf("         CANCELLED by %s: its scripts are being stopped\n",
                       str(p, "cancelled_by"));
        if (json_is_object(script))
                printf("script:  %s, pid %" JSON_INTEGER_FORMAT
                       ", running for %s, %" JSON_INTEGER_FORMAT " bytes of output\n",
                       str(script, "name"), num(script, "pid"),
                       duration(json_object_get(script, "elapsed_ms"), d, sizeof(d)),
                       num(script, "output_bytes"));
        else
                printf("script:  none running (the plan's Body or its files)\n");
        if (json_array_size(tail) > 0) {
                printf("output (last %zu lines):\n", json_array_size(tail));
                json_array_foreach (tail, i, line)
                        printf("  | %s\n", json_string_value(line));
        }
}

static void print_recent(const json_t *r)
{
        const json_t *plans = json_object_get(r, "plans");
        const json_t *p;
        size_t i;
        char d[32];

        printf("recent plans (%s):", str(r, "source"));
        if (json_array_size(plans) == 0) {
                printf(" none\n");
                return;
        }
        printf("\n  %-20s  %9s  %10s  %s\n", "FINISHED", "ERRORCODE", "DURATION", "ID");
        json_array_foreach (plans, i, p)
                printf("  %-20s  %9" JSON_INTEGER_FORMAT "  %10s  %s\n", str(p, "finished"),
                       num(p, "error_code"),
                       json_is_integer(json_object_get(p, "duration_ms"))
                               ? duration(json_object_get(p, "duration_ms"), d, sizeof(d))
                       : json_is_true(json_object_get(p, "before_start")) ? "earlier"
                                                                          : "not run",
                       str(p, "id"));
}

/* The IDs of the plans waiting to run (those listed), and the cancel
 * requests not settled yet. */
static void print_waiting(const json_t *s)
{
        const json_t *queued = json_object_get(s, "queued_plans");
        const json_t *cancels = json_object_get(s, "cancels");
        const json_t *p;
        size_t i;

        json_array_foreach (queued, i, p)
                printf("  %s (entry %s)\n",
                       json_is_string(json_object_get(p, "id"))
                               ? str(p, "id")
                               : "ID not known yet (stored before the agent started)",
                       str(p, "entry"));
        if (json_array_size(queued) < (size_t)num(s, "queued"))
                printf("  ... and %" JSON_INTEGER_FORMAT " more\n",
                       num(s, "queued") - (json_int_t)json_array_size(queued));
        json_array_foreach (cancels, i, p)
                printf("cancel:  of plan %s, asked by a %s request, %s\n", str(p, "plan_id"),
                       str(p, "from"),
                       streq(str(p, "state"), "searching") ? "looking for it in the journal"
                                                           : "waiting its turn");
}

static void print_count(const char *label, const json_t *v, const char *what)
{
        if (json_is_integer(v))
                printf("%s%" JSON_INTEGER_FORMAT " %s\n", label, json_integer_value(v), what);
        else
                printf("%sunknown just now\n", label);
}

static void print_progress(const json_t *p)
{
        if (!json_is_object(p)) {
                printf("progress: off\n");
                return;
        }
        printf("progress: events to routing key '%s': %" JSON_INTEGER_FORMAT
               " sent, %" JSON_INTEGER_FORMAT " dropped since start\n",
               str(p, "routing_key"), num(p, "sent"), num(p, "dropped"));
}

static void print_human(const json_t *s)
{
        const json_t *a = json_object_get(s, "agent");
        char d[32];

        printf("agent:   muranoagent %s, pid %" JSON_INTEGER_FORMAT
               ", %s, up %s (since %s), %" JSON_INTEGER_FORMAT " plan(s) done\n",
               str(a, "version"), num(a, "pid"), str(a, "stage"),
               duration(json_object_get(a, "uptime_ms"), d, sizeof(d)), str(a, "started"),
               num(a, "plans_done"));
        print_broker(json_object_get(s, "broker"));
        print_plan(json_object_get(s, "plan"));
        print_count("queued:  ", json_object_get(s, "queued"), "plan(s) waiting to run");
        print_waiting(s);
        print_count("unsent:  ", json_object_get(s, "unsent"), "result(s) waiting for the broker");
        print_progress(json_object_get(s, "progress"));
        print_recent(json_object_get(s, "recent"));
}

int cmd_status(const Config *cfg, char **args, int n_args)
{
        _cleanup_json_ json_t *req = NULL, *reply = NULL;
        _cleanup_free_ char *error = NULL;
        bool as_json = false;
        json_t *status;
        int rc;

        for (int i = 0; i < n_args; i++) {
                if (streq(args[i], "--json"))
                        as_json = true;
                else {
                        fprintf(stderr,
                                "muranoagent status: unknown argument '%s'\n"
                                "Usage: muranoagent [OPTIONS] status [--json]\n",
                                args[i]);
                        return 2;
                }
        }
        req = json_pack("{ss}", "command", "status");
        if (!req)
                return 1;
        rc = control_call(cfg->storage, req, CONTROL_TIMEOUT_MS, &reply, &error);
        if (rc < 0) {
                fprintf(stderr, "muranoagent status: %s\n", error ? error : strerror(-rc));
                return 1;
        }
        status = json_object_get(reply, "status");
        if (!json_is_true(json_object_get(reply, "ok")) || !json_is_object(status)) {
                fprintf(stderr, "muranoagent status: the agent refused: %s\n", str(reply, "error"));
                return 1;
        }
        if (as_json) {
                json_dumpf(status, stdout, JSON_INDENT(2));
                putchar('\n');
        } else
                print_human(status);
        return 0;
}
