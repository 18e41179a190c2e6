/* The INI dialect of oslo.config (oslo_config/iniparser.py plus the
 * section rule of cfg.ConfigParser), which is what the Python agent reads its
 * configuration with. This module only splits text into sections and
 * assignments; it knows nothing about option names or types (config.c).
 *
 * The dialect, line by line, after trailing whitespace is stripped:
 *   - an empty line ends a multi-line value;
 *   - a line starting with a space or TAB continues the previous value: it is
 *     left-stripped and appended after a "\n";
 *   - "[name]" starts a section; the name is taken verbatim (not trimmed);
 *   - a line starting with '#' or ';' is a comment (no inline comments);
 *   - anything else is "key = value" or "key: value", split at the first '='
 *     or ':'; key and value are stripped, and a value whose first and last
 *     characters are the same quote (' or ") loses them.
 * "Whitespace" is Python's str.isspace() set, and lines end at "\n", "\r\n"
 * or "\r" (Python's universal newlines). */
#pragma once

#include <stddef.h>

/* ini_parse() result for a syntax error in the text. */
#define INI_SYNTAX 1

typedef struct IniHandler {
        /* A "[name]" line. name is the text between the brackets, untrimmed. */
        int (*section)(void *userdata, const char *name, unsigned line);
        /* A complete assignment, delivered once its value has ended (at a
         * blank line, the next non-continuation line or the end of the text).
         * section is the current section's name, never NULL: a key before
         * any header is a syntax error. line is the line of the key. */
        int (*assign)(void *userdata, const char *section, const char *key, const char *value,
                      unsigned line);
} IniHandler;

/* Parse text[0..len). Callbacks return 0 to go on; any other value stops the
 * parse and is returned unchanged. Returns 0, INI_SYNTAX with *ret_line and
 * *ret_message (owned by the caller; a sentence without the location, which
 * never quotes an option's value), a callback's value, or -ENOMEM.
 * A leading UTF-8 byte order mark is skipped. */
int ini_parse(const char *text, size_t len, const IniHandler *h, void *userdata, unsigned *ret_line,
              char **ret_message);

/* Python's str.strip() helpers on valid UTF-8: the number of bytes of
 * leading whitespace, and the length left after trailing whitespace. */
size_t ini_lspace(const char *s, size_t n);
size_t ini_rstrip_len(const char *s, size_t n);
