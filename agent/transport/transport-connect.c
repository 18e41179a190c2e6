/* One connection attempt and its end, on the I/O thread: TCP or TLS, login,
 * the channel with publisher confirms, the queue (declared only when asked),
 * basic.qos and basic.consume. All of it blocks, bounded by
 * connect_timeout_ms per step, which is why it runs on the I/O thread.
 *
 * rabbitmq-c's memory rules, as they apply here: amqp_new_connection()
 * gives a state that amqp_destroy_connection() frees together with its
 * socket (TCP or TLS, with its SSL_CTX); the socket object must not be
 * freed on its own. The methods returned by amqp_channel_open(),
 * amqp_basic_consume() and friends, and the reply of amqp_get_rpc_reply(),
 * point into the connection's pools: what is kept (the consumer tag) is
 * copied before the next call. Tables handed to the library (client
 * properties, queue arguments) are borrowed for the call only.
 *
 * TLS follows the reference (spec §2.1): the certificate chain is verified
 * unless insecure is set and ca_certs is empty (Python's CERT_OPTIONAL,
 * which the reference picks for insecure with ca_certs, verifies a client's
 * peer like CERT_REQUIRED); against ca_certs, or the system's store when
 * ca_certs is empty. A ca_certs file without a certificate fails, as it
 * fails Python's load_verify_locations(). The name in the certificate is
 * checked only with [agent] verify_hostname, by OpenSSL's own matcher
 * (which knows IP addresses, unlike rabbitmq-c's), as part of the chain. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>
#include <stdarg.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>

#include "transport/transport-internal.h"
#include "util/macro.h"

/* The first certificate problem OpenSSL found in this thread's handshake;
 * rabbitmq-c keeps its own copy private. */
static __thread int tls_verify_error;

static int tls_verify_cb(int preverify_ok, X509_STORE_CTX *store)
{
        if (!preverify_ok && tls_verify_error == X509_V_OK)
                tls_verify_error = X509_STORE_CTX_get_error(store);
        /* Unchanged: with SSL_VERIFY_NONE the handshake goes on either way,
         * and rabbitmq-c refuses the peer afterwards when verify_peer is on. */
        return preverify_ok;
}

static int tls_version(ConfigSslVersion v)
{
        switch (v) {
        case CONFIG_SSL_TLSV1:
                return TLS1_VERSION;
        case CONFIG_SSL_TLSV1_1:
                return TLS1_1_VERSION;
        case CONFIG_SSL_TLSV1_2:
                return TLS1_2_VERSION;
        case CONFIG_SSL_TLSV1_3:
                return TLS1_3_VERSION;
        case CONFIG_SSL_DEFAULT:
        case CONFIG_SSL_SSLV23:
                break;
        }
        /* 0 lets OpenSSL choose: Python's PROTOCOL_SSLv23 negotiates the
         * highest version both sides have, as OpenSSL's defaults do. */
        return 0;
}

static bool is_ip_address(const char *host)
{
        unsigned char buf[sizeof(struct in6_addr)];
        return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* name is the broker as written in the configuration: the certificate is
 * checked against that, not against the address kombu's rewrite of
 * "localhost" connects to. */
static int tls_setup(const TransportOptions *o, amqp_socket_t *sock, const char *name,
                     char **ret_reason)
{
        SSL_CTX *ctx = amqp_ssl_socket_get_context(sock);
        bool verify = !o->insecure || o->ca_certs[0];
        int v = tls_version(o->ssl_version);

        amqp_ssl_socket_set_verify_peer(sock, verify);
        amqp_ssl_socket_set_verify_hostname(sock, false);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, tls_verify_cb);

        if (v && (!SSL_CTX_set_min_proto_version(ctx, v) || !SSL_CTX_set_max_proto_version(ctx, v)))
                return asprintf(ret_reason, "this OpenSSL cannot use ssl_version %s",
                                config_ssl_version_name(o->ssl_version)) < 0
                               ? -ENOMEM
                               : -EOPNOTSUPP;
        if (!verify)
                return 0;

        if (o->ca_certs[0]) {
                if (amqp_ssl_socket_set_cacert(sock, o->ca_certs) != AMQP_STATUS_OK) {
                        ERR_clear_error();
                        return asprintf(ret_reason,
                                        "cannot load CA certificates from '%s' (ca_certs): no "
                                        "such file, or no certificate in it",
                                        o->ca_certs) < 0
                                       ? -ENOMEM
                                       : -ENOENT;
                }
        } else if (!SSL_CTX_set_default_verify_paths(ctx)) {
                ERR_clear_error();
                return asprintf(ret_reason, "cannot load the system's CA certificates") < 0
                               ? -ENOMEM
                               : -ENOENT;
        }

        if (o->verify_hostname) {
                X509_VERIFY_PARAM *param = SSL_CTX_get0_param(ctx);
                int ok = is_ip_address(name) ? X509_VERIFY_PARAM_set1_ip_asc(param, name)
                                             : X509_VERIFY_PARAM_set1_host(param, name, 0);
                if (!ok)
                        return -ENOMEM;
        }
        return 0;
}

