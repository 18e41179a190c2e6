/* The file pages an idle process can give back: its mappings of files
 * that it never wrote to, dropped from its page tables with
 * madvise(MADV_DONTNEED). The pages stay in the page cache, and the next
 * access maps them again with a minor fault (docs/footprint.md, "Giving
 * the file pages back when idle"). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Called for each mapping that may be given back: [from, to) and the KiB
 * of it resident. */
typedef void (*FilePagesFn)(uintptr_t from, uintptr_t to, uint64_t rss_kib, void *userdata);

/* Call fn for each mapping in text, the contents of /proc/PID/smaps, that
 * is private, not writable, of a file (a pathname starting with '/' and
 * an inode), with resident pages and none of them anonymous or swapped
 * (a copy-on-write page such as a relocated RELRO page is anonymous: it
 * is not the file's, and dropping it would lose what was written). A
 * mapping whose lines cannot be read, or that lacks its "Rss:",
 * "Anonymous:" or "Swap:" line, is not given. Returns the number of
 * mappings given. */
size_t filepages_parse(const char *text, size_t len, FilePagesFn fn, void *userdata);

typedef struct FilePagesStats {
        size_t mappings; /* mappings given back */
        uint64_t kib;    /* KiB of them that were resident */
        size_t failed;   /* madvise() calls that failed (the mapping stays) */
} FilePagesStats;

/* Read /proc/self/smaps and give back every mapping filepages_parse()
 * yields. Only for a process that does not, while this runs, make any of
 * its unwritable file mappings writable and write to it (mprotect(), or a
 * debugger's breakpoint): such a page, written after smaps was read,
 * would be dropped. Returns 0 and *ret, or -errno when smaps cannot be
 * read (nothing was given back). */
int filepages_release(FilePagesStats *ret);
