/* The option table, defaults, storing converted values and diagnostics.
 * Loading files is config-load.c; converters are config-value.c; the dump
 * is config-format.c. */
#include "config/config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config-internal.h"
#include "config/ini.h"

#define F(field) offsetof(Config, field)

#define OPT(sec, n, t, fl, field, d, lo, hi, al)                                                   \
        {                                                                                          \
                CONFIG_SECTION_##sec, n, CONFIG_TYPE_##t, fl, F(field), d, lo, hi, al              \
        }
#define STR(sec, n, field, d, fl)         OPT(sec, n, STR, fl, field, d, 0, 0, NULL)
#define BOOL(sec, n, field, d)            OPT(sec, n, BOOL, 0, field, d, 0, 0, NULL)
#define UINT(sec, n, field, d, lo, hi)    OPT(sec, n, UINT, 0, field, d, lo, hi, NULL)
#define U64(sec, n, field, d, lo, hi, fl) OPT(sec, n, U64, fl, field, d, lo, hi, NULL)
#define IGNORED(n)                                                                                 \
        {                                                                                          \
                CONFIG_SECTION_DEFAULT, n, CONFIG_TYPE_IGNORED, 0, 0, NULL, 0, 0, NULL             \
        }

#define GIB         (UINT64_C(1) << 30)
#define TIB         (UINT64_C(1) << 40)
#define SECONDS_MAX INT32_MAX

