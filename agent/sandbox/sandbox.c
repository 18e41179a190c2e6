/* The pure sandbox builder (see sandbox.h): settings and run facts in,
 * helper command line, clean environment and a log line out. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/strv.h"

/* A growing NULL-terminated vector of owned strings. */
typedef struct StrVec {
        char **v;
        size_t n;
        size_t cap;
} StrVec;

static void strvec_done(StrVec *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        s->v = NULL;
        s->n = s->cap = 0;
}

static int strvec_push_owned(StrVec *s, char *str)
{
        if (!str)
                return -ENOMEM;
        if (s->n + 2 > s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 16;
                char **v = realloc(s->v, cap * sizeof(*v));

                if (!v) {
                        free(str);
                        return -ENOMEM;
                }
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = str;
        s->v[s->n] = NULL;
        return 0;
}

static int strvec_push(StrVec *s, const char *str)
{
        return strvec_push_owned(s, strdup(str));
}

static int strvec_pushf(StrVec *s, const char *fmt, ...) _printf_(2, 3);
static int strvec_pushf(StrVec *s, const char *fmt, ...)
{
        va_list ap;
        char *str;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&str, fmt, ap);
        va_end(ap);
        return strvec_push_owned(s, r < 0 ? NULL : str);
}

/* Hand the vector out, never NULL (an empty one is just the terminator). */
static int strvec_steal(StrVec *s, char ***ret)
{
        if (!s->v) {
                s->v = calloc(1, sizeof(char *));
                if (!s->v)
                        return -ENOMEM;
        }
        *ret = s->v;
        s->v = NULL;
        s->n = s->cap = 0;
        return 0;
}

/* The "NAME=VALUE" entry of env for name, or NULL. */
static const char *env_find(const char *const *env, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
                        return env[i];
        return NULL;
}

