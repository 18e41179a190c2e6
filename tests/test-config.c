/* Tests for config/: the oslo.config INI dialect, every option's default,
 * load order, error and warning messages, and the --print-config dump.
 * Expected values for the dialect cases were checked against oslo.config
 * 9.0 (Debian's python3-oslo.config) with the agent's options registered. */
#include <check.h>
#include <stdarg.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config-internal.h"
#include "config/config.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "test-lib.h"

#define TEMPLATE_KEY                                                                               \
        "\n-----BEGIN RSA PUBLIC KEY-----\n"                                                       \
        "MIIBCgKCAQEA02cXRt6ttHu1HA/rDpLPyjVjHyoY82DjPMpux8SKfAEsqZUygJc3\n"                       \
        "lSVyFIN4/JjEZdIdRDQHVB+72sLxADgnrD8v6aBoeQagZkyZamQOfkU+pcmYuzXr\n"                       \
        "DgXomcHU9nNq+HN7ZEN1sLYhDQe2sFhjTYKhKMOz5ykQkEOTQ8P6vtIKwfd1JS9a\n"                       \
        "0R5FuNmJhtOeCjCKXI7PEaKt2TqgJ6MS/VMn5gQq4ytR2yOMQnXui5djQL3NkIqf\n"                       \
        "ciimB7B7lPAC3h+w6mWLO/NGbyZ3qx0BynZv2WyPji4WBKHRfrmV90uGpIeVbA0P\n"                       \
        "H606sBCqYdI1ZtXvmdISvemVe/589GjakwIDAQAB\n"                                               \
        "-----END RSA PUBLIC KEY-----"

/* A fresh directory per test, removed at the end. */
static char tmpdir[64];