/* Every option we read. The order is the order of checks and of the dump. */
const ConfigOption config_options[] = {
        /* [DEFAULT]: muranoagent/common/config.py and the oslo.log options
         * the agent uses. */
        STR(DEFAULT, "storage", storage, "/var/murano/plans", 0),
        STR(DEFAULT, "engine_key", engine_key, NULL, CONFIG_OPT_SECRET),
        BOOL(DEFAULT, "enable_dynamic_result_queue", enable_dynamic_result_queue, "false"),
        BOOL(DEFAULT, "debug", debug, "false"),
        OPT(DEFAULT, "log_file", STR, CONFIG_OPT_EMPTY_UNSET, log_file, NULL, 0, 0, "logfile"),
        OPT(DEFAULT, "log_dir", STR, CONFIG_OPT_EMPTY_UNSET, log_dir, NULL, 0, 0, "logdir"),
        BOOL(DEFAULT, "use_syslog", use_syslog, "false"),

        /* [DEFAULT] options of oslo.log and oslo.service that the Python agent
         * registers (its oslo-config-generator namespaces), and "verbose",
         * which Murano's Agent-v2.template still writes. Their values are not
         * checked because nothing here uses them. */
        IGNORED("verbose"),
        IGNORED("log_config_append"),
        IGNORED("log_config"),
        IGNORED("log_date_format"),
        IGNORED("watch_log_file"),
        IGNORED("use_journal"),
        IGNORED("syslog_log_facility"),
        IGNORED("use_json"),
        IGNORED("use_stderr"),
        IGNORED("use_eventlog"),
        IGNORED("log_rotate_interval"),
        IGNORED("log_rotate_interval_type"),
        IGNORED("max_logfile_count"),
        IGNORED("max_logfile_size_mb"),
        IGNORED("log_rotation_type"),
        IGNORED("logging_context_format_string"),
        IGNORED("logging_default_format_string"),
        IGNORED("logging_debug_format_suffix"),
        IGNORED("logging_exception_prefix"),
        IGNORED("logging_user_identity_format"),
        IGNORED("default_log_levels"),
        IGNORED("publish_errors"),
        IGNORED("instance_format"),
        IGNORED("instance_uuid_format"),
        IGNORED("rate_limit_interval"),
        IGNORED("rate_limit_burst"),
        IGNORED("rate_limit_except_level"),
        IGNORED("fatal_deprecations"),
        IGNORED("backdoor_port"),
        IGNORED("backdoor_socket"),
        IGNORED("log_options"),
        IGNORED("graceful_shutdown_timeout"),
        IGNORED("config_file"),
        IGNORED("config_dir"),
        IGNORED("config_source"),

        /* [rabbitmq] */
        OPT(RABBITMQ, "host", HOSTS, 0, rabbitmq.host, "localhost", 0, 0, NULL),
        UINT(RABBITMQ, "port", rabbitmq.port, "5672", 1, 65535),
        STR(RABBITMQ, "login", rabbitmq.login, "guest", 0),
        STR(RABBITMQ, "password", rabbitmq.password, "guest", CONFIG_OPT_SECRET),
        STR(RABBITMQ, "virtual_host", rabbitmq.virtual_host, "/", 0),
        BOOL(RABBITMQ, "ssl", rabbitmq.ssl, "false"),
        OPT(RABBITMQ, "ssl_version", SSL_VERSION, 0, rabbitmq.ssl_version, "", 0, 0, NULL),
        STR(RABBITMQ, "ca_certs", rabbitmq.ca_certs, "", CONFIG_OPT_STRIP),
        BOOL(RABBITMQ, "insecure", rabbitmq.insecure, "false"),
        STR(RABBITMQ, "result_routing_key", rabbitmq.result_routing_key, NULL, 0),
        STR(RABBITMQ, "result_exchange", rabbitmq.result_exchange, "", 0),
        STR(RABBITMQ, "input_queue", rabbitmq.input_queue, "", 0),

        /* [agent]: ours. */
        U64(AGENT, "max_plan_size", agent.max_plan_size, "64M", 1, GIB, CONFIG_OPT_SIZE),
        /* jansson refuses nesting deeper than 2048 whatever we allow. */
        UINT(AGENT, "max_plan_depth", agent.max_plan_depth, "64", 1, 2048),
        UINT(AGENT, "plan_timeout", agent.plan_timeout, "0", 0, SECONDS_MAX),
        UINT(AGENT, "script_timeout", agent.script_timeout, "0", 0, SECONDS_MAX),
        UINT(AGENT, "kill_grace", agent.kill_grace, "10", 0, 3600),
        UINT(AGENT, "stop_grace", agent.stop_grace, "30", 0, 86400),
        U64(AGENT, "output_limit", agent.output_limit, "1M", 1, GIB, CONFIG_OPT_SIZE),
        U64(AGENT, "body_max_steps", agent.body_max_steps, "10000000", 1, INT64_MAX, 0),
        UINT(AGENT, "body_max_depth", agent.body_max_depth, "200", 1, 10000),
        U64(AGENT, "body_max_memory", agent.body_max_memory, "256M", 1, TIB, CONFIG_OPT_SIZE),
        STR(AGENT, "body_open_root", agent.body_open_root, "", CONFIG_OPT_ABSPATH),
        BOOL(AGENT, "declare_queue", agent.declare_queue, "false"),
        /* AMQP carries the heartbeat as a 16-bit number of seconds. */
        UINT(AGENT, "heartbeat", agent.heartbeat, "60", 0, 65535),
        BOOL(AGENT, "verify_hostname", agent.verify_hostname, "false"),
        UINT(AGENT, "reconnect_max_delay", agent.reconnect_max_delay, "60", 1, 3600),
        /* Not [DEFAULT] log_format: oslo.log once had that option, a Python
         * logging format string, and an old file may still set it. */
        OPT(AGENT, "log_format", LOG_FORMAT, 0, agent.log_format, "text", 0, 0, NULL),
        STR(AGENT, "progress_routing_key", agent.progress_routing_key, "", 0),
        /* Durable Body calls, resume and reboots (docs/daemon.md). */
        BOOL(AGENT, "durable_calls", agent.durable_calls, "true"),
        UINT(AGENT, "reboot_exit_code", agent.reboot_exit_code, "0", 0, 255),
        STR(AGENT, "reboot_command", agent.reboot_command, "systemctl reboot", CONFIG_OPT_NONEMPTY),
        UINT(AGENT, "max_reboots", agent.max_reboots, "3", 0, 1000),
        /* docs/journal.md, "The write-ahead log". */
        BOOL(AGENT, "journal_log", agent.journal_log, "true"),

        /* [sandbox]: ours. The profile comes first: its presets are applied
         * before the options a source sets (config-load.c). */
        OPT(SANDBOX, "profile", PROFILE, 0, sandbox.profile, "compatible", 0, 0, NULL),
        BOOL(SANDBOX, "enabled", sandbox.enabled, "true"),
        STR(SANDBOX, "user", sandbox.user, "root", CONFIG_OPT_NONEMPTY),
        STR(SANDBOX, "group", sandbox.group, "root", CONFIG_OPT_NONEMPTY),
        UINT(SANDBOX, "rlimit_cpu", sandbox.rlimit_cpu, "0", 0, SECONDS_MAX),
        U64(SANDBOX, "rlimit_as", sandbox.rlimit_as, "0", 0, TIB, CONFIG_OPT_SIZE),
        /* Linux caps open files at fs.nr_open (1048576 by default) and
         * processes at PID_MAX_LIMIT (4194304). */
        UINT(SANDBOX, "rlimit_nofile", sandbox.rlimit_nofile, "1024", 0, 1048576),
        UINT(SANDBOX, "rlimit_nproc", sandbox.rlimit_nproc, "0", 0, 4194304),
        BOOL(SANDBOX, "no_new_privs", sandbox.no_new_privs, "true"),
        BOOL(SANDBOX, "mount_namespace", sandbox.mount_namespace, "false"),
        BOOL(SANDBOX, "pid_namespace", sandbox.pid_namespace, "false"),
        BOOL(SANDBOX, "ipc_namespace", sandbox.ipc_namespace, "false"),
        BOOL(SANDBOX, "uts_namespace", sandbox.uts_namespace, "false"),
        BOOL(SANDBOX, "network_namespace", sandbox.network_namespace, "false"),
        BOOL(SANDBOX, "read_only_root", sandbox.read_only_root, "true"),
        BOOL(SANDBOX, "hide_agent", sandbox.hide_agent, "false"),
        BOOL(SANDBOX, "protect_kernel", sandbox.protect_kernel, "false"),
        OPT(SANDBOX, "hide_paths", PATH_LIST, 0, sandbox.hide_paths, "", 0, 0, NULL),
        OPT(SANDBOX, "drop_capabilities", CAPS, 0, sandbox.drop_capabilities, "", 0, 0, NULL),
        OPT(SANDBOX, "cgroup", CGROUP, 0, sandbox.cgroup, "auto", 0, 0, NULL),
        U64(SANDBOX, "memory_max", sandbox.memory_max, "auto", 0, TIB,
            CONFIG_OPT_SIZE | CONFIG_OPT_AUTO),
        OPT(SANDBOX, "pids_max", UINT, CONFIG_OPT_AUTO, sandbox.pids_max, "auto", 0, 4194304, NULL),
        OPT(SANDBOX, "env_passthrough", ENV_LIST, 0, sandbox.env_passthrough,
            "PATH,LANG,LC_ALL,http_proxy,https_proxy,no_proxy,HTTP_PROXY,HTTPS_PROXY,NO_PROXY", 0,
            0, NULL),
};

