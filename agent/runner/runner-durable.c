/* Durable Body calls: record, replay, check, reboot (runner-durable.h).
 * Runs on the plan thread only. */
#include "runner/runner-durable.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "journal/journal-calls.h"
#include "log/log.h"
#include "result/result.h"
#include "util/base64.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/sha256.h"

#define BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

struct RunnerDurable {
        JournalCalls *log;
        const Config *cfg;
        const json_t *plan; /* borrowed: Scripts' Options */
        const char *id;     /* borrowed: for logs */
        char **cwd;         /* borrowed: the plan's working directory (exec.h io_cwd) */
        char boot[64];      /* this boot's ID, "" when unknown */
        size_t cursor;      /* next record to replay; == count: live */
        size_t n_calls;     /* calls the Body made so far */
        unsigned reboots;   /* reboot records met or made */
        bool rebooting;
        int end_code;
        char *end_message;
};

static void read_boot_id_file(const char *path, char out[64])
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;

        out[0] = '\0';
        if (file_read_all(path, 63, &text, &len) < 0)
                return;
        text[strcspn(text, "\n")] = '\0';
        snprintf(out, 64, "%s", text);
}

static char kernel_boot_id[64];

static void read_kernel_boot_id(void)
{
        read_boot_id_file(BOOT_ID_FILE, kernel_boot_id);
}

/* The kernel's boot ID (random per boot), read once: it cannot change
 * while this process lives. MURANOAGENT_BOOT_ID_FILE names another file,
 * for tests that play a reboot, read at each plan. */
static void read_boot_id(char out[64])
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        const char *path = getenv("MURANOAGENT_BOOT_ID_FILE");

        if (path && *path) {
                read_boot_id_file(path, out);
                return;
        }
        pthread_once(&once, read_kernel_boot_id);
        memcpy(out, kernel_boot_id, 64);
}

static int end_plan(RunnerDurable *d, int code, const char *fmt, ...) _printf_(3, 4);
static int end_plan(RunnerDurable *d, int code, const char *fmt, ...)
{
        va_list ap;

        if (d->end_code)
                return -ECANCELED;
        va_start(ap, fmt);
        if (vasprintf(&d->end_message, fmt, ap) < 0)
                d->end_message = NULL;
        va_end(ap);
        d->end_code = code;
        log_error(d->id, "%s", d->end_message ? d->end_message : "out of memory");
        return -ECANCELED;
}

int runner_durable_open(const char *dir, const JournalCallsKey *key, const Config *cfg,
                        const json_t *plan, const char *plan_id, char **cwd, RunnerDurable **ret)
{
        RunnerDurable *d = calloc(1, sizeof(*d));
        char *error = NULL;
        int r;

        if (!d)
                return -ENOMEM;
        d->cfg = cfg;
        d->plan = plan;
        d->id = plan_id;
        d->cwd = cwd;
        read_boot_id(d->boot);
        r = journal_calls_open(dir, key, &d->log, &error);
        if (r < 0) {
                free(d);
                return r;
        }
        *ret = d;
        if (r == JOURNAL_CALLS_DAMAGED) {
                end_plan(d, RESULT_CODE_INTERRUPTED,
                         "The plan was interrupted: the agent stopped while it ran, and it cannot "
                         "be resumed: %s",
                         error ? error : "the call log is damaged");
                free(error);
                return 1;
        }
        for (size_t i = 0; i < journal_calls_count(d->log); i++)
                if (journal_calls_get(d->log, i)->kind == JOURNAL_CALL_REBOOT)
                        d->reboots++;
        if (journal_calls_count(d->log) > 0)
                log_info(d->id, "resuming the plan: its call log holds %zu records%s",
                         journal_calls_count(d->log),
                         journal_calls_cut(d->log) ? " (a torn last record was cut off)" : "");
        return 0;
}

/* The SHA-256, in hex, of what a call asks for: [script, function, args,
 * kwargs] as compact JSON. */
