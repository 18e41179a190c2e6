/* Private to the muranoagent-sandbox program (sandbox-helper*.c), which links
 * libc only. The helper is a one-shot program that either execs its payload
 * or exits, so failures end it through helper_die() rather than being passed
 * up: the status line names the step that failed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#include "sandbox-steps.h"

#define helper_printf_(a, b) __attribute__((format(printf, a, b)))
#define helper_noreturn_     __attribute__((noreturn))

/* The mount steps asked for on the command line (all need --unshare-mount). */
typedef struct HelperMounts {
        const char **read_only; /* absolute paths */
        size_t n_read_only;
        const char **writable; /* absolute paths */
        size_t n_writable;
        const char **masks; /* absolute paths hidden behind an empty view */
        size_t n_masks;
        bool private_tmp;
        bool protect_kernel; /* /sys and /proc's kernel knobs read-only, no cgroupfs, a
                              * /dev without disks */
        bool fresh_proc;     /* mount a /proc that shows the new pid namespace */
} HelperMounts;

/* The limits the command line can set, besides the core size. */
#define HELPER_MAX_RLIMITS 4

/* The command line, parsed. Strings are borrowed from argv. */
typedef struct HelperOptions {
        const char *chdir;
        char **env; /* NULL-terminated; the whole environment of PROGRAM */
        size_t n_env;
        SandboxRlimit rlimits[HELPER_MAX_RLIMITS];
        size_t n_rlimits;
        bool no_new_privs;
        uint64_t drop_caps; /* bit N = capability N */
        bool die_with_parent;
        const char *user;
        const char *group;
        int unshare; /* CLONE_NEW* flags */
        HelperMounts mounts;
        const char **cgroups;
        size_t n_cgroups;
        bool set_oom_score_adj;
        int oom_score_adj;
        char **command; /* PROGRAM and its arguments: the rest of argv */
} HelperOptions;

/* Where helper_die() also writes its status line; -1 = stderr only. */
extern int helper_status_fd;

/* Write "muranoagent-sandbox: <what>: <strerror(err)>" (or just
 * "...: <what>" when err is 0) to the status fd and to stderr, then
 * _exit(code). */
helper_noreturn_ void helper_exit(int code, int err, const char *fmt, ...) helper_printf_(3, 4);

/* helper_exit(SANDBOX_EXIT_SETUP, ...). */
#define helper_die(err, ...) helper_exit(SANDBOX_EXIT_SETUP, (err), __VA_ARGS__)

/* Parse the command line into o, setting helper_status_fd first; --help
 * prints the usage and exits 0; any mistake dies with a "usage:" line. */
void helper_options_parse(HelperOptions *o, int argc, char **argv);

/* After unshare(CLONE_NEWPID) the next child is pid 1 of the new namespace.
 * This returns in that child, with *ret_alive_fd open on a pipe whose other
 * end only the parent holds. The parent stays outside as supervisor: it
 * waits for the child, and exits with its status or dies of its signal. */
void helper_fork_pid1(int *ret_alive_fd);

/* Apply m inside a fresh mount namespace, in the order the comment in
 * sandbox-helper-mount.c explains. Dies on the first step that fails. */
void helper_mounts_apply(const HelperMounts *m);
