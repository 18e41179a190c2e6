/* The daemon's program as it is linked (docs/footprint.md): it needs
 * neither libyaml nor libgmp, which are loaded on first use
 * (util/lazylib.h), and, when agent/cold.ld and agent/idle.ld were given
 * to the linker, its cold code is linked after the rest of its code and
 * the code an idle agent runs before it (the scripts' patterns still name
 * the objects meson makes). */
#include <check.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-lib.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"

static const char *program(void)
{
        const char *p = getenv("MURANOAGENT");

        ck_assert_ptr_nonnull(p);
        return p;
}

/* The shared objects the dynamic loader maps for PROGRAM, as ldd lists
 * them (LD_TRACE_LOADED_OBJECTS: the program is loaded, not run). */
static void loaded_objects(const char *program, StrBuf *out)
{
        _cleanup_free_ char *cmd = NULL;
        char buf[4096];
        size_t n;
        FILE *f;

        ck_assert_int_ne(asprintf(&cmd, "LD_TRACE_LOADED_OBJECTS=1 '%s'", program), -1);
        f = popen(cmd, "r");
        ck_assert_ptr_nonnull(f);
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
                ck_assert_int_eq(strbuf_append(out, buf, n), 0);
        ck_assert_int_eq(pclose(f), 0);
}

START_TEST(test_program_links_neither)
{
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;

        loaded_objects(program(), &s);
        /* The check sees the loader's list at all. */
        ck_assert_msg(strstr(s.data, "libjansson.so"), "%s", s.data);
        ck_assert_msg(!strstr(s.data, "libyaml"), "%s", s.data);
        ck_assert_msg(!strstr(s.data, "libgmp"), "%s", s.data);
}
END_TEST

/* The section header named NAME of the ELF image, or NULL. */
static const Elf64_Shdr *section(const char *elf, size_t len, const char *name)
{
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
        const Elf64_Shdr *sh, *names;

        ck_assert_uint_ge(len, sizeof(*eh));
        ck_assert_int_eq(memcmp(eh->e_ident, ELFMAG, SELFMAG), 0);
        ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
        ck_assert_uint_le(eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh), len);
        sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
        ck_assert_uint_lt(eh->e_shstrndx, eh->e_shnum);
        names = &sh[eh->e_shstrndx];
        for (size_t i = 0; i < eh->e_shnum; i++) {
                ck_assert_uint_lt(names->sh_offset + sh[i].sh_name, len);
                if (strcmp(elf + names->sh_offset + sh[i].sh_name, name) == 0)
                        return &sh[i];
        }
        return NULL;
}

START_TEST(test_cold_code_after_the_rest)
{
        _cleanup_free_ char *elf = NULL;
        const Elf64_Shdr *text, *cold;
        size_t len = 0;

        ck_assert_int_eq(file_read_all(program(), 64 << 20, &elf, &len), 0);
        text = section(elf, len, ".text");
        cold = section(elf, len, ".text.cold");
        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(cold);
        ck_assert_uint_gt(cold->sh_addr, text->sh_addr);
        /* At least a 64 KiB window of it: most of the names match. */
        ck_assert_uint_ge(cold->sh_size, 64 * 1024);
}
END_TEST

/* The code an idle agent runs (agent/idle.ld) comes before the rest, and
 * ends in the 64 KiB window the PLT starts in: after the agent gave its
 * file pages back, its heartbeats fault in that window of the program's
 * code, not windows of their own. */
START_TEST(test_idle_code_beside_the_plt)
{
        _cleanup_free_ char *elf = NULL;
        const Elf64_Shdr *text, *idle, *plt;
        size_t len = 0;

        ck_assert_int_eq(file_read_all(program(), 64 << 20, &elf, &len), 0);
        text = section(elf, len, ".text");
        idle = section(elf, len, ".text.idle");
        plt = section(elf, len, ".plt");
        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(idle);
        ck_assert_ptr_nonnull(plt);
        ck_assert_uint_lt(idle->sh_addr, text->sh_addr);
        /* Most of the names match: the I/O thread's code is a few KiB. */
        ck_assert_uint_ge(idle->sh_size, 4 * 1024);
#if !ASAN_BUILD /* instrumented, the same code is several times larger */
        ck_assert_uint_eq((idle->sh_addr + idle->sh_size - 1) / (64 * 1024),
                          plt->sh_addr / (64 * 1024));
#endif
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_program_links_neither);
#ifdef TEST_COLD_LD /* a linker that reads agent/cold.ld and agent/idle.ld */
        tcase_add_test(tc, test_cold_code_after_the_rest);
        tcase_add_test(tc, test_idle_code_beside_the_plt);
#endif
}

int main(void)
{
        return check_main_one("link", "link", NULL, NULL, 30, add_tests);
}