static void tmp_setup(void)
{
        strcpy(tmpdir, "/tmp/test-config-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
        rm_rf(tmpdir);
}

/* Write text (len bytes, or strlen) to tmpdir/name; returns the path. */
static char *put_n(const char *name, const char *text, size_t len)
{
        char *path;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", tmpdir, name), 0);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        fclose(f);
        return path;
}

static char *put(const char *name, const char *text)
{
        return put_n(name, text, strlen(text));
}

/* Load one file holding text; on success *ret is the config. */
static int load_n(const char *text, size_t len, Config **ret, ConfigDiag *diag, char **ret_path)
{
        char *path = put_n("agent.conf", text, len);
        ConfigSource src = {path, false};
        int r = config_load(ret, &src, 1, diag);

        if (ret_path)
                *ret_path = path;
        else
                free(path);
        return r;
}

static int load(const char *text, Config **ret, ConfigDiag *diag)
{
        return load_n(text, strlen(text), ret, diag, NULL);
}

/* Load text that must succeed without warnings. */
static Config *load_ok(const char *text)
{
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;

        ck_assert_int_eq(load(text, &c, &diag), 0);
        ck_assert_ptr_null(diag.error);
        ck_assert_uint_eq(diag.n_warnings, 0);
        config_diag_done(&diag);
        return c;
}

static void assert_defaults_except_file(const Config *c)
{
        ck_assert_str_eq(c->agent.body_open_root, "");
        ck_assert_uint_eq(c->agent.max_plan_size, 67108864);
        ck_assert_uint_eq(c->agent.max_plan_depth, 64);
        ck_assert_uint_eq(c->agent.plan_timeout, 0);
        ck_assert_uint_eq(c->agent.script_timeout, 0);
        ck_assert_uint_eq(c->agent.kill_grace, 10);
        ck_assert_uint_eq(c->agent.stop_grace, 30);
        ck_assert_uint_eq(c->agent.output_limit, 1048576);
        ck_assert_uint_eq(c->agent.body_max_steps, 10000000);
        ck_assert_uint_eq(c->agent.body_max_depth, 200);
        ck_assert_uint_eq(c->agent.body_max_memory, 268435456);
        ck_assert(!c->agent.declare_queue);
        ck_assert_uint_eq(c->agent.heartbeat, 60);
        ck_assert(!c->agent.verify_hostname);
        ck_assert_uint_eq(c->agent.reconnect_max_delay, 60);
        ck_assert(c->agent.journal_log);

        ck_assert(c->sandbox.enabled);
        ck_assert_str_eq(c->sandbox.user, "root");
        ck_assert_str_eq(c->sandbox.group, "root");
        ck_assert_uint_eq(c->sandbox.rlimit_cpu, 0);
        ck_assert_uint_eq(c->sandbox.rlimit_as, 0);
        ck_assert_uint_eq(c->sandbox.rlimit_nofile, 1024);
        ck_assert_uint_eq(c->sandbox.rlimit_nproc, 0);
        ck_assert(c->sandbox.no_new_privs);
        ck_assert(!c->sandbox.mount_namespace);
        ck_assert(!c->sandbox.pid_namespace);
        ck_assert(!c->sandbox.ipc_namespace);
        ck_assert(!c->sandbox.uts_namespace);
        ck_assert(!c->sandbox.network_namespace);
        ck_assert_int_eq(c->sandbox.cgroup, CONFIG_CGROUP_AUTO);
        ck_assert_uint_eq(c->sandbox.memory_max, CONFIG_MEMORY_MAX_AUTO);
        ck_assert_uint_eq(c->sandbox.pids_max, CONFIG_PIDS_MAX_AUTO);
        {
                static const char *const env[] = {"PATH",       "LANG",        "LC_ALL",
                                                  "http_proxy", "https_proxy", "no_proxy",
                                                  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"};
                ck_assert_uint_eq(c->sandbox.env_passthrough.n, 9);
                for (size_t i = 0; i < 9; i++)
                        ck_assert_str_eq(c->sandbox.env_passthrough.items[i], env[i]);
        }
        ck_assert(!c->enable_dynamic_result_queue);
        ck_assert(!c->use_syslog);
        ck_assert_ptr_null(c->log_dir);
        ck_assert_str_eq(c->rabbitmq.result_exchange, "");
        ck_assert_int_eq(c->rabbitmq.ssl_version, CONFIG_SSL_DEFAULT);
}

START_TEST(test_defaults)
{
        Config *c = NULL, *d = NULL;

        ck_assert_int_eq(config_new_default(&c), 0);
        ck_assert_str_eq(c->storage, "/var/murano/plans");
        ck_assert_ptr_null(c->engine_key);
        ck_assert(!c->debug);
        ck_assert_ptr_null(c->log_file);
        ck_assert_str_eq(c->rabbitmq.host, "localhost");
        ck_assert_uint_eq(c->rabbitmq.n_hosts, 1);
        ck_assert_str_eq(c->rabbitmq.hosts[0].host, "localhost");
        ck_assert_uint_eq(c->rabbitmq.hosts[0].port, 5672);
        ck_assert_uint_eq(c->rabbitmq.port, 5672);
        ck_assert_str_eq(c->rabbitmq.login, "guest");
        ck_assert_str_eq(c->rabbitmq.password, "guest");
        ck_assert_str_eq(c->rabbitmq.virtual_host, "/");
        ck_assert(!c->rabbitmq.ssl);
        ck_assert_str_eq(c->rabbitmq.ca_certs, "");
        ck_assert(!c->rabbitmq.insecure);
        ck_assert_ptr_null(c->rabbitmq.result_routing_key);
        ck_assert_str_eq(c->rabbitmq.input_queue, "");
        assert_defaults_except_file(c);

        /* No sources at all: the same. */
        ck_assert_int_eq(config_load(&d, NULL, 0, NULL), 0);
        ck_assert_str_eq(d->rabbitmq.password, "guest");
        assert_defaults_except_file(d);
        config_free(d);
        ck_assert_ptr_null(config_free(c));
        ck_assert_ptr_null(config_free(NULL));
}
END_TEST

START_TEST(test_template)
{
        ConfigSource src = {TEST_DATA_DIR "/config/agent-v2.conf", false};
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;

        ck_assert_int_eq(config_load(&c, &src, 1, &diag), 0);
        /* verbose = True is a legacy option: accepted without a warning. */
        ck_assert_uint_eq(diag.n_warnings, 0);
        ck_assert(c->debug);
        ck_assert_str_eq(c->log_file, "/var/log/murano-agent.log");
        ck_assert_str_eq(c->storage, "/var/murano/plans");
        ck_assert_str_eq(c->engine_key, TEMPLATE_KEY);
        ck_assert_str_eq(c->rabbitmq.input_queue,
                         "e3b0c44298fc1c149afbf4c8996fb924-h9f86d081884c7d659a2feaa0c55ad015");
        ck_assert_str_eq(c->rabbitmq.result_routing_key, "-execution-results-env-abc123");
        ck_assert_str_eq(c->rabbitmq.host, "192.168.10.5");
        ck_assert_uint_eq(c->rabbitmq.port, 5671);
        ck_assert_uint_eq(c->rabbitmq.n_hosts, 1);
        ck_assert_str_eq(c->rabbitmq.hosts[0].host, "192.168.10.5");
        ck_assert_uint_eq(c->rabbitmq.hosts[0].port, 5671);
        ck_assert(c->rabbitmq.ssl);
        ck_assert(!c->rabbitmq.insecure);
        ck_assert_str_eq(c->rabbitmq.ca_certs, "/etc/murano/certs/ca_certs");
        ck_assert_str_eq(c->rabbitmq.login, "muranoagent");
        ck_assert_str_eq(c->rabbitmq.password, "s3cr3t");
        ck_assert_str_eq(c->rabbitmq.virtual_host, "murano");
        assert_defaults_except_file(c);
        config_free(c);
        config_diag_done(&diag);

        /* The engine without a signing key substitutes "": a blank line. */
        src.path = TEST_DATA_DIR "/config/agent-v2-nokey.conf";
        ck_assert_int_eq(config_load(&c, &src, 1, &diag), 0);
        ck_assert_uint_eq(diag.n_warnings, 0);
        ck_assert_str_eq(c->engine_key, "");
        ck_assert_str_eq(c->rabbitmq.login, "muranoagent");
        config_free(c);
        config_diag_done(&diag);
}
END_TEST

/* The dialect: each text sets [rabbitmq] login (or fails to). */
static const struct {
        const char *text;
        const char *login;
} dialect_cases[] = {
        {"[rabbitmq]\nlogin = plain\n", "plain"},
        {"[rabbitmq]\nlogin=plain", "plain"},
        {"[rabbitmq]\nlogin: colon\n", "colon"},
        {"[rabbitmq]\nlogin: a=b\n", "a=b"},
        {"[rabbitmq]\nlogin = a:b\n", "a:b"},
        {"[rabbitmq]\nlogin = 'single'\n", "single"},
        {"[rabbitmq]\nlogin = \"double\"\n", "double"},
        {"[rabbitmq]\nlogin = 'mixed\"\n", "'mixed\""},
        {"[rabbitmq]\nlogin = '\n", ""},
        {"[rabbitmq]\nlogin = ''\n", ""},
        {"[rabbitmq]\nlogin = \"'x'\"\n", "'x'"},
        {"[rabbitmq]\nlogin =\n", ""},
        {"[rabbitmq]\nlogin = \t spaced out \t \n", "spaced out"},
        /* libinih (Debian) cuts at an inline ';'; oslo keeps the text. */
        {"[rabbitmq]\nlogin = pass ;word\n", "pass ;word"},
        {"[rabbitmq]\nlogin = pass #word\n", "pass #word"},
        {"[rabbitmq]\nlogin = a\n  b\n\tc  \n", "a\nb\nc"},
        {"[rabbitmq]\nlogin =\n\tx\n", "\nx"},
        /* An indented '#' line continues a value: it is not a comment. */
        {"[rabbitmq]\nlogin = a\n  # b\n", "a\n# b"},
        {"[rabbitmq]\nlogin = a\n# comment\n; comment\n", "a"},
        {"[rabbitmq]\nlogin = first\nlogin = second\n", "second"},
        {"[rabbitmq]\r\nlogin = crlf\r\n", "crlf"},
        {"[rabbitmq]\rlogin = cr\r", "cr"},
        {"\xef\xbb\xbf[rabbitmq]\nlogin = bom\n", "bom"},
        /* Python's strip() removes Unicode spaces: here NO-BREAK SPACE and
         * IDEOGRAPHIC SPACE. */
        {"[rabbitmq]\nlogin = \xc2\xa0x\xe3\x80\x80\n", "x"},
        {"[rabbitmq]\nlogin = \xc3\xa9t\xc3\xa9\n", "\xc3\xa9t\xc3\xa9"},
        {"[RabbitMQ]\nlogin = case\n", "case"},
        {"[rabbitmq]\nlogin = a\n[agent]\n[rabbitmq]\ninput_queue = q\n", "a"},
};

START_TEST(test_dialect)
{
        Config *c = load_ok(dialect_cases[_i].text);

        ck_assert_str_eq(c->rabbitmq.login, dialect_cases[_i].login);
        config_free(c);
}
END_TEST

START_TEST(test_long_line)
{
        /* Debian's libinih cuts lines at 200 bytes; oslo has no limit. */
        char text[4096], value[3001];
        Config *c;

        memset(value, 'q', 3000);
        value[3000] = '\0';
        snprintf(text, sizeof(text), "[rabbitmq]\ninput_queue = %s\n", value);
        c = load_ok(text);
        ck_assert_uint_eq(strlen(c->rabbitmq.input_queue), 3000);
        ck_assert_str_eq(c->rabbitmq.input_queue, value);
        config_free(c);
}
END_TEST

/* Errors. The message is "<path>" followed by suffix. */
#define BOOL_WANT "expected a boolean (true/false, yes/no, on/off or 1/0), got "
#define PORT_WANT ":2: [rabbitmq] port: expected an integer from 1 to 65535, got "
#define SIZE_WANT                                                                                  \
        "expected a size in bytes from 1 to 1073741824 (a K, M or G suffix is allowed), got "
#define HOST_WANT ":2: [rabbitmq] host: expected a comma-separated list of host[:port], got "
#define BAD_HOST  "is not a valid host name or IP address"
#define SSL_WANT  "(expected tlsv1, tlsv1_1, tlsv1_2, tlsv1_3, sslv23 or nothing)"
#define INDENTED                                                                                   \
        "unexpected indented line: it would continue an option's value, but none precedes it "     \
        "(blank lines, comments and section headers end a value)"

static const struct {
        const char *text;
        const char *suffix;
} error_cases[] = {
        {"[DEFAULT]\ndebug = maybe\n", ":2: [DEFAULT] debug: " BOOL_WANT "'maybe'"},
        {"[DEFAULT]\ndebug =\n", ":2: [DEFAULT] debug: " BOOL_WANT "''"},
        {"[rabbitmq]\n\n\nport = abc\n",
         ":4: [rabbitmq] port: expected an integer from 1 to 65535, got 'abc'"},
        {"[rabbitmq]\nport = 65536\n", PORT_WANT "'65536'"},
        {"[rabbitmq]\nport = 0\n", PORT_WANT "'0'"},
        {"[rabbitmq]\nport = -1\n", PORT_WANT "'-1'"},
        {"[rabbitmq]\nport = 56 72\n", PORT_WANT "'56 72'"},
        {"[rabbitmq]\nport = 99999999999999999999999\n", PORT_WANT "'99999999999999999999999'"},
        {"[agent]\nmax_plan_size = 2G\n", ":2: [agent] max_plan_size: " SIZE_WANT "'2G'"},
        {"[agent]\nmax_plan_size = 10MB\n", ":2: [agent] max_plan_size: " SIZE_WANT "'10MB'"},
        {"[sandbox]\npids_max = Auto\n",
         ":2: [sandbox] pids_max: expected an integer from 0 to 4194304, or auto, got 'Auto'"},
        {"[sandbox]\nmemory_max = 2T\n",
         ":2: [sandbox] memory_max: expected a size in bytes from 0 to 1099511627776 (a K, M or G "
         "suffix is allowed), or auto, got '2T'"},
        {"[agent]\nbody_max_steps = 1K\n",
         ":2: [agent] body_max_steps: expected an integer from 1 to 9223372036854775807, got '1K'"},
        {"[rabbitmq]\nssl = true\nssl_version = TLSv9\n",
         ":3: [rabbitmq] ssl_version: Invalid SSL version: TLSv9 " SSL_WANT},
        {"[rabbitmq]\nssl = true\nssl_version = sslv3\n",
         ":3: [rabbitmq] ssl_version: Invalid SSL version: sslv3 " SSL_WANT},
        {"foo = bar\n[DEFAULT]\n",
         ":1: option 'foo' comes before any section header (put a header such as [DEFAULT] above "
         "it)"},
        {"[DEFAULT]\ndebug = true\n[rabbitmq\n",
         ":3: invalid section header: it must end with ']'"},
        {"[rabbitmq] # the broker\n", ":1: invalid section header: it must end with ']'"},
        {"[]\n", ":1: empty section name"},
        {"[DEFAULT]\njust words\n",
         ":2: no '=' or ':' in this line (expected 'key = value', a [section] header or a comment "
         "starting with '#' or ';')"},
        {"[DEFAULT]\n= value\n", ":2: the option name before '=' is empty"},
        {"[DEFAULT]\n: value\n", ":2: the option name before ':' is empty"},
        {"  indented = x\n", ":1: " INDENTED},
        /* libinih continues a value after a blank line; oslo does not. */
        {"[DEFAULT]\nengine_key =\n\t-----BEGIN\n\n\tMIIB\n", ":5: " INDENTED},
        {"[DEFAULT]\nstorage = caf\xc3\n", ":2: the line is not valid UTF-8"},
        {"[rabbitmq]\nhost = a,,b\n", HOST_WANT "'a,,b': item 2 is empty"},
        {"[rabbitmq]\nhost =\n", HOST_WANT "'': item 1 is empty"},
        {"[rabbitmq]\nhost = 10.0.0.5:0\n",
         HOST_WANT "'10.0.0.5:0': item 1 has a port that is not an integer from 1 to 65535"},
        {"[rabbitmq]\nhost = h1, h2:x\n",
         HOST_WANT "'h1, h2:x': item 2 has a port that is not an integer from 1 to 65535"},
        {"[rabbitmq]\nhost = [::1:5672\n", HOST_WANT "'[::1:5672': item 1 has no closing ']'"},
        {"[rabbitmq]\nhost = [h1]:5672\n",
         HOST_WANT "'[h1]:5672': item 1 has no IPv6 address between '[' and ']'"},
        {"[rabbitmq]\nhost = [::1]5672\n",
         HOST_WANT "'[::1]5672': item 1 has text after ']' that is not ':port'"},
        {"[rabbitmq]\nhost = bad_host\n", HOST_WANT "'bad_host': item 1 " BAD_HOST},
        {"[rabbitmq]\nhost = 10.0.0.256\n", HOST_WANT "'10.0.0.256': item 1 " BAD_HOST},
        {"[rabbitmq]\nhost = -a.example\n", HOST_WANT "'-a.example': item 1 " BAD_HOST},
        {"[rabbitmq]\nhost = fe80::1::2\n", HOST_WANT
         "'fe80::1::2': item 1 " BAD_HOST " (write an IPv6 address with a port as [address]:port)"},
        {"[sandbox]\ncgroup = v3\n",
         ":2: [sandbox] cgroup: expected one of auto, v2, v1 or off, got 'v3'"},
        {"[sandbox]\nenv_passthrough = PATH, A-B\n",
         ":2: [sandbox] env_passthrough: expected a comma-separated list of environment variable "
         "names ('A-B' is not one), got 'PATH, A-B'"},
        {"[sandbox]\nuser =\n", ":2: [sandbox] user: expected a name, got ''"},
        {"[agent]\nbody_open_root = srv/files\n",
         ":2: [agent] body_open_root: expected an absolute path or nothing, got 'srv/files'"},
        {"[agent]\nkill_grace = 1\n  0\n",
         ":2: [agent] kill_grace: expected an integer from 0 to 3600, got '1\\n0'"},
        /* The first bad option in table order is the one reported. */
        {"[rabbitmq]\nport = x\n[DEFAULT]\ndebug = x\n", ":4: [DEFAULT] debug: " BOOL_WANT "'x'"},
};

/* Assert that got is the printf-formatted text. */
static void assert_fmt(const char *got, const char *fmt, ...) _printf_(2, 3);

static void assert_fmt(const char *got, const char *fmt, ...)
{
        char *want;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&want, fmt, ap), 0);
        va_end(ap);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
        free(want);
}

