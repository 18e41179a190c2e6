/* transport: the agent's one long-lived AMQP 0-9-1 connection (rabbitmq-c),
 * consuming the plan queue and publishing results with publisher confirms,
 * reconnecting with back-off and failing over between brokers.
 *
 * Threads. rabbitmq-c is a blocking library: its publish writes until the
 * whole message is in the socket (forever, while a broker that raised a
 * memory alarm stops reading), and connect, TLS handshake and login are
 * blocking round trips. So the connection belongs to an I/O thread of its
 * own, and nothing rabbitmq-c does can stall the loop. The loop thread (the
 * caller of every function below) hands publishes, acks and rejects to the
 * I/O thread through a queue and an eventfd that wakes its poll(); the I/O
 * thread hands deliveries, confirms and connection news back through a
 * queue and a uv_async_t. Each hop is a wake-up, not a poll interval, so a
 * round trip costs two context switches. The I/O thread serves heartbeats
 * whatever the loop or the plans are doing. docs/transport.md has the
 * details.
 *
 * Every callback runs on the loop thread. Callbacks may call
 * transport_publish(), transport_ack(), transport_reject() and
 * transport_stop(), never transport_free(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"

typedef struct Transport Transport;

/* Where a connection attempt starts and how it is made. Strings and the
 * broker array are borrowed and copied by transport_new(). A zero
 * reconnect_initial_ms or connect_timeout_ms takes the default below; a
 * zero max_body_size means no limit. */
typedef struct TransportOptions {
        const ConfigHost *brokers; /* tried in order, round-robin; >= 1 */
        size_t n_brokers;
        const char *login;
        const char *password;
        const char *virtual_host; /* "" means "/" */
        const char *queue;        /* the queue to consume */
        bool declare_queue;       /* declare it as the engine does, instead of expecting it */
        unsigned heartbeat;       /* seconds asked for; 0 = none */
        bool ssl;
        ConfigSslVersion ssl_version;
        const char *ca_certs; /* "" = the system's CA store */
        bool insecure;
        bool verify_hostname;
        uint64_t reconnect_initial_ms; /* first back-off ceiling, and the one while nothing listens
                                        */
        uint64_t reconnect_max_ms;     /* back-off cap */
        uint64_t connect_timeout_ms;   /* TCP connect, TLS handshake, login, each RPC */
        uint64_t stop_confirm_ms;      /* transport_stop() waits this long for confirms */
        uint64_t max_body_size;        /* larger deliveries arrive with oversize set */
        /* Called on the I/O thread whenever it is awake anyway (a frame, a
         * command, its heartbeat, the end of a back-off), before it sleeps
         * again; NULL for none. It must be thread safe, quick and never
         * block. The daemon pings systemd's watchdog there. */
        void (*awake)(void *data);
        void *awake_data;
} TransportOptions;

#define TRANSPORT_RECONNECT_INITIAL_MS 1000
#define TRANSPORT_CONNECT_TIMEOUT_MS   10000
#define TRANSPORT_STOP_CONFIRM_MS      2000

/* Fill *ret from the configuration: [rabbitmq] for the broker and TLS,
 * [agent] declare_queue, heartbeat, verify_hostname, reconnect_max_delay,
 * and max_plan_size as the largest body kept. The strings stay c's. */
void transport_options_from_config(TransportOptions *ret, const Config *c);

/* What the signature header of a delivery held (engine observation #1: the
 * engine always sends the header, void when it does not sign). */
typedef enum TransportSignature {
        TRANSPORT_SIGNATURE_ABSENT, /* no headers, or no "signature" key */
        TRANSPORT_SIGNATURE_VOID,   /* the key with an AMQP void value */
        TRANSPORT_SIGNATURE_BYTES,  /* a long string or byte array, possibly not UTF-8 */
        TRANSPORT_SIGNATURE_OTHER,  /* a value of any other AMQP type */
} TransportSignature;

/* One message from the queue. Every pointer is owned by the transport and
 * valid during on_delivery only, except that the callee may take body (and
 * free() it) by setting d->body to NULL. */
typedef struct TransportDelivery {
        /* For transport_ack() and transport_reject(): unique for the life
         * of the Transport, never 0, and not the AMQP delivery tag (those
         * restart with every connection). */
        uint64_t tag;
        bool redelivered;
        /* The body with a NUL after it, so text parsers can take it as is.
         * NULL when oversize: the message was larger than max_body_size and
         * was read and dropped; body_len then says how large it was. */
        uint8_t *body;
        size_t body_len;
        bool oversize;
        const char *message_id; /* "" when absent */
        const char *reply_to;   /* NULL when absent */
        TransportSignature signature_kind;
        const uint8_t *signature; /* non-NULL for TRANSPORT_SIGNATURE_BYTES only */
        size_t signature_len;
        const char *exchange;    /* as the broker delivered it */
        const char *routing_key; /* likewise */
} TransportDelivery;

