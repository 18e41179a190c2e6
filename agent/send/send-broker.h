/* The engine's side of RabbitMQ, with blocking rabbitmq-c: one connection,
 * queue declarations with the engine's arguments, publishing a plan with the
 * engine's properties, and taking messages off a queue the way the engine's
 * result listener does (prefetch 1, every message acked on receipt).
 *
 * Publishing uses confirm mode, so that a plan the broker did not take is
 * reported instead of lost. The engine publishes without confirms; confirms
 * change nothing that a consumer sees. Publish before consuming: a delivery
 * that arrived while waiting for a confirm would be dropped.
 *
 * Return convention: 0 = done; SEND_BROKER_TIMEOUT (positive) = nothing
 * arrived before the deadline; negative errno = the broker or the connection
 * failed, with *ret_error (when not NULL) saying how. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define SEND_BROKER_TIMEOUT 1

typedef struct SendBrokerConfig {
        const char *host;     /* "localhost" when NULL */
        int port;             /* 5672 when 0 */
        const char *user;     /* "guest" when NULL */
        const char *password; /* "guest" when NULL */
        const char *vhost;    /* "/" when NULL */
        bool ssl;
        const char *ca_file;  /* certificates to verify the broker with (ssl) */
        bool insecure;        /* ssl without any certificate verification */
        bool verify_hostname; /* also check the certificate names the host */
        int heartbeat;        /* seconds; 0 = none */
} SendBrokerConfig;

typedef struct SendBroker SendBroker;

/* A message taken off a queue. The signature fields describe the headers'
 * "signature" entry: kind is 0 when absent, else the AMQP field type
 * ('V' for void, 'S' for a long string, ...), with its raw bytes. */
typedef struct SendMessage {
        char *body; /* NUL-terminated copy; body_len bytes */
        size_t body_len;
        char *message_id; /* NULL when the property is absent */
        char *properties; /* one "name: value" line per property set */
        bool progress;    /* it came from the --follow queue (send_broker_follow) */
        char signature_kind;
        unsigned char *signature;
        size_t signature_len;
} SendMessage;

void send_message_clear(SendMessage *m);

/* Connect and log in (SASL PLAIN), with an RPC timeout of 30 s. */
int send_broker_connect(const SendBrokerConfig *cfg, SendBroker **ret, char **ret_error);

/* Close the connection politely and free everything; accepts NULL. */
void send_broker_free(SendBroker *b);
DEFINE_CLEANUP(SendBroker, send_broker_free)

/* queue.declare as the engine does it (spec 2.2): durable, not exclusive,
 * not auto-delete, arguments {x-ha-policy: "all", x-expires: 86400000}. */
int send_broker_declare(SendBroker *b, const char *queue, char **ret_error);

/* Publish body to the default exchange with routing key `queue`, with the
 * engine's properties (spec 2.6): text/plain, utf-8, delivery_mode 2,
 * priority 0, message_id, and a "signature" header holding the raw
 * signature, or a void value when sig is NULL (engine observation 1).
 * Returns once the broker has confirmed the message. */
int send_broker_publish(SendBroker *b, const char *queue, const void *body, size_t len,
                        const char *message_id, const void *sig, size_t sig_len, char **ret_error);

/* basic.qos(prefetch 1) and basic.consume(no_ack=false) on an existing
 * queue. Call it after the last publish. */
int send_broker_consume(SendBroker *b, const char *queue, char **ret_error);

/* Wait until deadline_ms (CLOCK_MONOTONIC milliseconds) for the next
 * delivery of the consumer, ack it, and hand it out in *ret. */
int send_broker_next(SendBroker *b, int64_t deadline_ms, SendMessage *ret, char **ret_error);

/* For --follow: a queue that gets what is published to exchange with
 * routing key key: on the default exchange ("") the queue named key, else
 * a queue of the broker's naming bound to exchange with key; either is
 * exclusive and goes with the connection. Call it before publishing, so
 * that no event of the plan is missed, and send_broker_follow_consume()
 * after send_broker_consume(). Its messages come from send_broker_next()
 * with progress set, and are not acked (no_ack). */
int send_broker_follow(SendBroker *b, const char *exchange, const char *key, char **ret_error);
int send_broker_follow_consume(SendBroker *b, char **ret_error);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t send_broker_now_ms(void);