static int call_digest(const BodyCall *call, char hex[65])
{
        json_t *all = json_pack("[s, s?, O, O]", call->script, call->function, (json_t *)call->args,
                                (json_t *)call->kwargs);
        _cleanup_free_ char *text = all ? json_dumps(all, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

        json_decref(all);
        return text ? sha256_hex(text, strlen(text), NULL, 0, hex) : -ENOMEM;
}

/* Append a record, taking rec (NULL: out of memory); what is appended is
 * past the replay. */
static int append(RunnerDurable *d, char kind, json_t *rec, bool sync)
{
        int r = rec ? journal_calls_append(d->log, kind, rec, sync) : -ENOMEM;

        json_decref(rec);
        d->cursor = journal_calls_count(d->log);
        return r;
}

static const JournalCallRecord *peek(const RunnerDurable *d)
{
        return journal_calls_get(d->log, d->cursor);
}

static long long rec_call(const JournalCallRecord *r)
{
        return json_integer_value(json_object_get(r->data, "call"));
}

static const char *rec_str(const JournalCallRecord *r, const char *key)
{
        const char *s = json_string_value(json_object_get(r->data, key));
        return s ? s : "";
}

/* "deploy" or "deploy.function" */
static void call_name(const char *script, const char *function, char *out, size_t size)
{
        snprintf(out, size, "%s%s%s", script, function ? "." : "", function ? function : "");
}

static const char *kind_name(char kind)
{
        switch (kind) {
        case JOURNAL_CALL_START:
                return "a script call";
        case JOURNAL_CALL_END:
                return "a call's result";
        case JOURNAL_CALL_VALUE:
                return "a drawn value";
        case JOURNAL_CALL_REBOOT:
                return "a reboot";
        default:
                return "an unknown record";
        }
}

/* What record r was, in words, for a divergence message. */
static void describe(const JournalCallRecord *r, char *out, size_t size)
{
        if (!r)
                snprintf(out, size, "nothing more");
        else if (r->kind == JOURNAL_CALL_START)
                snprintf(out, size, "call %lld, %s()", rec_call(r), rec_str(r, "name"));
        else if (r->kind == JOURNAL_CALL_VALUE)
                snprintf(out, size, "a %s value%s%s", rec_str(r, "kind"),
                         *rec_str(r, "what") ? " of " : "", rec_str(r, "what"));
        else
                snprintf(out, size, "%s", kind_name(r->kind));
}

static int diverge(RunnerDurable *d, const char *asked)
{
        char had[512];

        describe(peek(d), had, sizeof(had));
        return end_plan(d, RUNNER_CODE_DIVERGED,
                        "The plan's Body took another path when it ran again after the agent "
                        "restarted: it asked for %s where the call log (record %zu) holds %s; "
                        "a Body must make the same calls in the same order to resume, and the "
                        "plan was stopped rather than give a wrong result",
                        asked, d->cursor, had);
}

static bool option_true(const RunnerDurable *d, const char *script, const char *key)
{
        const json_t *o = json_object_get(
                json_object_get(json_object_get(d->plan, "Scripts"), script), "Options");
        return json_is_true(json_object_get(o, key));
}

/* The exit code with which this script asks for a reboot, -1 for none. */
static int reboot_code(const RunnerDurable *d, const char *script)
{
        const json_t *o = json_object_get(
                json_object_get(json_object_get(d->plan, "Scripts"), script), "Options");
        const json_t *v = json_object_get(o, "rebootExitCode");

        if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 256)
                return (int)json_integer_value(v);
        return d->cfg->agent.reboot_exit_code > 0 ? (int)d->cfg->agent.reboot_exit_code : -1;
}

