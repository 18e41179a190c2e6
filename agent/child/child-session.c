/* Audit sessions as the mark of a run's processes (see child-session.h). */
#include "child/child-session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/strbuf.h"

/* A process that keeps forking is caught on a later pass: its children
 * carry the session too, and a SIGKILLed process forks no more. */
#define SESSION_KILL_PASSES 64

/* The number in /proc/<pid>/<name>, or UINT32_MAX. */
static uint32_t read_u32(int proc_fd, pid_t pid, const char *name)
{
        char path[64], text[16];
        _cleanup_close_ int fd = -1;
        unsigned long v;
        char *end;
        ssize_t n;

        snprintf(path, sizeof(path), "%ld/%s", (long)pid, name);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return UINT32_MAX;
        n = read(fd, text, sizeof(text) - 1);
        if (n <= 0)
                return UINT32_MAX;
        text[n] = '\0';
        errno = 0;
        v = strtoul(text, &end, 10);
        if (errno || end == text || v > UINT32_MAX)
                return UINT32_MAX;
        return (uint32_t)v;
}

uint32_t child_session_of(int proc_fd, pid_t pid)
{
        return read_u32(proc_fd, pid, "sessionid");
}

uid_t child_session_uid(int proc_fd)
{
        uint32_t v = read_u32(proc_fd, getpid(), "loginuid");

        return v == UINT32_MAX ? getuid() : (uid_t)v;
}

/* Whether pid has exited and waits for its parent: a zombie keeps its
 * session, and accepts signals, until it is reaped. */
static bool is_zombie(int proc_fd, pid_t pid)
{
        char path[32], text[512];
        _cleanup_close_ int fd = -1;
        const char *state;
        ssize_t n;

        snprintf(path, sizeof(path), "%ld/stat", (long)pid);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return true; /* gone */
        n = read(fd, text, sizeof(text) - 1);
        if (n <= 0)
                return true;
        text[n] = '\0';
        /* "pid (comm) S ...": comm may hold anything, so the last ')'. */
        state = strrchr(text, ')');
        return !state || state[1] != ' ' || state[2] == 'Z' || state[2] == 'X';
}

/* The pids signalled so far, as the bytes of a pid_t array: a process
 * dies a moment after its SIGKILL, and is neither signalled nor counted
 * twice. */
static bool killed_has(const StrBuf *k, pid_t pid)
{
        for (size_t i = 0; i + sizeof(pid) <= k->len; i += sizeof(pid))
                if (memcmp(k->data + i, &pid, sizeof(pid)) == 0)
                        return true;
        return false;
}

/* One pass over /proc: SIGKILL what carries session and was not signalled
 * before. *ret_found: how many were. */
static int kill_pass(int proc_fd, uint32_t session, StrBuf *k, unsigned *ret_found)
{
        _cleanup_close_ int dir_fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        pid_t self = getpid();
        struct dirent *de;
        int r = 0;
        DIR *d;

        *ret_found = 0;
        if (dir_fd < 0)
                return -errno;
        d = fdopendir(dir_fd);
        if (!d)
                return -errno;
        dir_fd = -1; /* owned by d now */
        while (r == 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                int pidfd;

                if (*end || pid <= 0 || pid == self || killed_has(k, (pid_t)pid) ||
                    child_session_of(dirfd(d), (pid_t)pid) != session ||
                    is_zombie(dirfd(d), (pid_t)pid))
                        continue;
                pidfd = pidfd_open((pid_t)pid, 0);
                if (pidfd < 0)
                        continue;
                /* Pinned: the pid now names this process or one that has
                 * exited, which the kernel refuses to signal. */
                if (child_session_of(dirfd(d), (pid_t)pid) == session &&
                    pidfd_send_signal(pidfd, SIGKILL, NULL, 0) == 0) {
                        r = strbuf_append(k, (const char *)&(pid_t){(pid_t)pid}, sizeof(pid_t));
                        (*ret_found)++;
                }
                close(pidfd);
        }
        closedir(d);
        return r;
}

int child_session_kill(int proc_fd, uint32_t session)
{
        _cleanup_strbuf_ StrBuf k = STRBUF_INIT;
        unsigned found;
        int r = 0;

        if (session == CHILD_SESSION_NONE)
                return -EINVAL;
        for (int pass = 0; pass < SESSION_KILL_PASSES; pass++) {
                r = kill_pass(proc_fd, session, &k, &found);
                if (r < 0 || found == 0)
                        break;
        }
        return r < 0 ? r : (int)(k.len / sizeof(pid_t));
}
