/* Shared between send-plan.c and send-plan-files.c: the engine's rules for
 * file items (URL or not, names, Base64 markers) and reading a package's
 * resource files. Not for use outside agent/send/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

/* Set *ret_error (when not NULL) to a formatted message and return
 * SEND_PLAN_INVALID, or -ENOMEM. */
int send_plan_fail(char **ret_error, const char *fmt, ...) _printf_(2, 3);

/* Is s a URL as the engine decides it: urllib.parse.urlsplit(s) has both a
 * scheme and a network location. Sets *ret and returns 0, or returns
 * SEND_PLAN_INVALID when urlsplit itself raises (unbalanced brackets in the
 * network location), or -ENOMEM. */
int send_plan_is_url(const char *s, bool *ret, char **ret_error);

/* Is s marked as a binary file, "<path>"? */
bool send_plan_is_base64(const char *s);

/* The name a file item is known by (engine _get_name) for the item's key
 * text: the last path segment of a URL, the text inside "<...>", or the text
 * itself. *ret is a new string. */
int send_plan_item_name(const char *key, char **ret, char **ret_error);

/* The path of the resource "scripts/<file>" under resources, checked as the
 * engine's secure_join checks it: after normalisation it must lie strictly
 * inside the resources directory. */
int send_plan_resource_path(const char *resources, const char *file, char **ret, char **ret_error);

/* A resource's text as Python reads it in text mode: strict UTF-8 with
 * universal newlines (CRLF and lone CR become LF). */
int send_plan_read_text(const char *path, const char *shown, size_t max, json_t **ret,
                        char **ret_error);

/* A resource's bytes in Base64 (standard alphabet, padded, no line breaks),
 * followed by `suffix`. */
int send_plan_read_base64(const char *path, const char *shown, size_t max, const char *suffix,
                          json_t **ret, char **ret_error);
