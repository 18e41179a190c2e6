/* Buffers of a large plan's size (megabytes), written whole soon after
 * they are allocated: the message's body, the file text in the parsed
 * plan. */
#pragma once

#include <stddef.h>

/* From this size on, big_malloc() asks for the pages up front. */
#define BIG_MALLOC_MIN ((size_t)512 * 1024)

/* malloc(n); for n of at least BIG_MALLOC_MIN, also every whole page of
 * the block made present and writable in one madvise(MADV_POPULATE_WRITE)
 * (Linux 5.14), instead of one page fault per 4 KiB page when the block is
 * first written. Such blocks are above the mmap threshold main.c sets, so
 * each is a fresh mapping whose pages all fault otherwise; the pages are
 * the same ones the writing would have touched, so the memory used is the
 * same. A kernel without it changes nothing (the call fails, the faults
 * happen as before). NULL when out of memory; free() frees it. */
void *big_malloc(size_t n);