/* Loading src must fail with the error message ending in suffix. */
static void assert_load_fails(const char *path, bool is_dir, const char *suffix)
{
        ConfigSource src = {path, is_dir};
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;

        ck_assert_int_eq(config_load(&c, &src, 1, &diag), CONFIG_INVALID);
        ck_assert_ptr_null(c);
        assert_fmt(diag.error, "%s%s", path, suffix);
        config_diag_done(&diag);
}

START_TEST(test_errors)
{
        char *path = put("agent.conf", error_cases[_i].text);

        assert_load_fails(path, false, error_cases[_i].suffix);
        free(path);
}
END_TEST

START_TEST(test_sources)
{
        static const char nul[] = "[DEFAULT]\n\nstorage = a\0b\n";
        char *path, *big;

        path = put_n("agent.conf", nul, sizeof(nul) - 1);
        assert_load_fails(path, false, ":3: the line contains a NUL byte");
        free(path);

        ck_assert_int_ge(asprintf(&path, "%s/nope.conf", tmpdir), 0);
        assert_load_fails(path, false, ": cannot read config file: No such file or directory");
        assert_load_fails(path, true, ": config directory not found");
        free(path);

        big = malloc((1 << 20) + 1);
        memset(big, '#', (1 << 20) + 1);
        path = put_n("big.conf", big, (1 << 20) + 1);
        assert_load_fails(path, false, ": config file is larger than 1048576 bytes");
        free(path);
        free(big);

        path = put("file.conf", "[DEFAULT]\n");
        assert_load_fails(path, true, ": not a directory (given as a config directory)");
        assert_load_fails(tmpdir, false, ": cannot read config file: Is a directory");
        free(path);
}
END_TEST

