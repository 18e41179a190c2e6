/* muranoagent-fetch: one HTTP(S) download into one file. The files module
 * runs it as a command through the plan's ProcRunner, so that it gets the
 * sandbox and the time limits of the scripts. It is a program of its own,
 * the only one linked with libcurl, so that the agent does not carry libcurl
 * and what it loads (files-program.c). Its command line: files-fetch.h.
 *
 * It stands in for the reference's requests.get(url, stream=True) loop
 * (files_manager.py _download_file), with these differences, all listed in
 * docs/files.md: a status of 400 or more fails the download (the reference
 * saved the error page as the file), the size is capped, and only http and
 * https are allowed, for the first request and for redirects. As with
 * requests, redirects are followed (at most 30), TLS certificates and host
 * names are verified, Content-Encoding is decoded, and the proxy variables
 * of the environment are honoured.
 *
 * libcurl's rules: curl_global_init()/curl_global_cleanup() bracket the
 * whole use; every easy handle is cleaned up; the error buffer must outlive
 * the transfer. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build-config.h"
#include "files/files-fetch.h"
#include "util/macro.h"

typedef struct Fetch {
        CURL *curl;
        int fd;
        uint64_t max_size; /* 0 = no limit */
        uint64_t got;
        long status;     /* the final response's HTTP status, once known */
        bool too_large;  /* the body went past max_size */
        int write_errno; /* writing DEST failed */
} Fetch;

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
        Fetch *f = userdata;
        size_t n = size * nmemb, done = 0;

        /* An error page is not kept: the status of the response whose body
         * this is (redirect bodies are not passed here) ends the transfer. */
        if (f->status == 0)
                curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &f->status);
        if (f->status >= 400)
                return 0;
        /* Content-Length is checked by CURLOPT_MAXFILESIZE before the body
         * arrives; this catches bodies of unannounced length. */
        if (f->max_size > 0 && (n > f->max_size || f->got > f->max_size - n)) {
                f->too_large = true;
                return 0;
        }
        while (done < n) {
                ssize_t w = write(f->fd, data + done, n - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        f->write_errno = errno;
                        return 0;
                }
                done += (size_t)w;
        }
        f->got += n;
        return n;
}

static int usage_error(const char *why)
{
        fprintf(stderr,
                "muranoagent-fetch: %s\nUsage: muranoagent-fetch [--max-size BYTES] "
                "[--connect-timeout SECONDS] URL DEST\n",
                why);
        return 2;
}

static bool parse_u64(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        if (!*s || *s == '-' || *s == '+')
                return false;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end)
                return false;
        *ret = v;
        return true;
}

/* Set up and run the transfer. Returns 0 or 1 with the reason printed. */
static int fetch_run(Fetch *f, const char *url, const char *dest, uint64_t connect_timeout)
{
        char errbuf[CURL_ERROR_SIZE] = "";
        CURLcode rc;
        long status = 0;

        if (curl_easy_setopt(f->curl, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_FOLLOWLOCATION, 1L) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_MAXREDIRS, 30L) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_CONNECTTIMEOUT, (long)connect_timeout) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_USERAGENT, "muranoagent/" PACKAGE_VERSION) !=
                    CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_WRITEDATA, f) != CURLE_OK) {
                fprintf(stderr, "cannot set up the transfer (libcurl %s)\n",
                        curl_version_info(CURLVERSION_NOW)->version);
                return 1;
        }
        if (f->max_size > 0 && curl_easy_setopt(f->curl, CURLOPT_MAXFILESIZE_LARGE,
                                                (curl_off_t)f->max_size) != CURLE_OK) {
                fputs("cannot set the size limit\n", stderr);
                return 1;
        }

        rc = curl_easy_perform(f->curl);
        curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 400) {
                fprintf(stderr, "the server answered with HTTP status %ld\n", status);
                return 1;
        }
        if (f->too_large || rc == CURLE_FILESIZE_EXCEEDED) {
                fprintf(stderr, "the file is larger than %llu bytes\n",
                        (unsigned long long)f->max_size);
                return 1;
        }
        if (f->write_errno) {
                fprintf(stderr, "cannot write %s: %s\n", dest, strerror(f->write_errno));
                return 1;
        }
        if (rc != CURLE_OK) {
                fprintf(stderr, "%s\n", errbuf[0] ? errbuf : curl_easy_strerror(rc));
                return 1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        uint64_t max_size = FILES_DEFAULT_MAX_DOWNLOAD;
        uint64_t connect_timeout = FILES_DEFAULT_CONNECT_TIMEOUT;
        const char *pos[2] = {NULL, NULL};
        Fetch f = {.fd = -1};
        int n_pos = 0, i, r;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i];
                uint64_t *target = NULL;

                if (streq(a, "--")) {
                        i++;
                        break;
                }
                if (streq(a, "--max-size"))
                        target = &max_size;
                else if (streq(a, "--connect-timeout"))
                        target = &connect_timeout;
                else if (a[0] == '-' && a[1] != 0)
                        return usage_error("unknown option");
                else if (n_pos < 2) {
                        pos[n_pos++] = a;
                        continue;
                } else
                        return usage_error("too many arguments");
                if (i + 1 >= argc || !parse_u64(argv[i + 1], target))
                        return usage_error("an option needs a number");
                i++;
        }
        for (; i < argc; i++) {
                if (n_pos == 2)
                        return usage_error("too many arguments");
                pos[n_pos++] = argv[i];
        }
        if (n_pos != 2)
                return usage_error("URL and DEST are needed");
        if (connect_timeout > 86400)
                return usage_error("--connect-timeout is at most 86400");
        f.max_size = max_size;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                fputs("cannot initialise libcurl\n", stderr);
                return 1;
        }
        f.curl = curl_easy_init();
        if (!f.curl) {
                fputs("cannot initialise libcurl\n", stderr);
                curl_global_cleanup();
                return 1;
        }
        f.fd = open(pos[1], O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
        if (f.fd < 0) {
                fprintf(stderr, "cannot create %s: %s\n", pos[1], strerror(errno));
                r = 1;
        } else
                r = fetch_run(&f, pos[0], pos[1], connect_timeout);
        if (f.fd >= 0 && close(f.fd) < 0 && r == 0) {
                fprintf(stderr, "cannot write %s: %s\n", pos[1], strerror(errno));
                r = 1;
        }
        if (f.fd >= 0 && r != 0)
                unlink(pos[1]);
        curl_easy_cleanup(f.curl);
        curl_global_cleanup();
        return r;
}
