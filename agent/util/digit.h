/* The value of one ASCII character as a digit, for every parser of numbers
 * in bases up to 36 (Python's int(text, base), literals, YAML integers, hex
 * escapes and UUIDs). */
#pragma once

/* '0'-'9' are 0-9, 'a'-'z' and 'A'-'Z' are 10-35; anything else is 36, so
 * "digit_value(c) < base" is the whole test for a digit of base. */
static inline int digit_value(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'Z')
                return c - 'A' + 10;
        return 36;
}