START_TEST(test_warnings)
{
        static const char text[] = "[DEFAULT]\n"
                                   "foo = 1\n"
                                   "verbose = not even a boolean\n"
                                   "logfile = /var/log/a.log\n"
                                   "[default]\n"
                                   "debug = true\n"
                                   "[ rabbitmq ]\n"
                                   "login = x\n"
                                   "[rabbitmq]\n"
                                   "Port = 1\n"
                                   "ssl_version = tlsv9\n"
                                   "[oslo_messaging_rabbit]\n"
                                   "rabbit_host = h\n";
        static const char *const suffixes[] = {
                ":2: unknown option [DEFAULT] foo, ignoring",
                ":4: [DEFAULT] logfile is a deprecated name for log_file",
                ":5: unknown section [default], ignoring it (the default section is spelled "
                "[DEFAULT])",
                ":7: unknown section [ rabbitmq ], ignoring it",
                ":10: unknown option [rabbitmq] Port, ignoring",
                ":12: unknown section [oslo_messaging_rabbit], ignoring it",
                ":11: [rabbitmq] ssl_version: Invalid SSL version: tlsv9 " SSL_WANT
                "; ignored because ssl is off",
        };
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;
        char *path;

        ck_assert_int_eq(load_n(text, sizeof(text) - 1, &c, &diag, &path), 0);
        ck_assert_ptr_null(diag.error);
        ck_assert_uint_eq(diag.n_warnings, ELEMENTSOF(suffixes));
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                assert_fmt(diag.warnings[i], "%s%s", path, suffixes[i]);
        ck_assert_str_eq(c->log_file, "/var/log/a.log");
        ck_assert(!c->debug);
        ck_assert_str_eq(c->rabbitmq.login, "guest");
        ck_assert_uint_eq(c->rabbitmq.port, 5672);
        ck_assert_int_eq(c->rabbitmq.ssl_version, CONFIG_SSL_DEFAULT);
        free(path);
        config_free(c);
        config_diag_done(&diag);
}
END_TEST

