/* Fresh random identifiers spelled as Python's uuid.uuid4().hex. */
#pragma once

/* Write 32 lowercase hex digits and a NUL into buf: a version-4 UUID from
 * the kernel's random source. Returns 0 or -errno. */
int hexid_new(char buf[static 33]);