/* A recorded end: the result, or the error, as the call gave them. */
static int replay_end(RunnerDurable *d, const JournalCallRecord *e, json_t **ret,
                      BodyCallError *err)
{
        const json_t *res = json_object_get(e->data, "result");
        const json_t *er = json_object_get(e->data, "error");
        const char *cwd = json_string_value(json_object_get(e->data, "cwd"));

        /* Where the call left the plan's working directory, for open(). */
        if (cwd) {
                char *c = strdup(cwd);
                if (!c)
                        return -ENOMEM;
                free(*d->cwd);
                *d->cwd = c;
        }

        if (res) {
                *ret = json_deep_copy(res);
                return *ret ? 0 : -ENOMEM;
        }
        err->code = (int)json_integer_value(json_object_get(er, "code"));
        err->message = strdup(json_string_value(json_object_get(er, "message")) ?: "");
        err->additional_info = json_deep_copy(json_object_get(er, "additionalInfo"));
        return err->message ? 1 : -ENOMEM;
}

/* The end of call idx of script; with boot, it asked for a reboot (a
 * reboot record follows once the reboot command runs).
 *
 * Not fdatasync'd, unless the script is idempotent, since what comes next
 * makes it durable or moot. The next start record or the reboot record is
 * fdatasync'd before the next script or the reboot command runs, which
 * covers every byte before it, and once the plan's result is stored the
 * log is never read again. A kill loses no written byte; only a power loss
 * or a kernel crash before then can take the record, and then the call
 * looks as if it was running: the plan is answered with 103 naming it,
 * and it does not run a second time. An idempotent call would run again
 * instead, and a finished call never does (docs/daemon.md): its end is
 * fdatasync'd. */
static int record_end(RunnerDurable *d, size_t idx, const char *script, int rc, const json_t *res,
                      const BodyCallError *err, bool boot)
{
        json_t *rec;

        if (rc == 0)
                rec = json_pack("{s:I, s:O, s:b, s:s?}", "call", (json_int_t)idx, "result",
                                (json_t *)res, "reboot", boot, "cwd", *d->cwd);
        else
                rec = json_pack("{s:I, s:{s:i, s:s, s:O?}, s:s?}", "call", (json_int_t)idx, "error",
                                "code", err->code, "message", err->message ? err->message : "",
                                "additionalInfo", err->additional_info, "cwd", *d->cwd);
        return append(d, JOURNAL_CALL_END, rec, option_true(d, script, "idempotent"));
}

/* The call asked for a reboot: when its exit code is the reboot code, the
 * call counts as finished with its result (even under verifyExitcode). */
static bool wants_reboot(int code, int *rc, json_t **ret, BodyCallError *err)
{
        json_t *res;

        if (code < 0)
                return false;
        if (*rc == 0)
                return json_integer_value(json_object_get(*ret, "exitCode")) == code;
        if (*rc != 1 || !err->additional_info ||
            json_integer_value(json_object_get(err->additional_info, "exitCode")) != code)
                return false;
        res = json_deep_copy(err->additional_info);
        if (!res)
                return false;
        free(err->message);
        json_decref(err->additional_info);
        *err = (BodyCallError){0};
        *ret = res;
        *rc = 0;
        return true;
}

/* Record the reboot, run reboot_command, and wait for the agent to be
 * stopped (the reboot) or killed. */
static int reboot(RunnerDurable *d, size_t idx, const char *name, ProcRunner *procs,
                  const atomic_int *cancel)
{
        const char *argv[] = {"/bin/sh", "-c", d->cfg->agent.reboot_command, NULL};
        ProcRequest req = {.argv = argv, .cwd = "/", .what = "the reboot command"};
        ProcResult res = {0};
        int r;

        if (d->reboots >= d->cfg->agent.max_reboots)
                return end_plan(d, RUNNER_CODE_REBOOT_FAIL,
                                "Script %s asked for a reboot, and the plan has already rebooted "
                                "%u times, the most [agent] max_reboots allows",
                                name, d->reboots);
        r = append(d, JOURNAL_CALL_REBOOT,
                   json_pack("{s:I, s:s}", "call", (json_int_t)idx, "boot", d->boot), true);
        if (r < 0)
                return r;
        d->reboots++;
        d->rebooting = true;
        log_warning(d->id, "script %s asked for a reboot (%u of at most %u): running %s", name,
                    d->reboots, d->cfg->agent.max_reboots, d->cfg->agent.reboot_command);
        r = procs->run(procs->userdata, &req, &res);
        if (r < 0)
                return r;
        /* The machine stopped the agent while the command ran (systemd
         * stops every service for the reboot): the reboot is under way. */
        if (res.failure_kind == PROC_FAIL_STOPPED) {
                proc_result_clear(&res);
                return -ECANCELED;
        }
        if (res.failure || res.exit_code != 0) {
                r = end_plan(d, RUNNER_CODE_REBOOT_FAIL,
                             "Script %s asked for a reboot, and the reboot command failed: %s",
                             name, res.failure ? res.failure : "it exited with a non-zero status");
                d->rebooting = false;
                proc_result_clear(&res);
                return r;
        }
        proc_result_clear(&res);
        /* The machine goes down: systemd stops the agent (the plan then
         * ends without a result, and resumes after the boot), or the power
         * goes. Nothing else may run meanwhile. */
        while (atomic_load(cancel) == 0)
                nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
        return -ECANCELED;
}