int sandbox_environment(const struct ConfigSandbox *cfg, const char *const *agent_env,
                        const char *home, char ***ret)
{
        const struct {
                const char *name;
                const char *value;
        } fixed[] = {
                {"PATH", SANDBOX_DEFAULT_PATH},
                {"HOME", home ? home : SANDBOX_DEFAULT_HOME},
                {"LANG", SANDBOX_DEFAULT_LANG},
        };
        _cleanup_(strvec_done) StrVec env = {0};
        int r;

        for (size_t i = 0; i < cfg->env_passthrough.n; i++) {
                const char *name = cfg->env_passthrough.items[i];
                const char *entry = env_find(agent_env, name);

                if (entry && !env_find((const char *const *)env.v, name) &&
                    (r = strvec_push(&env, entry)) < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (!env_find((const char *const *)env.v, fixed[i].name) &&
                    (r = strvec_pushf(&env, "%s=%s", fixed[i].name, fixed[i].value)) < 0)
                        return r;
        return strvec_steal(&env, ret);
}

/* Both name root, by name or number: then the helper is not asked to change
 * the identity at all (see sandbox_build()). */
static bool identity_is_root(const struct ConfigSandbox *cfg)
{
        return (streq(cfg->user, "root") || streq(cfg->user, "0")) &&
               (streq(cfg->group, "root") || streq(cfg->group, "0"));
}

/* Whether path is dir or lies below it, comparing path text only. */
static bool path_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        while (n > 1 && dir[n - 1] == '/')
                n--;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* The writable list the helper gets: the working directory first, unless
 * one of the given directories already holds it, then the given ones. */
static int push_writable(StrVec *argv, const SandboxRun *run)
{
        bool covered = !run->workdir;
        int r;

        for (size_t i = 0; !covered && i < run->n_writable; i++)
                covered = path_within(run->workdir, run->writable[i]);
        if (!covered && (r = strvec_pushf(argv, "--writable=%s", run->workdir)) < 0)
                return r;
        for (size_t i = 0; i < run->n_writable; i++)
                if ((r = strvec_pushf(argv, "--writable=%s", run->writable[i])) < 0)
                        return r;
        return 0;
}

static const struct {
        const char *option;
        size_t offset; /* of the bool in struct ConfigSandbox */
        const char *name;
} namespaces[] = {
        {"--unshare-mount", offsetof(struct ConfigSandbox, mount_namespace), "mount"},
        {"--unshare-pid", offsetof(struct ConfigSandbox, pid_namespace), "pid"},
        {"--unshare-ipc", offsetof(struct ConfigSandbox, ipc_namespace), "ipc"},
        {"--unshare-uts", offsetof(struct ConfigSandbox, uts_namespace), "uts"},
        {"--unshare-net", offsetof(struct ConfigSandbox, network_namespace), "net"},
};

/* Whether the run gets namespace i: the agent's downloads keep the
 * network whatever network_namespace says. */
static bool namespace_on(const struct ConfigSandbox *cfg, const SandboxRun *run, size_t i)
{
        if (run->keep_network &&
            namespaces[i].offset == offsetof(struct ConfigSandbox, network_namespace))
                return false;
        return *(const bool *)((const char *)cfg + namespaces[i].offset);
}

/* The rlimits that are set, as "--rlimit-NAME" values; 0 means inherit. */
static size_t rlimits_of(const struct ConfigSandbox *cfg, const char *names[static 4],
                         uint64_t values[static 4])
{
        const struct {
                const char *name;
                uint64_t value;
        } all[] = {
                {"cpu", cfg->rlimit_cpu},
                {"as", cfg->rlimit_as},
                {"nofile", cfg->rlimit_nofile},
                {"nproc", cfg->rlimit_nproc},
        };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (all[i].value > 0) {
                        names[n] = all[i].name;
                        values[n++] = all[i].value;
                }
        return n;
}

static int build_helper_argv(const struct ConfigSandbox *cfg, const SandboxRun *run, StrVec *argv)
{
        _cleanup_(strv_freep) char **env = NULL;
        const char *rl_names[4];
        uint64_t rl_values[4];
        size_t n_rl = rlimits_of(cfg, rl_names, rl_values);
        int r;

        /* The options come in the order the helper applies them. */
        if ((r = strvec_push(argv, run->helper)) < 0 ||
            (r = strvec_push(argv, "--die-with-parent")) < 0)
                return r;
        if (run->status_fd >= 0 && (r = strvec_pushf(argv, "--status-fd=%d", run->status_fd)) < 0)
                return r;
        for (size_t i = 0; !run->cgroups_at_spawn && i < run->n_cgroups; i++)
                if ((r = strvec_pushf(argv, "--cgroup=%s", run->cgroups[i])) < 0)
                        return r;
        if (run->oom_score_adj &&
            (r = strvec_pushf(argv, "--oom-score-adj=%d", SANDBOX_OOM_SCORE_ADJ)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (namespace_on(cfg, run, i) && (r = strvec_push(argv, namespaces[i].option)) < 0)
                        return r;
        if (cfg->mount_namespace && cfg->read_only_root) {
                /* "A script cannot write outside its directories": all of /
                 * read-only, then its own directories and a private /tmp. */
                if ((r = strvec_push(argv, "--private-tmp")) < 0 ||
                    (r = strvec_push(argv, "--read-only=/")) < 0)
                        return r;
        }
        /* The script's directories are bound even on a writable /: the
         * masks of the agent's storage keep them. */
        if (cfg->mount_namespace && (r = push_writable(argv, run)) < 0)
                return r;
        for (size_t i = 0; cfg->hide_agent && i < run->n_agent_paths; i++)
                if ((r = strvec_pushf(argv, "--mask=%s", run->agent_paths[i])) < 0)
                        return r;
        for (size_t i = 0; i < cfg->hide_paths.n; i++)
                if ((r = strvec_pushf(argv, "--mask=%s", cfg->hide_paths.items[i])) < 0)
                        return r;
        if (cfg->protect_kernel && (r = strvec_push(argv, "--protect-kernel")) < 0)
                return r;
        for (size_t i = 0; i < n_rl; i++)
                if ((r = strvec_pushf(argv, "--rlimit-%s=%" PRIu64, rl_names[i], rl_values[i])) < 0)
                        return r;
        if (cfg->drop_capabilities &&
            (r = strvec_pushf(argv, "--drop-capabilities=%" PRIx64, cfg->drop_capabilities)) < 0)
                return r;
        if (!identity_is_root(cfg) && ((r = strvec_pushf(argv, "--user=%s", cfg->user)) < 0 ||
                                       (r = strvec_pushf(argv, "--group=%s", cfg->group)) < 0))
                return r;
        if (cfg->no_new_privs && (r = strvec_push(argv, "--no-new-privs")) < 0)
                return r;
        if (run->workdir && (r = strvec_pushf(argv, "--chdir=%s", run->workdir)) < 0)
                return r;
        if ((r = sandbox_environment(cfg, run->agent_env, run->home, &env)) < 0)
                return r;
        for (size_t i = 0; env[i]; i++)
                if ((r = strvec_pushf(argv, "--env=%s", env[i])) < 0)
                        return r;
        return strvec_push(argv, "--");
}

bool sandbox_uses_helper(const struct ConfigSandbox *cfg, const SandboxRun *run)
{
        if (!cfg->enabled)
                return false;
        if (run->force_helper)
                return true;
        if ((cfg->hide_agent && run->n_agent_paths > 0) || cfg->hide_paths.n > 0 ||
            cfg->protect_kernel)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (namespace_on(cfg, run, i))
                        return true;
        return false;
}

int sandbox_build(const struct ConfigSandbox *cfg, const SandboxRun *run, SandboxCommand **ret)
{
        bool in_process = cfg->enabled && !sandbox_uses_helper(cfg, run);
        _cleanup_(strvec_done) StrVec argv = {0}, envp = {0};
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        int r;

        if (!run->command || !run->command[0] || (cfg->enabled && !run->helper))
                return -EINVAL;
        if (in_process) {
                _cleanup_(strv_freep) char **env = NULL;

                if ((r = sandbox_environment(cfg, run->agent_env, run->home, &env)) < 0)
                        return r;
                for (size_t i = 0; env[i]; i++)
                        if ((r = strvec_push(&envp, env[i])) < 0)
                                return r;
        } else if (cfg->enabled) {
                if ((r = build_helper_argv(cfg, run, &argv)) < 0)
                        return r;
        } else {
                /* The reference's way: the script inherits everything. */
                for (size_t i = 0; run->agent_env && run->agent_env[i]; i++)
                        if ((r = strvec_push(&envp, run->agent_env[i])) < 0)
                                return r;
        }
        for (size_t i = 0; run->command[i]; i++)
                if ((r = strvec_push(&argv, run->command[i])) < 0)
                        return r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if ((r = strvec_steal(&argv, &c->argv)) < 0 || (r = strvec_steal(&envp, &c->envp)) < 0)
                return r;
        c->in_process = in_process;
        *ret = TAKE_PTR(c);
        return 0;
}

SandboxCommand *sandbox_command_free(SandboxCommand *c)
{
        if (!c)
                return NULL;
        strv_free(c->argv);
        strv_free(c->envp);
        free(c);
        return NULL;
}

int sandbox_describe(const struct ConfigSandbox *cfg, const SandboxRun *run, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_(strv_freep) char **env = NULL;
        const char *rl_names[4];
        uint64_t rl_values[4];
        size_t n_rl = rlimits_of(cfg, rl_names, rl_values), n_writable = 0;
        const char *sep = "";
        int r;

        if (!cfg->enabled) {
                char *s = strdup("sandbox: disabled (scripts run with the agent's identity, "
                                 "limits and environment)");

                if (!s)
                        return -ENOMEM;
                *ret = s;
                return 0;
        }

        r = strbuf_puts(&b, "sandbox: ");
        if (r >= 0 && cfg->profile != CONFIG_PROFILE_COMPATIBLE)
                r = strbuf_printf(&b, "profile=%s ", config_profile_name(cfg->profile));
        if (r >= 0)
                r = strbuf_printf(&b, "user=%s group=%s", cfg->user, cfg->group);
        if (r >= 0 && cfg->no_new_privs)
                r = strbuf_puts(&b, " no_new_privs");
        if (r >= 0 && cfg->drop_capabilities)
                r = strbuf_printf(&b, " drop_capabilities=%d",
                                  __builtin_popcountll(cfg->drop_capabilities));
        if (r >= 0)
                r = strbuf_puts(&b, " rlimits=");
        for (size_t i = 0; r >= 0 && i < n_rl; i++)
                r = strbuf_printf(&b, "%s:%" PRIu64 ",", rl_names[i], rl_values[i]);
        if (r >= 0)
                r = strbuf_puts(&b, "core:0 namespaces=");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(namespaces); i++)
                if (namespace_on(cfg, run, i)) {
                        r = strbuf_printf(&b, "%s%s", sep, namespaces[i].name);
                        sep = ",";
                }
        if (r >= 0 && !*sep)
                r = strbuf_puts(&b, "none");
        if (r >= 0 && cfg->mount_namespace) {
                StrVec w = {0};

                r = push_writable(&w, run);
                n_writable = w.n;
                strvec_done(&w);
                if (r >= 0)
                        r = strbuf_printf(&b, " mounts=%swritable:%zu",
                                          cfg->read_only_root ? "read-only:/,private-tmp," : "",
                                          n_writable);
        }
        if (r >= 0 && (cfg->hide_agent || cfg->hide_paths.n > 0))
                r = strbuf_printf(&b, " hidden=%zu",
                                  (cfg->hide_agent ? run->n_agent_paths : 0) + cfg->hide_paths.n);
        if (r >= 0 && cfg->protect_kernel)
                r = strbuf_puts(&b, " protect_kernel");
        if (r >= 0)
                r = strbuf_printf(&b, " cgroups=%zu env=", run->n_cgroups);
        if (r >= 0)
                r = sandbox_environment(cfg, run->agent_env, run->home, &env);
        for (size_t i = 0; r >= 0 && env[i]; i++)
                r = strbuf_printf(&b, "%s%.*s", i ? "," : "", (int)strcspn(env[i], "="), env[i]);
        if (r >= 0)
                r = strbuf_puts(&b, sandbox_uses_helper(cfg, run) ? " path=helper"
                                                                  : " path=in-process");
        if (r >= 0 && run->oom_score_adj)
                r = strbuf_printf(&b, " oom_score_adj=%d", SANDBOX_OOM_SCORE_ADJ);
        if (r < 0)
                return r;
        return strbuf_steal(&b, ret);
}
