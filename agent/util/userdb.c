/* User and group lookups (userdb.h). */
#include "util/userdb.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer size getpwnam_r() and getgrnam_r() need. */
static size_t nss_buffer_size(int which)
{
        long size = sysconf(which);

        return size > 0 ? (size_t)size : 16384;
}

bool userdb_parse_id(const char *s, unsigned *ret)
{
        unsigned long n;
        char *end;

        if (s[0] < '0' || s[0] > '9')
                return false;
        errno = 0;
        n = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || n >= UINT_MAX)
                return false;
        *ret = (unsigned)n;
        return true;
}

int userdb_user(const char *user, UserdbUser *ret)
{
        size_t size = nss_buffer_size(_SC_GETPW_R_SIZE_MAX);
        char *buf = malloc(size);
        struct passwd pw, *found = NULL;
        UserdbUser u;
        unsigned n;
        int rc;

        if (!buf)
                return -ENOMEM;
        rc = userdb_parse_id(user, &n) ? getpwuid_r((uid_t)n, &pw, buf, size, &found)
                                       : getpwnam_r(user, &pw, buf, size, &found);
        if (rc != 0 || !found) {
                free(buf);
                return rc != 0 ? -rc : -ENOENT;
        }
        u = (UserdbUser){pw.pw_uid, pw.pw_gid, strdup(pw.pw_name), strdup(pw.pw_dir)};
        free(buf);
        if (!u.name || !u.home) {
                userdb_user_clear(&u);
                return -ENOMEM;
        }
        *ret = u;
        return 0;
}

void userdb_user_clear(UserdbUser *u)
{
        free(u->name);
        free(u->home);
        *u = (UserdbUser){0};
}

int userdb_group(const char *group, gid_t *ret)
{
        size_t size = nss_buffer_size(_SC_GETGR_R_SIZE_MAX);
        struct group gr, *found = NULL;
        unsigned n;
        char *buf;
        int rc;

        if (userdb_parse_id(group, &n)) {
                *ret = (gid_t)n;
                return 0;
        }
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        rc = getgrnam_r(group, &gr, buf, size, &found);
        if (rc == 0 && found)
                *ret = gr.gr_gid;
        free(buf);
        return rc != 0 ? -rc : found ? 0 : -ENOENT;
}
