/* Loading configuration sources the way oslo.config does: files in
 * command-line order, a --config-dir expanding in place to its *.conf files
 * in sorted order, and for each option the last value of the last file that
 * sets it. Values are collected as text first and converted at the end, so
 * that only the winning value of each option is checked (oslo converts a
 * value when it is read, never the ones it overrode). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config/config-internal.h"
#include "config/ini.h"
#include "util/fileio.h"

/* agent.conf is a few kilobytes; this only stops a wrong path from pulling
 * a huge file into memory. */
#define CONFIG_FILE_MAX (1024 * 1024)

/* The text that currently wins for one option, and where it came from. */
typedef struct ConfigSlot {
        char *value;
        const char *origin; /* a file path, or an override's origin */
        unsigned line;      /* 0 for overrides */
        unsigned seq;       /* which source: later ones win */
        bool alias;         /* set under its deprecated name */
} ConfigSlot;

typedef struct ConfigLoader {
        ConfigSlot *slots; /* config_n_options entries */
        char **origins;    /* owned copies of every file path read */
        size_t n_origins;
        ConfigDiag *diag;
        const char *file;
        unsigned seq;
        int section; /* ConfigSection, or -1 inside an unknown section */
} ConfigLoader;

static void loader_done(ConfigLoader *ld)
{
        if (ld->slots)
                for (size_t i = 0; i < config_n_options; i++)
                        free(ld->slots[i].value);
        free(ld->slots);
        for (size_t i = 0; i < ld->n_origins; i++)
                free(ld->origins[i]);
        free(ld->origins);
}

/* Record value for option i unless a stronger value is already there. In
 * one file, oslo looks an option up under its current name before its
 * deprecated one, and takes the last value under that name; across files
 * the later file wins. */
static int loader_record(ConfigLoader *ld, size_t i, const char *value, const char *origin,
                         unsigned line, bool alias)
{
        ConfigSlot *s = &ld->slots[i];
        char *copy;

        if (s->value && s->seq == ld->seq && !s->alias && alias)
                return 0;
        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        free(s->value);
        *s = (ConfigSlot){copy, origin, line, ld->seq, alias};
        return 0;
}

static int on_section(void *userdata, const char *name, unsigned line)
{
        ConfigLoader *ld = userdata;

        ld->section = config_section_lookup(name);
        if (ld->section >= 0)
                return 0;
        return config_diag_warn(
                ld->diag, "%s:%u: unknown section [%s], ignoring it%s", ld->file, line, name,
                strcasecmp(name, "DEFAULT") == 0 ? " (the default section is spelled [DEFAULT])"
                                                 : "");
}

static int on_assign(void *userdata, const char *section, const char *key, const char *value,
                     unsigned line)
{
        ConfigLoader *ld = userdata;
        const char *sec;
        bool alias = false;
        int i, r;

        if (ld->section < 0)
                return 0;
        sec = config_section_name((ConfigSection)ld->section);
        i = config_option_lookup((ConfigSection)ld->section, key, &alias);
        if (i < 0)
                return config_diag_warn(ld->diag, "%s:%u: unknown option [%s] %s, ignoring",
                                        ld->file, line, sec, key);
        if (config_options[i].type == CONFIG_TYPE_IGNORED)
                return 0;
        if (alias) {
                r = config_diag_warn(ld->diag, "%s:%u: [%s] %s is a deprecated name for %s",
                                     ld->file, line, sec, key, config_options[i].name);
                if (r < 0)
                        return r;
        }
        return loader_record(ld, (size_t)i, value, ld->file, line, alias);
}

static const IniHandler loader_handler = {
        .section = on_section,
        .assign = on_assign,
};