/* The call recorded at the cursor had started and has no end: the agent
 * died while it ran. */
static int in_flight(RunnerDurable *d, const JournalCallRecord *s, const char *name, bool *rerun)
{
        const char *boot = rec_str(s, "boot");
        bool rebooted = *d->boot && *boot && !streq(boot, d->boot);

        if (option_true(d, rec_str(s, "script"), "idempotent")) {
                log_warning(d->id,
                            "call %lld, %s(), was running when the agent %s; its script is "
                            "idempotent: running it again",
                            rec_call(s), name, rebooted ? "and the VM rebooted" : "stopped");
                *rerun = true;
                return 0;
        }
        if (rebooted)
                return end_plan(d, RESULT_CODE_INTERRUPTED,
                                "The plan was interrupted: the VM rebooted during call %lld, "
                                "%s(), which was not run again (its script is not marked "
                                "idempotent); the calls before it were not run again either",
                                rec_call(s), name);
        return end_plan(d, RESULT_CODE_INTERRUPTED,
                        "The plan was interrupted: the agent stopped during call %lld, %s(), "
                        "which was not run again (its script is not marked idempotent); the "
                        "calls before it were not run again either",
                        rec_call(s), name);
}

int runner_durable_call(RunnerDurable *d, const BodyCall *call, runner_durable_run_fn run,
                        void *userdata, ProcRunner *procs, const atomic_int *cancel, json_t **ret,
                        BodyCallError *err)
{
        size_t idx = d->n_calls++;
        char digest[65], name[256], asked[512];
        bool rerun = false;
        int rc, r;

        if (call_digest(call, digest) < 0)
                return -ENOMEM;
        call_name(call->script, call->function, name, sizeof(name));
        if (d->cursor < journal_calls_count(d->log)) {
                const JournalCallRecord *s = peek(d), *e;

                if (s->kind != JOURNAL_CALL_START || rec_call(s) != (long long)idx ||
                    !streq(rec_str(s, "name"), name) || !streq(rec_str(s, "args"), digest)) {
                        snprintf(asked, sizeof(asked), "call %zu, %s()%s", idx, name,
                                 s->kind == JOURNAL_CALL_START && streq(rec_str(s, "name"), name)
                                         ? " with other arguments"
                                         : "");
                        return diverge(d, asked);
                }
                d->cursor++;
                e = peek(d);
                if (!e) {
                        rc = in_flight(d, s, name, &rerun);
                        if (!rerun)
                                return rc;
                } else if (e->kind != JOURNAL_CALL_END || rec_call(e) != (long long)idx) {
                        snprintf(asked, sizeof(asked), "the result of call %zu, %s()", idx, name);
                        return diverge(d, asked);
                } else {
                        d->cursor++;
                        log_info(d->id,
                                 "call %zu, %s(), finished before the restart: its "
                                 "recorded result is used, it does not run again",
                                 idx, name);
                        rc = replay_end(d, e, ret, err);
                        if (!json_is_true(json_object_get(e->data, "reboot")))
                                return rc;
                        if (peek(d) && peek(d)->kind == JOURNAL_CALL_REBOOT &&
                            rec_call(peek(d)) == (long long)idx) {
                                d->cursor++;
                                log_info(d->id,
                                         "the reboot that call %zu, %s(), asked for is "
                                         "over; the plan goes on",
                                         idx, name);
                                return rc;
                        }
                        if (peek(d))
                                return rc;
                        /* The agent died after the call's end, before the
                         * reboot command ran: reboot now. */
                        r = reboot(d, idx, name, procs, cancel);
                        *ret = (json_decref(*ret), NULL);
                        return r < 0 ? r : -ECANCELED;
                }
        }
        if (!rerun) {
                rc = append(d, JOURNAL_CALL_START,
                            json_pack("{s:I, s:s, s:s, s:s, s:s}", "call", (json_int_t)idx, "name",
                                      name, "script", call->script, "args", digest, "boot",
                                      d->boot),
                            true);
                if (rc < 0)
                        return rc;
        }
        rc = run(userdata, call, ret, err);
        if (rc < 0)
                return rc;
        if (atomic_load(cancel) != 0) {
                /* Stopped or timed out: the call's end is not known to be
                 * its own (the tree was killed); the plan is answered for
                 * the stop, and not resumed. */
                return rc;
        }
        bool boot = wants_reboot(reboot_code(d, call->script), &rc, ret, err);
        r = record_end(d, idx, call->script, rc, *ret, err, boot);
        if (r < 0) {
                if (rc == 0)
                        *ret = (json_decref(*ret), NULL);
                else
                        exec_error_clear(err);
                return r;
        }
        if (boot) {
                r = reboot(d, idx, name, procs, cancel);
                if (r < 0) {
                        *ret = (json_decref(*ret), NULL);
                        return r;
                }
        }
        return rc;
}