/* Why a TCP connect to host:port fails, as an errno (0 when it does not
 * fail, or nothing is known). rabbitmq-c reads the connect's SO_ERROR and
 * keeps it to itself, answering only "a socket error occurred", so after
 * such a failure one more connect, bounded by timeout_ms, finds out
 * whether the port was refused or the network unreachable. */
static int connect_errno(const char *host, unsigned port, int timeout_ms)
{
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *ai = NULL;
        char service[8];
        int fd, err = 0;
        socklen_t len = sizeof(err);

        snprintf(service, sizeof(service), "%u", port);
        if (getaddrinfo(host, service, &hints, &ai) != 0 || !ai)
                return 0;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                freeaddrinfo(ai);
                return 0;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
                err = errno;
                if (err == EINPROGRESS) {
                        struct pollfd p = {.fd = fd, .events = POLLOUT};
                        err = poll(&p, 1, timeout_ms) == 1 &&
                                              getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0
                                      ? err
                                      : ETIMEDOUT;
                }
        }
        close(fd);
        freeaddrinfo(ai);
        return err;
}

/* Whether a failed socket open found nothing listening: the TCP connect
 * was refused, could not reach the host, or timed out (the connect is a
 * plain socket's only step before the AMQP header; a TLS socket's timeout
 * may be its handshake's). Nothing of the broker's AMQP side was touched,
 * so the next attempt may come soon (transport_backoff_probe()). */
static bool no_listener(int status, int cause, bool ssl)
{
        if (status == AMQP_STATUS_TIMEOUT)
                return !ssl;
        switch (cause) {
        case ECONNREFUSED:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case EHOSTDOWN:
        case ENETDOWN:
                return true;
        case ETIMEDOUT:
                return !ssl;
        default:
                return false;
        }
}

/* rabbitmq-c's text for status, with the detail it does not give: the
 * certificate problem, OpenSSL's reason for a failed handshake, or why a
 * connect failed. OpenSSL's error queue is read and cleared for a TLS
 * connection only: the first call into it initialises OpenSSL's error
 * state, which a plain connection never needs. */
static char *status_text(int status, int saved_errno, bool tls)
{
        char detail[256] = "";
        char *s;

        if (status == AMQP_STATUS_SSL_PEER_VERIFY_FAILED && tls_verify_error != X509_V_OK) {
                snprintf(detail, sizeof(detail), ": %s",
                         X509_verify_cert_error_string(tls_verify_error));
        } else if (status == AMQP_STATUS_SSL_CONNECTION_FAILED || status == AMQP_STATUS_SSL_ERROR) {
                unsigned long e = ERR_peek_last_error();
                if (e) {
                        char buf[200];
                        ERR_error_string_n(e, buf, sizeof(buf));
                        snprintf(detail, sizeof(detail), ": %s", buf);
                }
        } else if (status == AMQP_STATUS_SOCKET_ERROR && saved_errno) {
                snprintf(detail, sizeof(detail), ": %s", strerror(saved_errno));
        }
        if (tls)
                ERR_clear_error();
        return asprintf(&s, "%s%s", amqp_error_string2(status), detail) < 0 ? NULL : s;
}

static int fail(char **ret_reason, int error, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_reason, int error, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_reason, fmt, ap) < 0) {
                *ret_reason = NULL;
                error = -ENOMEM;
        }
        va_end(ap);
        return error;
}

/* Take leave of a broker after a failure past login: a broker that closed
 * the connection is answered with close-ok; one that closed only the
 * channel gets a polite connection.close. */
static void say_goodbye(amqp_connection_state_t conn, amqp_rpc_reply_t r)
{
        if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION) {
                if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
                        amqp_connection_close_ok_t ok = {.dummy = '\0'};
                        (void)amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
                } else {
                        (void)amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
                }
        }
}

/* After login: channel, confirms, queue, qos, consume. On failure *ret_r is
 * the reply and *ret_what says which step. */
