/* SPDX-License-Identifier: MIT */
/* json.h — a reader of the JSON that cfisem writes (RFC 8259), so that
 * results written by `cfisem diff --json` (one file, a shard, a whole
 * run) can be read back and merged (diff/merge.h).
 *
 * The whole text becomes a tree of values. An object keeps its members in
 * the order written (a key written twice is kept twice; diff_json_member finds
 * the first). Numbers keep their text's exact integer value when they
 * are integers within int64/uint64, besides their double. Bounds: values
 * nest at most DIFF_JSON_DEPTH_MAX deep; strings may hold any UTF-8 and the
 * escapes of RFC 8259 (\u0000 is refused: cfisem writes no NUL). Any
 * other input is an error with its byte offset, never a crash.
 */
#ifndef CFISEM_DIFF_JSON_H
#define CFISEM_DIFF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DIFF_JSON_DEPTH_MAX 64

enum diff_json_kind {
    DIFF_JSON_NULL,
    DIFF_JSON_FALSE,
    DIFF_JSON_TRUE,
    DIFF_JSON_NUMBER,
    DIFF_JSON_STRING,
    DIFF_JSON_ARRAY,
    DIFF_JSON_OBJECT,
};

struct diff_json {
    enum diff_json_kind kind;
    double number;             /* DIFF_JSON_NUMBER */
    bool is_integer;           /* an integer that fits below */
    bool negative;
    uint64_t magnitude;        /* |value| when is_integer */
    char *string;              /* DIFF_JSON_STRING, NUL-terminated */
    size_t count;              /* DIFF_JSON_ARRAY, DIFF_JSON_OBJECT: elements */
    struct diff_json *elements;     /* values, in order */
    char **keys;               /* DIFF_JSON_OBJECT: the key of each element */
};

struct diff_json_error {
    size_t offset;             /* in the text */
    const char *message;       /* a fixed string */
};

/* Parses text[0, len). NULL on error (*error filled; also when out of
 * memory: "out of memory"). */
struct diff_json *diff_json_parse(const char *text, size_t len,
                        struct diff_json_error *error);
void diff_json_free(struct diff_json *value);

/* The first member `key` of an object; NULL when value is not an object
 * or has no such member. */
const struct diff_json *diff_json_member(const struct diff_json *value, const char *key);

/* Typed reads: false when the value is missing or of another kind. */
bool diff_json_u64(const struct diff_json *value, uint64_t *out);
bool diff_json_i64(const struct diff_json *value, int64_t *out);
bool diff_json_bool(const struct diff_json *value, bool *out);
/* A string's text; NULL when not a string. */
const char *diff_json_text(const struct diff_json *value);
/* "0x1f" as cfisem writes addresses and values: false otherwise. */
bool diff_json_hex(const struct diff_json *value, uint64_t *out);

#endif
