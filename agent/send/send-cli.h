/* muranoagent-send's command line: options into a SendArgs, and the help
 * text. Exit statuses are listed here because scripts depend on them. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "send/send-broker.h"

enum {
        SEND_EXIT_OK = 0,      /* sent (--no-wait, --cancel), or the result's ErrorCode is 0 */
        SEND_EXIT_FAILED = 1,  /* the agent answered with an error result */
        SEND_EXIT_USAGE = 2,   /* bad command line, configuration, plan or key */
        SEND_EXIT_TIMEOUT = 3, /* no answer within --timeout */
        SEND_EXIT_BROKER = 4,  /* the broker could not be reached or refused */
};

#define SEND_DEFAULT_TIMEOUT 3600 /* [engine] agent_timeout */

typedef struct SendArgs {
        SendBrokerConfig broker;
        const char *password_file;
        const char *queue;
        const char *results_queue;
        bool no_wait;
        long timeout; /* seconds */
        const char *sign_key;
        bool raw;
        bool dry_run;
        const char *resources;
        const char *plan_file;
        const char *cancel;  /* --cancel: the plan ID to cancel, instead of a plan */
        const char *consume; /* debug mode: take one message off this queue */
        const char *save_dir;
        const char *follow;   /* print progress events sent with this routing key */
        const char *exchange; /* the exchange they are sent to; NULL = "" */
} SendArgs;

/* Parse argv. 0 = run with *args; 1 = --help or --version was printed, exit
 * 0; -EINVAL = bad usage, already reported on stderr. */
int send_cli_parse(int argc, char **argv, SendArgs *args);

void send_cli_usage(FILE *f);
