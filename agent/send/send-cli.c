/* Command-line parsing for muranoagent-send (see send-cli.h). */
#include "send/send-cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "plan/plan-cancel.h"
#include "util/macro.h"

void send_cli_usage(FILE *f)
{
        fputs("Usage: muranoagent-send [OPTIONS] --queue QUEUE (--results-queue Q | --no-wait) "
              "PLAN\n"
              "       muranoagent-send [OPTIONS] --queue QUEUE [--results-queue Q] --cancel "
              "PLAN_ID\n"
              "       muranoagent-send [OPTIONS] --consume QUEUE [--save DIR]\n"
              "\n"
              "Builds an execution plan from PLAN (YAML or JSON) as the Murano engine does,\n"
              "publishes it to the agent's queue, and waits for the agent's result.\n"
              "\n"
              "Broker:\n"
              "  --host HOST             broker host (localhost)\n"
              "  --port PORT             broker port (5672)\n"
              "  --user USER             user name (guest)\n"
              "  --password-file FILE    read the password from the first line of FILE (guest)\n"
              "  --vhost VHOST           virtual host (/)\n"
              "  --ssl                   use TLS; the broker's certificate is verified\n"
              "  --ca FILE               CA certificates for --ssl (the system's by default)\n"
              "  --insecure              with --ssl, do not verify the certificate\n"
              "  --verify-hostname       with --ssl, also check the certificate's host name\n"
              "\n"
              "Plan:\n"
              "  --queue QUEUE           the agent's input queue (declared as the engine does)\n"
              "  --results-queue QUEUE   wait for the result on QUEUE (declared, consumed)\n"
              "  --no-wait               publish and exit; prints the plan's message id\n"
              "  --timeout SECONDS       how long to wait for the result (3600)\n"
              "  --sign-key FILE         sign with this PEM RSA private key (engine signing_key)\n"
              "  --raw                   send PLAN as it is (the engine's callRaw/sendRaw)\n"
              "  --resources DIR         the package's Resources directory, holding scripts/\n"
              "                          (default: the directory of PLAN)\n"
              "  --dry-run               print the plan as it would be published, send nothing\n"
              "  --follow KEY            while waiting, print the agent's progress events, sent\n"
              "                          with routing key KEY (its [agent] progress_routing_key),\n"
              "                          on stderr\n"
              "  --exchange EXCHANGE     with --follow: the agent's result_exchange (\"\")\n"
              "\n"
              "Cancel:\n"
              "  --cancel PLAN_ID        publish a cancel message for that plan instead of a\n"
              "                          plan (signed with --sign-key); prints its message id,\n"
              "                          or with --results-queue waits for the plan's result\n"
              "\n"
              "Debugging:\n"
              "  --consume QUEUE         take one message off an existing QUEUE, ack it, print\n"
              "                          its body; --timeout applies\n"
              "  --save DIR              with --consume, also write DIR/body, DIR/properties\n"
              "                          and DIR/signature (the raw header, when it has bytes)\n"
              "\n"
              "The result body is printed on stdout exactly as received.\n"
              "Exit status: 0 sent (--no-wait) or result ErrorCode 0; 1 error result;\n"
              "2 bad usage, configuration, plan or key; 3 no result within the timeout;\n"
              "4 broker unreachable or refusing.\n",
              f);
}

static int parse_long(const char *s, long min, long max, long *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

enum {
        OPT_HOST = 0x100,
        OPT_PORT,
        OPT_USER,
        OPT_PASSWORD_FILE,
        OPT_VHOST,
        OPT_SSL,
        OPT_CA,
        OPT_INSECURE,
        OPT_VERIFY_HOSTNAME,
        OPT_QUEUE,
        OPT_RESULTS_QUEUE,
        OPT_NO_WAIT,
        OPT_TIMEOUT,
        OPT_SIGN_KEY,
        OPT_RAW,
        OPT_RESOURCES,
        OPT_DRY_RUN,
        OPT_CONSUME,
        OPT_SAVE,
        OPT_CANCEL,
        OPT_FOLLOW,
        OPT_EXCHANGE,
        OPT_VERSION,
};

static const struct option options[] = {
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"user", required_argument, NULL, OPT_USER},
        {"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
        {"vhost", required_argument, NULL, OPT_VHOST},
        {"ssl", no_argument, NULL, OPT_SSL},
        {"ca", required_argument, NULL, OPT_CA},
        {"insecure", no_argument, NULL, OPT_INSECURE},
        {"verify-hostname", no_argument, NULL, OPT_VERIFY_HOSTNAME},
        {"queue", required_argument, NULL, OPT_QUEUE},
        {"results-queue", required_argument, NULL, OPT_RESULTS_QUEUE},
        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"sign-key", required_argument, NULL, OPT_SIGN_KEY},
        {"raw", no_argument, NULL, OPT_RAW},
        {"resources", required_argument, NULL, OPT_RESOURCES},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"consume", required_argument, NULL, OPT_CONSUME},
        {"save", required_argument, NULL, OPT_SAVE},
        {"cancel", required_argument, NULL, OPT_CANCEL},
        {"follow", required_argument, NULL, OPT_FOLLOW},
        {"exchange", required_argument, NULL, OPT_EXCHANGE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {},
};

