/* The transport's inside: the pieces that need no broker (frame assembly,
 * properties, headers, error translation, back-off, the id maps), which
 * tests/test-transport.c tests one by one, and the state the loop thread and
 * the I/O thread share. Nothing outside agent/transport/ includes this. */
#pragma once

#include <amqp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "transport/transport.h"

/* The one channel the agent opens: consumer and publisher share it. */
#define TRANSPORT_CHANNEL 1
/* rabbitmq-c's default; bodies arrive in frames of up to this size. */
#define TRANSPORT_FRAME_MAX 131072

/* ---- id maps (transport-map.c) ----
 * A sorted array of entries whose keys only grow as they are added: the
 * loop's outstanding publishes (key = seq), its unsettled deliveries (key =
 * tag) and the I/O thread's unconfirmed publishes (key = broker delivery
 * tag). Lookups are binary searches; the arrays hold a handful of entries
 * (prefetch 1, results waiting for a confirm). */
typedef struct TransportIdEntry {
        uint64_t key;
        uint64_t value;
        unsigned epoch;
} TransportIdEntry;

typedef struct TransportIdMap {
        TransportIdEntry *items;
        size_t n;
        size_t cap;
} TransportIdMap;

/* key must be larger than every key in the map: -EINVAL otherwise. Returns 0
 * or -ENOMEM. */
int transport_idmap_append(TransportIdMap *m, uint64_t key, uint64_t value, unsigned epoch);
/* Remove the entry with key into *ret (may be NULL). Returns 0 or -ENOENT. */
int transport_idmap_remove(TransportIdMap *m, uint64_t key, TransportIdEntry *ret);
/* Remove every entry with a key <= key, oldest first, into the array *ret
 * (malloc'ed, NULL when none) and its length *ret_n. Returns 0 or -ENOMEM
 * (then nothing is removed). */
int transport_idmap_remove_upto(TransportIdMap *m, uint64_t key, TransportIdEntry **ret,
                                size_t *ret_n);
/* Hand the whole content to the caller and leave the map empty. */
void transport_idmap_take(TransportIdMap *m, TransportIdMap *ret);
void transport_idmap_done(TransportIdMap *m);

/* ---- back-off (transport-backoff.c) ----
 * Capped exponential back-off with "equal jitter": the n-th wait after a
 * reset has the ceiling d = min(max, initial * 2^n) and is uniformly drawn
 * from [d/2, d]. Half of each wait is guaranteed, so a broker that is down
 * is not hammered; the other half is random, so agents that lost the same
 * broker at once do not come back in step. An attempt that found nothing
 * listening waits the probe instead: the first step's wait, drawn from
 * [initial/2, initial] however long the outage, and the exponential
 * schedule does not advance. */
typedef struct TransportBackoff {
        uint64_t initial_ms;
        uint64_t max_ms;
        unsigned failures;
} TransportBackoff;

void transport_backoff_init(TransportBackoff *b, uint64_t initial_ms, uint64_t max_ms);
void transport_backoff_reset(TransportBackoff *b);
/* The next wait in ms; rnd is a uniformly random 32-bit number (0 gives the
 * floor d/2, UINT32_MAX the ceiling d). */
uint64_t transport_backoff_next(TransportBackoff *b, uint32_t rnd);
/* The wait after an attempt that found nothing listening, drawn as above
 * under the first step's ceiling; the schedule of transport_backoff_next()
 * stays where it was. */
uint64_t transport_backoff_probe(const TransportBackoff *b, uint32_t rnd);
/* The ceiling the next call would use. */
uint64_t transport_backoff_ceiling(const TransportBackoff *b);

/* A small generator for the jitter (xorshift64*), seeded from getrandom(). */
uint64_t transport_random_seed(void);
uint32_t transport_random_next(uint64_t *state);

/* ---- AMQP details (transport-amqp.c) ---- */

/* The properties of a published result, exactly as the reference's kombu
 * produced them (spec §2.4). message_id is borrowed by *ret. */
void transport_props_publish(amqp_basic_properties_t *ret, const char *message_id);

/* The "signature" entry of a headers table (NULL = no headers). For
 * TRANSPORT_SIGNATURE_BYTES *ret_bytes points into the table. */
TransportSignature transport_headers_signature(const amqp_table_t *headers,
                                               amqp_bytes_t *ret_bytes);

/* The host rabbitmq-c is given: "localhost" becomes "127.0.0.1" as kombu
 * rewrites it; everything else as written. */
const char *transport_connect_host(const char *host);

/* "host:port", or "[v6]:port" for a host containing ':'. NULL on ENOMEM. */
char *transport_broker_name(const char *host, unsigned port);

/* rabbitmq-c's AMQP_STATUS_* as a negative errno. */
int transport_status_errno(int status);

/* A connection.close or channel.close reply code as a negative errno. */
int transport_reply_code_errno(uint16_t code);

