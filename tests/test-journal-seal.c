/* Seals (journal-seal.c, docs/journal.md "Seals"): a plan planted in the
 * journal, a result forged into an entry, a done record altered, a sealed
 * file moved to another entry: each refused (quarantined, never run, never
 * taken for an answer), and the next plan still goes through. The key,
 * its mode, and the HMAC and GMAC against OpenSSL's own; the journal of a
 * version before seals accepted once and sealed. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/xattr.h>

#include "test-journal.h"
#include "test-journal-main.h"

#define SEAL_XATTR "user.muranoagent.seal"

static const char plan_text[] = "{\"Data\": \"e30=\", \"Signature\": \"\", \"ID\": \"planted\", "
                                "\"ReplyTo\": null}";

/* The entries as "ts:state ..." (P pending, I interrupted, R result). */
static char *states(Journal *j)
{
        _cleanup_free_ JournalEntry *v = NULL;
        StrBuf out = STRBUF_INIT;
        size_t n;

        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                strbuf_printf(&out, "%s%s:%c", i ? " " : "", v[i].ts, "PRIR"[v[i].state]);
        return out.data ? out.data : strdup("");
}

/* A plan planted by hand (no seal) is listed, refused when loaded, moved
 * to quarantine by the removal the daemon then asks for, and never run;
 * one planted with `running` too is not answered as interrupted either. A
 * plan stored after them loads. */
START_TEST(test_planted_plan)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *error = NULL, *list = NULL;
        char ts[JOURNAL_TS_MAX];

        j = journal_free(j);
        put_file("plans/100/plan.json", plan_text);
        put_file("plans/101/plan.json", plan_text);
        put_file("plans/101/running", "");
        j = open_with(NULL);
        list = states(j);
        ck_assert_str_eq(list, "100:P 101:I");
        ck_assert_int_eq(journal_load_plan(j, "100", &p, &error), JOURNAL_FORGED);
        ck_assert_ptr_null(p);
        ck_assert_ptr_nonnull(strstr(error, "seal"));
        ck_assert_int_eq(journal_remove(j, "100", false), 0);
        ck_assert(exists("plans/quarantine/100.plan.json"));
        ck_assert(!exists("plans/100"));
        free(error);
        error = NULL;
        ck_assert_int_eq(journal_load_plan(j, "101", &p, &error), JOURNAL_FORGED);
        ck_assert_int_eq(journal_remove(j, "101", false), 0);
        ck_assert(exists("plans/quarantine/101.plan.json"));
        ck_assert(!exists("plans/101"));
        JournalEntry e;
        ck_assert_int_eq(journal_next(j, &e), 0);

        /* The next plan still runs. */
        ck_assert_int_eq(journal_put_plan(j, "{\"ID\": \"next\"}", 14, NULL, 0, "m", NULL, ts), 0);
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
        ck_assert_str_eq(p->body, "{\"ID\": \"next\"}");
}
END_TEST

/* A sealed plan.json moved to another entry, or with a byte changed, is
 * refused: the seal covers the entry's name and every byte. */
START_TEST(test_moved_or_altered_plan)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *from = NULL, *to = NULL, *text = NULL;
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX];
        size_t len;

        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "a", NULL, a), 0);
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "b", NULL, b), 0);
        j = journal_free(j);
        /* a's file, seal and all, in place of b's. */
        from = pathf("plans/%s/plan.json", a);
        to = pathf("plans/%s/plan.json", b);
        ck_assert_int_eq(rename(from, to), 0);
        free(to);
        to = pathf("plans/%s", a);
        rm_rf(to);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, b, &p, NULL), JOURNAL_FORGED);
        j = journal_free(j);

        /* A byte changed in a sealed file (its seal kept). */
        j = open_with(NULL);
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "c", NULL, a), 0);
        j = journal_free(j);
        free(from);
        from = pathf("plans/%s/plan.json", a);
        ck_assert_int_eq(file_read_all(from, 4096, &text, &len), 0);
        text[strlen("{\"Data\": \"")] = 'f';
        int fd = open(from, O_WRONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, text, len, 0), (ssize_t)len);
        close(fd);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, a, &p, NULL), JOURNAL_FORGED);
}
END_TEST

