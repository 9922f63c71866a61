/* nn/json_write.c - deterministic JSON serialisation of vs_json trees (compact or indented). */
#include "versus/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/io/io_util.h"

/* A growable string; the first failure sticks and later appends do nothing. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    vs_status status;
    vs_error *err;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->status) return;
    if (n >= b->cap - b->n) {
        size_t need = b->n + n + 1, ncap = b->cap ? b->cap : 256;
        while (ncap < need && ncap <= SIZE_MAX / 2) ncap *= 2;
        char *p = ncap >= need ? realloc(b->s, ncap) : NULL;
        if (!p) {
            b->status = vs_error_set(b->err, VS_ERR_NOMEM, "json: out of memory writing %zu bytes", need);
            return;
        }
        b->s = p;
        b->cap = ncap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_newline(sbuf *b, int indent, int level)
{
    sb_put(b, "\n", 1);
    for (long i = 0; i < (long)indent * level; i++) sb_put(b, " ", 1);
}

/* The fewest significant digits that read back (through strtod) to the same value: compared as
 * float32 when the value is one, else as a double. */
static void format_double(double v, char *buf, size_t n)
{
    if (v == 0 && signbit(v)) {
        snprintf(buf, n, "-0.0"); /* "-0" would read back as the integer 0 */
        return;
    }
    float f = (float)v;
    bool is_float = (double)f == v;
    int max = is_float ? 9 : 17;
    for (int p = 1; p <= max; p++) {
        snprintf(buf, n, "%.*g", p, v);
        double back = strtod(buf, NULL);
        if (is_float ? (float)back == f : back == v) return;
    }
    snprintf(buf, n, "%.17g", v);
}

static void write_string(sbuf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    sb_put(b, "\"", 1);
    while (p < end && !b->status) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        sb_put(b, (const char *)run, (size_t)(p - run));
        if (p == end) break;
        char esc[8];
        switch (*p) {
        case '"': sb_str(b, "\\\""); break;
        case '\\': sb_str(b, "\\\\"); break;
        case '\b': sb_str(b, "\\b"); break;
        case '\f': sb_str(b, "\\f"); break;
        case '\n': sb_str(b, "\\n"); break;
        case '\r': sb_str(b, "\\r"); break;
        case '\t': sb_str(b, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                sb_str(b, esc);
            } else {
                size_t k = vs_io_utf8_len(p, end);
                if (!k) {
                    b->status = vs_error_set(b->err, VS_ERR_FORMAT,
                                             "json: string holds invalid UTF-8 (byte 0x%02X at offset %zu)", *p,
                                             (size_t)(p - (const unsigned char *)s));
                    return;
                }
                sb_put(b, (const char *)p, k);
                p += k;
                continue;
            }
        }
        p++;
    }
    sb_put(b, "\"", 1);
}

static bool is_container(const vs_json *v) { return v->type == VS_JSON_ARRAY || v->type == VS_JSON_OBJECT; }

/* Does node hold only scalars (or empty containers)?  Then it is written on one line. */
static bool flat(const vs_json *node)
{
    for (size_t i = 0; i < node->n; i++) {
        const vs_json *c = node->type == VS_JSON_ARRAY ? node->items[i] : node->members[i].value;
        if (c && is_container(c) && c->n > 0) return false;
    }
    return true;
}

static void write_value(sbuf *b, const vs_json *v, int indent, int level)
{
    if (b->status) return;
    if (!v) {
        b->status = vs_error_set(b->err, VS_ERR_ARG, "json: missing value in the tree");
        return;
    }
    char num[40];
    switch (v->type) {
    case VS_JSON_NULL: sb_str(b, "null"); return;
    case VS_JSON_BOOL: sb_str(b, v->boolean ? "true" : "false"); return;
    case VS_JSON_NUMBER:
        if (v->is_int) {
            snprintf(num, sizeof num, "%" PRId64, v->integer);
        } else if (!isfinite(v->number)) {
            b->status = vs_error_set(b->err, VS_ERR_NUMERIC, "json: cannot write the non-finite number %g", v->number);
            return;
        } else {
            format_double(v->number, num, sizeof num);
        }
        sb_str(b, num);
        return;
    case VS_JSON_STRING: write_string(b, v->string, v->length); return;
    case VS_JSON_ARRAY:
    case VS_JSON_OBJECT: break;
    }
    bool obj = v->type == VS_JSON_OBJECT;
    sb_str(b, obj ? "{" : "[");
    bool one_line = indent == 0 || flat(v);
    for (size_t i = 0; i < v->n && !b->status; i++) {
        if (i) sb_str(b, indent && one_line ? ", " : ",");
        if (!one_line) sb_newline(b, indent, level + 1);
        if (obj) {
            write_string(b, v->members[i].key, v->members[i].key_len);
            sb_str(b, indent ? ": " : ":");
        }
        write_value(b, obj ? v->members[i].value : v->items[i], indent, level + 1);
    }
    if (!one_line && v->n) sb_newline(b, indent, level);
    sb_str(b, obj ? "}" : "]");
}

vs_status vs_json_write(const vs_json *node, int indent, char **out, size_t *len, vs_error *err)
{
    *out = NULL;
    if (len) *len = 0;
    if (indent < 0 || indent > 16) return vs_error_set(err, VS_ERR_ARG, "json: indent %d outside [0, 16]", indent);
    sbuf b = {.err = err};
    locale_t loc = vs_io_c_locale_begin();
    write_value(&b, node, indent, 0);
    vs_io_c_locale_end(loc);
    if (b.status) {
        free(b.s);
        return b.status;
    }
    *out = b.s;
    if (len) *len = b.n;
    return VS_OK;
}

vs_status vs_json_write_file(const char *path, const vs_json *node, vs_error *err)
{
    char *text;
    size_t n;
    vs_status s = vs_json_write(node, 2, &text, &n, err);
    if (s) return vs_io_prefix_path(err, s, path);
    text[n] = '\n'; /* the NUL's place: the file ends with a newline */
    s = vs_io_write_file(path, text, n + 1, err);
    free(text);
    return s;
}
