/* Signing plans as the engine signs them (spec section 6; engine
 * Agent._sign): RSA PKCS#1 v1.5 with SHA-256 over the agent's queue name
 * followed by the exact message body, with the engine's PEM private key
 * (no passphrase). The raw signature travels in the "signature" header.
 *
 * Return convention: 0 = signed; SEND_SIGN_INVALID (positive) = the key
 * cannot be used, *ret_error says why; negative errno = out of memory. */
#pragma once

#include <stddef.h>

#define SEND_SIGN_INVALID 1

int send_sign(const char *key_path, const char *queue, const void *body, size_t len,
              unsigned char **ret_sig, size_t *ret_len, char **ret_error);