/* A result forged into the entry of a plan that has not run: refused
 * when it is read for publishing, quarantined, and the plan is still
 * there to run (the forgery cannot make it be skipped). */
START_TEST(test_forged_result)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_result_freep) JournalResult *r = NULL;
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *list = NULL, *text = NULL, *rel = NULL;
        char ts[JOURNAL_TS_MAX];
        JournalEntry e;

        ck_assert_int_eq(journal_put_plan(j, "{\"ID\": \"x\"}", 11, NULL, 0, "x", NULL, ts), 0);
        j = journal_free(j);
        ck_assert_int_ge(asprintf(&rel, "plans/%s/result.json", ts), 0);
        put_file(rel, "{\"SourceID\": \"x\", \"ErrorCode\": 0, \"Body\": \"forged\"}");
        j = open_with(NULL);
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_int_eq(e.state, JOURNAL_RESULT);
        ck_assert_int_eq(journal_get_result(j, ts, &r), JOURNAL_FORGED);
        /* Nor does it answer a redelivery of the plan. */
        json_t *id = json_string("x");
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 0);
        ck_assert_int_eq(journal_remove(j, ts, false), 0);
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 0);
        json_decref(id);
        free(rel);
        ck_assert_int_ge(asprintf(&rel, "plans/quarantine/%s.result.json", ts), 0);
        ck_assert(exists(rel));
        list = states(j);
        ck_assert_ptr_nonnull(strstr(list, ":P"));
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, ts);
        ck_assert_int_eq(e.state, JOURNAL_PENDING);
        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
        ck_assert_str_eq(p->body, "{\"ID\": \"x\"}");
        /* Its real result is published, recorded and found. */
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"x\"}", 17, NULL), 0);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        id = json_string("x");
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
        json_decref(id);
}
END_TEST

/* A done record altered, or appended by hand, never answers a plan:
 * refused at open, and when altered while the journal is open. */
START_TEST(test_altered_done_record)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_free_ char *rp = NULL, *text = NULL, *found = NULL;
        json_t *a = json_string("a"), *b = json_string("b");
        char ts[JOURNAL_TS_MAX], *at;
        size_t len;
        int fd;

        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "a", NULL, ts), 0);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"a\", \"Body\": 1}", 28, NULL),
                         0);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_int_eq(journal_done_lookup(j, a, &found), 1);
        free(found);
        found = NULL;

        /* Changed while open: "Body": 1 becomes 7. */
        rp = pathf("plans/done/records");
        ck_assert_int_eq(file_read_all(rp, 1 << 20, &text, &len), 0);
        at = strstr(text, "\"Body\": 1");
        ck_assert_ptr_nonnull(at);
        fd = open(rp, O_WRONLY);
        ck_assert_int_eq(pwrite(fd, "7", 1, at - text + 8), 1);
        close(fd);
        ck_assert_int_eq(journal_done_lookup(j, a, &found), 0);

        /* At the next open it is not loaded; nor is one appended by hand
         * (a record of b, the header of the format before seals). */
        j = journal_free(j);
        FILE *f = fopen(rp, "a");
        ck_assert_ptr_nonnull(f);
        /* SHA-256 of "\"b\"", the record name of ID "b". */
        fprintf(f, "%s 1 17\n{\"SourceID\": \"b\"}\n",
                "c100f95c1913f9c72fc1f4ef0847e1e723ffe0bde0b36e5f36c13f81fe8c26ed");
        fclose(f);
        j = open_with(NULL);
        ck_assert_uint_eq(journal_open_report(j)->n_forged_records, 2);
        ck_assert_int_eq(journal_done_lookup(j, a, &found), 0);
        ck_assert_int_eq(journal_done_lookup(j, b, &found), 0);
        /* Dropped from the file: reported once. */
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_uint_eq(journal_open_report(j)->n_forged_records, 0);
        json_decref(a);
        json_decref(b);
}
END_TEST

/* HMAC-SHA256 (OpenSSL's) under key of "muranoagent-seal-1" NUL kind NUL
 * name NUL, and bytes. */
