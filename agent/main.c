/* muranoagent: wiring only. Parses the command line as the reference's
 * oslo.config does, loads the configuration, and hands over to a
 * subcommand or the daemon. */
#include <getopt.h>
#include <glob.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include <uv.h>

#include "build-config.h"
#include "cmd-check.h"
#include "cmd-run.h"
#include "cmd-cancel.h"
#include "cmd-status.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "log/log.h"
#include "plan/plan.h"
#include "util/bigmem.h"
#include "util/macro.h"

#define MAX_SOURCES   64
#define MAX_OVERRIDES 8

typedef struct Args {
        ConfigSource sources[MAX_SOURCES];
        size_t n_sources;
        ConfigOverride overrides[MAX_OVERRIDES];
        size_t n_overrides;
        bool print_config;
} Args;

static void usage(FILE *f)
{
        fputs("Usage: muranoagent [OPTIONS]                 run the agent\n"
              "       muranoagent [OPTIONS] check PLAN...   validate plan files (JSON or YAML)\n"
              "       muranoagent [OPTIONS] run PLAN [--storage DIR]\n"
              "                                          run one plan locally, print its result\n"
              "       muranoagent [OPTIONS] status [--json]\n"
              "                                          ask the running agent what it is doing\n"
              "       muranoagent [OPTIONS] cancel PLAN_ID\n"
              "                                          stop a running plan, or answer a queued\n"
              "                                          one without running it\n"
              "\n"
              "Options:\n"
              "  --config-file FILE   read FILE (repeatable; later files override earlier ones)\n"
              "  --config-dir DIR     read DIR/*.conf in sorted order (repeatable)\n"
              "  -d, --debug          log debug detail\n"
              "  --log-file FILE      log to FILE instead of stderr\n"
              "  --log-format FORMAT  text (the default) or json: one JSON object per line\n"
              "  --enable_dynamic_result_queue, --noenable_dynamic_result_queue\n"
              "                       route results to the plan's ReplyTo (or not)\n"
              "  --print-config       print the effective configuration (secrets masked) and exit\n"
              "  -h, --help           show this help and exit\n"
              "  --version            show the version and exit\n"
              "\n"
              "Without --config-file or --config-dir, the first of "
              "~/.muranoagent/muranoagent.conf,\n"
              "~/muranoagent.conf, /etc/muranoagent/muranoagent.conf and /etc/muranoagent.conf\n"
              "that exists is read, as oslo.config does. Murano starts the agent with\n"
              "--config-dir /etc/murano.\n"
              "\n"
              "check prints one line per plan on stdout: \"ok\", or the error result\n"
              "document the agent would publish. run prints the plan's result document.\n"
              "Exit status: 0 when every plan is valid (check) or the result's ErrorCode\n"
              "is 0 (run), 1 otherwise, 2 for a bad command line or configuration.\n",
              f);
}

static int add_source(Args *a, const char *path, bool is_dir)
{
        if (a->n_sources == MAX_SOURCES) {
                fprintf(stderr, "muranoagent: more than %d configuration sources\n", MAX_SOURCES);
                return -1;
        }
        a->sources[a->n_sources++] = (ConfigSource){path, is_dir};
        return 0;
}

static void add_override(Args *a, const char *section, const char *name, const char *value,
                         const char *origin)
{
        /* Each flag replaces its own earlier use, so the table cannot overflow. */
        for (size_t i = 0; i < a->n_overrides; i++)
                if (streq(a->overrides[i].name, name)) {
                        a->overrides[i] = (ConfigOverride){section, name, value, origin};
                        return;
                }
        a->overrides[a->n_overrides++] = (ConfigOverride){section, name, value, origin};
}

/* oslo.config's default search when no file is named: the first existing
 * muranoagent.conf in its search directories. */
