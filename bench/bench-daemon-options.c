/* bench-daemon's command line (see usage() below and bench-daemon.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-daemon.h"

static void usage(FILE *f)
{
        fputs("Usage: bench-daemon --port PORT [OPTIONS]\n"
              "  --port PORT          the broker on 127.0.0.1 (guest/guest)\n"
              "  --runs N             trivial plans per consumer (300)\n"
              "  --big N              2 MiB plans per consumer (20)\n"
              "  --burst N            plans per burst (500)\n"
              "  --bursts N           bursts per consumer (3)\n"
              "  --starts N           starts per consumer (5)\n"
              "  --gap MS             idle time before each round trip (25)\n"
              "  --dir DIR            work directory and the disk agent's storage "
              "(/var/tmp)\n"
              "  --shm-dir DIR        the shm agent's storage (/dev/shm)\n"
              "  --only LETTERS       run only these: b the durable floor, k the contained "
              "floor,\n"
              "                       p the compatible floor, d agent (disk), s agent (shm),\n"
              "                       e agent B (disk), c agent B (shm) (default bkpds)\n"
              "  --agent PATH         muranoagent (the build tree's)\n"
              "  --consumer PATH      bench-daemon-consumer (beside this program)\n"
              "  --contained PATH     bench-daemon-contained (beside this program)\n"
              "  --compatible PATH    bench-daemon-compatible (beside this program)\n"
              "  --config-extra FILE  append FILE to the agents' configuration\n"
              "  --compare PATH       agent B is this muranoagent (default: the same)\n"
              "  --compare-config FILE  append FILE to agent B's configuration\n"
              "                       (either option adds agent B; --only default bkpdsec)\n"
              "  --progress           agent B is agent A with progress events on and\n"
              "                       nobody consuming them ([agent] progress_routing_key)\n"
              "  --wrap COMMAND       run agent A (d, s) under COMMAND (split at spaces),\n"
              "                       e.g. \"strace -f -c -o /tmp/s\"; start-up and RSS\n"
              "                       are then the wrapper's\n"
              "  --debug              the agents log at debug level\n"
              "  --keep               keep the work directory\n",
              f);
}

static char *exe_sibling(const char *relative)
{
        char exe[4096], *slash, *path = NULL;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (n < 0)
                return NULL;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash)
                *slash = '\0';
        return asprintf(&path, "%s/%s", exe, relative) < 0 ? NULL : path;
}

/* The sandbox helper that the agent at agent uses when $MURANOAGENT_SANDBOX
 * is not set: beside it in the build tree, or beside it installed (else
 * NULL, and the contained floor looks for it as the agent does). */
static char *agent_helper(const char *agent)
{
        static const char *const places[] = {"sandbox/muranoagent-sandbox", "muranoagent-sandbox"};
        const char *slash = strrchr(agent, '/');
        int dir_len = slash ? (int)(slash - agent) : 1;

        for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
                char *path = NULL, *abs;

                if (asprintf(&path, "%.*s/%s", dir_len, slash ? agent : ".", places[i]) < 0)
                        return NULL;
                /* Absolute: the contained floor runs in a directory of its own. */
                abs = access(path, X_OK) == 0 ? realpath(path, NULL) : NULL;
                free(path);
                if (abs)
                        return abs;
        }
        return NULL;
}

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t len = 0;
        long size;

        if (!f)
                return NULL;
        if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (text = malloc((size_t)size + 2))) {
                len = fread(text, 1, (size_t)size, f);
                /* The agent's configuration goes on after it. */
                if (len > 0 && text[len - 1] != '\n')
                        text[len++] = '\n';
                text[len] = '\0';
        }
        fclose(f);
        return text;
}

/* Splits s at spaces, in place, into a NULL-terminated vector. */
static char **split_words(char *s)
{
        size_t n = 0;
        char **v = calloc(strlen(s) / 2 + 2, sizeof(*v));

        if (!v)
                return NULL;
        for (char *w = strtok(s, " "); w; w = strtok(NULL, " "))
                v[n++] = w;
        return v;
}