const size_t config_n_options = ELEMENTSOF(config_options);

/* The capabilities that undo namespaces or reach the kernel: mounts and
 * setns (SYS_ADMIN), other processes' memory (SYS_PTRACE), modules, raw
 * I/O and /dev/mem, reboot and kexec, the clock, device nodes (a disk
 * opened raw bypasses every hidden path), file handles that bypass mounts
 * (DAC_READ_SEARCH, the "shocker" escape), the kernel log, security
 * policy and audit rules, BPF and perf, and the resource limits (SYS_RESOURCE:
 * rlimits raised, a file system's reserved blocks). */
#define CONTAINED_CAPS                                                                             \
        "CAP_SYS_ADMIN,CAP_SYS_PTRACE,CAP_SYS_MODULE,CAP_SYS_RAWIO,CAP_SYS_BOOT,CAP_SYS_TIME,"     \
        "CAP_MKNOD,CAP_DAC_READ_SEARCH,CAP_SYSLOG,CAP_MAC_ADMIN,CAP_MAC_OVERRIDE,"                 \
        "CAP_AUDIT_CONTROL,CAP_BPF,CAP_PERFMON,CAP_SYS_RESOURCE"

/* What each profile sets; docs/sandbox.md, "Profiles", explains them.
 * compatible is the defaults and sets nothing. */
const ConfigPreset config_presets[] = {
        {CONFIG_PROFILE_CONTAINED, "mount_namespace", "true"},
        {CONFIG_PROFILE_CONTAINED, "pid_namespace", "true"},
        {CONFIG_PROFILE_CONTAINED, "ipc_namespace", "true"},
        {CONFIG_PROFILE_CONTAINED, "uts_namespace", "true"},
        {CONFIG_PROFILE_CONTAINED, "read_only_root", "false"},
        {CONFIG_PROFILE_CONTAINED, "hide_agent", "true"},
        {CONFIG_PROFILE_CONTAINED, "protect_kernel", "true"},
        {CONFIG_PROFILE_CONTAINED, "hide_paths",
         "/run/dbus/system_bus_socket,/run/systemd/private"},
        {CONFIG_PROFILE_CONTAINED, "drop_capabilities", CONTAINED_CAPS},
        {CONFIG_PROFILE_USER, "user", "nobody"},
        {CONFIG_PROFILE_USER, "group", "nogroup"},
        {CONFIG_PROFILE_USER, "mount_namespace", "true"},
        {CONFIG_PROFILE_USER, "pid_namespace", "true"},
        {CONFIG_PROFILE_USER, "ipc_namespace", "true"},
        {CONFIG_PROFILE_USER, "uts_namespace", "true"},
        {CONFIG_PROFILE_USER, "network_namespace", "true"},
        {CONFIG_PROFILE_USER, "hide_agent", "true"},
        {CONFIG_PROFILE_USER, "protect_kernel", "true"},
        {CONFIG_PROFILE_USER, "hide_paths", "/run/dbus/system_bus_socket,/run/systemd/private"},
        {CONFIG_PROFILE_USER, "drop_capabilities", CONTAINED_CAPS},
};

