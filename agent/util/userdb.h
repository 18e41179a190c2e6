/* Users and groups named by name or by number, as [sandbox] user and group
 * and the sandbox helper's --user and --group take them: one lookup for the
 * runner, the sandbox's home directory and the helper's identity. Reentrant
 * (the getpw*_r() family); links nothing but libc, as the helper must. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct UserdbUser {
        uid_t uid;
        gid_t gid;
        char *name; /* owned */
        char *home; /* owned */
} UserdbUser;

/* Whether s is a number (decimal digits only, below (uid_t)-1), and then
 * its value in *ret. */
bool userdb_parse_id(const char *s, unsigned *ret);

/* The passwd entry of user, looked up by number when it is one and by name
 * otherwise. Returns 0 and fills *ret (free with userdb_user_clear()),
 * -ENOENT when there is no such entry, or another negative errno. */
int userdb_user(const char *user, UserdbUser *ret);

void userdb_user_clear(UserdbUser *u);

/* group as a gid: a number as it is (no entry needed), a name from the
 * group database. Returns 0, -ENOENT when there is no such group, or
 * another negative errno. */
int userdb_group(const char *group, gid_t *ret);
