/* SPDX-License-Identifier: MIT */
/* json.c — just enough of a JSON reader to find members of the reports
 * `cfisem diff --json` and `cfisem validate --json` write: a value is
 * skipped by its syntax (strings with their escapes, nesting bounded),
 * never trusted; anything else is "not found". */
#include <stdlib.h>
#include <string.h>

#include "robust.h"

enum { JSON_DEPTH_MAX = 64 };

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* p at the opening quote: past the closing one, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

static const char *skip_value_depth(const char *p, const char *end,
                                    unsigned depth);

/* p at '{' or '[': past the matching close, or NULL. */
static const char *skip_nested(const char *p, const char *end, unsigned depth)
{
    char close = *p == '{' ? '}' : ']';
    bool object = *p == '{';
    p = skip_space(p + 1, end);
    if (p < end && *p == close)
        return p + 1;
    while (p && p < end) {
        if (object) {
            if (*p != '"' || !(p = skip_string(p, end)))
                return NULL;
            p = skip_space(p, end);
            if (p >= end || *p != ':')
                return NULL;
            p = skip_space(p + 1, end);
        }
        p = skip_value_depth(p, end, depth + 1);
        if (!p)
            return NULL;
        p = skip_space(p, end);
        if (p < end && *p == close)
            return p + 1;
        if (p >= end || *p != ',')
            return NULL;
        p = skip_space(p + 1, end);
    }
    return NULL;
}

static const char *skip_value_depth(const char *p, const char *end,
                                    unsigned depth)
{
    if (depth > JSON_DEPTH_MAX || p >= end)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p == '{' || *p == '[')
        return skip_nested(p, end, depth);
    const char *start = p;
    while (p < end && (strchr("-+.eE", *p) || (*p >= '0' && *p <= '9') ||
                       (*p >= 'a' && *p <= 'z')))
        p++;
    return p > start ? p : NULL;
}

const char *rb_json_skip(const char *p, const char *end)
{
    return skip_value_depth(skip_space(p, end), end, 0);
}

const char *rb_json_member(const char *object, const char *end,
                           const char *key)
{
    const char *p = skip_space(object, end);
    if (p >= end || *p != '{')
        return NULL;
    size_t klen = strlen(key);
    p = skip_space(p + 1, end);
    while (p < end && *p == '"') {
        const char *name = p + 1, *after = skip_string(p, end);
        if (!after)
            return NULL;
        p = skip_space(after, end);
        if (p >= end || *p != ':')
            return NULL;
        p = skip_space(p + 1, end);
        if ((size_t)(after - 1 - name) == klen && !memcmp(name, key, klen))
            return p;
        p = rb_json_skip(p, end);
        if (!p)
            return NULL;
        p = skip_space(p, end);
        if (p < end && *p == ',')
            p = skip_space(p + 1, end);
    }
    return NULL;
}

bool rb_json_u64(const char *value, const char *end, uint64_t *out)
{
    const char *p = value ? skip_space(value, end) : end;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    *out = v;
    return true;
}

bool rb_json_string_is(const char *value, const char *end, const char *text)
{
    const char *p = value ? skip_space(value, end) : end;
    size_t n = strlen(text);
    return p < end && *p == '"' && (size_t)(end - p) > n + 1 &&
           !memcmp(p + 1, text, n) && p[n + 1] == '"';
}

bool rb_json_string_starts(const char *value, const char *end,
                           const char *prefix)
{
    const char *p = value ? skip_space(value, end) : end;
    size_t n = strlen(prefix);
    return p < end && *p == '"' && (size_t)(end - p) > n &&
           !memcmp(p + 1, prefix, n);
}

const char *rb_json_first(const char *array, const char *end)
{
    const char *p = array ? skip_space(array, end) : end;
    if (p >= end || *p != '[')
        return NULL;
    p = skip_space(p + 1, end);
    return p < end && *p != ']' ? p : NULL;
}

const char *rb_json_next(const char *element, const char *end)
{
    const char *p = rb_json_skip(element, end);
    if (!p)
        return NULL;
    p = skip_space(p, end);
    if (p >= end || *p != ',')
        return NULL;
    return skip_space(p + 1, end);
}