const size_t config_n_presets = ELEMENTSOF(config_presets);

static const char *const section_names[CONFIG_SECTION_MAX] = {
        [CONFIG_SECTION_DEFAULT] = "DEFAULT",
        [CONFIG_SECTION_RABBITMQ] = "rabbitmq",
        [CONFIG_SECTION_AGENT] = "agent",
        [CONFIG_SECTION_SANDBOX] = "sandbox",
};

const char *config_section_name(ConfigSection s)
{
        return s < CONFIG_SECTION_MAX ? section_names[s] : "?";
}

int config_section_lookup(const char *name)
{
        /* oslo lower-cases every group name except "DEFAULT", so [RabbitMQ]
         * is [rabbitmq] but [default] is a group of its own. */
        if (streq(name, "DEFAULT"))
                return CONFIG_SECTION_DEFAULT;
        for (int s = CONFIG_SECTION_DEFAULT + 1; s < CONFIG_SECTION_MAX; s++)
                if (strcasecmp(name, section_names[s]) == 0)
                        return s;
        return -1;
}

int config_option_lookup(ConfigSection s, const char *name, bool *ret_alias)
{
        for (size_t i = 0; i < config_n_options; i++) {
                const ConfigOption *o = &config_options[i];
                if (o->section != s)
                        continue;
                if (streq(o->name, name) || (o->alias && streq(o->alias, name))) {
                        *ret_alias = !streq(o->name, name);
                        return (int)i;
                }
        }
        return -1;
}

const char *config_ssl_version_name(ConfigSslVersion v)
{
        static const char *const names[] = {"", "tlsv1", "tlsv1_1", "tlsv1_2", "tlsv1_3", "sslv23"};
        return (size_t)v < ELEMENTSOF(names) ? names[v] : "?";
}

const char *config_log_path(const Config *c, char *buf, size_t size)
{
        if (c->log_file)
                return c->log_file;
        if (!c->log_dir)
                return NULL;
        snprintf(buf, size, "%s/muranoagent.log", c->log_dir);
        return buf;
}

const char *config_profile_name(ConfigProfile v)
{
        static const char *const names[] = {"compatible", "contained", "user"};
        return (size_t)v < ELEMENTSOF(names) ? names[v] : "?";
}

const char *config_cgroup_name(ConfigCgroup v)
{
        static const char *const names[] = {"auto", "v2", "v1", "off"};
        return (size_t)v < ELEMENTSOF(names) ? names[v] : "?";
}

const char *config_log_format_name(ConfigLogFormat v)
{
        static const char *const names[] = {"text", "json"};
        return (size_t)v < ELEMENTSOF(names) ? names[v] : "?";
}

/* "expected <what>, got '<value>'", with the value left out for secrets. */
static int why_expected(const ConfigOption *o, const char *value, char **ret_why, const char *fmt,
                        ...) _printf_(4, 5);

static int why_expected(const ConfigOption *o, const char *value, char **ret_why, const char *fmt,
                        ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        va_list ap;
        int r;

        r = strbuf_puts(&b, "expected ");
        if (r < 0)
                return r;
        va_start(ap, fmt);
        r = strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (o->flags & CONFIG_OPT_SECRET)
                r = strbuf_puts(&b, ", got something else");
        else {
                r = strbuf_puts(&b, ", got ");
                if (r >= 0)
                        r = config_quote(&b, value);
        }
        if (r >= 0)
                r = strbuf_steal(&b, ret_why);
        return r < 0 ? r : CONFIG_INVALID;
}