static void hmac_seal(const char *key, size_t klen, const char *kind, const char *name,
                      const char *bytes, size_t len, unsigned char out[32])
{
        _cleanup_strbuf_ StrBuf msg = STRBUF_INIT;
        unsigned out_len = 0;

        strbuf_append(&msg, "muranoagent-seal-1", 19);
        strbuf_append(&msg, kind, strlen(kind) + 1);
        strbuf_append(&msg, name, strlen(name) + 1);
        strbuf_append(&msg, bytes, len);
        ck_assert_ptr_nonnull(HMAC(EVP_sha256(), key, (int)klen, (unsigned char *)msg.data, msg.len,
                                   out, &out_len));
        ck_assert_uint_eq(out_len, 32);
}

/* The key: 32 bytes, mode 0600, beside plans/; a key file that is not
 * one is refused, never replaced. The seal of a plan.json is a 12-byte
 * nonce and the GMAC (OpenSSL's AES-256-GCM with no plaintext) under it
 * of the domain, the kind, the entry and the bytes, its key the HMAC seal
 * of kind "file-seal-key"; a nonce is not used twice. */
START_TEST(test_key_and_hmac)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_free_ char *kp = pathf("journal.key"), *key = NULL, *pp = NULL, *pp2 = NULL,
                            *text = NULL;
        _cleanup_strbuf_ StrBuf msg = STRBUF_INIT;
        unsigned char seal[64], seal2[64], aes[32], tag[16];
        char ts[JOURNAL_TS_MAX], ts2[JOURNAL_TS_MAX];
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        struct stat st;
        size_t len, klen;
        int out_len;

        ck_assert_int_eq(stat(kp, &st), 0);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        ck_assert_int_eq(st.st_size, 32);
        ck_assert(journal_open_report(j)->seal_created);
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), 0);
        pp = pathf("plans/%s/plan.json", ts);
        ck_assert_int_eq(getxattr(pp, SEAL_XATTR, seal, sizeof(seal)), 28);
        ck_assert_int_eq(file_read_all(kp, 64, &key, &klen), 0);
        ck_assert_int_eq(file_read_all(pp, 4096, &text, &len), 0);
        hmac_seal(key, klen, "file-seal-key", "", "", 0, aes);
        strbuf_append(&msg, "muranoagent-seal-2\0plan.json\0", 29);
        strbuf_append(&msg, ts, strlen(ts) + 1);
        strbuf_append(&msg, text, len);
        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL), 1);
        ck_assert_int_eq(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL), 1);
        ck_assert_int_eq(EVP_EncryptInit_ex(c, NULL, NULL, aes, seal), 1);
        ck_assert_int_eq(
                EVP_EncryptUpdate(c, NULL, &out_len, (unsigned char *)msg.data, (int)msg.len), 1);
        ck_assert_int_eq(EVP_EncryptFinal_ex(c, tag, &out_len), 1);
        ck_assert_int_eq(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag), 1);
        EVP_CIPHER_CTX_free(c);
        ck_assert_mem_eq(seal + 12, tag, 16);
        /* Another plan, another nonce. */
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts2), 0);
        pp2 = pathf("plans/%s/plan.json", ts2);
        ck_assert_int_eq(getxattr(pp2, SEAL_XATTR, seal2, sizeof(seal2)), 28);
        ck_assert(memcmp(seal, seal2, 12) != 0);

        /* Reopened: the same key, nothing made. */
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert(!journal_open_report(j)->seal_created);
        j = journal_free(j);
        /* A key file of another size: refused. */
        ck_assert_int_eq(truncate(kp, 16), 0);
        ck_assert_int_eq(journal_open(storage, NULL, &j), -EBADMSG);
}
END_TEST

/* A plan.json sealed as the version before sealed it (HMAC-SHA256 of
 * "muranoagent-seal-1" ..., 32 bytes) still loads; one whose GMAC tag,
 * nonce or bytes changed does not, and neither does an HMAC seal of
 * another entry. */