START_TEST(test_warning_cap)
{
        char text[8192] = "[DEFAULT]\n";
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;

        for (int i = 0; i < 100; i++)
                snprintf(text + strlen(text), sizeof(text) - strlen(text), "unknown%d = 1\n", i);
        ck_assert_int_eq(load(text, &c, &diag), 0);
        ck_assert_uint_eq(diag.n_warnings, CONFIG_MAX_WARNINGS);
        ck_assert_uint_eq(diag.n_dropped, 100 - CONFIG_MAX_WARNINGS);
        config_free(c);
        config_diag_done(&diag);
}
END_TEST

static const struct {
        const char *text;
        const char *engine_key, *log_file;
} alias_cases[] = {
        /* In one file the current name wins whatever the order. */
        {"[DEFAULT]\nlog_file = a\nlogfile = b\n", NULL, "a"},
        {"[DEFAULT]\nlogfile = b\nlog_file = a\n", NULL, "a"},
        {"[DEFAULT]\nlogfile = b\nlogfile = c\n", NULL, "c"},
        {"[DEFAULT]\nlog_file =\n", NULL, NULL},
        {"[DEFAULT]\nengine_key = ''\n", "", NULL},
};

START_TEST(test_alias)
{
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;

        ck_assert_int_eq(load(alias_cases[_i].text, &c, &diag), 0);
        if (alias_cases[_i].log_file)
                ck_assert_str_eq(c->log_file, alias_cases[_i].log_file);
        else
                ck_assert_ptr_null(c->log_file);
        if (alias_cases[_i].engine_key)
                ck_assert_str_eq(c->engine_key, alias_cases[_i].engine_key);
        else
                ck_assert_ptr_null(c->engine_key);
        config_free(c);
        config_diag_done(&diag);
}
END_TEST

START_TEST(test_order)
{
        ConfigDiag diag = CONFIG_DIAG_INIT;
        ConfigSource src[3];
        Config *c = NULL;
        char *first, *last, *dir;

        first = put("first.conf", "[DEFAULT]\nstorage = /first\nlog_file = /first.log\n"
                                  "[rabbitmq]\nlogin = first\npassword = first\nport = bad\n"
                                  "virtual_host = first\n");
        ck_assert_int_ge(asprintf(&dir, "%s/agent.d", tmpdir), 0);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        free(put("agent.d/b.conf", "[rabbitmq]\nlogin = b\npassword = b\nport = 5700\n"));
        free(put("agent.d/a.conf", "[rabbitmq]\nlogin = a\npassword = a\nport = 5600\n"
                                   "input_queue = a\n"));
        free(put("agent.d/B.conf", "[rabbitmq]\ninput_queue = B\nresult_exchange = B\n"));
        free(put("agent.d/c.conf.sample", "[rabbitmq]\nlogin = sample\n"));
        free(put("agent.d/.hidden.conf", "[rabbitmq]\nlogin = hidden\n"));
        free(put("agent.d/d.CONF", "[rabbitmq]\nlogin = upper\n"));
        free(put("agent.d/broken.txt", "not ini\n"));
        last = put("last.conf", "[DEFAULT]\nlogfile = /last.log\n[rabbitmq]\npassword = last\n");

        src[0] = (ConfigSource){first, false};
        src[1] = (ConfigSource){dir, true};
        src[2] = (ConfigSource){last, false};
        ck_assert_int_eq(config_load(&c, src, 3, &diag), 0);
        /* Only first.conf sets these. */
        ck_assert_str_eq(c->storage, "/first");
        ck_assert_str_eq(c->rabbitmq.virtual_host, "first");
        /* The directory's files, in byte order: B, a, b. */
        ck_assert_str_eq(c->rabbitmq.login, "b");
        ck_assert_uint_eq(c->rabbitmq.port, 5700);
        ck_assert_str_eq(c->rabbitmq.input_queue, "a");
        ck_assert_str_eq(c->rabbitmq.result_exchange, "B");
        /* last.conf wins, even under a deprecated name. */
        ck_assert_str_eq(c->rabbitmq.password, "last");
        ck_assert_str_eq(c->log_file, "/last.log");
        ck_assert_uint_eq(diag.n_warnings, 1);
        config_free(c);
        config_diag_done(&diag);

        /* A trailing '/' on the directory is not doubled in messages. */
        free(put("agent.d/e.conf", "[DEFAULT]\ndebug = perhaps\n"));
        free(dir);
        ck_assert_int_ge(asprintf(&dir, "%s/agent.d/", tmpdir), 0);
        assert_load_fails(dir, true, "e.conf:2: [DEFAULT] debug: " BOOL_WANT "'perhaps'");
        free(first);
        free(last);
        free(dir);
}
END_TEST

static const struct {
        const char *line;
        bool value;
} bool_cases[] = {
        {"true", true},   {"TRUE", true},   {"Yes", true}, {"on", true},   {"1", true},
        {"false", false}, {"False", false}, {"NO", false}, {"off", false}, {"0", false},
};

START_TEST(test_bool)
{
        char text[128];
        Config *c;

        snprintf(text, sizeof(text),
                 "[DEFAULT]\ndebug = %s\n[agent]\njournal_log = %s\n[sandbox]\nenabled = %s\n",
                 bool_cases[_i].line, bool_cases[_i].line, bool_cases[_i].line);
        c = load_ok(text);
        ck_assert_int_eq(c->debug, bool_cases[_i].value);
        ck_assert_int_eq(c->agent.journal_log, bool_cases[_i].value);
        ck_assert_int_eq(c->sandbox.enabled, bool_cases[_i].value);
        config_free(c);
}
END_TEST

