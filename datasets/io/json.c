/* nn/json.c - JSON nodes: building, freeing, lookup and typed reads with located messages.
 * Parsing lives in json_parse.c, serialisation in json_write.c. */
#include "versus/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------------------------------ */

static vs_json *node_new(vs_json_type t)
{
    vs_json *n = calloc(1, sizeof *n);
    if (n) n->type = t;
    return n;
}

vs_json *vs_json_new_null(void) { return node_new(VS_JSON_NULL); }
vs_json *vs_json_new_array(void) { return node_new(VS_JSON_ARRAY); }
vs_json *vs_json_new_object(void) { return node_new(VS_JSON_OBJECT); }

vs_json *vs_json_new_int_array(const int64_t *v, int n)
{
    vs_json *a = vs_json_new_array();
    for (int i = 0; a && i < n; i++)
        if (vs_json_push(a, vs_json_new_int(v[i])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

vs_json *vs_json_new_bool(bool v)
{
    vs_json *n = node_new(VS_JSON_BOOL);
    if (n) n->boolean = v;
    return n;
}

vs_json *vs_json_new_int(int64_t v)
{
    vs_json *n = node_new(VS_JSON_NUMBER);
    if (n) {
        n->is_int = true;
        n->integer = v;
        n->number = (double)v;
    }
    return n;
}

vs_json *vs_json_new_number(double v)
{
    vs_json *n = node_new(VS_JSON_NUMBER);
    if (n) n->number = v;
    return n;
}

vs_json *vs_json_new_stringn(const char *s, size_t len)
{
    if (!s && len) return NULL;
    vs_json *n = node_new(VS_JSON_STRING);
    if (!n) return NULL;
    n->string = malloc(len + 1);
    if (!n->string) {
        free(n);
        return NULL;
    }
    if (len) memcpy(n->string, s, len);
    n->string[len] = '\0';
    n->length = len;
    return n;
}

vs_json *vs_json_new_string(const char *s) { return s ? vs_json_new_stringn(s, strlen(s)) : NULL; }

void vs_json_free(vs_json *node)
{
    if (!node) return;
    switch (node->type) {
    case VS_JSON_STRING:
        free(node->string);
        break;
    case VS_JSON_ARRAY:
        for (size_t i = 0; i < node->n; i++) vs_json_free(node->items[i]);
        free(node->items);
        break;
    case VS_JSON_OBJECT:
        for (size_t i = 0; i < node->n; i++) {
            free(node->members[i].key);
            vs_json_free(node->members[i].value);
        }
        free(node->members);
        break;
    default:
        break;
    }
    if (node->owns_source) free((char *)node->source);
    free(node);
}

/* Make room for one more item/member (elem bytes each) in a container. */
static int grow(vs_json *c, size_t elem)
{
    if (c->n < c->cap) return 1;
    size_t ncap = c->cap ? c->cap * 2 : 4;
    if (ncap < c->cap || ncap > SIZE_MAX / elem) return 0;
    void *p = realloc(c->type == VS_JSON_ARRAY ? (void *)c->items : (void *)c->members, ncap * elem);
    if (!p) return 0;
    if (c->type == VS_JSON_ARRAY)
        c->items = p;
    else
        c->members = p;
    c->cap = ncap;
    return 1;
}

vs_status vs_json_push(vs_json *arr, vs_json *v)
{
    if (!v) return VS_ERR_NOMEM;
    if (!arr || arr->type != VS_JSON_ARRAY) {
        vs_json_free(v);
        return VS_ERR_ARG;
    }
    if (!grow(arr, sizeof *arr->items)) {
        vs_json_free(v);
        return VS_ERR_NOMEM;
    }
    arr->items[arr->n++] = v;
    return VS_OK;
}

/* Index of the last member named key[0..len), or -1. */
static ptrdiff_t find_member(const vs_json *obj, const char *key, size_t len)
{
    for (size_t i = obj->n; i-- > 0;)
        if (obj->members[i].key_len == len && memcmp(obj->members[i].key, key, len) == 0) return (ptrdiff_t)i;
    return -1;
}

vs_status vs_json_set(vs_json *obj, const char *key, vs_json *v)
{
    if (!v) return VS_ERR_NOMEM;
    if (!obj || obj->type != VS_JSON_OBJECT || !key) {
        vs_json_free(v);
        return VS_ERR_ARG;
    }
    size_t len = strlen(key);
    ptrdiff_t i = find_member(obj, key, len);
    if (i >= 0) {
        vs_json_free(obj->members[i].value);
        obj->members[i].value = v;
        return VS_OK;
    }
    char *k = malloc(len + 1);
    if (!k || !grow(obj, sizeof *obj->members)) {
        free(k);
        vs_json_free(v);
        return VS_ERR_NOMEM;
    }
    memcpy(k, key, len + 1);
    obj->members[obj->n++] = (vs_json_member){.key = k, .key_len = len, .value = v};
    return VS_OK;
}

/* ---- reading -------------------------------------------------------------------------------------- */

const vs_json *vs_json_get(const vs_json *obj, const char *key)
{
    if (!obj || obj->type != VS_JSON_OBJECT || !key) return NULL;
    ptrdiff_t i = find_member(obj, key, strlen(key));
    return i >= 0 ? obj->members[i].value : NULL;
}

const vs_json *vs_json_at(const vs_json *arr, size_t i)
{
    return arr && arr->type == VS_JSON_ARRAY && i < arr->n ? arr->items[i] : NULL;
}

const char *vs_json_type_name(vs_json_type t)
{
    switch (t) {
    case VS_JSON_NULL: return "null";
    case VS_JSON_BOOL: return "a boolean";
    case VS_JSON_NUMBER: return "a number";
    case VS_JSON_STRING: return "a string";
    case VS_JSON_ARRAY: return "an array";
    case VS_JSON_OBJECT: return "an object";
    }
    return "an unknown value";
}

const char *vs_json_where(const vs_json *node, char *buf, size_t n)
{
    const char *src = node && node->source ? node->source : "<json>";
    if (node && node->line > 0)
        snprintf(buf, n, "%s:%" PRId32 ":%" PRId32, src, node->line, node->col);
    else
        snprintf(buf, n, "%s", src);
    return buf;
}

/* A short description of a value for "found ..." in messages. */
static const char *describe(const vs_json *v, char *buf, size_t n)
{
    switch (v->type) {
    case VS_JSON_BOOL: return v->boolean ? "true" : "false";
    case VS_JSON_NUMBER:
        if (v->is_int)
            snprintf(buf, n, "%" PRId64, v->integer);
        else
            snprintf(buf, n, "%.9g", v->number);
        return buf;
    case VS_JSON_STRING: {
        size_t k = 0, max = n > 48 ? 40 : n / 2;
        k += (size_t)snprintf(buf, n, "the string \"");
        for (size_t i = 0; i < v->length && k + 4 < n; i++) {
            if (i == max) {
                k += (size_t)snprintf(buf + k, n - k, "...");
                break;
            }
            unsigned char c = (unsigned char)v->string[i];
            buf[k++] = c >= 0x20 && c != 0x7f ? (char)c : '?';
        }
        snprintf(buf + k, n - k, "\"");
        return buf;
    }
    default: return vs_json_type_name(v->type);
    }
}

/* Set err to "<where of at>: "key": <message>" (the key part only when key is given). */
static vs_status fail(vs_error *err, vs_status code, const vs_json *at, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static vs_status fail(vs_error *err, vs_status code, const vs_json *at, const char *key, const char *fmt, ...)
{
    char where[300], msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_json_where(at, where, sizeof where);
    if (key) return vs_error_set(err, code, "%s: \"%s\": %s", where, key, msg);
    return vs_error_set(err, code, "%s: %s", where, msg);
}

/* "an integer", "an integer >= 1", "an integer in [1, 4096]" */
static const char *int_range(int64_t lo, int64_t hi, char *buf, size_t n)
{
    if (lo == INT64_MIN && hi == INT64_MAX)
        snprintf(buf, n, "an integer");
    else if (hi == INT64_MAX)
        snprintf(buf, n, "an integer >= %" PRId64, lo);
    else if (lo == INT64_MIN)
        snprintf(buf, n, "an integer <= %" PRId64, hi);
    else
        snprintf(buf, n, "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    return buf;
}

static vs_status int_at(const vs_json *v, const char *key, int64_t lo, int64_t hi, int64_t *out, vs_error *err)
{
    int64_t x = 0;
    bool ok = false;
    if (v->type == VS_JSON_NUMBER) {
        if (v->is_int) {
            x = v->integer;
            ok = true;
        } else if (v->number == floor(v->number) && fabs(v->number) <= 9007199254740992.0) {
            x = (int64_t)v->number; /* integral and exact (|x| <= 2^53) */
            ok = true;
        }
    }
    if (!ok || x < lo || x > hi) {
        char r[96], d[96];
        return fail(err, VS_ERR_FORMAT, v, key, "expected %s, found %s", int_range(lo, hi, r, sizeof r),
                    describe(v, d, sizeof d));
    }
    *out = x;
    return VS_OK;
}

static vs_status double_at(const vs_json *v, const char *key, double lo, double hi, double *out, vs_error *err)
{
    if (v->type == VS_JSON_NUMBER && isfinite(v->number) && v->number >= lo && v->number <= hi) {
        *out = v->number;
        return VS_OK;
    }
    char r[96], d[96];
    if (isinf(lo) && isinf(hi))
        snprintf(r, sizeof r, "a finite number");
    else if (isinf(hi))
        snprintf(r, sizeof r, "a number >= %.9g", lo);
    else if (isinf(lo))
        snprintf(r, sizeof r, "a number <= %.9g", hi);
    else
        snprintf(r, sizeof r, "a number in [%.9g, %.9g]", lo, hi);
    return fail(err, VS_ERR_FORMAT, v, key, "expected %s, found %s", r, describe(v, d, sizeof d));
}

static vs_status bool_at(const vs_json *v, const char *key, bool *out, vs_error *err)
{
    if (v->type == VS_JSON_BOOL) {
        *out = v->boolean;
        return VS_OK;
    }
    char d[96];
    return fail(err, VS_ERR_FORMAT, v, key, "expected true or false, found %s", describe(v, d, sizeof d));
}

static vs_status str_at(const vs_json *v, const char *key, const char **out, vs_error *err)
{
    char d[96];
    if (v->type != VS_JSON_STRING)
        return fail(err, VS_ERR_FORMAT, v, key, "expected a string, found %s", describe(v, d, sizeof d));
    if (strlen(v->string) != v->length)
        return fail(err, VS_ERR_FORMAT, v, key, "string contains a NUL character (\\u0000)");
    *out = v->string;
    return VS_OK;
}

vs_status vs_json_int(const vs_json *node, int64_t lo, int64_t hi, int64_t *out, vs_error *err)
{
    if (!node) return vs_error_set(err, VS_ERR_ARG, "vs_json_int: no value");
    return int_at(node, NULL, lo, hi, out, err);
}

vs_status vs_json_double(const vs_json *node, double lo, double hi, double *out, vs_error *err)
{
    if (!node) return vs_error_set(err, VS_ERR_ARG, "vs_json_double: no value");
    return double_at(node, NULL, lo, hi, out, err);
}

vs_status vs_json_bool(const vs_json *node, bool *out, vs_error *err)
{
    if (!node) return vs_error_set(err, VS_ERR_ARG, "vs_json_bool: no value");
    return bool_at(node, NULL, out, err);
}

vs_status vs_json_str(const vs_json *node, const char **out, vs_error *err)
{
    if (!node) return vs_error_set(err, VS_ERR_ARG, "vs_json_str: no value");
    return str_at(node, NULL, out, err);
}

/* The member obj[key]: *v set (NULL when absent and optional). */
static vs_status member(const vs_json *obj, const char *key, bool required, const vs_json **v, vs_error *err)
{
    *v = NULL;
    if (!obj || !key) return vs_error_set(err, VS_ERR_ARG, "json: no object or key to look up");
    if (obj->type != VS_JSON_OBJECT) {
        char d[96];
        return fail(err, VS_ERR_FORMAT, obj, NULL, "expected an object holding \"%s\", found %s", key,
                    describe(obj, d, sizeof d));
    }
    *v = vs_json_get(obj, key);
    if (!*v && required) return fail(err, VS_ERR_FORMAT, obj, NULL, "object is missing \"%s\"", key);
    if (*v && !required && (*v)->type == VS_JSON_NULL) *v = NULL;
    return VS_OK;
}

vs_status vs_json_get_int(const vs_json *obj, const char *key, int64_t lo, int64_t hi, int64_t *out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, true, &v, err);
    return s ? s : int_at(v, key, lo, hi, out, err);
}

vs_status vs_json_get_double(const vs_json *obj, const char *key, double lo, double hi, double *out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, true, &v, err);
    return s ? s : double_at(v, key, lo, hi, out, err);
}

vs_status vs_json_get_bool(const vs_json *obj, const char *key, bool *out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, true, &v, err);
    return s ? s : bool_at(v, key, out, err);
}

vs_status vs_json_get_str(const vs_json *obj, const char *key, const char **out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, true, &v, err);
    return s ? s : str_at(v, key, out, err);
}

const vs_json *vs_json_get_typed(const vs_json *obj, const char *key, vs_json_type t, vs_error *err)
{
    const vs_json *v;
    if (member(obj, key, true, &v, err)) return NULL;
    if (v->type != t) {
        char d[96];
        fail(err, VS_ERR_FORMAT, v, key, "expected %s, found %s", vs_json_type_name(t), describe(v, d, sizeof d));
        return NULL;
    }
    return v;
}

vs_status vs_json_opt_int(const vs_json *obj, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out,
                          vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, false, &v, err);
    if (!s && !v) *out = def;
    return s || !v ? s : int_at(v, key, lo, hi, out, err);
}

vs_status vs_json_opt_double(const vs_json *obj, const char *key, double lo, double hi, double def, double *out,
                             vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, false, &v, err);
    if (!s && !v) *out = def;
    return s || !v ? s : double_at(v, key, lo, hi, out, err);
}

vs_status vs_json_opt_bool(const vs_json *obj, const char *key, bool def, bool *out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, false, &v, err);
    if (!s && !v) *out = def;
    return s || !v ? s : bool_at(v, key, out, err);
}

vs_status vs_json_opt_str(const vs_json *obj, const char *key, const char *def, const char **out, vs_error *err)
{
    const vs_json *v;
    vs_status s = member(obj, key, false, &v, err);
    if (!s && !v) *out = def;
    return s || !v ? s : str_at(v, key, out, err);
}
