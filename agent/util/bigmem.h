/* Buffers of a large plan's size (megabytes), written whole soon after
 * they are allocated: the message's body, a long string of the parsed
 * plan. */
#pragma once

#include <stddef.h>

/* From this size on, big_malloc() asks for the pages up front. */
#define BIG_MALLOC_MIN ((size_t)512 * 1024)

/* The size of a transparent huge page on x86-64 (a PMD's worth of 4 KiB
 * pages); big blocks start on such a boundary. */
#define BIG_MALLOC_HUGE ((size_t)2 * 1024 * 1024)

/* malloc(n); for n of at least BIG_MALLOC_MIN, also every whole page of
 * the block made present and writable in one madvise(MADV_POPULATE_WRITE)
 * (Linux 5.14), instead of one page fault per 4 KiB page when the block is
 * first written. Such blocks are above the mmap threshold main.c sets, so
 * each is a fresh mapping whose pages all fault otherwise; the pages are
 * the same ones the writing would have touched, so the memory used is the
 * same. The block starts on a BIG_MALLOC_HUGE boundary and, when it is a
 * mapping of its own (above the program break; malloc may instead carve
 * it out of a free stretch of the heap, which must not keep the mark
 * after free()), its whole huge pages are marked MADV_HUGEPAGE: where
 * transparent huge pages are enabled for such regions ("madvise" or
 * "always" in /sys/kernel/mm/transparent_hugepage/enabled), each 2 MiB is
 * one page to allocate, clear and charge instead of 512. A kernel without
 * either changes nothing (the calls fail, the faults happen as before).
 * NULL when out of memory; free() frees it. */
void *big_malloc(size_t n);