static void add_default_source(Args *a)
{
        static char home_paths[2][4096];
        const char *home = getenv("HOME");
        const char *candidates[4] = {NULL, NULL, "/etc/muranoagent/muranoagent.conf",
                                     "/etc/muranoagent.conf"};
        struct stat st;

        if (home && *home) {
                snprintf(home_paths[0], sizeof(home_paths[0]), "%s/.muranoagent/muranoagent.conf",
                         home);
                snprintf(home_paths[1], sizeof(home_paths[1]), "%s/muranoagent.conf", home);
                candidates[0] = home_paths[0];
                candidates[1] = home_paths[1];
        }
        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (candidates[i] && stat(candidates[i], &st) == 0 && S_ISREG(st.st_mode)) {
                        add_source(a, candidates[i], false);
                        return;
                }
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(Args *a, int argc, char **argv)
{
        enum {
                OPT_CONFIG_FILE = 256,
                OPT_CONFIG_DIR,
                OPT_LOG_FILE,
                OPT_LOG_FORMAT,
                OPT_DYNAMIC,
                OPT_NO_DYNAMIC,
                OPT_PRINT_CONFIG,
                OPT_VERSION,
        };
        static const struct option options[] = {
                {"config-file", required_argument, NULL, OPT_CONFIG_FILE},
                {"config-dir", required_argument, NULL, OPT_CONFIG_DIR},
                {"debug", no_argument, NULL, 'd'},
                {"log-file", required_argument, NULL, OPT_LOG_FILE},
                {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
                {"enable_dynamic_result_queue", no_argument, NULL, OPT_DYNAMIC},
                {"noenable_dynamic_result_queue", no_argument, NULL, OPT_NO_DYNAMIC},
                {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, OPT_VERSION},
                {NULL, 0, NULL, 0},
        };
        int c;

        /* "+" stops at the subcommand, so its arguments stay its own. */
        while ((c = getopt_long(argc, argv, "+dh", options, NULL)) != -1) {
                switch (c) {
                case OPT_CONFIG_FILE:
                case OPT_CONFIG_DIR:
                        if (add_source(a, optarg, c == OPT_CONFIG_DIR) < 0)
                                return 2;
                        break;
                case 'd':
                        add_override(a, "DEFAULT", "debug", "true", "--debug");
                        break;
                case OPT_LOG_FILE:
                        add_override(a, "DEFAULT", "log_file", optarg, "--log-file");
                        break;
                case OPT_LOG_FORMAT:
                        add_override(a, "agent", "log_format", optarg, "--log-format");
                        break;
                case OPT_DYNAMIC:
                case OPT_NO_DYNAMIC:
                        add_override(a, "DEFAULT", "enable_dynamic_result_queue",
                                     c == OPT_DYNAMIC ? "true" : "false",
                                     c == OPT_DYNAMIC ? "--enable_dynamic_result_queue"
                                                      : "--noenable_dynamic_result_queue");
                        break;
                case OPT_PRINT_CONFIG:
                        a->print_config = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case OPT_VERSION:
                        printf("muranoagent %s\n", PACKAGE_VERSION);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (a->n_sources == 0)
                add_default_source(a);
        return -1;
}

/* Load the configuration; on failure print why and return NULL. */
static Config *load_config(const Args *a)
{
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *cfg = NULL;
        int r;

        r = config_load_full(&cfg, a->sources, a->n_sources, a->overrides, a->n_overrides, &diag);
        for (size_t i = 0; i < diag.n_warnings; i++)
                fprintf(stderr, "muranoagent: warning: %s\n", diag.warnings[i]);
        if (diag.n_dropped > 0)
                fprintf(stderr, "muranoagent: warning: %zu more warnings not shown\n",
                        diag.n_dropped);
        if (r == CONFIG_INVALID)
                fprintf(stderr, "muranoagent: %s\n", diag.error);
        else if (r < 0)
                fprintf(stderr, "muranoagent: cannot load the configuration: %s\n", strerror(-r));
        config_diag_done(&diag);
        return r == 0 ? cfg : NULL;
}

/* Where the daemon logs: log_file, else log_dir/muranoagent.log, else
 * stderr (the journal, under systemd). `run` logs to stderr (target NULL). */
static void open_log(const Config *cfg, bool daemon)
{
        char path[4096];
        const char *target = daemon ? config_log_path(cfg, path, sizeof(path)) : NULL;
        int r;

        r = log_open_with(&(LogOptions){
                .path = target,
                .debug = cfg->debug,
                .format = cfg->agent.log_format == CONFIG_LOG_FORMAT_JSON ? LOG_FORMAT_JSON
                                                                          : LOG_FORMAT_TEXT,
        });
        if (r < 0)
                fprintf(stderr, "muranoagent: cannot open the log file %s: %s; logging to stderr\n",
                        target, strerror(-r));
}

static void pool_noop(uv_work_t *req)
{
}

static void pool_noop_done(uv_work_t *req, int status)
{
}

/* libuv's thread pool, where the daemon's journal work (and its fsyncs)
 * runs, has 4 threads unless UV_THREADPOOL_SIZE says otherwise, and reads
 * that variable once, when the first work is queued. The daemon has at most
 * one work in flight per lane (the entry being worked on, the removal of a
 * published one, the store of a new delivery), and plans came back as fast
 * with two threads as with four, in bursts too; each thread costs a stack
 * and, without M_ARENA_MAX, an arena (docs/footprint.md). The pool is
 * started here, on a loop of its own, so that the variable is out of the
 * environment again before any script could inherit it. An operator's own
 * UV_THREADPOOL_SIZE is left alone. */
static void start_thread_pool(void)
{
        uv_loop_t loop;
        uv_work_t req;
        bool ours = !getenv("UV_THREADPOOL_SIZE");

        if (ours && setenv("UV_THREADPOOL_SIZE", "2", 1) < 0)
                return;
        if (uv_loop_init(&loop) == 0) {
                if (uv_queue_work(&loop, &req, pool_noop, pool_noop_done) == 0)
                        uv_run(&loop, UV_RUN_DEFAULT);
                uv_loop_close(&loop);
        }
        if (ours)
                unsetenv("UV_THREADPOOL_SIZE");
}

static int run_daemon(const Args *a, const Config *cfg)
{
        const char *paths[MAX_SOURCES * 4 + 1];
        size_t n = 0;
        glob_t g[MAX_SOURCES];
        size_t n_glob = 0;
        int r;

        /* Every file the configuration came from, for the permission check. */
        for (size_t i = 0; i < a->n_sources && n < MAX_SOURCES * 4; i++) {
                if (!a->sources[i].is_dir) {
                        paths[n++] = a->sources[i].path;
                        continue;
                }
                char pattern[4096];
                snprintf(pattern, sizeof(pattern), "%s/*.conf", a->sources[i].path);
                if (glob(pattern, 0, NULL, &g[n_glob]) == 0) {
                        for (size_t k = 0; k < g[n_glob].gl_pathc && n < MAX_SOURCES * 4; k++)
                                paths[n++] = g[n_glob].gl_pathv[k];
                        n_glob++;
                } else
                        globfree(&g[n_glob]);
        }
        paths[n] = NULL;
        /* A fixed mmap threshold: a block of 128 KiB or more (a large plan's
         * text, its decoded files) is mapped on its own and unmapped when
         * freed. glibc's default raises the threshold after the first such
         * free, and the thread pool's arenas then kept those blocks: after
         * the daemon bench's plans (2 MiB ones among them) the agent held
         * 16.3 MiB of anonymous memory, 1.6 MiB with this setting. Fixing
         * the threshold also fixes the trim threshold at its default, 128
         * KiB. */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        /* One arena for every thread. Otherwise glibc gives the other
         * threads (the broker thread, each pool thread, the plan threads)
         * arenas of their own, and each kept 20 to 90 KiB of touched pages
         * once the plans were done. The threads seldom allocate at the same
         * time (one plan runs at a time, and the per-thread caches take
         * most small blocks without the lock), so sharing the lock cost
         * nothing measurable (docs/footprint.md). */
        mallopt(M_ARENA_MAX, 1);
        /* jansson's strings through big_malloc(): a long string of a plan
         * (other than a file's body, which stays in the message's text) is
         * copied into the parsed document in one block, whose pages are
         * then asked for in one call instead of faulting one by one. */
        json_set_alloc_funcs(big_malloc, free);
        start_thread_pool();
        open_log(cfg, true);
        r = daemon_run(cfg, paths);
        for (size_t i = 0; i < n_glob; i++)
                globfree(&g[i]);
        log_close();
        return r;
}

int main(int argc, char **argv)
{
        Args args = {0};
        Config *cfg;
        PlanLimits lim;
        int r;

        r = parse_args(&args, argc, argv);
        if (r >= 0)
                return r;

        cfg = load_config(&args);
        if (!cfg)
                return 2;

        if (args.print_config) {
                _cleanup_free_ char *text = NULL;
                r = config_format(cfg, &text);
                if (r == 0)
                        fputs(text, stdout);
                config_free(cfg);
                return r == 0 ? 0 : 1;
        }

        lim = (PlanLimits){.max_bytes = cfg->agent.max_plan_size,
                           .max_depth = cfg->agent.max_plan_depth};
        if (optind < argc && streq(argv[optind], "check")) {
                r = argc - optind < 2 ? 2 : cmd_check(argv + optind + 1, argc - optind - 1, &lim);
                if (r == 2)
                        fputs("muranoagent check: no plan files given\n", stderr);
        } else if (optind < argc && streq(argv[optind], "run")) {
                open_log(cfg, false);
                r = cmd_run(cfg, argv + optind + 1, argc - optind - 1);
        } else if (optind < argc && streq(argv[optind], "status")) {
                r = cmd_status(cfg, argv + optind + 1, argc - optind - 1);
        } else if (optind < argc && streq(argv[optind], "cancel")) {
                r = cmd_cancel(cfg, argv + optind + 1, argc - optind - 1);
        } else if (optind < argc) {
                fprintf(stderr, "muranoagent: unknown command '%s'\n", argv[optind]);
                usage(stderr);
                r = 2;
        } else
                r = run_daemon(&args, cfg);
        config_free(cfg);
        return r;
}
