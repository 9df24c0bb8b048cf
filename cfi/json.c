/* SPDX-License-Identifier: MIT */
/* json.c — see json.h. */
#include "json.h"

#include <inttypes.h>

/* The length of the well-formed UTF-8 sequence at s (of at most `left`
 * bytes), or 0 (Unicode 15 table 3-7). */
static size_t utf8_length(const unsigned char *s, size_t left)
{
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
             : s[0] >= 0xe0 && s[0] <= 0xef ? 3
             : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : 0;
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
        (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
        (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

void cfi_json_string_n(FILE *out, const char *text, size_t max)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len = 0;
    while (len < max && s[len])
        len++;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = c < 0x80 ? 1 : utf8_length(s + i, len - i);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else if (n == 0)
            fputs("\\ufffd", out);
        else
            fwrite(s + i, 1, n, out);
        i += n ? n : 1;
    }
    putc('"', out);
}

void cfi_json_string(FILE *out, const char *text)
{
    if (!text)
        fputs("null", out);
    else
        cfi_json_string_n(out, text, SIZE_MAX);
}

void cfi_json_address(FILE *out, uint64_t address)
{
    fprintf(out, "\"0x%" PRIx64 "\"", address);
}
