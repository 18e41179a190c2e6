/* muranoagent: wiring only. Parses the command line, loads the
 * configuration, and hands over to a subcommand or the daemon. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "cmd-check.h"
#include "plan/plan.h"
#include "util/macro.h"

static void usage(FILE *f)
{
        fputs("Usage: muranoagent [OPTIONS]                 run the agent\n"
              "       muranoagent [OPTIONS] check PLAN...   validate plan files (JSON or YAML)\n"
              "\n"
              "Options:\n"
              "  --config-file FILE   read FILE (repeatable; later files override earlier ones)\n"
              "  --config-dir DIR     read DIR/*.conf in sorted order (repeatable)\n"
              "  -d, --debug          log debug detail\n"
              "  -h, --help           show this help and exit\n"
              "  --version            show the version and exit\n"
              "\n"
              "check prints one line per plan on stdout: \"ok\", or the error result\n"
              "document the agent would publish. Exit status: 0 when every plan is\n"
              "valid, 1 when one is not, 2 for a bad command line or configuration.\n"
              "Documentation: docs/ in the source tree, or muranoagent(8).\n",
              f);
}

int main(int argc, char **argv)
{
        enum { OPT_CONFIG_FILE = 256, OPT_CONFIG_DIR, OPT_VERSION };
        static const struct option options[] = {
                {"config-file", required_argument, NULL, OPT_CONFIG_FILE},
                {"config-dir", required_argument, NULL, OPT_CONFIG_DIR},
                {"debug", no_argument, NULL, 'd'},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, OPT_VERSION},
                {NULL, 0, NULL, 0},
        };
        PlanLimits lim = PLAN_LIMITS_DEFAULT;
        int c;

        /* "+" stops at the subcommand, so its own arguments stay its own. */
        while ((c = getopt_long(argc, argv, "+dh", options, NULL)) != -1) {
                switch (c) {
                case OPT_CONFIG_FILE:
                case OPT_CONFIG_DIR:
                case 'd':
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

        if (optind < argc && streq(argv[optind], "check")) {
                if (argc - optind < 2) {
                        fputs("muranoagent check: no plan files given\n", stderr);
                        return 2;
                }
                return cmd_check(argv + optind + 1, argc - optind - 1, &lim);
        }
        if (optind < argc) {
                fprintf(stderr, "muranoagent: unknown command '%s'\n", argv[optind]);
                usage(stderr);
                return 2;
        }
        fputs("muranoagent: the daemon mode arrives with the transport; use 'check'\n", stderr);
        return 1;
}
