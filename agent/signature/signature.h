/* signature: checking the engine's plan signatures (spec 6).
 *
 * When [DEFAULT] engine_key is set, the engine signs every plan with RSA
 * PKCS#1 v1.5 over SHA-256 of the bytes queue_name || body, where
 * queue_name is the agent's input queue and body the message body exactly
 * as published (murano's Agent._sign signs (queue + msg).encode('utf-8')).
 * The signature travels raw, about 256 binary bytes for RSA-2048, in the
 * AMQP header "signature"; an unsigned plan carries that header with a
 * void value (engine observation 1), which counts as no signature.
 *
 * The key is the engine's public key in PEM: PKCS#1 ("-----BEGIN RSA
 * PUBLIC KEY-----", which is what Murano writes into agent.conf, on
 * TAB-indented lines that the config parser turns into a value with a
 * leading newline) or SubjectPublicKeyInfo ("-----BEGIN PUBLIC KEY-----").
 * Whitespace around every line is ignored.
 *
 * The key is parsed here and checked with OpenSSL's BN and SHA-256 code
 * only, without its provider machinery (signature.c says why). OpenSSL's
 * error queue is cleared on every path where OpenSSL reported an error, so
 * no error of ours is left for another OpenSSL user in the process
 * (libcurl, the AMQP TLS connection). A SignatureKey is immutable
 * once made and may be used by several threads at once. Nothing here
 * logs; error texts never contain key material. */
#pragma once

#include <stddef.h>

#include "util/macro.h"

/* signature_key_new(): the text is not an acceptable public key; the
 * error text says why (the daemon prints it and exits with status 2). */
#define SIGNATURE_KEY_INVALID 1

/* signature_verify(): no signature at all (absent header, void value or
 * zero bytes). */
#define SIGNATURE_MISSING 1
/* signature_verify(): a signature that does not verify. */
#define SIGNATURE_BAD 2

/* Keys shorter than this are refused: they can be forged. */
#define SIGNATURE_MIN_BITS 1024

typedef struct SignatureKey SignatureKey;

/* Load the engine's public key from PEM text (see above): an RSA key of at
 * least SIGNATURE_MIN_BITS bits. Returns 0, SIGNATURE_KEY_INVALID with a
 * sentence in *ret_error_text, or -ENOMEM. */
int signature_key_new(const char *pem, SignatureKey **ret, char **ret_error_text);

SignatureKey *signature_key_free(SignatureKey *k);
DEFINE_CLEANUP(SignatureKey, signature_key_free)

/* The key's size in bits, for the daemon's start-up message. */
unsigned signature_key_bits(const SignatureKey *k);

/* Check sig (sig_len bytes; NULL or 0 bytes: none) over queue (a NUL-
 * terminated name, NULL meaning "") followed by body[0..len). Returns 0
 * when it verifies, SIGNATURE_MISSING, SIGNATURE_BAD, or -ENOMEM. */
int signature_verify(const SignatureKey *k, const char *queue, const void *body, size_t len,
                     const void *sig, size_t sig_len);
