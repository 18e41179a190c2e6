/* The agent's configuration: every option of the Python murano-agent with its
 * defaults, read from oslo.config-style INI files (config/ini.h) in the same
 * order and with the same precedence, plus our own options in the [agent]
 * and [sandbox] sections. docs/configuration.md documents each option.
 *
 * Problems in the files come back as data in a ConfigDiag: one error (a
 * sentence naming file, line, option and what was expected) when loading
 * fails, and warnings (unknown sections and options, deprecated names) that
 * never fail a load. No message ever contains the value of [DEFAULT]
 * engine_key or [rabbitmq] password. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>

/* config_load() and friends: the configuration is invalid; diag->error says
 * why. The daemon prints it and exits with status 2. */
#define CONFIG_INVALID 1

/* At most this many warnings are kept; ConfigDiag.n_dropped counts the rest. */
#define CONFIG_MAX_WARNINGS 64

/* [sandbox] memory_max and pids_max = auto, the default: a limit the runner
 * works out at start, applied where a cgroup offers its controller
 * (docs/configuration.md). */
#define CONFIG_MEMORY_MAX_AUTO UINT64_MAX
#define CONFIG_PIDS_MAX_AUTO   UINT_MAX

typedef enum ConfigSslVersion {
        CONFIG_SSL_DEFAULT, /* ssl_version empty: the TLS library's default */
        CONFIG_SSL_TLSV1,   /* exactly TLS 1.0 */
        CONFIG_SSL_TLSV1_1,
        CONFIG_SSL_TLSV1_2,
        CONFIG_SSL_TLSV1_3, /* ours; Python's ssl module has no such "protocol" */
        CONFIG_SSL_SSLV23,  /* negotiate the highest version both sides support */
} ConfigSslVersion;

/* [sandbox] profile: a named set of presets for the other [sandbox]
 * options (docs/sandbox.md states what each one holds against). */
typedef enum ConfigProfile {
        CONFIG_PROFILE_COMPATIBLE, /* the defaults: root in the host's namespaces */
        CONFIG_PROFILE_CONTAINED,  /* root, in namespaces, without the capabilities
                                    * that undo them, the agent's files hidden */
        CONFIG_PROFILE_USER,       /* an unprivileged user in namespaces */
} ConfigProfile;

typedef enum ConfigCgroup {
        CONFIG_CGROUP_AUTO,
        CONFIG_CGROUP_V2,
        CONFIG_CGROUP_V1,
        CONFIG_CGROUP_OFF,
} ConfigCgroup;

/* [agent] log_format: the log's lines (log/log.h LogFormat). */
typedef enum ConfigLogFormat {
        CONFIG_LOG_FORMAT_TEXT,
        CONFIG_LOG_FORMAT_JSON,
} ConfigLogFormat;

/* One broker address of [rabbitmq] host. host is as written, without the
 * brackets of "[v6addr]:port"; "localhost" is left for the transport to
 * resolve. */
typedef struct ConfigHost {
        char *host;
        unsigned port;
} ConfigHost;

typedef struct ConfigStrv {
        char **items;
        size_t n;
} ConfigStrv;

