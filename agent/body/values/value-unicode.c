/* Unicode character classes and simple case mappings, searched in the
 * tables gen-unicode.py generates (value-unicode-tables.h). */
#include "body/values/value-internal.h"
#include "body/values/value-unicode-tables.h"

static bool in_ranges(const BvRange *r, size_t n, uint32_t cp)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cp < r[mid].first)
                        hi = mid;
                else if (cp > r[mid].last)
                        lo = mid + 1;
                else
                        return true;
        }
        return false;
}

static uint32_t map_case(const BvCaseRun *r, size_t n, uint32_t cp)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cp < r[mid].first) {
                        hi = mid;
                } else if (cp > r[mid].last) {
                        lo = mid + 1;
                } else {
                        if ((cp - r[mid].first) % r[mid].stride != 0)
                                return cp;
                        return (uint32_t)((int32_t)cp + r[mid].delta);
                }
        }
        return cp;
}

bool bv__unicode_isprintable(uint32_t cp)
{
        return !in_ranges(nonprintable, ELEMENTSOF(nonprintable), cp);
}

bool bv__unicode_isspace(uint32_t cp)
{
        return in_ranges(space, ELEMENTSOF(space), cp);
}

bool bv__unicode_isalpha(uint32_t cp)
{
        return in_ranges(alpha, ELEMENTSOF(alpha), cp);
}

bool bv__unicode_isdigit(uint32_t cp)
{
        return in_ranges(digit, ELEMENTSOF(digit), cp);
}

uint32_t bv__unicode_lower(uint32_t cp)
{
        return map_case(to_lower, ELEMENTSOF(to_lower), cp);
}

uint32_t bv__unicode_upper(uint32_t cp)
{
        return map_case(to_upper, ELEMENTSOF(to_upper), cp);
}
