/* The durable floor's scripts (see bench-daemon-consumer.h): posix_spawn()
 * of `sh ./SCRIPT` with stdin /dev/null and stdout read through a pipe,
 * then waitpid(). Nothing more: no cgroup, no audit session, no sandbox. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-daemon-consumer.h"

extern char **environ;

const char consumer_name[] = "bench-daemon-consumer";

int consumer_script_setup(void)
{
        return 0;
}

int consumer_script_run(const char *id, const char *script, char *out, size_t size)
{
        static char sh[] = "/bin/sh";
        char path[64];
        char *argv[] = {sh, path, NULL};
        posix_spawn_file_actions_t fa;
        size_t got = 0;
        int fds[2], status = 0, rc;
        ssize_t n;
        pid_t pid;

        snprintf(path, sizeof(path), "./%s", script);
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -1;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);
        if (rc != 0) {
                close(fds[0]);
                return -1;
        }
        while ((n = read(fds[0], out + got, size - 1 - got)) > 0)
                got += (size_t)n;
        close(fds[0]);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        out[got] = '\0';
        return 0;
}

void consumer_script_cleanup(void)
{
}