/* Strings are never NULL unless the comment says "NULL = unset". */
typedef struct Config {
        /* [DEFAULT] */
        char *storage;
        char *engine_key; /* NULL = unset; "" = no key; else a PEM public key */
        bool enable_dynamic_result_queue;
        bool debug;
        char *log_file; /* NULL = log to stderr (an empty value counts as unset) */
        char *log_dir;  /* NULL = unset (likewise) */
        bool use_syslog;

        struct ConfigRabbitmq {
                char *host;        /* as written */
                ConfigHost *hosts; /* host parsed; bare names take port */
                size_t n_hosts;    /* >= 1 */
                unsigned port;     /* 1..65535 */
                char *login;
                char *password;
                char *virtual_host;
                bool ssl;
                ConfigSslVersion ssl_version;
                char *ca_certs; /* stripped, as the agent does; "" = none */
                bool insecure;
                char *result_routing_key; /* NULL = unset (the reference then uses "None") */
                char *result_exchange;
                char *input_queue;
        } rabbitmq;

        /* Our own options (never in the Python agent). 0 means "no limit"
         * only where the comment says so. */
        struct ConfigAgent {
                uint64_t max_plan_size;       /* bytes */
                unsigned max_plan_depth;      /* JSON nesting levels */
                unsigned plan_timeout;        /* seconds, 0 = no limit */
                unsigned script_timeout;      /* seconds, 0 = no limit */
                unsigned kill_grace;          /* seconds from SIGTERM to SIGKILL */
                unsigned stop_grace;          /* seconds a stopping daemon waits for a plan */
                uint64_t output_limit;        /* bytes kept of each of stdout and stderr */
                uint64_t body_max_steps;      /* evaluation steps of a Body */
                unsigned body_max_depth;      /* call depth of a Body */
                uint64_t body_max_memory;     /* bytes a Body may allocate */
                char *body_open_root;         /* "" = open() unconfined; else an absolute dir */
                bool declare_queue;           /* declare input_queue if missing */
                unsigned heartbeat;           /* AMQP heartbeat seconds, 0 = off */
                bool verify_hostname;         /* check the broker certificate's name */
                unsigned reconnect_max_delay; /* seconds, cap of the reconnect back-off */
                ConfigLogFormat log_format;
                char *progress_routing_key; /* "" = no progress events (docs/operations.md) */
                bool durable_calls;         /* record Body calls; resume after a crash */
                unsigned reboot_exit_code;  /* a script's exit code asking for a reboot; 0 = off */
                char *reboot_command;       /* run, by /bin/sh -c, for that reboot */
                unsigned max_reboots;       /* reboots one plan may ask for */
                bool journal_log;           /* the journal's write-ahead log */
        } agent;

        struct ConfigSandbox {
                ConfigProfile profile;
                bool enabled;
                char *user;
                char *group;
                unsigned rlimit_cpu;    /* seconds, 0 = leave as inherited */
                uint64_t rlimit_as;     /* bytes, 0 = leave as inherited */
                unsigned rlimit_nofile; /* 0 = leave as inherited */
                unsigned rlimit_nproc;  /* 0 = leave as inherited */
                bool no_new_privs;
                bool mount_namespace;
                bool pid_namespace;
                bool ipc_namespace;
                bool uts_namespace;
                bool network_namespace;
                bool read_only_root;        /* with mount_namespace: / read-only, /tmp private */
                bool hide_agent;            /* with mount_namespace: storage and config hidden */
                bool protect_kernel;        /* with mount_namespace: /proc/sys, /sys read-only,
                                             * no cgroupfs, a /dev without disks */
                ConfigStrv hide_paths;      /* absolute paths hidden from scripts */
                uint64_t drop_capabilities; /* bit N = capability N, dropped for scripts */
                ConfigCgroup cgroup;
                uint64_t memory_max; /* bytes, 0 = no limit, CONFIG_MEMORY_MAX_AUTO */
                unsigned pids_max;   /* 0 = no limit, CONFIG_PIDS_MAX_AUTO */
                ConfigStrv env_passthrough;
        } sandbox;

        /* Not an option: the files the configuration was read from, in
         * order (the sandbox hides them from scripts with hide_agent). */
        ConfigStrv files;
} Config;

/* Where configuration comes from, in command-line order: a file
 * (--config-file) or a directory whose *.conf files are read in byte order
 * (--config-dir). Later sources override earlier ones. */
typedef struct ConfigSource {
        const char *path;
        bool is_dir;
} ConfigSource;

/* A value given outside any file (a command-line flag such as --debug). It
 * wins over every file. origin names it in messages ("--debug"). */
typedef struct ConfigOverride {
        const char *section; /* "DEFAULT", "rabbitmq", "agent" or "sandbox" */
        const char *name;
        const char *value; /* in file syntax: "true", "5672", ... */
        const char *origin;
} ConfigOverride;

/* Initialize with CONFIG_DIAG_INIT and release with config_diag_done(). */
typedef struct ConfigDiag {
        char *error;     /* NULL unless a call returned CONFIG_INVALID */
        char **warnings; /* "file:line: ..." sentences, in file order */
        size_t n_warnings;
        size_t n_dropped; /* warnings past CONFIG_MAX_WARNINGS, counted only */
} ConfigDiag;

#define CONFIG_DIAG_INIT                                                                           \
        {                                                                                          \
                NULL, NULL, 0, 0                                                                   \
        }

void config_diag_done(ConfigDiag *d);

/* A configuration with every default. Returns 0 or -ENOMEM. */
int config_new_default(Config **ret);

/* Load sources[0..n) over the defaults, as oslo.config would. Only the value
 * that wins for an option is checked, so a bad value overridden by a later
 * file is not an error (oslo converts values only when they are read).
 * Returns 0, CONFIG_INVALID (diag->error set; *ret untouched), or a negative
 * errno. Warnings are appended to diag either way. diag may be NULL. */
int config_load(Config **ret, const ConfigSource *sources, size_t n, ConfigDiag *diag);

/* config_load() with overrides applied after all files. */
int config_load_full(Config **ret, const ConfigSource *sources, size_t n,
                     const ConfigOverride *overrides, size_t n_overrides, ConfigDiag *diag);

Config *config_free(Config *c);

/* The effective configuration as INI text for people to read
 * (muranoagent --print-config): every option, with password and engine_key
 * replaced by "***" when set. Returns 0 or -ENOMEM. */
int config_format(const Config *c, char **ret);

/* The daemon's log file: log_file, else log_dir/muranoagent.log (made in
 * buf, of size bytes), else NULL (it logs to stderr). */
const char *config_log_path(const Config *c, char *buf, size_t size);

/* Names for the enums, as written in the file. */
const char *config_ssl_version_name(ConfigSslVersion v);
const char *config_cgroup_name(ConfigCgroup v);
const char *config_profile_name(ConfigProfile v);
const char *config_log_format_name(ConfigLogFormat v);

/* The name of capability n ("CAP_SYS_ADMIN"), or NULL for a number this
 * build does not know. */
const char *config_capability_name(unsigned n);