/* Copy AMQP text (a reply text, a consumer tag) into dst as a C string for
 * log lines: cut to size - 1 bytes, control characters replaced by '?'. */
void transport_text_copy(char *dst, size_t size, amqp_bytes_t b);

/* What went wrong in an RPC, as a sentence fragment: "NOT_FOUND - no queue
 * 'q' in vhost '/'" for a broker's close, rabbitmq-c's text otherwise.
 * *ret_error gets the negative errno. NULL on ENOMEM. */
char *transport_reply_describe(amqp_rpc_reply_t r, int *ret_error);

/* ---- frame assembly (transport-frame.c) ---- */

/* A whole message, every field owned (malloc'ed). */
typedef struct TransportMessage {
        uint64_t amqp_tag;
        bool redelivered;
        uint8_t *body; /* NUL-terminated; NULL when oversize */
        size_t body_len;
        bool oversize;
        char *exchange;
        char *routing_key;
        char *message_id; /* "" when absent */
        char *reply_to;   /* NULL when absent */
        TransportSignature signature_kind;
        uint8_t *signature;
        size_t signature_len;
} TransportMessage;

void transport_message_done(TransportMessage *m);

typedef enum TransportFrameKind {
        TRANSPORT_FRAME_NONE,             /* absorbed (heartbeat, part of a message, a reply) */
        TRANSPORT_FRAME_DELIVERY,         /* a whole message: transport_assembler_take() */
        TRANSPORT_FRAME_CONFIRM,          /* basic.ack / basic.nack for our publishes */
        TRANSPORT_FRAME_CANCELLED,        /* basic.cancel: the broker ended the consumer */
        TRANSPORT_FRAME_CANCEL_OK,        /* basic.cancel-ok: our cancel is done */
        TRANSPORT_FRAME_CHANNEL_CLOSE,    /* channel.close from the broker */
        TRANSPORT_FRAME_CONNECTION_CLOSE, /* connection.close from the broker */
        TRANSPORT_FRAME_BLOCKED,          /* connection.blocked: publishes will wait */
        TRANSPORT_FRAME_UNBLOCKED,
} TransportFrameKind;

typedef struct TransportFrameInfo {
        TransportFrameKind kind;
        uint64_t tag;        /* CONFIRM: the broker's delivery tag */
        bool multiple;       /* CONFIRM */
        bool ack;            /* CONFIRM: basic.ack (else basic.nack) */
        uint16_t reply_code; /* CHANNEL_CLOSE, CONNECTION_CLOSE */
        /* CHANNEL_CLOSE and CONNECTION_CLOSE: the broker's reply text;
         * CANCELLED: the consumer tag; on a protocol error: what was wrong. */
        char text[256];
} TransportFrameInfo;

typedef enum TransportAssemblerState {
        TRANSPORT_ASSEMBLER_IDLE,   /* between messages */
        TRANSPORT_ASSEMBLER_HEADER, /* basic.deliver came; the content header is due */
        TRANSPORT_ASSEMBLER_BODY,   /* body frames are due */
        TRANSPORT_ASSEMBLER_DONE,   /* a whole message waits to be taken */
} TransportAssemblerState;

/* Turns the frames of the channel into messages and events: basic.deliver,
 * then the content header, then body frames until the announced size. A
 * message's frames may arrive over many polls, so nothing here waits. */
typedef struct TransportAssembler {
        uint16_t channel;
        uint64_t max_body;
        TransportAssemblerState state;
        TransportMessage msg;
        uint64_t body_size; /* announced by the content header */
        uint64_t body_got;
} TransportAssembler;

void transport_assembler_init(TransportAssembler *a, uint16_t channel, uint64_t max_body);
/* Forget a message in progress (a new connection starts clean). */
void transport_assembler_reset(TransportAssembler *a);
/* Take one frame. Everything kept is copied out of it, so rabbitmq-c may
 * recycle its memory as soon as this returns. Writes *ret and returns 0; or
 * returns -EPROTO for a frame that breaks AMQP's order (ret->text says
 * which) and -ENOMEM. After TRANSPORT_FRAME_DELIVERY the next frame must
 * wait until the message has been taken. */
int transport_assembler_feed(TransportAssembler *a, const amqp_frame_t *f, TransportFrameInfo *ret);
/* Move the whole message out; the assembler returns to IDLE. */
void transport_assembler_take(TransportAssembler *a, TransportMessage *ret);

/* ---- between the threads ---- */

typedef enum TransportCmdKind {
        TRANSPORT_CMD_PUBLISH,
        TRANSPORT_CMD_ACK,
        TRANSPORT_CMD_REJECT,
} TransportCmdKind;

/* Loop thread -> I/O thread. A command carries the connection number it was
 * made for; the I/O thread drops one meant for another connection (the
 * loop thread settles it when it hears of the loss). */
