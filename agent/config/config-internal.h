/* Shared between the files of the config module, not for other modules: the
 * table of options and the value converters. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "util/macro.h"
#include "util/strbuf.h"

typedef enum ConfigSection {
        CONFIG_SECTION_DEFAULT,
        CONFIG_SECTION_RABBITMQ,
        CONFIG_SECTION_AGENT,
        CONFIG_SECTION_SANDBOX,
        CONFIG_SECTION_MAX,
} ConfigSection;

typedef enum ConfigType {
        CONFIG_TYPE_STR,         /* char * */
        CONFIG_TYPE_HOSTS,       /* char * (rabbitmq.host; the list is derived later) */
        CONFIG_TYPE_BOOL,        /* bool */
        CONFIG_TYPE_UINT,        /* unsigned, min..max */
        CONFIG_TYPE_U64,         /* uint64_t, min..max */
        CONFIG_TYPE_SSL_VERSION, /* ConfigSslVersion */
        CONFIG_TYPE_CGROUP,      /* ConfigCgroup */
        CONFIG_TYPE_ENV_LIST,    /* ConfigStrv of environment variable names */
        CONFIG_TYPE_PATH_LIST,   /* ConfigStrv of absolute paths */
        CONFIG_TYPE_PROFILE,     /* ConfigProfile */
        CONFIG_TYPE_CAPS,        /* uint64_t, one bit per capability */
        CONFIG_TYPE_LOG_FORMAT,  /* ConfigLogFormat */
        CONFIG_TYPE_IGNORED,     /* an oslo option we accept and do not use */
} ConfigType;

enum {
        CONFIG_OPT_SECRET = 1 << 0,      /* never shown in any message or dump */
        CONFIG_OPT_EMPTY_UNSET = 1 << 1, /* an empty value stores NULL */
        CONFIG_OPT_STRIP = 1 << 2,       /* strip surrounding whitespace */
        CONFIG_OPT_SIZE = 1 << 3,        /* integer with an optional K/M/G suffix */
        CONFIG_OPT_ABSPATH = 1 << 4,     /* empty or an absolute path */
        CONFIG_OPT_NONEMPTY = 1 << 5,    /* must not be empty */
        CONFIG_OPT_AUTO = 1 << 6,        /* an integer, or "auto": the type's largest value */
};

typedef struct ConfigOption {
        ConfigSection section;
        const char *name;
        ConfigType type;
        unsigned flags;
        size_t offset;     /* of the field in Config */
        const char *def;   /* the default in file syntax; NULL = unset */
        uint64_t min, max; /* integer range */
        const char *alias; /* an older name oslo still reads, or NULL */
} ConfigOption;

extern const ConfigOption config_options[];
extern const size_t config_n_options;

/* One value a [sandbox] profile gives an option that no source sets. */
typedef struct ConfigPreset {
        ConfigProfile profile;
        const char *name; /* a [sandbox] option */
        const char *value;
} ConfigPreset;

extern const ConfigPreset config_presets[];
extern const size_t config_n_presets;

const char *config_section_name(ConfigSection s);
/* The section a header names, as oslo matches groups: "DEFAULT" exactly,
 * the others case-insensitively. Returns -1 for an unknown section. */
int config_section_lookup(const char *name);
/* The index of the option named name (or its alias, then *ret_alias is
 * true) in section s, or -1. */
int config_option_lookup(ConfigSection s, const char *name, bool *ret_alias);

/* Convert value and store it into c. Returns 0, CONFIG_INVALID with
 * *ret_why ("expected ..., got '...'"; never the value of a secret), or
 * -ENOMEM. */
int config_option_apply(Config *c, const ConfigOption *o, const char *value, char **ret_why);
/* Recompute c->rabbitmq.hosts from c->rabbitmq.host and port. Returns 0,
 * CONFIG_INVALID with *ret_why, or -ENOMEM. */
int config_hosts_update(Config *c, char **ret_why);

/* Converters (config-value.c). Each returns 0 or -EINVAL. */
int config_parse_bool(const char *s, bool *ret);
int config_parse_u64(const char *s, bool size_suffix, uint64_t min, uint64_t max, uint64_t *ret);
int config_parse_ssl_version(const char *s, ConfigSslVersion *ret);
int config_parse_cgroup(const char *s, ConfigCgroup *ret);
int config_parse_profile(const char *s, ConfigProfile *ret);
int config_parse_log_format(const char *s, ConfigLogFormat *ret);
/* Comma-separated capability names, with or without "CAP_", in any case.
 * On -EINVAL, *ret_bad is the first unknown name. Returns 0, -EINVAL or
 * -ENOMEM. */
int config_parse_caps(const char *s, uint64_t *ret, char **ret_bad);
bool config_env_name_valid(const char *s, size_t n);
bool config_abspath_valid(const char *s, size_t n);
/* Split "a, b,c" into trimmed items, skipping empty ones, each checked by
 * valid. On -EINVAL, *ret_bad is the first invalid item. Returns 0,
 * -EINVAL or -ENOMEM. */
int config_parse_list(const char *s, bool (*valid)(const char *item, size_t n), ConfigStrv *ret,
                      char **ret_bad);
int config_parse_env_list(const char *s, ConfigStrv *ret, char **ret_bad);
void config_strv_done(ConfigStrv *v);
/* Parse a [rabbitmq] host list. Returns 0, CONFIG_INVALID with *ret_why,
 * or -ENOMEM. */
int config_parse_hosts(const char *s, unsigned default_port, ConfigHost **ret, size_t *ret_n,
                       char **ret_why);
void config_hosts_free(ConfigHost *h, size_t n);

/* Append s to b in single quotes for a message: control characters escaped,
 * long text cut with "...". */
int config_quote(StrBuf *b, const char *s);

/* Diagnostics (config.c). config_diag_warn returns 0 or -ENOMEM;
 * config_diag_fail keeps the first error only and returns CONFIG_INVALID or
 * -ENOMEM, so that callers can return its value. */
int config_diag_warn(ConfigDiag *d, const char *fmt, ...) _printf_(2, 3);
int config_diag_fail(ConfigDiag *d, const char *fmt, ...) _printf_(2, 3);