START_TEST(test_seal_kinds)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *kp = pathf("journal.key"), *key = NULL, *pp = NULL, *text = NULL;
        unsigned char seal[64], hmac[32];
        char ts[JOURNAL_TS_MAX];
        size_t len, klen;

        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), 0);
        j = journal_free(j); /* so that the plan is read back, not kept */
        pp = pathf("plans/%s/plan.json", ts);
        ck_assert_int_eq(file_read_all(kp, 64, &key, &klen), 0);
        ck_assert_int_eq(file_read_all(pp, 4096, &text, &len), 0);
        ck_assert_int_eq(getxattr(pp, SEAL_XATTR, seal, sizeof(seal)), 28);

        for (int i = 0; i < 2; i++) {
                /* A bit of the tag, then of the nonce. */
                seal[i ? 0 : 27] ^= 1;
                ck_assert_int_eq(setxattr(pp, SEAL_XATTR, seal, 28, 0), 0);
                j = open_with(NULL);
                ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), JOURNAL_FORGED);
                j = journal_free(j);
                seal[i ? 0 : 27] ^= 1;
        }
        hmac_seal(key, klen, "plan.json", "1", text, len, hmac);
        ck_assert_int_eq(setxattr(pp, SEAL_XATTR, hmac, 32, 0), 0);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), JOURNAL_FORGED);
        j = journal_free(j);
        hmac_seal(key, klen, "plan.json", ts, text, len, hmac);
        ck_assert_int_eq(setxattr(pp, SEAL_XATTR, hmac, 32, 0), 0);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
        ck_assert_str_eq(p->body, "{}");
}
END_TEST

/* A journal written before seals (files with no seal, a records file of
 * the old format, no key): accepted once at the open that makes the key,
 * sealed, and still accepted at the next open; a file planted after that
 * is not. */
START_TEST(test_upgrade)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_(journal_result_freep) JournalResult *r = NULL;
        _cleanup_free_ char *found = NULL;
        json_t *old = json_string("old");
        char rec[200], now[24];

        /* Recorded now, so that its age keeps it. */
        snprintf(now, sizeof(now), "%lld", (long long)time(NULL) * 1000000000LL);

        put_file("plans/", "");
        put_file("plans/done/", "");
        put_file("plans/200/plan.json", plan_text);
        put_file("plans/201/plan.json", plan_text);
        put_file("plans/201/result.json", "{\"SourceID\": \"planted\"}");
        /* SHA-256 of "\"old\"", the record name of ID "old". */
        snprintf(rec, sizeof(rec),
                 "d6d13014ef18d45030eec6ac0a66eab592e7f07e1feda93538935b3b434a8de8 %s 19\n"
                 "{\"SourceID\": \"old\"}\n",
                 now);
        put_file("plans/done/records", rec);
        j = open_with(NULL);
        ck_assert(journal_open_report(j)->seal_created);
        ck_assert_uint_eq(journal_open_report(j)->n_sealed, 4);
        j = journal_free(j);

        j = open_with(NULL);
        ck_assert_uint_eq(journal_open_report(j)->n_forged_records, 0);
        ck_assert_int_eq(journal_load_plan(j, "200", &p, NULL), 0);
        ck_assert_int_eq(journal_get_result(j, "201", &r), 0);
        ck_assert_int_eq(journal_remove(j, "201", true), 0);
        ck_assert_int_eq(journal_done_lookup(j, old, &found), 1);
        ck_assert_str_eq(found, "{\"SourceID\": \"old\"}");
        j = journal_free(j);

        put_file("plans/300/plan.json", plan_text);
        j = open_with(NULL);
        p = journal_plan_free(p);
        ck_assert_int_eq(journal_load_plan(j, "300", &p, NULL), JOURNAL_FORGED);
        json_decref(old);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_planted_plan);
        tcase_add_test(tc, test_moved_or_altered_plan);
        tcase_add_test(tc, test_forged_result);
        tcase_add_test(tc, test_altered_done_record);
        tcase_add_test(tc, test_key_and_hmac);
        tcase_add_test(tc, test_seal_kinds);
        tcase_add_test(tc, test_upgrade);
}

int main(void)
{
        return journal_test_main("journal-seal", add_tests);
}