typedef struct TransportCmd {
        struct TransportCmd *next;
        TransportCmdKind kind;
        unsigned epoch;
        uint64_t seq;      /* PUBLISH */
        uint64_t amqp_tag; /* ACK, REJECT */
        bool requeue;      /* REJECT */
        char *exchange;    /* PUBLISH, the next three too */
        char *routing_key;
        char *message_id;
        uint8_t *body;
        size_t body_len;
} TransportCmd;

typedef enum TransportEventKind {
        TRANSPORT_EVENT_READY,
        TRANSPORT_EVENT_LOST,
        TRANSPORT_EVENT_DELIVERY,
        TRANSPORT_EVENT_CONFIRM,
        TRANSPORT_EVENT_EXITED, /* the I/O thread's last word */
} TransportEventKind;

/* I/O thread -> loop thread. */
typedef struct TransportEvent {
        struct TransportEvent *next;
        TransportEventKind kind;
        unsigned epoch;
        char *text;           /* READY: broker name; LOST: reason */
        int error;            /* LOST */
        bool was_ready;       /* LOST */
        uint64_t retry_ms;    /* LOST */
        unsigned heartbeat;   /* READY */
        uint64_t seq;         /* CONFIRM */
        bool ack;             /* CONFIRM */
        TransportMessage msg; /* DELIVERY */
} TransportEvent;

void transport_cmd_free(TransportCmd *c);
void transport_event_free(TransportEvent *e);

/* The I/O thread's own state; the loop thread never touches it while the
 * thread runs. */
typedef struct TransportIo {
        amqp_connection_state_t conn; /* NULL between connections */
        char *consumer_tag;
        char *broker_name;
        unsigned epoch;     /* the current connection's number; 0 before the first */
        unsigned heartbeat; /* negotiated */
        uint64_t last_inbound_ns;
        uint64_t last_heartbeat_ns; /* our last heartbeat frame (or the session's start) */
        size_t broker_index;        /* the broker to try next */
        size_t failed_in_round;
        /* transport_connect(): the last attempt found nothing listening
         * (refused, unreachable, timed out at the TCP connect). */
        bool no_listener;
        /* An attempt of this round reached a listener. */
        bool listener_in_round;
        TransportBackoff backoff;
        uint64_t rng;
        TransportAssembler assembler;
        TransportIdMap confirms; /* broker delivery tag -> seq */
        uint64_t next_broker_tag;
        bool channel_open;  /* the broker has not closed our channel */
        bool blocked;       /* connection.blocked is in force */
        TransportCmd *held; /* publishes waiting for connection.unblocked */
        TransportCmd **held_tail;
} TransportIo;

struct Transport {
        uv_loop_t *loop;
        TransportOptions opts; /* deep copy; read by both threads, never written after new */
        ConfigHost *brokers;
        TransportCallbacks cb;
        void *userdata;

        /* Shared: under lock. */
        uv_mutex_t lock;
        TransportCmd *cmds;
        TransportCmd **cmds_tail;
        TransportEvent *events;
        TransportEvent **events_tail;
        bool stop_requested;
        int sock_fd; /* the connection's socket, for transport_stop()'s last resort */

        int wake_fd;      /* eventfd: the loop wakes the I/O thread's poll */
        uv_async_t async; /* the I/O thread wakes the loop */
        uv_timer_t force_timer;
        uv_thread_t thread;
        /* The I/O thread's last event, made before it starts so that no
         * shortage of memory can keep the loop from hearing of its end. */
        TransportEvent *exit_event;

        TransportIo io; /* I/O thread only */

        /* Loop thread only. */
        bool started;
        bool stopping;
        bool exited;
        unsigned handles_open;
        bool free_requested; /* transport_free() came while handles were closing */
        bool ready;
        unsigned epoch; /* of the last READY */
        uint64_t next_seq;
        uint64_t next_tag;
        TransportIdMap outstanding; /* seq -> (epoch) */
        TransportIdMap unsettled;   /* tag -> amqp tag, epoch */
        transport_stopped_cb stopped;
};

/* transport-io.c: the I/O thread's body. */
void transport_io_main(void *arg);

/* transport.c: called by the I/O thread. Takes ownership of e and wakes the
 * loop. */
void transport_post_event(Transport *t, TransportEvent *e);
/* Under the lock: the queued commands, oldest first, and whether a stop
 * was asked for. */
TransportCmd *transport_take_cmds(Transport *t, bool *ret_stop);

/* transport-connect.c: one connection attempt, blocking, on the I/O thread.
 * On success io->conn, io->consumer_tag, io->heartbeat are set and t->sock_fd
 * published. Returns 0 or a negative errno with *ret_reason (malloc'ed). */
int transport_connect(Transport *t, const ConfigHost *broker, char **ret_reason);
/* Close politely when possible (clean: cancel already done) and free the
 * connection; clears t->sock_fd under the lock first. */
void transport_disconnect(Transport *t, bool clean);
/* Unpublish the socket and free conn. */
void transport_disconnect_state(Transport *t, amqp_connection_state_t conn);
