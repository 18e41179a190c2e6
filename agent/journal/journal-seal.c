/* Seals: an HMAC-SHA256 on every plan.json, result.json and done record
 * the journal writes, under a key only the agent reads (<storage>/
 * journal.key, 32 random bytes, mode 0600), so that a file planted or
 * altered by a process without the key is refused instead of being run,
 * published or taken for an answer (docs/journal.md, "Seals").
 *
 * The seal of a file travels in its extended attribute
 * user.muranoagent.seal, set on the temporary file before its fsync, so
 * that it is durable with the file at no extra flush, and the file's bytes
 * stay exactly the reference's. A done record carries its seal in its
 * header (journal-done-log.c). What is sealed:
 *
 *   HMAC(key, "muranoagent-seal-1" NUL kind NUL name NUL bytes)
 *
 * where kind is "plan.json", "result.json" or "done", name the entry (or
 * the record name and time), so that no sealed file can be moved to
 * another entry or passed off as another kind.
 *
 * A plan.json or result.json written since is sealed with GMAC instead
 * (journal_file_seal_begin()), 8 times as fast as SHA-256 here, which a
 * 2 MiB plan's 3.7 MB plan.json felt: its attribute holds a random 96-bit
 * nonce and the 128-bit tag of
 *
 *   GMAC(aes_key, nonce, "muranoagent-seal-2" NUL kind NUL name NUL bytes)
 *
 * where aes_key = HMAC(key, "muranoagent-seal-1" NUL "file-seal-key" NUL
 * NUL), no file's seal. The attribute's length tells the two apart; a
 * file's HMAC seal is still accepted (a journal written before).
 *
 * The HMAC is built here on OpenSSL's low-level SHA256_* calls, as the
 * done records' names are (journal-done.c): OpenSSL 3's EVP_MAC and HMAC()
 * fetch their algorithms from a provider, and the first fetch costs 2.2 MiB
 * of resident memory for the agent's life. The inner and outer states of
 * the key are made once at open; a seal copies them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/aes.h>
#include <openssl/crypto.h>
#include <openssl/modes.h>
#include <openssl/sha.h>

#include "journal/journal-calls.h"
#include "journal/journal-internal.h"
#include "journal/journal-log.h"
#include "util/fileio.h"

#define SEAL_DOMAIN      "muranoagent-seal-1"
#define SEAL_FILE_DOMAIN "muranoagent-seal-2"
/* The kind whose HMAC seal of "" is the AES key of files' seals. */
#define SEAL_FILE_KEY_KIND "file-seal-key"

_Static_assert(sizeof(SHA256_CTX) <= JOURNAL_SHA_STATE, "room for a SHA256_CTX");
_Static_assert(sizeof(AES_KEY) <= JOURNAL_AES_STATE, "room for an AES_KEY");

/* What every seal covers first: the domain, the kind of file and its
 * entry's name, each with its NUL. */
static void seal_header(void *inner, const char *kind, const char *name)
{
        SHA256_Update((SHA256_CTX *)inner, SEAL_DOMAIN, sizeof(SEAL_DOMAIN));
        SHA256_Update((SHA256_CTX *)inner, kind, strlen(kind) + 1);
        SHA256_Update((SHA256_CTX *)inner, name, strlen(name) + 1);
}

void journal_seal_begin(const Journal *j, JournalSealer *s, const char *kind, const char *name)
{
        memcpy(s->inner, j->seal_inner, sizeof(SHA256_CTX));
        seal_header(s->inner, kind, name);
        s->outer = j->seal_outer;
}

void journal_seal_update(JournalSealer *s, const void *data, size_t len)
{
        SHA256_Update((SHA256_CTX *)s->inner, data, len);
}

void journal_seal_end(JournalSealer *s, unsigned char mac[JOURNAL_SEAL_LEN])
{
        unsigned char md[SHA256_DIGEST_LENGTH];
        SHA256_CTX outer;

        SHA256_Final(md, (SHA256_CTX *)s->inner);
        memcpy(&outer, s->outer, sizeof(outer));
        SHA256_Update(&outer, md, sizeof(md));
        SHA256_Final(mac, &outer);
        OPENSSL_cleanse(md, sizeof(md));
        OPENSSL_cleanse(s->inner, sizeof(s->inner));
}

void journal_seal_of(const Journal *j, const char *kind, const char *name, const void *data,
                     size_t len, unsigned char mac[JOURNAL_SEAL_LEN])
{
        JournalSealer s;

        journal_seal_begin(j, &s, kind, name);
        journal_seal_update(&s, data, len);
        journal_seal_end(&s, mac);
}

int journal_seal_set(const Journal *j, int fd, const unsigned char mac[JOURNAL_SEAL_LEN])
{
        return j->ops.fsetxattr(fd, JOURNAL_SEAL_XATTR, mac, JOURNAL_SEAL_LEN, 0) < 0 ? -errno : 0;
}