typedef struct TransportReady {
        const char *broker;  /* "host:port", "[v6]:port" */
        unsigned heartbeat;  /* negotiated seconds, 0 = none */
        unsigned connection; /* 1 for the first connection, then counting up */
} TransportReady;

typedef struct TransportLoss {
        const char *reason; /* a sentence for the log; never holds the password */
        int error;          /* the negative errno closest to the cause */
        bool was_ready;     /* an established connection ended (else an attempt failed) */
        uint64_t retry_ms;  /* the next attempt starts this much later */
} TransportLoss;

typedef enum TransportConfirm {
        TRANSPORT_CONFIRM_ACK,  /* the broker has the message (basic.ack) */
        TRANSPORT_CONFIRM_NACK, /* the broker refused it (basic.nack); publish again later */
        TRANSPORT_CONFIRM_LOST, /* the connection went before a confirm came; publish again */
} TransportConfirm;

typedef struct TransportCallbacks {
        /* Consuming: basic.consume succeeded. */
        void (*on_ready)(Transport *t, const TransportReady *ready, void *userdata);
        /* The connection ended or an attempt to get one failed; the transport
         * tries again by itself. Every publish of a lost connection has had
         * its on_confirm(TRANSPORT_CONFIRM_LOST) before this is called, and
         * the deliveries not settled are redelivered by the broker. */
        void (*on_lost)(Transport *t, const TransportLoss *loss, void *userdata);
        /* A message to settle with transport_ack() or transport_reject(). */
        void (*on_delivery)(Transport *t, TransportDelivery *d, void *userdata);
        /* Exactly once per sequence number transport_publish() handed out. */
        void (*on_confirm)(Transport *t, uint64_t seq, TransportConfirm status, void *userdata);
} TransportCallbacks;

typedef void (*transport_stopped_cb)(Transport *t, void *userdata);

/* A transport for loop. opts is copied; callbacks is copied and every member
 * must be set. Returns 0, -EINVAL for options that cannot work (no broker, a
 * port out of range, no queue), or -ENOMEM. */
int transport_new(uv_loop_t *loop, const TransportOptions *opts,
                  const TransportCallbacks *callbacks, void *userdata, Transport **ret);

/* Start the I/O thread; the first attempt to connect begins at once.
 * Returns 0, -EALREADY when started before, or a negative errno (then only
 * transport_free() may follow). */
int transport_start(Transport *t);

/* Publish body on exchange with routing_key through the current connection,
 * with the reference's properties (content_type "text/plain",
 * content_encoding "utf-8", delivery_mode 2, priority 0, message_id, empty
 * headers; mandatory false). body is copied. *ret_seq is the number
 * on_confirm reports this message under. Returns 0; -ENOTCONN when not
 * ready (between on_lost and on_ready; publish after the next on_ready);
 * -EINVAL for a name or message_id longer than 255 bytes; -ESHUTDOWN after
 * transport_stop(); or -ENOMEM. */
int transport_publish(Transport *t, const char *exchange, const char *routing_key,
                      const char *message_id, const void *body, size_t len, uint64_t *ret_seq);

/* Acknowledge a delivery: the broker forgets the message. Returns 0 when
 * the ack is on its way; -ENOTCONN when the delivery's connection has
 * ended (the broker redelivers the message); -ENOENT for a tag that is
 * unknown or already settled; -ESHUTDOWN after transport_stop(); or -ENOMEM.
 * Every -errno leaves nothing sent. */
int transport_ack(Transport *t, uint64_t tag);

/* Reject a delivery (basic.reject); with requeue false the broker drops it
 * (or dead-letters it), with true it delivers it again. Returns as
 * transport_ack(). */
int transport_reject(Transport *t, uint64_t tag, bool requeue);

/* Messages published on this connection whose confirm has not come yet,
 * for a publisher that sheds what it can lose when the broker falls
 * behind. */
size_t transport_outstanding(const Transport *t);

/* Connected and consuming: on_ready came and no on_lost since, and not
 * stopping. */
bool transport_is_ready(const Transport *t);

/* Stop: acks, rejects and publishes already handed over go out; the
 * consumer is cancelled; confirms of published messages are awaited for up
 * to stop_confirm_ms; then channel and connection close cleanly. Messages
 * delivered but not settled go back to the queue. After this call no
 * on_ready, on_lost or on_delivery is made; on_confirm still is, and every
 * outstanding sequence number is reported before stopped runs. stopped
 * (may be NULL) is called once the I/O thread has ended and every handle
 * is closed; the transport may be freed from it or later, and the loop
 * then has nothing of the transport's left. A thread stuck writing to a
 * broker that stopped reading is unstuck by shutting the socket down after
 * connect_timeout_ms + stop_confirm_ms. Returns 0, -EALREADY when stopping
 * already, or -EINVAL when never started. */
int transport_stop(Transport *t, transport_stopped_cb stopped);

/* Free a transport that was never started, whose start failed, or that has
 * stopped (from the stopped callback or later). After a failed start the
 * memory goes once the loop has closed the handles. Accepts NULL; returns
 * NULL. */
Transport *transport_free(Transport *t);