START_TEST(test_numbers)
{
        Config *c = load_ok("[agent]\n"
                            "max_plan_size = 1G\n"
                            "output_limit = 64k\n"
                            "body_max_memory = 512M\n"
                            "max_plan_depth = +0010\n"
                            "plan_timeout = 2147483647\n"
                            "body_max_steps = 9223372036854775807\n"
                            "heartbeat = 0\n"
                            "[sandbox]\n"
                            "rlimit_as = 2g\n"
                            "memory_max = 1048576\n"
                            "pids_max = 0\n"
                            "cgroup = V2\n"
                            "env_passthrough = ,PATH , _X1,,\n"
                            "[rabbitmq]\n"
                            "ssl = on\n"
                            "ssl_version = TLSv1_2\n"
                            "ca_certs = '  /etc/ca.pem '\n");

        ck_assert_uint_eq(c->agent.max_plan_size, 1073741824);
        ck_assert_uint_eq(c->agent.output_limit, 65536);
        ck_assert_uint_eq(c->agent.body_max_memory, 536870912);
        ck_assert_uint_eq(c->agent.max_plan_depth, 10);
        ck_assert_uint_eq(c->agent.plan_timeout, 2147483647);
        ck_assert_uint_eq(c->agent.body_max_steps, 9223372036854775807ULL);
        ck_assert_uint_eq(c->agent.heartbeat, 0);
        ck_assert_uint_eq(c->sandbox.rlimit_as, 2147483648ULL);
        ck_assert_uint_eq(c->sandbox.memory_max, 1048576);
        ck_assert_uint_eq(c->sandbox.pids_max, 0);
        ck_assert_int_eq(c->sandbox.cgroup, CONFIG_CGROUP_V2);
        ck_assert_uint_eq(c->sandbox.env_passthrough.n, 2);
        ck_assert_str_eq(c->sandbox.env_passthrough.items[0], "PATH");
        ck_assert_str_eq(c->sandbox.env_passthrough.items[1], "_X1");
        ck_assert_int_eq(c->rabbitmq.ssl_version, CONFIG_SSL_TLSV1_2);
        /* The agent uses ca_certs.strip(). */
        ck_assert_str_eq(c->rabbitmq.ca_certs, "/etc/ca.pem");
        config_free(c);

        /* An empty list passes nothing through. */
        c = load_ok("[sandbox]\nenv_passthrough =\n");
        ck_assert_uint_eq(c->sandbox.env_passthrough.n, 0);
        config_free(c);
}
END_TEST

static const struct {
        const char *host;
        size_t n;
        const char *hosts[3];
        unsigned ports[3];
} host_cases[] = {
        {"localhost", 1, {"localhost"}, {5671}},
        {"10.0.0.5:5672, 10.0.0.6:5673 ,10.0.0.7",
         3,
         {"10.0.0.5", "10.0.0.6", "10.0.0.7"},
         {5672, 5673, 5671}},
        {"[::1]:5673,::1,[fe80::2]", 3, {"::1", "::1", "fe80::2"}, {5673, 5671, 5671}},
        {"Rabbit-1.example.com.:1,rabbit2", 2, {"Rabbit-1.example.com.", "rabbit2"}, {1, 5671}},
};

START_TEST(test_hosts)
{
        char text[256];
        Config *c;

        snprintf(text, sizeof(text), "[rabbitmq]\nhost = %s\nport = 5671\n", host_cases[_i].host);
        c = load_ok(text);
        ck_assert_str_eq(c->rabbitmq.host, host_cases[_i].host);
        ck_assert_uint_eq(c->rabbitmq.n_hosts, host_cases[_i].n);
        for (size_t i = 0; i < host_cases[_i].n; i++) {
                ck_assert_str_eq(c->rabbitmq.hosts[i].host, host_cases[_i].hosts[i]);
                ck_assert_uint_eq(c->rabbitmq.hosts[i].port, host_cases[_i].ports[i]);
        }
        config_free(c);
}
END_TEST

START_TEST(test_overrides)
{
        ConfigOverride ov[] = {
                {"DEFAULT", "debug", "true", "--debug"},
                {"rabbitmq", "port", "5999", "--port"},
        };
        ConfigDiag diag = CONFIG_DIAG_INIT;
        ConfigSource src;
        Config *c = NULL;

        src = (ConfigSource){put("agent.conf", "[DEFAULT]\ndebug = false\n[rabbitmq]\nhost = h\n"),
                             false};
        ck_assert_int_eq(config_load_full(&c, &src, 1, ov, 2, &diag), 0);
        ck_assert(c->debug);
        ck_assert_uint_eq(c->rabbitmq.hosts[0].port, 5999);
        config_free(c);

        ov[0].value = "sometimes";
        ck_assert_int_eq(config_load_full(&c, &src, 1, ov, 2, &diag), CONFIG_INVALID);
        ck_assert_str_eq(diag.error, "--debug: [DEFAULT] debug: " BOOL_WANT "'sometimes'");
        config_diag_done(&diag);

        ov[0] = (ConfigOverride){"DEFAULT", "nosuch", "1", "--nosuch"};
        ck_assert_int_eq(config_load_full(&c, &src, 1, ov, 1, &diag), CONFIG_INVALID);
        ck_assert_str_eq(diag.error, "--nosuch: unknown option [DEFAULT] nosuch");
        config_diag_done(&diag);
        free((char *)src.path);
}
END_TEST

