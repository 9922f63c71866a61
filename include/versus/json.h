/* versus/json.h - a small JSON (RFC 8259) document model: parse, inspect, build, write.
 *
 * A document is a tree of vs_json nodes.  The root owns every node below it: vs_json_free(root)
 * releases the whole tree, and a node handed to vs_json_push()/vs_json_set() becomes owned by its
 * new parent (also when the call fails: it is freed then).  Node fields are public for reading;
 * change a tree only through the functions below.
 *
 * Parsing is strict RFC 8259 (no comments, no trailing commas, no NaN) and safe on any input: the
 * nesting depth is limited, strings must be valid UTF-8, \uXXXX escapes (surrogate pairs included)
 * become UTF-8, duplicate object keys are an error unless allowed.  Every node remembers the line
 * and column (in characters, from 1) where it starts, so later checks can say where a bad value is:
 *     model.json:4:20: "kernel": expected an integer in [1, 4096], found -3
 * Writing is deterministic: object keys in insertion order, integers exactly, other numbers with
 * the fewest digits that read back to the same value (at most 9 for a value that is a float32, the
 * %.9g guarantee; at most 17 for other doubles).  Numbers are read and written in the C locale
 * whatever setlocale() says. */
#ifndef VERSUS_JSON_H
#define VERSUS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_json_type {
    VS_JSON_NULL = 0,
    VS_JSON_BOOL,
    VS_JSON_NUMBER,
    VS_JSON_STRING,
    VS_JSON_ARRAY,
    VS_JSON_OBJECT
} vs_json_type;

typedef struct vs_json vs_json;

typedef struct vs_json_member {
    char *key;          /* UTF-8, NUL-terminated (may hold NUL bytes from \u0000: see key_len) */
    size_t key_len;
    vs_json *value;
    int32_t line, col;  /* where the key starts */
} vs_json_member;

/* Read only the fields of the node's type (they share storage). */
struct vs_json {
    vs_json_type type;
    bool boolean;                   /* VS_JSON_BOOL */
    bool is_int;                    /* VS_JSON_NUMBER written without fraction/exponent, within int64 */
    bool owns_source;               /* private: set on a parsed root */
    int32_t line, col;              /* where the value starts (1-based); 0 for a node built in code */
    union {
        struct {                    /* VS_JSON_NUMBER */
            double number;          /* the value (rounded when a huge integer) */
            int64_t integer;        /* the exact value when is_int */
        };
        struct {                    /* VS_JSON_STRING: UTF-8, NUL-terminated; length bytes (NUL possible) */
            char *string;
            size_t length;
        };
        struct {                    /* VS_JSON_ARRAY and VS_JSON_OBJECT */
            size_t n;               /* items or members */
            size_t cap;             /* private: allocated slots */
            union {
                vs_json **items;             /* VS_JSON_ARRAY: items[0..n) */
                vs_json_member *members;     /* VS_JSON_OBJECT: members[0..n) in document order */
            };
        };
    };
    const char *source;             /* file name for messages (owned by the parsed root); NULL when built */
};

/* ---- parsing ------------------------------------------------------------------------------------ */
typedef struct vs_json_parse_opts {
    int max_depth;              /* nesting limit; 0 means VS_JSON_DEFAULT_DEPTH */
    bool allow_duplicate_keys;  /* accept repeated keys (vs_json_get returns the last); default: error */
} vs_json_parse_opts;

#define VS_JSON_DEFAULT_DEPTH 128
#define VS_JSON_MAX_FILE ((size_t)64 << 20) /* vs_json_parse_file refuses larger files */

/* Parse text[0..len) (need not be NUL-terminated).  name labels messages ("<memory>" if NULL);
 * opts may be NULL.  On success *out is a new tree the caller frees with vs_json_free. */
vs_status vs_json_parse(const char *text, size_t len, const char *name, const vs_json_parse_opts *opts,
                        vs_json **out, vs_error *err);
/* Parse the file at path (messages name it). */
vs_status vs_json_parse_file(const char *path, const vs_json_parse_opts *opts, vs_json **out, vs_error *err);

void vs_json_free(vs_json *node);                           /* a whole tree; NULL is fine */

