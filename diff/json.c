/* SPDX-License-Identifier: MIT */
/* json.c — see json.h. A recursive descent over RFC 8259's grammar; the
 * depth bound keeps the recursion bounded on any input. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

struct parser {
    const char *text;
    size_t len, at;
    struct diff_json_error *error;
};

static bool fail(struct parser *p, const char *message)
{
    if (p->error->message == NULL) {
        p->error->offset = p->at;
        p->error->message = message;
    }
    return false;
}

static void skip_space(struct parser *p)
{
    while (p->at < p->len && strchr(" \t\r\n", p->text[p->at]) &&
           p->text[p->at] != 0)
        p->at++;
}

static bool literal(struct parser *p, const char *word,
                    enum diff_json_kind kind, struct diff_json *out)
{
    size_t n = strlen(word);
    if (p->len - p->at < n || memcmp(p->text + p->at, word, n) != 0)
        return fail(p, "not a JSON value");
    p->at += n;
    out->kind = kind;
    return true;
}

/* ------------------------------------------------------------------ */
/* Numbers                                                              */
/* ------------------------------------------------------------------ */

static size_t digits(struct parser *p)
{
    size_t start = p->at;
    while (p->at < p->len && p->text[p->at] >= '0' && p->text[p->at] <= '9')
        p->at++;
    return p->at - start;
}

/* The exact value of an integer's digits, when it fits in 64 bits. */
static bool integer_value(const char *text, size_t n, uint64_t *out)
{
    uint64_t value = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(text[i] - '0');
        if (value > (UINT64_MAX - d) / 10)
            return false;
        value = value * 10 + d;
    }
    *out = value;
    return true;
}

static bool number(struct parser *p, struct diff_json *out)
{
    size_t start = p->at;
    out->kind = DIFF_JSON_NUMBER;
    out->negative = p->at < p->len && p->text[p->at] == '-';
    p->at += out->negative;
    size_t int_start = p->at, n = digits(p);
    if (n == 0 || (n > 1 && p->text[int_start] == '0'))
        return fail(p, "bad number");
    bool fraction = p->at < p->len && p->text[p->at] == '.';
    if (fraction && (p->at++, digits(p) == 0))
        return fail(p, "bad number");
    bool exponent = p->at < p->len && strchr("eE", p->text[p->at]) &&
                    p->text[p->at] != 0;
    if (exponent) {
        p->at++;
        if (p->at < p->len && strchr("+-", p->text[p->at]) &&
            p->text[p->at] != 0)
            p->at++;
        if (digits(p) == 0)
            return fail(p, "bad number");
    }
    char buf[64];
    size_t len = p->at - start;
    if (len >= sizeof buf)
        return fail(p, "number too long");
    memcpy(buf, p->text + start, len);
    buf[len] = 0;
    out->number = strtod(buf, NULL);
    out->is_integer = !fraction && !exponent &&
                      integer_value(p->text + int_start, n, &out->magnitude) &&
                      (!out->negative || out->magnitude <= (uint64_t)INT64_MAX + 1);
    return true;
}

/* ------------------------------------------------------------------ */
/* Strings                                                              */
/* ------------------------------------------------------------------ */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_u16(struct parser *p, unsigned *out)
{
    *out = 0;
    if (p->len - p->at < 4)
        return fail(p, "bad \\u escape");
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p->text[p->at++]);
        if (d < 0)
            return fail(p, "bad \\u escape");
        *out = *out << 4 | (unsigned)d;
    }
    return true;
}