static int apply_string(const ConfigOption *o, char **field, const char *value, char **ret_why)
{
        size_t skip = 0, n = strlen(value);
        char *copy = NULL;

        if (o->flags & CONFIG_OPT_STRIP) {
                skip = ini_lspace(value, n);
                n = ini_rstrip_len(value + skip, n - skip);
        }
        if ((o->flags & CONFIG_OPT_NONEMPTY) && n == 0)
                return why_expected(o, value, ret_why, "a name");
        if ((o->flags & CONFIG_OPT_ABSPATH) && n > 0 && value[skip] != '/')
                return why_expected(o, value, ret_why, "an absolute path or nothing");
        if (n > 0 || !(o->flags & CONFIG_OPT_EMPTY_UNSET)) {
                copy = strndup(value + skip, n);
                if (!copy)
                        return -ENOMEM;
        }
        free(*field);
        *field = copy;
        return 0;
}

static int apply_integer(const ConfigOption *o, void *field, const char *value, char **ret_why)
{
        uint64_t v;

        if ((o->flags & CONFIG_OPT_AUTO) && streq(value, "auto"))
                v = o->type == CONFIG_TYPE_UINT ? CONFIG_PIDS_MAX_AUTO : CONFIG_MEMORY_MAX_AUTO;
        else if (config_parse_u64(value, o->flags & CONFIG_OPT_SIZE, o->min, o->max, &v) < 0) {
                if (o->flags & CONFIG_OPT_SIZE)
                        return why_expected(o, value, ret_why,
                                            "a size in bytes from %" PRIu64 " to %" PRIu64
                                            " (a K, M or G suffix is allowed)%s",
                                            o->min, o->max,
                                            o->flags & CONFIG_OPT_AUTO ? ", or auto" : "");
                return why_expected(o, value, ret_why,
                                    "an integer from %" PRIu64 " to %" PRIu64 "%s", o->min, o->max,
                                    o->flags & CONFIG_OPT_AUTO ? ", or auto" : "");
        }
        if (o->type == CONFIG_TYPE_UINT)
                *(unsigned *)field = (unsigned)v;
        else
                *(uint64_t *)field = v;
        return 0;
}

/* "expected a comma-separated list of <what> ('<bad>' is not one)". */
static int why_list(const ConfigOption *o, const char *value, const char *bad, const char *what,
                    char **ret_why)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int r = config_quote(&b, bad);

        if (r < 0)
                return r;
        return why_expected(o, value, ret_why, "a comma-separated list of %s (%s is not one)", what,
                            b.data);
}

static int apply_list(const ConfigOption *o, ConfigStrv *field, const char *value, char **ret_why)
{
        bool paths = o->type == CONFIG_TYPE_PATH_LIST;
        _cleanup_free_ char *bad = NULL;
        ConfigStrv v = {NULL, 0};
        int r;

        r = config_parse_list(value, paths ? config_abspath_valid : config_env_name_valid, &v,
                              &bad);
        if (r == -EINVAL)
                return why_list(o, value, bad,
                                paths ? "absolute paths" : "environment variable names", ret_why);
        if (r < 0)
                return r;
        config_strv_done(field);
        *field = v;
        return 0;
}

static int apply_caps(const ConfigOption *o, uint64_t *field, const char *value, char **ret_why)
{
        _cleanup_free_ char *bad = NULL;
        int r = config_parse_caps(value, field, &bad);

        if (r == -EINVAL)
                return why_list(o, value, bad, "capability names", ret_why);
        return r;
}

int config_option_apply(Config *c, const ConfigOption *o, const char *value, char **ret_why)
{
        void *field = (char *)c + o->offset;

        switch (o->type) {
        case CONFIG_TYPE_STR:
        case CONFIG_TYPE_HOSTS:
                return apply_string(o, field, value, ret_why);
        case CONFIG_TYPE_BOOL:
                if (config_parse_bool(value, field) < 0)
                        return why_expected(o, value, ret_why,
                                            "a boolean (true/false, yes/no, on/off or 1/0)");
                return 0;
        case CONFIG_TYPE_UINT:
        case CONFIG_TYPE_U64:
                return apply_integer(o, field, value, ret_why);
        case CONFIG_TYPE_SSL_VERSION:
                if (config_parse_ssl_version(value, field) < 0) {
                        /* The reference's own wording comes first. */
                        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
                        int r = strbuf_printf(&b,
                                              "Invalid SSL version: %s (expected tlsv1, "
                                              "tlsv1_1, tlsv1_2, tlsv1_3, sslv23 or nothing)",
                                              value);
                        if (r >= 0)
                                r = strbuf_steal(&b, ret_why);
                        return r < 0 ? r : CONFIG_INVALID;
                }
                return 0;
        case CONFIG_TYPE_CGROUP:
                if (config_parse_cgroup(value, field) < 0)
                        return why_expected(o, value, ret_why, "one of auto, v2, v1 or off");
                return 0;
        case CONFIG_TYPE_ENV_LIST:
        case CONFIG_TYPE_PATH_LIST:
                return apply_list(o, field, value, ret_why);
        case CONFIG_TYPE_CAPS:
                return apply_caps(o, field, value, ret_why);
        case CONFIG_TYPE_PROFILE:
                if (config_parse_profile(value, field) < 0)
                        return why_expected(o, value, ret_why,
                                            "one of compatible, contained or user");
                return 0;
        case CONFIG_TYPE_LOG_FORMAT:
                if (config_parse_log_format(value, field) < 0)
                        return why_expected(o, value, ret_why, "text or json");
                return 0;
        case CONFIG_TYPE_IGNORED:
                return 0;
        }
        return -EINVAL;
}