/* ---- reading ------------------------------------------------------------------------------------ */
const vs_json *vs_json_get(const vs_json *obj, const char *key); /* member value, NULL if absent/not an object */
const vs_json *vs_json_at(const vs_json *arr, size_t i);         /* item i, NULL if out of range/not an array */
const char *vs_json_type_name(vs_json_type t);                   /* "null", "a number", "an object", ... */
/* "file:line:col" of a node (just "file" for a node without a position) into buf; returns buf. */
const char *vs_json_where(const vs_json *node, char *buf, size_t n);

/* Typed reads with messages naming file:line:col and what was expected.  The node forms check one
 * value; the _get forms look key up in obj and fail when it is missing; the _opt forms store def
 * when the key is missing (or null) and check the value otherwise. */
vs_status vs_json_int(const vs_json *node, int64_t lo, int64_t hi, int64_t *out, vs_error *err);   /* integer in [lo,hi]; 3.0 counts */
vs_status vs_json_double(const vs_json *node, double lo, double hi, double *out, vs_error *err);   /* number in [lo,hi] */
vs_status vs_json_bool(const vs_json *node, bool *out, vs_error *err);                             /* true or false */
vs_status vs_json_str(const vs_json *node, const char **out, vs_error *err);                       /* string without NUL bytes */

vs_status vs_json_get_int(const vs_json *obj, const char *key, int64_t lo, int64_t hi, int64_t *out, vs_error *err);
vs_status vs_json_get_double(const vs_json *obj, const char *key, double lo, double hi, double *out, vs_error *err);
vs_status vs_json_get_bool(const vs_json *obj, const char *key, bool *out, vs_error *err);
vs_status vs_json_get_str(const vs_json *obj, const char *key, const char **out, vs_error *err);
/* The member itself, required and of type t (e.g. an array); NULL with err set otherwise. */
const vs_json *vs_json_get_typed(const vs_json *obj, const char *key, vs_json_type t, vs_error *err);

vs_status vs_json_opt_int(const vs_json *obj, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out,
                          vs_error *err);
vs_status vs_json_opt_double(const vs_json *obj, const char *key, double lo, double hi, double def, double *out,
                             vs_error *err);
vs_status vs_json_opt_bool(const vs_json *obj, const char *key, bool def, bool *out, vs_error *err);
vs_status vs_json_opt_str(const vs_json *obj, const char *key, const char *def, const char **out, vs_error *err);

/* ---- building (each returns a new node, NULL when out of memory) ------------------------------ */
vs_json *vs_json_new_null(void);
vs_json *vs_json_new_bool(bool v);
vs_json *vs_json_new_int(int64_t v);                        /* exact integer */
vs_json *vs_json_new_number(double v);                      /* must be finite to be written */
vs_json *vs_json_new_string(const char *s);                 /* copy of a NUL-terminated UTF-8 string */
vs_json *vs_json_new_stringn(const char *s, size_t len);    /* copy of s[0..len) */
vs_json *vs_json_new_array(void);
vs_json *vs_json_new_int_array(const int64_t *v, int n); /* [v0, ..., v(n-1)]; NULL when out of memory */
vs_json *vs_json_new_object(void);
/* Append v to array arr.  Takes v in every case; VS_ERR_NOMEM when v is NULL or memory runs out,
 * VS_ERR_ARG when arr is not an array.  So `vs_json_push(a, vs_json_new_int(3))` needs one check. */
vs_status vs_json_push(vs_json *arr, vs_json *v);
/* Set obj[key] = v: replaces the value in place when key exists, else appends.  Takes v likewise. */
vs_status vs_json_set(vs_json *obj, const char *key, vs_json *v);

/* ---- writing ------------------------------------------------------------------------------------ */
/* Serialise node into a new malloc'd NUL-terminated string (*len bytes without the NUL).
 * indent 0: compact ("{"a":1,"b":[1,2]}").  indent > 0: a container holding only scalars on one
 * line ("{"op": "relu"}", "[1, 28, 28]"), any other container one member per line, indented.
 * Fails (VS_ERR_NUMERIC) on a non-finite number and (VS_ERR_FORMAT) on invalid UTF-8. */
vs_status vs_json_write(const vs_json *node, int indent, char **out, size_t *len, vs_error *err);
/* Write node with indent 2 and a final newline to path, atomically (a failed write leaves any
 * existing file untouched). */
vs_status vs_json_write_file(const char *path, const vs_json *node, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