static bool setup_channel(const TransportOptions *o, amqp_connection_state_t conn, char **ret_tag,
                          amqp_rpc_reply_t *ret_r, const char **ret_what)
{
        amqp_bytes_t queue = amqp_cstring_bytes(o->queue);

        *ret_what = "cannot open a channel";
        if (!amqp_channel_open(conn, TRANSPORT_CHANNEL))
                goto fail;
        *ret_what = "cannot turn on publisher confirms";
        if (!amqp_confirm_select(conn, TRANSPORT_CHANNEL))
                goto fail;
        if (o->declare_queue) {
                /* The engine's own declaration (spec §2.2): durable, HA on
                 * all nodes, deleted after a day without consumers. */
                amqp_table_entry_t args[] = {
                        {.key = amqp_cstring_bytes("x-ha-policy"),
                         .value = {.kind = AMQP_FIELD_KIND_UTF8,
                                   .value.bytes = amqp_cstring_bytes("all")}},
                        {.key = amqp_cstring_bytes("x-expires"),
                         .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = 86400000}},
                };
                amqp_table_t table = {.num_entries = (int)ELEMENTSOF(args), .entries = args};
                *ret_what = "cannot declare the queue";
                if (!amqp_queue_declare(conn, TRANSPORT_CHANNEL, queue, 0, 1, 0, 0, table))
                        goto fail;
        }
        /* Per consumer (global false): global QoS closes the connection
         * on a quorum queue (engine observation #10). */
        *ret_what = "basic.qos failed";
        if (!amqp_basic_qos(conn, TRANSPORT_CHANNEL, 0, 1, 0))
                goto fail;
        *ret_what = "cannot consume from the queue";
        amqp_basic_consume_ok_t *ok = amqp_basic_consume(
                conn, TRANSPORT_CHANNEL, queue, amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
        if (!ok)
                goto fail;
        *ret_tag = strndup(ok->consumer_tag.bytes, ok->consumer_tag.len);
        if (!*ret_tag) {
                *ret_r = (amqp_rpc_reply_t){.reply_type = AMQP_RESPONSE_LIBRARY_EXCEPTION,
                                            .library_error = AMQP_STATUS_NO_MEMORY};
                return false;
        }
        return true;
fail:
        *ret_r = amqp_get_rpc_reply(conn);
        return false;
}

static void publish_fd(Transport *t, int fd)
{
        uv_mutex_lock(&t->lock);
        t->sock_fd = fd;
        uv_mutex_unlock(&t->lock);
}