/* The SHA-256 state after the block key XOR pad (RFC 2104's ipad 0x36 or
 * opad 0x5c), into out. */
static void seal_pad_state(unsigned char out[JOURNAL_SHA_STATE],
                           const unsigned char key[JOURNAL_SEAL_LEN], unsigned char pad_byte)
{
        unsigned char pad[SHA256_CBLOCK];
        SHA256_CTX c;

        memset(pad, pad_byte, sizeof(pad));
        for (size_t i = 0; i < JOURNAL_SEAL_LEN; i++)
                pad[i] ^= key[i];
        SHA256_Init(&c);
        SHA256_Update(&c, pad, sizeof(pad));
        memcpy(out, &c, sizeof(c));
        OPENSSL_cleanse(pad, sizeof(pad));
        OPENSSL_cleanse(&c, sizeof(c));
}

/* The inner and outer states of HMAC-SHA256 for key, and the AES key of
 * files' seals. */
static void seal_keys(Journal *j, const unsigned char key[JOURNAL_SEAL_LEN])
{
        unsigned char aes[JOURNAL_SEAL_LEN];

        seal_pad_state(j->seal_inner, key, 0x36);
        seal_pad_state(j->seal_outer, key, 0x5c);
        journal_seal_of(j, SEAL_FILE_KEY_KIND, "", NULL, 0, aes);
        AES_set_encrypt_key(aes, 8 * (int)sizeof(aes), (AES_KEY *)j->seal_aes);
        OPENSSL_cleanse(aes, sizeof(aes));
}

void journal_file_seal_update(JournalFileSealer *s, const void *data, size_t len)
{
        /* Fails only past 2^61 bytes. */
        (void)CRYPTO_gcm128_aad(s->gcm, data, len);
}

/* s's GCM state for its nonce, fed the domain, kind and name: 0 or
 * -ENOMEM. */
static int file_seal_start(const Journal *j, JournalFileSealer *s, const char *kind,
                           const char *name)
{
        s->gcm = CRYPTO_gcm128_new((void *)j->seal_aes, (block128_f)AES_encrypt);
        if (!s->gcm)
                return -ENOMEM;
        CRYPTO_gcm128_setiv(s->gcm, s->nonce, sizeof(s->nonce));
        journal_file_seal_update(s, SEAL_FILE_DOMAIN, sizeof(SEAL_FILE_DOMAIN));
        journal_file_seal_update(s, kind, strlen(kind) + 1);
        journal_file_seal_update(s, name, strlen(name) + 1);
        return 0;
}

int journal_file_seal_begin(const Journal *j, JournalFileSealer *s, const char *kind,
                            const char *name)
{
        ssize_t n;

        do
                n = getrandom(s->nonce, sizeof(s->nonce), 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(s->nonce))
                return n < 0 ? -errno : -EIO;
        return file_seal_start(j, s, kind, name);
}

void journal_file_seal_abort(JournalFileSealer *s)
{
        CRYPTO_gcm128_release(s->gcm); /* cleanses it */
        s->gcm = NULL;
}

int journal_file_seal_end(const Journal *j, JournalFileSealer *s, int fd)
{
        unsigned char seal[JOURNAL_FILE_SEAL_LEN];

        memcpy(seal, s->nonce, JOURNAL_FILE_NONCE_LEN);
        CRYPTO_gcm128_tag(s->gcm, seal + JOURNAL_FILE_NONCE_LEN, JOURNAL_FILE_TAG_LEN);
        journal_file_seal_abort(s);
        return j->ops.fsetxattr(fd, JOURNAL_SEAL_XATTR, seal, sizeof(seal), 0) < 0 ? -errno : 0;
}

/* Whether got (n bytes of a file's attribute) seals text as kind and
 * name: 1, 0 (missing, wrong, or of another length) or -ENOMEM. */
static int seal_check(const Journal *j, const char *kind, const char *name, const char *text,
                      size_t len, const unsigned char *got, ssize_t n)
{
        unsigned char want[JOURNAL_SEAL_LEN];
        JournalFileSealer s;
        int r;

        if (n == JOURNAL_SEAL_LEN) {
                journal_seal_of(j, kind, name, text, len, want);
                return CRYPTO_memcmp(want, got, JOURNAL_SEAL_LEN) == 0;
        }
        if (n != JOURNAL_FILE_SEAL_LEN)
                return 0;
        memcpy(s.nonce, got, JOURNAL_FILE_NONCE_LEN);
        r = file_seal_start(j, &s, kind, name);
        if (r < 0)
                return r;
        journal_file_seal_update(&s, text, len);
        /* Compares in constant time. */
        r = CRYPTO_gcm128_finish(s.gcm, got + JOURNAL_FILE_NONCE_LEN, JOURNAL_FILE_TAG_LEN) == 0;
        journal_file_seal_abort(&s);
        return r;
}