int runner_durable_draw(RunnerDurable *d, const char *kind, const char *what, char **value,
                        size_t *len)
{
        _cleanup_free_ char *b64 = NULL;
        StrBuf buf = STRBUF_INIT;
        char asked[512];
        int r;

        if (d->cursor < journal_calls_count(d->log)) {
                const JournalCallRecord *v = peek(d);
                const char *text;
                char *bytes = NULL;
                size_t n = 0;

                if (v->kind != JOURNAL_CALL_VALUE || !streq(rec_str(v, "kind"), kind) ||
                    !streq(rec_str(v, "what"), what ? what : "")) {
                        snprintf(asked, sizeof(asked), "a %s value%s%s", kind, what ? " of " : "",
                                 what ? what : "");
                        return diverge(d, asked);
                }
                text = rec_str(v, "value");
                r = base64_decode_canonical(text, strlen(text), &bytes, &n);
                if (r < 0)
                        return r == -ENOMEM ? r : -EBADMSG;
                free(*value);
                *value = bytes;
                *len = n;
                d->cursor++;
                return 0;
        }
        r = base64_append(&buf, *value, *len);
        if (r < 0 || (r = strbuf_steal(&buf, &b64)) < 0) {
                strbuf_free(&buf);
                return r;
        }
        /* Not fsync'd: what the Body drew matters only once a script call
         * depends on it, and that call's start record is fsync'd first. */
        return append(
                d, JOURNAL_CALL_VALUE,
                json_pack("{s:s, s:s, s:s}", "kind", kind, "what", what ? what : "", "value", b64),
                false);
}

bool runner_durable_finish(RunnerDurable *d)
{
        if (d->end_code || d->cursor >= journal_calls_count(d->log))
                return d->end_code != 0;
        diverge(d, "no more (the Body ended)");
        return true;
}

int runner_durable_end(const RunnerDurable *d, const char **ret_message)
{
        *ret_message = d->end_message ? d->end_message : "out of memory";
        return d->end_code;
}

bool runner_durable_rebooting(const RunnerDurable *d)
{
        return d && d->rebooting;
}

void runner_durable_free(RunnerDurable *d)
{
        if (!d)
                return;
        journal_calls_free(d->log);
        free(d->end_message);
        free(d);
}
