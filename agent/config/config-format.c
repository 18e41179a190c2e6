/* The effective configuration as INI text, for people (--print-config).
 * Secrets are masked; everything else is written so that reading the text
 * back gives the same values. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "config/config-internal.h"

/* Write a string value so that the dialect reads it back unchanged: quotes
 * around it when its ends are whitespace or a quote pair would be lost, and
 * continuation lines for embedded newlines. */
static int format_string(StrBuf *b, const char *v)
{
        size_t n = strlen(v);
        bool quote =
                n > 0 && !strchr(v, '\n') && (strchr(" \t\"'", v[0]) || strchr(" \t\"'", v[n - 1]));
        int r = 0;

        if (n == 0)
                return 0;
        r = strbuf_puts(b, " ");
        if (r >= 0 && quote)
                r = strbuf_putc(b, '"');
        for (const char *p = v; *p && r >= 0; p++)
                r = *p == '\n' ? strbuf_puts(b, "\n\t") : strbuf_putc(b, *p);
        if (r >= 0 && quote)
                r = strbuf_putc(b, '"');
        return r;
}

static int format_option(StrBuf *b, const Config *c, const ConfigOption *o)
{
        const void *field = (const char *)c + o->offset;
        int r;

        if ((o->type == CONFIG_TYPE_STR || o->type == CONFIG_TYPE_HOSTS) && !*(char *const *)field)
                return strbuf_printf(b, "# %s is unset\n", o->name);

        r = strbuf_printf(b, "%s =", o->name);
        if (r < 0)
                return r;
        switch (o->type) {
        case CONFIG_TYPE_STR:
        case CONFIG_TYPE_HOSTS: {
                const char *v = *(char *const *)field;
                if ((o->flags & CONFIG_OPT_SECRET) && *v)
                        r = strbuf_puts(b, " ***");
                else
                        r = format_string(b, v);
                break;
        }
        case CONFIG_TYPE_BOOL:
                r = strbuf_puts(b, *(const bool *)field ? " true" : " false");
                break;
        case CONFIG_TYPE_UINT:
                if ((o->flags & CONFIG_OPT_AUTO) && *(const unsigned *)field == UINT_MAX)
                        r = strbuf_puts(b, " auto");
                else
                        r = strbuf_printf(b, " %u", *(const unsigned *)field);
                break;
        case CONFIG_TYPE_U64:
                if ((o->flags & CONFIG_OPT_AUTO) && *(const uint64_t *)field == UINT64_MAX)
                        r = strbuf_puts(b, " auto");
                else
                        r = strbuf_printf(b, " %" PRIu64, *(const uint64_t *)field);
                break;
        case CONFIG_TYPE_SSL_VERSION:
                r = format_string(b, config_ssl_version_name(*(const ConfigSslVersion *)field));
                break;
        case CONFIG_TYPE_CGROUP:
                r = format_string(b, config_cgroup_name(*(const ConfigCgroup *)field));
                break;
        case CONFIG_TYPE_ENV_LIST:
        case CONFIG_TYPE_PATH_LIST: {
                const ConfigStrv *v = field;
                for (size_t i = 0; i < v->n && r >= 0; i++)
                        r = strbuf_printf(b, "%s%s", i ? "," : " ", v->items[i]);
                break;
        }
        case CONFIG_TYPE_PROFILE:
                r = format_string(b, config_profile_name(*(const ConfigProfile *)field));
                break;
        case CONFIG_TYPE_LOG_FORMAT:
                r = format_string(b, config_log_format_name(*(const ConfigLogFormat *)field));
                break;
        case CONFIG_TYPE_CAPS: {
                uint64_t mask = *(const uint64_t *)field;
                const char *sep = " ";
                for (unsigned n = 0; n < 64 && r >= 0; n++)
                        if ((mask >> n) & 1) {
                                r = strbuf_printf(b, "%s%s", sep, config_capability_name(n));
                                sep = ",";
                        }
                break;
        }
        case CONFIG_TYPE_IGNORED:
                break;
        }
        return r < 0 ? r : strbuf_putc(b, '\n');
}

int config_format(const Config *c, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int r = 0;

        for (ConfigSection s = CONFIG_SECTION_DEFAULT; s < CONFIG_SECTION_MAX && r >= 0; s++) {
                r = strbuf_printf(&b, "%s[%s]\n", s == CONFIG_SECTION_DEFAULT ? "" : "\n",
                                  config_section_name(s));
                for (size_t i = 0; i < config_n_options && r >= 0; i++) {
                        const ConfigOption *o = &config_options[i];
                        if (o->section == s && o->type != CONFIG_TYPE_IGNORED)
                                r = format_option(&b, c, o);
                }
        }
        if (r < 0)
                return r;
        return strbuf_steal(&b, ret);
}