int config_hosts_update(Config *c, char **ret_why)
{
        ConfigHost *hosts;
        size_t n;
        int r;

        r = config_parse_hosts(c->rabbitmq.host, c->rabbitmq.port, &hosts, &n, ret_why);
        if (r != 0)
                return r;
        config_hosts_free(c->rabbitmq.hosts, c->rabbitmq.n_hosts);
        c->rabbitmq.hosts = hosts;
        c->rabbitmq.n_hosts = n;
        return 0;
}

Config *config_free(Config *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < config_n_options; i++) {
                const ConfigOption *o = &config_options[i];
                void *field = (char *)c + o->offset;

                if (o->type == CONFIG_TYPE_STR || o->type == CONFIG_TYPE_HOSTS)
                        free(*(char **)field);
                else if (o->type == CONFIG_TYPE_ENV_LIST || o->type == CONFIG_TYPE_PATH_LIST)
                        config_strv_done(field);
        }
        config_strv_done(&c->files);
        config_hosts_free(c->rabbitmq.hosts, c->rabbitmq.n_hosts);
        free(c);
        return NULL;
}

DEFINE_CLEANUP(Config, config_free)

int config_new_default(Config **ret)
{
        _cleanup_(config_freep) Config *c = calloc(1, sizeof(*c));
        _cleanup_free_ char *host_why = NULL;
        int r;

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < config_n_options; i++) {
                const ConfigOption *o = &config_options[i];
                _cleanup_free_ char *why = NULL;

                if (o->type == CONFIG_TYPE_IGNORED || !o->def)
                        continue;
                /* The defaults are ours and always valid; the unit tests check
                 * it, so a failure here can only be an allocation failure. */
                r = config_option_apply(c, o, o->def, &why);
                if (r != 0)
                        return r < 0 ? r : -EINVAL;
        }
        r = config_hosts_update(c, &host_why);
        if (r != 0)
                return r < 0 ? r : -EINVAL;
        *ret = TAKE_PTR(c);
        return 0;
}

static int diag_vformat(char **ret, const char *fmt, va_list ap) _printf_(2, 0);

static int diag_vformat(char **ret, const char *fmt, va_list ap)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int r = strbuf_vprintf(&b, fmt, ap);
        return r < 0 ? r : strbuf_steal(&b, ret);
}

int config_diag_warn(ConfigDiag *d, const char *fmt, ...)
{
        char *msg, **w;
        va_list ap;
        int r;

        if (d->n_warnings >= CONFIG_MAX_WARNINGS) {
                d->n_dropped++;
                return 0;
        }
        va_start(ap, fmt);
        r = diag_vformat(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        w = realloc(d->warnings, (d->n_warnings + 1) * sizeof(*w));
        if (!w) {
                free(msg);
                return -ENOMEM;
        }
        w[d->n_warnings++] = msg;
        d->warnings = w;
        return 0;
}

int config_diag_fail(ConfigDiag *d, const char *fmt, ...)
{
        va_list ap;
        int r;

        if (d->error)
                return CONFIG_INVALID;
        va_start(ap, fmt);
        r = diag_vformat(&d->error, fmt, ap);
        va_end(ap);
        return r < 0 ? r : CONFIG_INVALID;
}

void config_diag_done(ConfigDiag *d)
{
        if (!d)
                return;
        free(d->error);
        for (size_t i = 0; i < d->n_warnings; i++)
                free(d->warnings[i]);
        free(d->warnings);
        *d = (ConfigDiag)CONFIG_DIAG_INIT;
}