int options_parse(Options *o, int argc, char **argv)
{
        static const struct option longopts[] = {
                {"port", required_argument, NULL, 'p'},
                {"runs", required_argument, NULL, 'n'},
                {"big", required_argument, NULL, 'g'},
                {"burst", required_argument, NULL, 'u'},
                {"bursts", required_argument, NULL, 'U'},
                {"starts", required_argument, NULL, 's'},
                {"gap", required_argument, NULL, 'G'},
                {"dir", required_argument, NULL, 'd'},
                {"shm-dir", required_argument, NULL, 'm'},
                {"only", required_argument, NULL, 'o'},
                {"agent", required_argument, NULL, 'a'},
                {"consumer", required_argument, NULL, 'c'},
                {"contained", required_argument, NULL, 'K'},
                {"compatible", required_argument, NULL, 'M'},
                {"config-extra", required_argument, NULL, 'x'},
                {"compare", required_argument, NULL, 'C'},
                {"compare-config", required_argument, NULL, 'X'},
                {"progress", no_argument, NULL, 'P'},
                {"wrap", required_argument, NULL, 'w'},
                {"debug", no_argument, NULL, 'D'},
                {"keep", no_argument, NULL, 'k'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        bool only_set = false;
        int c;

        *o = (Options){.runs = 300,
                       .big = 20,
                       .burst = 500,
                       .bursts = 3,
                       .starts = 5,
                       .gap_ms = 25,
                       .dir = "/var/tmp",
                       .shm_dir = "/dev/shm",
                       .only = "bkpds"};
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        o->port = atoi(optarg);
                        break;
                case 'n':
                        o->runs = atoi(optarg);
                        break;
                case 'g':
                        o->big = atoi(optarg);
                        break;
                case 'u':
                        o->burst = atoi(optarg);
                        break;
                case 'U':
                        o->bursts = atoi(optarg);
                        break;
                case 's':
                        o->starts = atoi(optarg);
                        break;
                case 'G':
                        o->gap_ms = atoi(optarg);
                        break;
                case 'd':
                        o->dir = optarg;
                        break;
                case 'm':
                        o->shm_dir = optarg;
                        break;
                case 'o':
                        o->only = optarg;
                        only_set = true;
                        break;
                case 'a':
                        free(o->agent);
                        o->agent = strdup(optarg);
                        break;
                case 'c':
                        free(o->consumer);
                        o->consumer = strdup(optarg);
                        break;
                case 'K':
                        free(o->contained);
                        o->contained = strdup(optarg);
                        break;
                case 'M':
                        free(o->compatible);
                        o->compatible = strdup(optarg);
                        break;
                case 'x':
                        o->config_extra = read_text(optarg);
                        if (!o->config_extra) {
                                fprintf(stderr, "bench-daemon: cannot read %s\n", optarg);
                                return 2;
                        }
                        break;
                case 'C':
                        free(o->compare);
                        o->compare = strdup(optarg);
                        break;
                case 'X':
                        free(o->compare_extra);
                        o->compare_extra = read_text(optarg);
                        if (!o->compare_extra) {
                                fprintf(stderr, "bench-daemon: cannot read %s\n", optarg);
                                return 2;
                        }
                        break;
                case 'P':
                        /* No queue has this name, and the exchange is the
                         * default one: the broker drops every event. */
                        free(o->compare_extra);
                        o->compare_extra =
                                strdup("\n[agent]\nprogress_routing_key = bench-progress-nobody\n");
                        o->progress = true;
                        break;
                case 'w':
                        o->wrap = split_words(optarg);
                        break;
                case 'D':
                        o->debug = true;
                        break;
                case 'k':
                        o->keep = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (!only_set && (o->compare || o->compare_extra))
                o->only = "bkpdsec";
        if (optind != argc || o->port <= 0 || o->runs < 1 || o->big < 0 || o->burst < 1 ||
            o->bursts < 0 || o->starts < 1 || o->gap_ms < 0 || !*o->only) {
                usage(stderr);
                return 2;
        }
        if (!o->agent)
                o->agent = exe_sibling("../agent/muranoagent");
        if (!o->consumer)
                o->consumer = exe_sibling("bench-daemon-consumer");
        if (!o->contained)
                o->contained = exe_sibling("bench-daemon-contained");
        if (!o->compatible)
                o->compatible = exe_sibling("bench-daemon-compatible");
        if (!o->agent || !o->consumer || !o->contained || !o->compatible ||
            access(o->agent, X_OK) < 0 || access(o->consumer, X_OK) < 0 ||
            access(o->contained, X_OK) < 0 || access(o->compatible, X_OK) < 0) {
                fprintf(stderr,
                        "bench-daemon: cannot find muranoagent (%s), "
                        "bench-daemon-consumer (%s), bench-daemon-contained (%s) or "
                        "bench-daemon-compatible (%s)\n",
                        o->agent ? o->agent : "?", o->consumer ? o->consumer : "?",
                        o->contained ? o->contained : "?", o->compatible ? o->compatible : "?");
                return 2;
        }
        o->sandbox_helper = agent_helper(o->agent);
        return -1;
}