START_TEST(test_secrets_never_shown)
{
        static const char *const texts[] = {
                "[rabbitmq]\npassword s3cr3t\n",
                "[DEFAULT]\nengine_key =\n\t-----BEGIN s3cr3t\n\n\ts3cr3t\n",
                "s3cr3t\n",
        };
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;
        char *text = NULL;
        ConfigSource src = {TEST_DATA_DIR "/config/agent-v2.conf", false};

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                ck_assert_int_eq(load(texts[i], &c, &diag), CONFIG_INVALID);
                ck_assert_ptr_null(strstr(diag.error, "s3cr3t"));
                config_diag_done(&diag);
        }

        ck_assert_int_eq(config_load(&c, &src, 1, NULL), 0);
        ck_assert_int_eq(config_format(c, &text), 0);
        ck_assert_ptr_null(strstr(text, "s3cr3t"));
        ck_assert_ptr_null(strstr(text, "MIIB"));
        ck_assert_ptr_nonnull(strstr(text, "\npassword = ***\n"));
        ck_assert_ptr_nonnull(strstr(text, "\nengine_key = ***\n"));
        ck_assert_ptr_nonnull(
                strstr(text, "\nresult_routing_key = -execution-results-env-abc123\n"));
        free(text);
        config_free(c);
}
END_TEST

START_TEST(test_format)
{
        Config *c = NULL, *again;
        char *text = NULL, *text2 = NULL;

        ck_assert_int_eq(config_new_default(&c), 0);
        ck_assert_int_eq(config_format(c, &text), 0);
        {
                static const char head[] =
                        "[DEFAULT]\nstorage = /var/murano/plans\n# engine_key is unset\n";
                ck_assert_int_eq(strncmp(text, head, sizeof(head) - 1), 0);
        }
        ck_assert_ptr_nonnull(strstr(text, "\n[rabbitmq]\nhost = localhost\nport = 5672\n"));
        ck_assert_ptr_nonnull(strstr(text, "\nssl_version =\n"));
        ck_assert_ptr_nonnull(strstr(text, "\n[agent]\nmax_plan_size = 67108864\n"));
        ck_assert_ptr_nonnull(
                strstr(text, "\ncgroup = auto\nmemory_max = auto\npids_max = auto\n"));
        ck_assert_ptr_nonnull(strstr(text,
                                     "\nenv_passthrough = PATH,LANG,LC_ALL,http_proxy,"
                                     "https_proxy,no_proxy,HTTP_PROXY,HTTPS_PROXY,NO_PROXY\n"));
        ck_assert_ptr_null(strstr(text, "verbose"));
        config_free(c);

        /* What the dump writes reads back to the same values. */
        c = load_ok("[DEFAULT]\nstorage = ' /odd path '\n[rabbitmq]\nlogin = \"'q'\"\n"
                    "ssl_version = sslv23\nresult_routing_key =\n");
        ck_assert_str_eq(c->storage, " /odd path ");
        free(text);
        ck_assert_int_eq(config_format(c, &text), 0);
        again = load_ok(text);
        ck_assert_str_eq(again->storage, " /odd path ");
        ck_assert_str_eq(again->rabbitmq.login, "'q'");
        ck_assert_str_eq(again->rabbitmq.result_routing_key, "");
        ck_assert_int_eq(again->rabbitmq.ssl_version, CONFIG_SSL_SSLV23);
        ck_assert_int_eq(config_format(again, &text2), 0);
        ck_assert_str_eq(text, text2);
        free(text);
        free(text2);
        config_free(again);
        config_free(c);
}
END_TEST

/* The annotated sample, with every option line uncommented, gives exactly
 * the defaults, and it and the docs name every option. */
/* Where the daemon logs (what hide_agent hides): log_file, else
 * log_dir/muranoagent.log, else nowhere. */
START_TEST(test_log_path)
{
        static const struct {
                const char *text, *want;
        } cases[] = {
                {"", NULL},
                {"log_dir = /var/log/murano\n", "/var/log/murano/muranoagent.log"},
                {"log_file = /tmp/a.log\nlog_dir = /var/log/murano\n", "/tmp/a.log"},
                {"log_file =\n", NULL},
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char text[128];
                Config *c;
                const char *got;

                snprintf(text, sizeof(text), "[DEFAULT]\n%s", cases[i].text);
                c = load_ok(text);
                got = config_log_path(c, buf, sizeof(buf));
                if (cases[i].want)
                        ck_assert_str_eq(got, cases[i].want);
                else
                        ck_assert_ptr_null(got);
                config_free(c);
        }
}
END_TEST

/* A profile presets the options no source sets; an option set anywhere,
 * before or after the file naming the profile, wins over the preset. */