/* A new key, written as storage_fd/journal.key durably (file, rename,
 * directory): 0 or -errno. The system calls themselves, not the journal's
 * ops, which tests count and fail for the journal's own files. */
static int key_create(int storage_fd, unsigned char key[JOURNAL_SEAL_LEN])
{
        static const char tmp[] = "." JOURNAL_KEY_FILE ".tmp";
        ssize_t n = getrandom(key, JOURNAL_SEAL_LEN, 0);
        _cleanup_close_ int fd = -1;
        int r = 0;

        if (n != JOURNAL_SEAL_LEN)
                return n < 0 ? -errno : -EIO;
        (void)unlinkat(storage_fd, tmp, 0);
        fd = openat(storage_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        if (write(fd, key, JOURNAL_SEAL_LEN) != JOURNAL_SEAL_LEN || fsync(fd) < 0 ||
            renameat(storage_fd, tmp, storage_fd, JOURNAL_KEY_FILE) < 0 || fsync(storage_fd) < 0)
                r = errno ? -errno : -EIO;
        if (r < 0)
                (void)unlinkat(storage_fd, tmp, 0);
        return r;
}

/* The key in storage_fd/journal.key: 1 read, 0 when there is none, or
 * -errno (-EBADMSG: not a regular file of 32 bytes that is the agent's). */
static int key_read(int storage_fd, unsigned char key[JOURNAL_SEAL_LEN])
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        fd = openat(storage_fd, JOURNAL_KEY_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size != JOURNAL_SEAL_LEN || st.st_uid != geteuid())
                return -EBADMSG;
        /* Nobody but the agent reads it, whatever an accident made of its mode. */
        if ((st.st_mode & 077) != 0)
                (void)fchmod(fd, 0600);
        n = pread(fd, key, JOURNAL_SEAL_LEN, 0);
        if (n != JOURNAL_SEAL_LEN)
                return n < 0 ? -errno : -EBADMSG;
        return 1;
}

int journal_seal_open(Journal *j, int storage_fd)
{
        unsigned char key[JOURNAL_SEAL_LEN];
        char probe;
        int r;

        /* Extended attributes are what carry a file's seal: a file system
         * without them (tmpfs before Linux 6.6, some network file systems)
         * gets a journal without seals, and the report says so. */
        if (fgetxattr(j->plans_fd, JOURNAL_SEAL_XATTR, &probe, sizeof(probe)) < 0 &&
            (errno == ENOTSUP || errno == ENOSYS)) {
                j->report.seal_unsupported = true;
                return 0;
        }
        r = key_read(storage_fd, key);
        if (r == 0) {
                r = key_create(storage_fd, key);
                j->seal_fresh = r == 0;
        }
        if (r < 0)
                return r;
        seal_keys(j, key);
        OPENSSL_cleanse(key, sizeof(key));
        j->sealed = true;
        j->report.seal_created = j->seal_fresh;
        return 0;
}

int journal_seal_read_at(Journal *j, int dirfd, const char *path, const char *kind,
                         const char *name, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        unsigned char want[JOURNAL_SEAL_LEN], got[JOURNAL_SEAL_LEN];
        ssize_t n;
        size_t len;
        int r;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return errno == ELOOP ? -EINVAL : -errno;
        r = file_read_regular_fd(fd, max, &text, &len);
        if (r < 0)
                return r;
        if (j->sealed) {
                n = fgetxattr(fd, JOURNAL_SEAL_XATTR, got, sizeof(got));
                if (n < 0 && errno == ERANGE)
                        n = 0; /* a seal of another size: no seal of ours */
                else if (n < 0 && errno != ENODATA)
                        return -errno;
                r = seal_check(j, kind, name, text, len, got, n);
                if (r < 0)
                        return r;
                if (r == 0) {
                        /* Entries of the version before seals, found when
                         * the key was made: accepted this once, and
                         * sealed. */
                        if (!j->seal_fresh || n >= 0)
                                return JOURNAL_FORGED;
                        journal_seal_of(j, kind, name, text, len, want);
                        r = journal_seal_set(j, fd, want);
                        if (r < 0)
                                return r;
                        j->report.n_sealed++;
                }
        }
        *ret = TAKE_PTR(text);
        if (ret_len)
                *ret_len = len;
        return 0;
}

void journal_seal_file(Journal *j, int dirfd, const char *dir, const char *file, size_t max)
{
        char path[80];
        _cleanup_free_ char *text = NULL;

        if (!j->seal_fresh)
                return;
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        /* What cannot be read is left to the reads that report it. */
        (void)journal_seal_read_at(j, dirfd, path, file, dir, max, &text, NULL);
}