static int loader_file(ConfigLoader *ld, const char *path)
{
        _cleanup_free_ char *text = NULL, *message = NULL;
        char *origin, **origins;
        unsigned line = 0;
        size_t len;
        int r;

        r = file_read_all(path, CONFIG_FILE_MAX, &text, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return config_diag_fail(ld->diag, "%s: config file is larger than %d bytes", path,
                                        CONFIG_FILE_MAX);
        if (r < 0)
                return config_diag_fail(ld->diag, "%s: cannot read config file: %s", path,
                                        strerror(-r));

        origin = strdup(path);
        if (!origin)
                return -ENOMEM;
        origins = realloc(ld->origins, (ld->n_origins + 1) * sizeof(*origins));
        if (!origins) {
                free(origin);
                return -ENOMEM;
        }
        origins[ld->n_origins++] = origin;
        ld->origins = origins;

        ld->file = origin;
        ld->seq++;
        ld->section = -1;
        r = ini_parse(text, len, &loader_handler, ld, &line, &message);
        if (r == INI_SYNTAX)
                return config_diag_fail(ld->diag, "%s:%u: %s", path, line, message);
        return r;
}

static int conf_filter(const struct dirent *d)
{
        size_t n = strlen(d->d_name);

        /* glob("*.conf") as oslo uses it: hidden files do not match. */
        return d->d_name[0] != '.' && n > 5 && streq(d->d_name + n - 5, ".conf");
}

/* Python sorts the names as strings, which for UTF-8 is byte order. */
static int conf_compare(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int loader_dir(ConfigLoader *ld, const char *path)
{
        struct dirent **names = NULL;
        struct stat st;
        int n, r = 0;

        if (stat(path, &st) < 0) {
                if (errno == ENOENT)
                        return config_diag_fail(ld->diag, "%s: config directory not found", path);
                return config_diag_fail(ld->diag, "%s: cannot read config directory: %s", path,
                                        strerror(errno));
        }
        if (!S_ISDIR(st.st_mode))
                return config_diag_fail(ld->diag,
                                        "%s: not a directory (given as a config directory)", path);

        n = scandir(path, &names, conf_filter, conf_compare);
        if (n < 0) {
                if (errno == ENOMEM)
                        return -ENOMEM;
                return config_diag_fail(ld->diag, "%s: cannot read config directory: %s", path,
                                        strerror(errno));
        }
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = NULL;
                size_t plen = strlen(path);

                if (r == 0) {
                        /* os.path.join(dir, name): no second '/' after one
                         * the directory already ends with. */
                        if (asprintf(&file, "%s%s%s", path,
                                     plen > 0 && path[plen - 1] == '/' ? "" : "/",
                                     names[i]->d_name) < 0) {
                                file = NULL;
                                r = -ENOMEM;
                        } else
                                r = loader_file(ld, file);
                }
                free(names[i]);
        }
        free(names);
        return r;
}

/* "file:line", or an override's origin; NULL when out of memory. */
static char *slot_where(const ConfigSlot *s)
{
        char *w;

        if (s->line == 0)
                return strdup(s->origin);
        return asprintf(&w, "%s:%u", s->origin, s->line) < 0 ? NULL : w;
}

/* The presets of the profile that won, for each option that no source
 * sets: an option set anywhere wins over its profile's preset, whatever
 * the order of the sources (docs/configuration.md). The profile is the
 * first option of the table, so it is in place already. */
static int loader_presets(ConfigLoader *ld, Config *c)
{
        for (size_t k = 0; k < config_n_presets; k++) {
                const ConfigPreset *p = &config_presets[k];
                _cleanup_free_ char *why = NULL;
                bool alias;
                int i, r;

                if (p->profile != c->sandbox.profile)
                        continue;
                i = config_option_lookup(CONFIG_SECTION_SANDBOX, p->name, &alias);
                if (i < 0)
                        return -EINVAL;
                if (ld->slots[i].value)
                        continue;
                /* Ours, and checked by the unit tests: only memory can fail. */
                r = config_option_apply(c, &config_options[i], p->value, &why);
                if (r != 0)
                        return r < 0 ? r : -EINVAL;
        }
        return 0;
}

/* Convert every collected value into c, in table order, with the profile's
 * presets applied right after the profile. */
static int loader_apply(ConfigLoader *ld, Config *c)
{
        for (size_t i = 0; i < config_n_options; i++) {
                const ConfigOption *o = &config_options[i];
                const ConfigSlot *s = &ld->slots[i];
                _cleanup_free_ char *why = NULL, *where = NULL;
                int r;

                if (o->type == CONFIG_TYPE_PROFILE) {
                        r = s->value ? config_option_apply(c, o, s->value, &why) : 0;
                        if (r == 0)
                                r = loader_presets(ld, c);
                } else {
                        if (!s->value)
                                continue;
                        r = config_option_apply(c, o, s->value, &why);
                }
                if (r <= 0) {
                        if (r < 0)
                                return r;
                        continue;
                }
                where = slot_where(s);
                if (!where)
                        return -ENOMEM;
                /* The reference checks ssl_version only when it connects with
                 * SSL, so a bad one next to ssl = false never stopped it. */
                if (o->type == CONFIG_TYPE_SSL_VERSION && !c->rabbitmq.ssl) {
                        r = config_diag_warn(ld->diag,
                                             "%s: [%s] %s: %s; ignored because ssl is off", where,
                                             config_section_name(o->section), o->name, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                return config_diag_fail(ld->diag, "%s: [%s] %s: %s", where,
                                        config_section_name(o->section), o->name, why);
        }
        return 0;
}

static int loader_overrides(ConfigLoader *ld, const ConfigOverride *ov, size_t n)
{
        ld->seq = UINT_MAX;
        for (size_t k = 0; k < n; k++) {
                int sec = config_section_lookup(ov[k].section);
                bool alias = false;
                int i = sec < 0 ? -1 : config_option_lookup((ConfigSection)sec, ov[k].name, &alias);
                int r;

                if (i < 0)
                        return config_diag_fail(ld->diag, "%s: unknown option [%s] %s",
                                                ov[k].origin, ov[k].section, ov[k].name);
                r = loader_record(ld, (size_t)i, ov[k].value, ov[k].origin, 0, alias);
                if (r < 0)
                        return r;
        }
        return 0;
}

int config_load_full(Config **ret, const ConfigSource *sources, size_t n,
                     const ConfigOverride *overrides, size_t n_overrides, ConfigDiag *diag)
{
        ConfigDiag scratch = CONFIG_DIAG_INIT;
        ConfigLoader ld = {.diag = diag ? diag : &scratch};
        Config *c = NULL;
        int r;

        ld.slots = calloc(config_n_options, sizeof(*ld.slots));
        if (!ld.slots) {
                r = -ENOMEM;
                goto out;
        }
        r = config_new_default(&c);
        for (size_t i = 0; i < n && r == 0; i++)
                r = sources[i].is_dir ? loader_dir(&ld, sources[i].path)
                                      : loader_file(&ld, sources[i].path);
        if (r == 0)
                r = loader_overrides(&ld, overrides, n_overrides);
        if (r == 0)
                r = loader_apply(&ld, c);
        if (r == 0) {
                _cleanup_free_ char *why = NULL;
                const ConfigSlot *hs = NULL;

                r = config_hosts_update(c, &why);
                for (size_t i = 0; r == CONFIG_INVALID && i < config_n_options; i++)
                        if (config_options[i].type == CONFIG_TYPE_HOSTS)
                                hs = &ld.slots[i];
                if (r == CONFIG_INVALID) {
                        /* The default host is valid, so a bad list was set. */
                        _cleanup_free_ char *where = hs && hs->value ? slot_where(hs) : NULL;
                        r = where ? config_diag_fail(ld.diag, "%s: [rabbitmq] host: %s", where, why)
                                  : -ENOMEM;
                }
        }
        for (size_t i = 0; r == 0 && i < ld.n_origins; i++) {
                char **files = realloc(c->files.items, (c->files.n + 1) * sizeof(*files));

                if (!files) {
                        r = -ENOMEM;
                        break;
                }
                c->files.items = files;
                c->files.items[c->files.n++] = TAKE_PTR(ld.origins[i]);
        }
        if (r == 0)
                *ret = TAKE_PTR(c);
out:
        config_free(c);
        loader_done(&ld);
        config_diag_done(&scratch);
        return r;
}

int config_load(Config **ret, const ConfigSource *sources, size_t n, ConfigDiag *diag)
{
        return config_load_full(ret, sources, n, NULL, 0, diag);
}
