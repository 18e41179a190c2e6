/* bench-daemon's side of the broker: one blocking rabbitmq-c connection that
 * plays the engine. It declares queues as the engine does, publishes plans
 * with the engine's properties, takes results off the results queues
 * (no-ack consumers whose tag is the queue's name), and reads a queue's
 * consumer count with a passive queue.declare, on a channel of its own so
 * that polling it never disturbs the deliveries. Errors are printed to
 * stderr here, where the broker's reason is known, and returned as -EIO. */
#pragma once

#include <stddef.h>

typedef struct Client Client;

typedef struct ClientMessage {
        char *queue; /* the results queue it came from */
        char *body;  /* NUL-terminated */
        size_t len;
} ClientMessage;

int client_connect(int port, Client **ret);
void client_free(Client *c);

/* Durable, not exclusive, not auto-delete, with the engine's arguments
 * (x-ha-policy "all", x-expires one day). */
int client_declare(Client *c, const char *queue);
int client_delete(Client *c, const char *queue);
int client_consumers(Client *c, const char *queue, unsigned *ret);
int client_subscribe(Client *c, const char *queue);

/* To the default exchange, routing key `queue`, as the engine publishes:
 * text/plain, utf-8, persistent, priority 0, message_id, and the headers
 * {"signature": void} of an unsigned plan. */
int client_publish(Client *c, const char *queue, const char *message_id, const char *body,
                   size_t len);

/* The next result: 1 and *ret filled, 0 when none came within timeout_ms,
 * or -EIO. */
int client_next(Client *c, int timeout_ms, ClientMessage *ret);
void client_message_clear(ClientMessage *m);