START_TEST(test_profiles)
{
        const uint64_t sys_admin = UINT64_C(1) << 21, mknod = UINT64_C(1) << 27;
        ConfigDiag diag = CONFIG_DIAG_INIT;
        ConfigSource src[2];
        Config *c;
        char *text = NULL;

        c = load_ok("[sandbox]\nprofile = contained\n");
        ck_assert_int_eq(c->sandbox.profile, CONFIG_PROFILE_CONTAINED);
        ck_assert(c->sandbox.mount_namespace && c->sandbox.pid_namespace &&
                  c->sandbox.ipc_namespace && c->sandbox.uts_namespace);
        ck_assert(!c->sandbox.network_namespace && !c->sandbox.read_only_root);
        ck_assert(c->sandbox.hide_agent && c->sandbox.protect_kernel);
        ck_assert_str_eq(c->sandbox.user, "root");
        ck_assert_uint_eq(c->sandbox.hide_paths.n, 2);
        ck_assert_str_eq(c->sandbox.hide_paths.items[0], "/run/dbus/system_bus_socket");
        ck_assert_uint_eq(c->sandbox.drop_capabilities & (sys_admin | mknod), sys_admin | mknod);
        /* Reading the dump back gives the same configuration. */
        ck_assert_int_eq(config_format(c, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "profile = contained\n"));
        ck_assert_ptr_nonnull(strstr(text, "drop_capabilities = CAP_DAC_READ_SEARCH,"));
        config_free(c);
        c = load_ok(text);
        free(text);
        ck_assert(c->sandbox.hide_agent && !c->sandbox.read_only_root);
        config_free(c);

        c = load_ok("[sandbox]\nprofile = USER\n");
        ck_assert_str_eq(c->sandbox.user, "nobody");
        ck_assert_str_eq(c->sandbox.group, "nogroup");
        ck_assert(c->sandbox.mount_namespace && c->sandbox.read_only_root && c->sandbox.hide_agent);
        ck_assert(c->sandbox.network_namespace);
        ck_assert_uint_eq(c->sandbox.hide_paths.n, 2);
        config_free(c);

        /* compatible is the defaults. */
        c = load_ok("[sandbox]\nprofile = compatible\n");
        ck_assert(!c->sandbox.mount_namespace && !c->sandbox.hide_agent);
        ck_assert_uint_eq(c->sandbox.drop_capabilities, 0);
        config_free(c);

        /* Set in the same file, and in files before and after the profile. */
        c = load_ok("[sandbox]\npid_namespace = false\nprofile = contained\n"
                    "drop_capabilities = sys_admin, CAP_MKNOD\n");
        ck_assert(!c->sandbox.pid_namespace && c->sandbox.mount_namespace);
        ck_assert_uint_eq(c->sandbox.drop_capabilities, sys_admin | mknod);
        config_free(c);
        src[0] = (ConfigSource){put("a.conf", "[sandbox]\nuser = daemon\nhide_paths =\n"), false};
        src[1] = (ConfigSource){put("b.conf", "[sandbox]\nprofile = contained\n"), false};
        ck_assert_int_eq(config_load(&c, src, 2, &diag), 0);
        ck_assert_str_eq(c->sandbox.user, "daemon");
        ck_assert_uint_eq(c->sandbox.hide_paths.n, 0);
        ck_assert(c->sandbox.hide_agent);
        /* The files the configuration came from, in order. */
        ck_assert_uint_eq(c->files.n, 2);
        ck_assert_str_eq(c->files.items[0], src[0].path);
        ck_assert_str_eq(c->files.items[1], src[1].path);
        config_free(c);
        free((char *)src[0].path);
        free((char *)src[1].path);

        ck_assert_int_eq(load("[sandbox]\nprofile = strict\n", &c, &diag), CONFIG_INVALID);
        ck_assert_ptr_nonnull(strstr(
                diag.error, "[sandbox] profile: expected one of compatible, contained or user, "
                            "got 'strict'"));
        config_diag_done(&diag);
        ck_assert_int_eq(load("[sandbox]\ndrop_capabilities = CAP_SYS_ADMIN,CAP_NOPE\n", &c, &diag),
                         CONFIG_INVALID);
        ck_assert_ptr_nonnull(strstr(diag.error, "capability names ('CAP_NOPE' is not one)"));
        config_diag_done(&diag);
        ck_assert_int_eq(load("[sandbox]\nhide_paths = /run/x, run/y\n", &c, &diag),
                         CONFIG_INVALID);
        ck_assert_ptr_nonnull(strstr(diag.error, "absolute paths ('run/y' is not one)"));
        config_diag_done(&diag);
}
END_TEST

START_TEST(test_sample_and_docs)
{
        char *sample = NULL, *docs = NULL, *line, *save = NULL;
        Config *c, *d = NULL;
        char *text_c = NULL, *text_d = NULL;
        FILE *out;
        char *uncommented = NULL;
        size_t len = 0;

        ck_assert_int_eq(file_read_all(TEST_DATA_DIR "/../../packaging/agent.conf.sample", 1 << 20,
                                       &sample, NULL),
                         0);
        ck_assert_int_eq(
                file_read_all(TEST_DATA_DIR "/../../docs/configuration.md", 1 << 20, &docs, NULL),
                0);
        for (size_t i = 0; i < config_n_options; i++) {
                const ConfigOption *o = &config_options[i];
                char want[128];

                snprintf(want, sizeof(want), "`%s`", o->name);
                ck_assert_msg(strstr(docs, want), "%s is not in the docs", o->name);
                if (o->alias) {
                        snprintf(want, sizeof(want), "`%s`", o->alias);
                        ck_assert_msg(strstr(docs, want), "%s is not in the docs", o->alias);
                }
                snprintf(want, sizeof(want), "\n#%s = ", o->name);
                if (o->type != CONFIG_TYPE_IGNORED && !strstr(sample, want)) {
                        snprintf(want, sizeof(want), "\n#%s =\n", o->name);
                        ck_assert_msg(strstr(sample, want), "%s is not in the sample", o->name);
                }
        }

        out = open_memstream(&uncommented, &len);
        for (line = strtok_r(sample, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                bool option = line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' &&
                              strstr(line, " =") && !strstr(line, "<None>");
                fprintf(out, "%s\n", option ? line + 1 : line);
        }
        fclose(out);
        c = load_ok(uncommented);
        ck_assert_int_eq(config_new_default(&d), 0);
        ck_assert_int_eq(config_format(c, &text_c), 0);
        ck_assert_int_eq(config_format(d, &text_d), 0);
        ck_assert_str_eq(text_c, text_d);
        free(text_c);
        free(text_d);
        free(uncommented);
        free(sample);
        free(docs);
        config_free(c);
        config_free(d);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_log_path);
        tcase_add_test(tc, test_template);
        tcase_add_loop_test(tc, test_dialect, 0, (int)ELEMENTSOF(dialect_cases));
        tcase_add_test(tc, test_long_line);
        tcase_add_loop_test(tc, test_errors, 0, (int)ELEMENTSOF(error_cases));
        tcase_add_test(tc, test_sources);
        tcase_add_test(tc, test_warnings);
        tcase_add_test(tc, test_warning_cap);
        tcase_add_loop_test(tc, test_alias, 0, (int)ELEMENTSOF(alias_cases));
        tcase_add_test(tc, test_order);
        tcase_add_loop_test(tc, test_bool, 0, (int)ELEMENTSOF(bool_cases));
        tcase_add_test(tc, test_numbers);
        tcase_add_loop_test(tc, test_hosts, 0, (int)ELEMENTSOF(host_cases));
        tcase_add_test(tc, test_overrides);
        tcase_add_test(tc, test_profiles);
        tcase_add_test(tc, test_secrets_never_shown);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_sample_and_docs);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(config_suite());
}