void journal_seal_mark(Journal *j, const char *ts, const char *file)
{
        JournalIndexEntry *e;

        pthread_mutex_lock(&j->lock);
        e = journal_index_get(j, ts);
        if (e && streq(file, JOURNAL_PLAN_FILE))
                e->forged_plan = true;
        else if (e)
                e->forged_result = true;
        pthread_mutex_unlock(&j->lock);
}

int journal_quarantine(Journal *j, const char *ts, const char *file)
{
        char from[JOURNAL_TS_MAX + 16], to[sizeof(JOURNAL_QUARANTINE_DIR) + JOURNAL_TS_MAX + 16];

        if (j->ops.mkdirat(j->plans_fd, JOURNAL_QUARANTINE_DIR, 0700) < 0 && errno != EEXIST)
                return -errno;
        snprintf(from, sizeof(from), "%s/%s", ts, file);
        snprintf(to, sizeof(to), "%s/%s.%s", JOURNAL_QUARANTINE_DIR, ts, file);
        if (j->ops.renameat(j->plans_fd, from, j->plans_fd, to) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 0;
}

/* The call log's key for one entry: the HMAC states with the domain, the
 * kind "calls" and the entry's name taken in, so that what it seals is a
 * call log record of that entry and nothing else (journal-calls.h). */
struct JournalCallsKey {
        bool keyed;
        JournalOps ops; /* the journal's file operations, for the log's own */
        /* A call log key of a journal with the write-ahead log: the
         * journal (borrowed) and the entry, whose appends go through it. */
        Journal *wal;
        char ts[JOURNAL_TS_MAX];
        _Alignas(16) unsigned char inner[JOURNAL_SHA_STATE];
        _Alignas(16) unsigned char outer[JOURNAL_SHA_STATE];
};

/* The key that seals records of kind for name in journal j: the HMAC
 * states with both taken in, or a plain SHA-256 of the same bytes. */
static int seal_key(const Journal *j, const char *kind, const char *name, JournalCallsKey **ret)
{
        JournalCallsKey *k = calloc(1, sizeof(*k));
        JournalSealer s;

        if (!k)
                return -ENOMEM;
        k->ops = j ? j->ops : journal_sys_ops;
        if (j && j->sealed) {
                journal_seal_begin(j, &s, kind, name);
                memcpy(k->inner, s.inner, sizeof(SHA256_CTX));
                memcpy(k->outer, j->seal_outer, sizeof(SHA256_CTX));
                OPENSSL_cleanse(&s, sizeof(s));
                k->keyed = true;
        } else {
                /* No seals here: a plain SHA-256 of the same bytes, which
                 * tells a whole record from a torn one and nothing more. */
                SHA256_Init((SHA256_CTX *)k->inner);
                seal_header(k->inner, kind, name);
        }
        *ret = k;
        return 0;
}

int journal_calls_key(Journal *j, const char *ts, JournalCallsKey **ret)
{
        int r = seal_key(j, JOURNAL_CALLS_FILE, ts, ret);

        if (r == 0 && j && j->wal && journal_ts_valid(ts)) {
                (*ret)->wal = j;
                snprintf((*ret)->ts, sizeof((*ret)->ts), "%s", ts);
        }
        return r;
}

Journal *journal_calls_key_wal(const JournalCallsKey *k, const char **ret_ts)
{
        *ret_ts = k->ts;
        return k->wal;
}

/* The write-ahead log's records are sealed as the kind "journal.log", of
 * no entry (each record names its entry in its header). */
int journal_log_key(const Journal *j, JournalCallsKey **ret)
{
        return seal_key(j, JOURNAL_LOG_FILE, "", ret);
}

bool journal_calls_key_sealed(const JournalCallsKey *k)
{
        return k->keyed;
}

const JournalOps *journal_calls_key_ops(const JournalCallsKey *k)
{
        return &k->ops;
}

void journal_calls_mac(const JournalCallsKey *k, const unsigned char prev[JOURNAL_CALLS_MAC_LEN],
                       const void *head, size_t head_len, const void *payload, size_t len,
                       unsigned char mac[JOURNAL_CALLS_MAC_LEN])
{
        JournalSealer s;

        memcpy(s.inner, k->inner, sizeof(SHA256_CTX));
        s.outer = k->outer;
        journal_seal_update(&s, prev, JOURNAL_CALLS_MAC_LEN);
        journal_seal_update(&s, head, head_len);
        journal_seal_update(&s, "\n", 1);
        journal_seal_update(&s, payload, len);
        if (k->keyed) {
                journal_seal_end(&s, mac);
                return;
        }
        SHA256_Final(mac, (SHA256_CTX *)s.inner);
}

void journal_calls_key_free(JournalCallsKey *k)
{
        if (!k)
                return;
        OPENSSL_cleanse(k, sizeof(*k));
        free(k);
}
