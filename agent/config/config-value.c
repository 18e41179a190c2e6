/* Converters from option text to typed values, with oslo.config's rules
 * where the Python agent has the option (booleans, host addresses), and
 * the quoting of values inside messages. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config-internal.h"
#include "config/ini.h"

/* Longest part of a value quoted in a message. */
#define QUOTE_MAX 120

int config_parse_bool(const char *s, bool *ret)
{
        /* oslo.config types.Boolean: these words, compared lower-cased. */
        static const char *const yes[] = {"true", "1", "on", "yes"};
        static const char *const no[] = {"false", "0", "off", "no"};

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

int config_parse_u64(const char *s, bool size_suffix, uint64_t min, uint64_t max, uint64_t *ret)
{
        const char *p = s;
        uint64_t v = 0, mult = 1;

        /* Python's int() takes a leading '+'; a '-' can only give a value
         * below every minimum we have, so it fails like one. */
        if (*p == '+')
                p++;
        if (!isdigit((unsigned char)*p))
                return -EINVAL;
        for (; isdigit((unsigned char)*p); p++) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -EINVAL;
                v = v * 10 + d;
        }
        if (size_suffix && *p) {
                switch (*p) {
                case 'k':
                case 'K':
                        mult = UINT64_C(1) << 10;
                        break;
                case 'm':
                case 'M':
                        mult = UINT64_C(1) << 20;
                        break;
                case 'g':
                case 'G':
                        mult = UINT64_C(1) << 30;
                        break;
                default:
                        return -EINVAL;
                }
                p++;
        }
        if (*p)
                return -EINVAL;
        if (v > UINT64_MAX / mult)
                return -EINVAL;
        v *= mult;
        if (v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int config_parse_ssl_version(const char *s, ConfigSslVersion *ret)
{
        /* The keys of oslo_service.sslutils._SSL_PROTOCOLS that a current
         * Python has, compared lower-cased as mqclient.py does, plus
         * tlsv1_3. sslv2 and sslv3 are gone from Python and from OpenSSL. */
        for (ConfigSslVersion v = CONFIG_SSL_DEFAULT; v <= CONFIG_SSL_SSLV23; v++)
                if (strcasecmp(s, config_ssl_version_name(v)) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

int config_parse_cgroup(const char *s, ConfigCgroup *ret)
{
        for (ConfigCgroup v = CONFIG_CGROUP_AUTO; v <= CONFIG_CGROUP_OFF; v++)
                if (strcasecmp(s, config_cgroup_name(v)) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

int config_parse_log_format(const char *s, ConfigLogFormat *ret)
{
        for (ConfigLogFormat v = CONFIG_LOG_FORMAT_TEXT; v <= CONFIG_LOG_FORMAT_JSON; v++)
                if (strcasecmp(s, config_log_format_name(v)) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

bool config_env_name_valid(const char *s, size_t n)
{
        if (n == 0 || isdigit((unsigned char)s[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '_')
                        return false;
        return true;
}

bool config_abspath_valid(const char *s, size_t n)
{
        return n > 0 && s[0] == '/';
}

void config_strv_done(ConfigStrv *v)
{
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        v->items = NULL;
        v->n = 0;
}

int config_parse_profile(const char *s, ConfigProfile *ret)
{
        for (ConfigProfile v = CONFIG_PROFILE_COMPATIBLE; v <= CONFIG_PROFILE_USER; v++)
                if (strcasecmp(s, config_profile_name(v)) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

/* Capability names as <linux/capability.h> numbers them. */
static const char *const capability_names[] = {
        "CAP_CHOWN",
        "CAP_DAC_OVERRIDE",
        "CAP_DAC_READ_SEARCH",
        "CAP_FOWNER",
        "CAP_FSETID",
        "CAP_KILL",
        "CAP_SETGID",
        "CAP_SETUID",
        "CAP_SETPCAP",
        "CAP_LINUX_IMMUTABLE",
        "CAP_NET_BIND_SERVICE",
        "CAP_NET_BROADCAST",
        "CAP_NET_ADMIN",
        "CAP_NET_RAW",
        "CAP_IPC_LOCK",
        "CAP_IPC_OWNER",
        "CAP_SYS_MODULE",
        "CAP_SYS_RAWIO",
        "CAP_SYS_CHROOT",
        "CAP_SYS_PTRACE",
        "CAP_SYS_PACCT",
        "CAP_SYS_ADMIN",
        "CAP_SYS_BOOT",
        "CAP_SYS_NICE",
        "CAP_SYS_RESOURCE",
        "CAP_SYS_TIME",
        "CAP_SYS_TTY_CONFIG",
        "CAP_MKNOD",
        "CAP_LEASE",
        "CAP_AUDIT_WRITE",
        "CAP_AUDIT_CONTROL",
        "CAP_SETFCAP",
        "CAP_MAC_OVERRIDE",
        "CAP_MAC_ADMIN",
        "CAP_SYSLOG",
        "CAP_WAKE_ALARM",
        "CAP_BLOCK_SUSPEND",
        "CAP_AUDIT_READ",
        "CAP_PERFMON",
        "CAP_BPF",
        "CAP_CHECKPOINT_RESTORE",
};

const char *config_capability_name(unsigned n)
{
        return n < ELEMENTSOF(capability_names) ? capability_names[n] : NULL;
}

static int capability_number(const char *s, size_t n)
{
        if (n > 4 && strncasecmp(s, "CAP_", 4) == 0) {
                s += 4;
                n -= 4;
        }
        for (size_t i = 0; i < ELEMENTSOF(capability_names); i++)
                if (strlen(capability_names[i]) == n + 4 &&
                    strncasecmp(capability_names[i] + 4, s, n) == 0)
                        return (int)i;
        return -1;
}

static bool capability_valid(const char *s, size_t n)
{
        return capability_number(s, n) >= 0;
}

int config_parse_caps(const char *s, uint64_t *ret, char **ret_bad)
{
        ConfigStrv v = {NULL, 0};
        uint64_t mask = 0;
        int r = config_parse_list(s, capability_valid, &v, ret_bad);

        if (r < 0)
                return r;
        for (size_t i = 0; i < v.n; i++)
                mask |= UINT64_C(1) << capability_number(v.items[i], strlen(v.items[i]));
        config_strv_done(&v);
        *ret = mask;
        return 0;
}

int config_parse_env_list(const char *s, ConfigStrv *ret, char **ret_bad)
{
        return config_parse_list(s, config_env_name_valid, ret, ret_bad);
}

int config_parse_list(const char *s, bool (*valid)(const char *item, size_t n), ConfigStrv *ret,
                      char **ret_bad)
{
        ConfigStrv v = {NULL, 0};
        const char *p = s;
        int r = 0;

        for (;;) {
                const char *end = strchrnul(p, ',');
                size_t skip = ini_lspace(p, (size_t)(end - p));
                size_t n = ini_rstrip_len(p + skip, (size_t)(end - p) - skip);

                if (n > 0) {
                        char *item = strndup(p + skip, n), **items;
                        if (!item) {
                                r = -ENOMEM;
                                break;
                        }
                        if (!valid(item, n)) {
                                *ret_bad = item;
                                r = -EINVAL;
                                break;
                        }
                        items = realloc(v.items, (v.n + 1) * sizeof(*items));
                        if (!items) {
                                free(item);
                                r = -ENOMEM;
                                break;
                        }
                        items[v.n++] = item;
                        v.items = items;
                }
                if (!*end)
                        break;
                p = end + 1;
        }
        if (r < 0) {
                config_strv_done(&v);
                return r;
        }
        *ret = v;
        return 0;
}

/* oslo.config types.Hostname: labels of letters, digits and '-', 1 to 63
 * long, not starting or ending with '-'; at most 253 characters; one
 * trailing dot allowed; the last label not all digits. */
static bool hostname_valid(const char *s, size_t n)
{
        size_t start = 0;
        bool last_has_alpha = false;

        if (n == 0 || n > 253)
                return false;
        if (s[n - 1] == '.')
                n--;
        while (start <= n) {
                size_t end = start;
                last_has_alpha = false;
                while (end < n && s[end] != '.') {
                        if (!isalnum((unsigned char)s[end]) && s[end] != '-')
                                return false;
                        if (!isdigit((unsigned char)s[end]))
                                last_has_alpha = true;
                        end++;
                }
                if (end == start || end - start > 63 || s[start] == '-' || s[end - 1] == '-')
                        return false;
                start = end + 1;
        }
        return last_has_alpha;
}

static bool ip_valid(int family, const char *s, size_t n)
{
        char buf[INET6_ADDRSTRLEN + 1];
        unsigned char addr[sizeof(struct in6_addr)];

        if (n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        return inet_pton(family, buf, addr) == 1;
}

static int parse_port(const char *s, size_t n, unsigned *ret)
{
        unsigned v = 0;

        if (n == 0 || n > 5)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!isdigit((unsigned char)s[i]))
                        return -EINVAL;
                v = v * 10 + (unsigned)(s[i] - '0');
        }
        if (v < 1 || v > 65535)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Parse one trimmed item. Returns 0, -ENOMEM, or 1 with *ret_reason, the
 * end of a sentence that starts with "item N". */
static int parse_host_item(const char *s, size_t n, unsigned default_port, ConfigHost *ret,
                           const char **ret_reason)
{
        const char *host = s, *port = NULL, *colon = memchr(s, ':', n), *why = NULL;
        size_t hlen = n, plen = 0;

        if (s[0] == '[') {
                const char *close = memchr(s, ']', n);
                if (!close)
                        why = "has no closing ']'";
                else if (!ip_valid(AF_INET6, s + 1, (size_t)(close - s - 1)))
                        why = "has no IPv6 address between '[' and ']'";
                else if (close + 1 < s + n && close[1] != ':')
                        why = "has text after ']' that is not ':port'";
                else {
                        host = s + 1;
                        hlen = (size_t)(close - host);
                        if (close + 1 < s + n) {
                                port = close + 2;
                                plen = (size_t)(s + n - port);
                        }
                }
        } else if (colon && !memchr(colon + 1, ':', (size_t)(s + n - colon - 1))) {
                hlen = (size_t)(colon - s);
                port = colon + 1;
                plen = (size_t)(s + n - port);
                if (!ip_valid(AF_INET, host, hlen) && !hostname_valid(host, hlen))
                        why = "is not a valid host name or IP address";
        } else if (colon) {
                /* Two or more colons and no brackets: a bare IPv6 address, as
                 * the reference's HostAddressOpt accepts it. */
                if (!ip_valid(AF_INET6, host, hlen))
                        why = "is not a valid host name or IP address (write an IPv6 address "
                              "with a port as [address]:port)";
        } else if (!ip_valid(AF_INET, host, hlen) && !hostname_valid(host, hlen))
                why = "is not a valid host name or IP address";

        ret->port = default_port;
        if (!why && port && parse_port(port, plen, &ret->port) < 0)
                why = "has a port that is not an integer from 1 to 65535";
        if (why) {
                *ret_reason = why;
                return 1;
        }
        ret->host = strndup(host, hlen);
        return ret->host ? 0 : -ENOMEM;
}

void config_hosts_free(ConfigHost *h, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(h[i].host);
        free(h);
}

int config_parse_hosts(const char *s, unsigned default_port, ConfigHost **ret, size_t *ret_n,
                       char **ret_why)
{
        _cleanup_strbuf_ StrBuf why = STRBUF_INIT;
        ConfigHost *hosts = NULL;
        size_t n = 0, item = 0;
        const char *p = s, *reason = NULL;
        int r;

        for (;;) {
                const char *end = strchrnul(p, ',');
                size_t skip = ini_lspace(p, (size_t)(end - p));
                size_t len = ini_rstrip_len(p + skip, (size_t)(end - p) - skip);
                ConfigHost *h;

                item++;
                if (len == 0) {
                        reason = "is empty";
                        break;
                }
                h = realloc(hosts, (n + 1) * sizeof(*h));
                if (!h) {
                        config_hosts_free(hosts, n);
                        return -ENOMEM;
                }
                hosts = h;
                r = parse_host_item(p + skip, len, default_port, &hosts[n], &reason);
                if (r < 0) {
                        config_hosts_free(hosts, n);
                        return r;
                }
                if (r > 0)
                        break;
                n++;
                if (!*end) {
                        *ret = hosts;
                        *ret_n = n;
                        return 0;
                }
                p = end + 1;
        }

        config_hosts_free(hosts, n);
        r = strbuf_puts(&why, "expected a comma-separated list of host[:port], got ");
        if (r >= 0)
                r = config_quote(&why, s);
        if (r >= 0)
                r = strbuf_printf(&why, ": item %zu %s", item, reason);
        if (r >= 0)
                r = strbuf_steal(&why, ret_why);
        return r < 0 ? r : CONFIG_INVALID;
}

int config_quote(StrBuf *b, const char *s)
{
        size_t n = strlen(s), cut = n;
        int r;

        if (n > QUOTE_MAX) {
                /* Cut at a character boundary. */
                cut = QUOTE_MAX;
                while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
                        cut--;
        }
        r = strbuf_putc(b, '\'');
        for (size_t i = 0; i < cut && r >= 0; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\n')
                        r = strbuf_puts(b, "\\n");
                else if (c == '\t')
                        r = strbuf_puts(b, "\\t");
                else if (c == '\'' || c == '\\')
                        r = strbuf_printf(b, "\\%c", c);
                else if (c < 0x20 || c == 0x7f)
                        r = strbuf_printf(b, "\\x%02x", c);
                else
                        r = strbuf_putc(b, (char)c);
        }
        if (r >= 0)
                r = strbuf_puts(b, cut < n ? "'..." : "'");
        return r;
}