/* A \u escape (and its low surrogate) as a code point. */
static bool code_point(struct parser *p, unsigned *out)
{
    if (!read_u16(p, out))
        return false;
    if (*out >= 0xdc00 && *out < 0xe000)
        return fail(p, "lone low surrogate");
    if (*out < 0xd800 || *out >= 0xdc00)
        return *out != 0 || fail(p, "\\u0000 in a string");
    unsigned low;
    if (p->len - p->at < 2 || p->text[p->at] != '\\' ||
        p->text[p->at + 1] != 'u')
        return fail(p, "lone high surrogate");
    p->at += 2;
    if (!read_u16(p, &low) || low < 0xdc00 || low >= 0xe000)
        return fail(p, "bad surrogate pair");
    *out = 0x10000 + ((*out - 0xd800) << 10) + (low - 0xdc00);
    return true;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static bool escape(struct parser *p, char *out, size_t *n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (p->at >= p->len)
        return fail(p, "unterminated string");
    char c = p->text[p->at++];
    const char *known = c ? strchr(from, c) : NULL;
    if (known) {
        out[(*n)++] = to[known - from];
        return true;
    }
    unsigned cp;
    if (c != 'u') {
        p->at--;
        return fail(p, "bad escape in a string");
    }
    if (!code_point(p, &cp))
        return false;
    *n += put_utf8(out + *n, cp);
    return true;
}

/* The bytes of the string's source from p->at up to its closing quote
 * (or the end of the text): escapes never make the text longer than its
 * source, so this bounds it; bounding it by the rest of the text instead
 * would make the memory of a document grow with the number of its
 * strings times its length. */
static size_t source_length(const struct parser *p)
{
    size_t at = p->at;
    while (at < p->len && p->text[at] != '"')
        at += p->text[at] == '\\' && at + 1 < p->len ? 2 : 1;
    return at - p->at;
}

/* The text of a string, the opening quote read. */
static char *string_text(struct parser *p)
{
    char *out = malloc(source_length(p) + 1);
    size_t n = 0;
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    for (;;) {
        if (p->at >= p->len) {
            fail(p, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)p->text[p->at++];
        if (c == '"') {
            out[n] = 0;
            return out;
        }
        if (c < 0x20) {
            p->at--;
            fail(p, "control character in a string");
            break;
        }
        if (c != '\\')
            out[n++] = (char)c;
        else if (!escape(p, out, &n))
            break;
    }
    free(out);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Arrays and objects                                                   */
/* ------------------------------------------------------------------ */

static bool value(struct parser *p, struct diff_json *out, unsigned depth);

static bool grow(struct parser *p, struct diff_json *out, size_t *capacity,
                 bool keyed)
{
    if (out->count < *capacity)
        return true;
    size_t n = *capacity ? *capacity * 2 : 8;
    struct diff_json *elements = realloc(out->elements, n * sizeof *elements);
    if (elements)
        out->elements = elements;
    char **keys = keyed ? realloc(out->keys, n * sizeof *keys) : NULL;
    if (keys)
        out->keys = keys;
    if (!elements || (keyed && !keys))
        return fail(p, "out of memory");
    *capacity = n;
    return true;
}

/* One element of an array or object, with its key for an object. */
static bool element(struct parser *p, struct diff_json *out, bool keyed,
                    unsigned depth)
{
    char *key = NULL;
    if (keyed) {
        skip_space(p);
        if (p->at >= p->len || p->text[p->at] != '"')
            return fail(p, "expected a member name");
        p->at++;
        if (!(key = string_text(p)))
            return false;
        skip_space(p);
        if (p->at >= p->len || p->text[p->at] != ':') {
            free(key);
            return fail(p, "expected ':'");
        }
        p->at++;
        out->keys[out->count] = key;
    }
    struct diff_json *e = &out->elements[out->count++];
    memset(e, 0, sizeof *e);
    return value(p, e, depth + 1);
}

static bool container(struct parser *p, struct diff_json *out, char close,
                      unsigned depth)
{
    bool keyed = close == '}';
    size_t capacity = 0;
    out->kind = keyed ? DIFF_JSON_OBJECT : DIFF_JSON_ARRAY;
    skip_space(p);
    if (p->at < p->len && p->text[p->at] == close) {
        p->at++;
        return true;
    }
    for (;;) {
        if (!grow(p, out, &capacity, keyed) || !element(p, out, keyed, depth))
            return false;
        skip_space(p);
        char c = p->at < p->len ? p->text[p->at] : 0;
        if (c != close && c != ',')
            return fail(p, keyed ? "expected ',' or '}'" : "expected ',' or ']'");
        p->at++;
        if (c == close)
            return true;
    }
}

static bool value(struct parser *p, struct diff_json *out, unsigned depth)
{
    if (depth > DIFF_JSON_DEPTH_MAX)
        return fail(p, "values nested too deep");
    skip_space(p);
    if (p->at >= p->len)
        return fail(p, "unexpected end of the text");
    switch (p->text[p->at]) {
    case '{':
    case '[':
        return container(p, out, p->text[p->at++] == '{' ? '}' : ']', depth);
    case '"':
        p->at++;
        out->kind = DIFF_JSON_STRING;
        return (out->string = string_text(p)) != NULL;
    case 'n':
        return literal(p, "null", DIFF_JSON_NULL, out);
    case 't':
        return literal(p, "true", DIFF_JSON_TRUE, out);
    case 'f':
        return literal(p, "false", DIFF_JSON_FALSE, out);
    default:
        return number(p, out);
    }
}

static void free_members(struct diff_json *v)
{
    for (size_t i = 0; i < v->count; i++) {
        free_members(&v->elements[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->elements);
    free(v->keys);
    free(v->string);
}

struct diff_json *diff_json_parse(const char *text, size_t len,
                                  struct diff_json_error *error)
{
    struct parser p = {text, len, 0, error};
    error->offset = 0;
    error->message = NULL;
    struct diff_json *root = calloc(1, sizeof *root);
    if (!root) {
        fail(&p, "out of memory");
        return NULL;
    }
    bool ok = value(&p, root, 0);
    skip_space(&p);
    if (ok && p.at != p.len)
        ok = fail(&p, "text after the value");
    if (!ok) {
        diff_json_free(root);
        return NULL;
    }
    return root;
}

void diff_json_free(struct diff_json *value)
{
    if (!value)
        return;
    free_members(value);
    free(value);
}

/* ------------------------------------------------------------------ */
/* Reading values                                                       */
/* ------------------------------------------------------------------ */

const struct diff_json *diff_json_member(const struct diff_json *value,
                                         const char *key)
{
    if (!value || value->kind != DIFF_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < value->count; i++)
        if (!strcmp(value->keys[i], key))
            return &value->elements[i];
    return NULL;
}

bool diff_json_u64(const struct diff_json *value, uint64_t *out)
{
    if (!value || value->kind != DIFF_JSON_NUMBER || !value->is_integer ||
        (value->negative && value->magnitude != 0))
        return false;
    *out = value->magnitude;
    return true;
}

bool diff_json_i64(const struct diff_json *value, int64_t *out)
{
    if (!value || value->kind != DIFF_JSON_NUMBER || !value->is_integer)
        return false;
    if (value->negative) {
        *out = value->magnitude == (uint64_t)INT64_MAX + 1
                   ? INT64_MIN : -(int64_t)value->magnitude;
        return true;
    }
    if (value->magnitude > INT64_MAX)
        return false;
    *out = (int64_t)value->magnitude;
    return true;
}

bool diff_json_bool(const struct diff_json *value, bool *out)
{
    if (!value || (value->kind != DIFF_JSON_TRUE &&
                   value->kind != DIFF_JSON_FALSE))
        return false;
    *out = value->kind == DIFF_JSON_TRUE;
    return true;
}

const char *diff_json_text(const struct diff_json *value)
{
    return value && value->kind == DIFF_JSON_STRING ? value->string : NULL;
}

bool diff_json_hex(const struct diff_json *value, uint64_t *out)
{
    const char *text = diff_json_text(value);
    if (!text || text[0] != '0' || text[1] != 'x' || !text[2] ||
        strlen(text) > 18)
        return false;
    uint64_t v = 0;
    for (const char *c = text + 2; *c; c++) {
        int d = hex_digit(*c);
        if (d < 0)
            return false;
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return true;
}