static int bad(const char *msg, const char *arg)
{
        if (arg)
                fprintf(stderr, "muranoagent-send: %s: %s\n", msg, arg);
        else
                fprintf(stderr, "muranoagent-send: %s\n", msg);
        fprintf(stderr, "Try 'muranoagent-send --help'.\n");
        return -EINVAL;
}

/* Rules between options, once they are all known. */
static int check(const SendArgs *a)
{
        if ((a->broker.ca_file || a->broker.insecure || a->broker.verify_hostname) &&
            !a->broker.ssl)
                return bad("--ca, --insecure and --verify-hostname need --ssl", NULL);
        if (a->consume) {
                if (a->plan_file || a->queue || a->cancel)
                        return bad("--consume takes no plan, no --queue and no --cancel", NULL);
                return 0;
        }
        if (a->save_dir)
                return bad("--save is for --consume", NULL);
        if (a->cancel) {
                if (a->plan_file || a->raw || a->resources || a->follow || a->exchange)
                        return bad("--cancel takes no plan, --raw, --resources, --follow or "
                                   "--exchange",
                                   NULL);
                if (!*a->cancel || strlen(a->cancel) > PLAN_CANCEL_ID_MAX)
                        return bad("--cancel needs a plan ID of 1 to 255 bytes", a->cancel);
                if (!a->queue && !a->dry_run)
                        return bad("--queue is required", NULL);
                if (a->results_queue && a->no_wait)
                        return bad("give at most one of --results-queue and --no-wait", NULL);
                return 0;
        }
        if (!a->plan_file)
                return bad("no plan file given", NULL);
        if (a->dry_run)
                return 0;
        if (!a->queue)
                return bad("--queue is required", NULL);
        if (!a->results_queue == !a->no_wait)
                return bad("give exactly one of --results-queue and --no-wait", NULL);
        if (a->follow && a->no_wait)
                return bad("--follow waits for the result: it needs --results-queue", NULL);
        if (a->exchange && !a->follow)
                return bad("--exchange is for --follow", NULL);
        return 0;
}

int send_cli_parse(int argc, char **argv, SendArgs *a)
{
        long v;
        int c;

        *a = (SendArgs){.timeout = SEND_DEFAULT_TIMEOUT, .broker.heartbeat = 60};
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
                switch (c) {
                case OPT_HOST:
                        a->broker.host = optarg;
                        break;
                case OPT_PORT:
                        if (parse_long(optarg, 1, 65535, &v) < 0)
                                return bad("--port needs a number from 1 to 65535", optarg);
                        a->broker.port = (int)v;
                        break;
                case OPT_USER:
                        a->broker.user = optarg;
                        break;
                case OPT_PASSWORD_FILE:
                        a->password_file = optarg;
                        break;
                case OPT_VHOST:
                        a->broker.vhost = optarg;
                        break;
                case OPT_SSL:
                        a->broker.ssl = true;
                        break;
                case OPT_CA:
                        a->broker.ca_file = optarg;
                        break;
                case OPT_INSECURE:
                        a->broker.insecure = true;
                        break;
                case OPT_VERIFY_HOSTNAME:
                        a->broker.verify_hostname = true;
                        break;
                case OPT_QUEUE:
                        a->queue = optarg;
                        break;
                case OPT_RESULTS_QUEUE:
                        a->results_queue = optarg;
                        break;
                case OPT_NO_WAIT:
                        a->no_wait = true;
                        break;
                case OPT_TIMEOUT:
                        if (parse_long(optarg, 1, INT_MAX / 1000, &v) < 0)
                                return bad("--timeout needs a positive number of seconds", optarg);
                        a->timeout = v;
                        break;
                case OPT_SIGN_KEY:
                        a->sign_key = optarg;
                        break;
                case OPT_RAW:
                        a->raw = true;
                        break;
                case OPT_RESOURCES:
                        a->resources = optarg;
                        break;
                case OPT_DRY_RUN:
                        a->dry_run = true;
                        break;
                case OPT_CONSUME:
                        a->consume = optarg;
                        break;
                case OPT_SAVE:
                        a->save_dir = optarg;
                        break;
                case OPT_CANCEL:
                        a->cancel = optarg;
                        break;
                case OPT_FOLLOW:
                        if (!*optarg)
                                return bad("--follow needs a routing key", NULL);
                        a->follow = optarg;
                        break;
                case OPT_EXCHANGE:
                        a->exchange = optarg;
                        break;
                case 'h':
                        send_cli_usage(stdout);
                        return 1;
                case OPT_VERSION:
                        printf("muranoagent-send %s\n", PACKAGE_VERSION);
                        return 1;
                case ':':
                        return bad("option needs a value", argv[optind - 1]);
                default:
                        return bad("unknown option", argv[optind - 1]);
                }
        }
        if (optind < argc)
                a->plan_file = argv[optind++];
        if (optind < argc)
                return bad("more than one plan file", argv[optind]);
        return check(a);
}