int transport_connect(Transport *t, const ConfigHost *broker, char **ret_reason)
{
        const TransportOptions *o = &t->opts;
        TransportIo *io = &t->io;
        const char *host = transport_connect_host(broker->host);
        _cleanup_free_ char *name = transport_broker_name(broker->host, broker->port);
        struct timeval tv = {.tv_sec = (time_t)(o->connect_timeout_ms / 1000),
                             .tv_usec = (suseconds_t)(o->connect_timeout_ms % 1000) * 1000};
        amqp_connection_state_t conn;
        amqp_socket_t *sock;
        amqp_rpc_reply_t r;
        const char *what;
        char *tag = NULL;
        int status, err;

        io->no_listener = false;
        if (!name)
                return -ENOMEM;
        conn = amqp_new_connection();
        if (!conn)
                return -ENOMEM;

        sock = o->ssl ? amqp_ssl_socket_new(conn) : amqp_tcp_socket_new(conn);
        if (!sock) {
                amqp_destroy_connection(conn);
                return fail(ret_reason, -ENOMEM, "cannot create a %s socket for %s",
                            o->ssl ? "TLS" : "TCP", name);
        }
        if (o->ssl) {
                char *why = NULL;
                err = tls_setup(o, sock, broker->host, &why);
                if (err < 0) {
                        amqp_destroy_connection(conn);
                        err = fail(ret_reason, err, "cannot connect to %s: %s", name,
                                   why ? why : "out of memory");
                        free(why);
                        return err;
                }
        }

        tls_verify_error = X509_V_OK;
        status = amqp_socket_open_noblock(sock, host, (int)broker->port, &tv);
        if (status != AMQP_STATUS_OK) {
                int cause = status == AMQP_STATUS_SOCKET_ERROR
                                    ? connect_errno(host, broker->port, 2000)
                                    : 0;
                _cleanup_free_ char *text = status_text(status, cause, o->ssl);
                io->no_listener = no_listener(status, cause, o->ssl);
                amqp_destroy_connection(conn);
                return fail(ret_reason, cause ? -cause : transport_status_errno(status),
                            "cannot connect to %s: %s", name, text ? text : "out of memory");
        }
        publish_fd(t, amqp_get_sockfd(conn));

        (void)amqp_set_handshake_timeout(conn, &tv);
        (void)amqp_set_rpc_timeout(conn, &tv);

        {
                _cleanup_free_ char *cname = NULL;
                if (asprintf(&cname, "muranoagent %s", o->queue) < 0) {
                        transport_disconnect_state(t, conn);
                        return -ENOMEM;
                }
                /* consumer_cancel_notify: a deleted queue ends the consumer
                 * with basic.cancel instead of leaving it silently idle;
                 * connection.blocked: publishes are held while the broker
                 * blocks publishers. rabbitmq-c merges these into its own. */
                amqp_table_entry_t caps[] = {
                        {.key = amqp_cstring_bytes("consumer_cancel_notify"),
                         .value = {.kind = AMQP_FIELD_KIND_BOOLEAN, .value.boolean = 1}},
                        {.key = amqp_cstring_bytes("connection.blocked"),
                         .value = {.kind = AMQP_FIELD_KIND_BOOLEAN, .value.boolean = 1}},
                };
                amqp_table_entry_t props[] = {
                        {.key = amqp_cstring_bytes("product"),
                         .value = {.kind = AMQP_FIELD_KIND_UTF8,
                                   .value.bytes = amqp_cstring_bytes("muranoagent")}},
                        {.key = amqp_cstring_bytes("connection_name"),
                         .value = {.kind = AMQP_FIELD_KIND_UTF8,
                                   .value.bytes = amqp_cstring_bytes(cname)}},
                        {.key = amqp_cstring_bytes("capabilities"),
                         .value = {.kind = AMQP_FIELD_KIND_TABLE,
                                   .value.table = {.num_entries = (int)ELEMENTSOF(caps),
                                                   .entries = caps}}},
                };
                amqp_table_t table = {.num_entries = (int)ELEMENTSOF(props), .entries = props};
                r = amqp_login_with_properties(conn, o->virtual_host, 0, TRANSPORT_FRAME_MAX,
                                               (int)o->heartbeat, &table, AMQP_SASL_METHOD_PLAIN,
                                               o->login, o->password);
        }
        if (r.reply_type != AMQP_RESPONSE_NORMAL) {
                _cleanup_free_ char *text = transport_reply_describe(r, &err);
                /* RabbitMQ closes the socket on a bad password unless the
                 * client has authentication_failure_close, which rabbitmq-c
                 * announces; either way say what was tried, never the
                 * password. */
                transport_disconnect_state(t, conn);
                return fail(ret_reason, err, "cannot log in to %s as '%s' (virtual host '%s'): %s",
                            name, o->login, o->virtual_host, text ? text : "out of memory");
        }

        if (!setup_channel(o, conn, &tag, &r, &what)) {
                _cleanup_free_ char *text = transport_reply_describe(r, &err);
                say_goodbye(conn, r);
                transport_disconnect_state(t, conn);
                if (err == -ENOENT)
                        return fail(ret_reason, err,
                                    "queue '%s' does not exist on %s (the engine declares it; "
                                    "[agent] declare_queue makes the agent declare it): %s",
                                    o->queue, name, text ? text : "out of memory");
                return fail(ret_reason, err, "%s on %s (queue '%s'): %s", what, name, o->queue,
                            text ? text : "out of memory");
        }

        io->conn = conn;
        io->channel_open = true;
        io->consumer_tag = tag;
        io->heartbeat = (unsigned)amqp_get_heartbeat(conn);
        free(io->broker_name);
        io->broker_name = TAKE_PTR(name);
        return 0;
}

void transport_disconnect_state(Transport *t, amqp_connection_state_t conn)
{
        publish_fd(t, -1);
        amqp_destroy_connection(conn);
}

void transport_disconnect(Transport *t, bool clean)
{
        TransportIo *io = &t->io;

        if (!io->conn)
                return;
        if (clean) {
                if (io->channel_open)
                        (void)amqp_channel_close(io->conn, TRANSPORT_CHANNEL, AMQP_REPLY_SUCCESS);
                (void)amqp_connection_close(io->conn, AMQP_REPLY_SUCCESS);
        }
        /* The fd stays published through the polite close, whose writes are
         * not bounded by the RPC timeout, so that transport_stop() can still
         * shut the socket down under it. */
        transport_disconnect_state(t, io->conn);
        io->conn = NULL;
        free(io->consumer_tag);
        io->consumer_tag = NULL;
        io->heartbeat = 0;
        io->channel_open = false;
}
