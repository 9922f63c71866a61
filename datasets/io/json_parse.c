/* nn/json_parse.c - strict RFC 8259 parser building vs_json trees, safe on hostile input.
 *
 * Recursive descent with a depth limit.  Positions are tracked as the cursor moves (line, column
 * in characters), so a message costs nothing until it is needed.  Strings are scanned once to find
 * their end and decoded in a second pass into a buffer of that size (decoding never grows text). */
#include "versus/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/io/io_util.h"

#define JSON_DEPTH_CAP 4096 /* recursion guard even when a caller asks for more */

typedef struct parser {
    const unsigned char *p, *end;
    int32_t line, col;     /* position of p */
    const char *name;      /* for messages */
    const char *source;    /* name copy shared by the nodes */
    int depth, max_depth;
    bool allow_dups;
    vs_error *err;
    vs_status code;        /* VS_OK until the first error */
} parser;

static void bump(int32_t *v)
{
    if (*v < INT32_MAX) (*v)++;
}

/* Column of position q on the current line (q at or after p, no newline in between). */
static int32_t col_at(const parser *P, const unsigned char *q)
{
    int32_t c = P->col;
    for (const unsigned char *r = P->p; r < q; r++)
        if ((*r & 0xC0) != 0x80) bump(&c);
    return c;
}

/* Move p to q, counting characters (no newline in between). */
static void move_to(parser *P, const unsigned char *q)
{
    P->col = col_at(P, q);
    P->p = q;
}

static void errorf(parser *P, int32_t line, int32_t col, vs_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static void errorf(parser *P, int32_t line, int32_t col, vs_status code, const char *fmt, ...)
{
    if (P->code != VS_OK) return;
    P->code = code;
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_error_set(P->err, code, "%s:%d:%d: %s", P->name, (int)line, (int)col, msg);
}

/* What sits at q, for "found ...". */
static const char *found(const parser *P, const unsigned char *q, char *buf, size_t n)
{
    if (q >= P->end) return "end of input";
    if (*q >= 0x20 && *q < 0x7f)
        snprintf(buf, n, "'%c'", *q);
    else if (*q == '\n')
        snprintf(buf, n, "a newline");
    else
        snprintf(buf, n, "byte 0x%02X", *q);
    return buf;
}

static void expected(parser *P, const char *what)
{
    char b[32];
    errorf(P, P->line, P->col, VS_ERR_FORMAT, "expected %s, found %s", what, found(P, P->p, b, sizeof b));
}

static void oom(parser *P) { errorf(P, P->line, P->col, VS_ERR_NOMEM, "out of memory"); }

static void skip_ws(parser *P)
{
    while (P->p < P->end) {
        unsigned char c = *P->p;
        if (c == '\n') {
            bump(&P->line);
            P->col = 1;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            bump(&P->col);
        } else {
            break;
        }
        P->p++;
    }
}

static vs_json *node_at(parser *P, vs_json_type t, int32_t line, int32_t col)
{
    vs_json *n = calloc(1, sizeof *n);
    if (!n) {
        oom(P);
        return NULL;
    }
    n->type = t;
    n->line = line;
    n->col = col;
    n->source = P->source;
    return n;
}

static int hex4(const unsigned char *q, const unsigned char *end, unsigned *out)
{
    if (end - q < 4) return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = q[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10u;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10u;
        else return 0;
        v = v << 4 | d;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parse the string at p (on the opening quote) into a new buffer; NULL on error. */
static char *parse_string(parser *P, size_t *len_out)
{
    const unsigned char *start = P->p + 1, *q = start;
    int32_t line0 = P->line, col0 = P->col;
    while (q < P->end && *q != '"') {
        if (*q < 0x20) {
            errorf(P, P->line, col_at(P, q), VS_ERR_FORMAT,
                   "control character U+%04X inside a string (write it as an escape such as \\n)", *q);
            return NULL;
        }
        q += *q == '\\' && P->end - q >= 2 ? 2 : 1; /* a final lone backslash just ends the scan */
    }
    if (q >= P->end) {
        errorf(P, line0, col0, VS_ERR_FORMAT, "unterminated string (no closing '\"' before the end of input)");
        return NULL;
    }
    const unsigned char *close = q;
    char *out = malloc((size_t)(close - start) + 1), *o = out;
    if (!out) {
        oom(P);
        return NULL;
    }
    for (q = start; q < close;) {
        if (*q == '\\') {
            const unsigned char *esc = q;
            unsigned cp = 0;
            switch (q[1]) {
            case '"': *o++ = '"'; q += 2; continue;
            case '\\': *o++ = '\\'; q += 2; continue;
            case '/': *o++ = '/'; q += 2; continue;
            case 'b': *o++ = '\b'; q += 2; continue;
            case 'f': *o++ = '\f'; q += 2; continue;
            case 'n': *o++ = '\n'; q += 2; continue;
            case 'r': *o++ = '\r'; q += 2; continue;
            case 't': *o++ = '\t'; q += 2; continue;
            case 'u': break;
            default: {
                char b[32];
                errorf(P, P->line, col_at(P, esc), VS_ERR_FORMAT,
                       "invalid escape '\\' followed by %s (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
                       found(P, q + 1, b, sizeof b));
                free(out);
                return NULL;
            }
            }
            if (!hex4(q + 2, close, &cp)) {
                errorf(P, P->line, col_at(P, esc), VS_ERR_FORMAT, "expected 4 hex digits after \\u");
                free(out);
                return NULL;
            }
            q += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (close - q >= 6 && q[0] == '\\' && q[1] == 'u' && hex4(q + 2, close, &lo) && lo >= 0xDC00 &&
                    lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else {
                    errorf(P, P->line, col_at(P, esc), VS_ERR_FORMAT,
                           "unpaired surrogate \\u%04X (a high surrogate must be followed by a \\uDC00-\\uDFFF escape)", cp);
                    free(out);
                    return NULL;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                errorf(P, P->line, col_at(P, esc), VS_ERR_FORMAT,
                       "unpaired surrogate \\u%04X (a low surrogate must follow a high one)", cp);
                free(out);
                return NULL;
            }
            o += put_utf8(o, cp);
        } else if (*q < 0x80) {
            *o++ = (char)*q++;
        } else {
            size_t n = vs_io_utf8_len(q, close);
            if (!n) {
                errorf(P, P->line, col_at(P, q), VS_ERR_FORMAT, "invalid UTF-8 byte 0x%02X in a string", *q);
                free(out);
                return NULL;
            }
            memcpy(o, q, n);
            o += n;
            q += n;
        }
    }
    *o = '\0';
    *len_out = (size_t)(o - out);
    move_to(P, close + 1);
    return out;
}

static int is_digit(const parser *P, const unsigned char *q) { return q < P->end && *q >= '0' && *q <= '9'; }

static vs_json *parse_number(parser *P)
{
    const unsigned char *start = P->p, *q = start;
    bool neg = false, integral = true;
    if (*q == '-') {
        neg = true;
        q++;
    }
    if (!is_digit(P, q)) {
        move_to(P, q);
        expected(P, "a digit after '-'");
        return NULL;
    }
    if (*q == '0') {
        q++;
        if (is_digit(P, q)) {
            errorf(P, P->line, col_at(P, q), VS_ERR_FORMAT, "leading zeros are not allowed in numbers");
            return NULL;
        }
    } else {
        while (is_digit(P, q)) q++;
    }
    const unsigned char *int_end = q;
    if (q < P->end && *q == '.') {
        integral = false;
        q++;
        if (!is_digit(P, q)) {
            move_to(P, q);
            expected(P, "a digit after '.'");
            return NULL;
        }
        while (is_digit(P, q)) q++;
    }
    if (q < P->end && (*q == 'e' || *q == 'E')) {
        integral = false;
        q++;
        if (q < P->end && (*q == '+' || *q == '-')) q++;
        if (!is_digit(P, q)) {
            move_to(P, q);
            expected(P, "a digit in the exponent");
            return NULL;
        }
        while (is_digit(P, q)) q++;
    }
    size_t len = (size_t)(q - start);
    char small[64], *text = len < sizeof small ? small : malloc(len + 1);
    if (!text) {
        oom(P);
        return NULL;
    }
    memcpy(text, start, len);
    text[len] = '\0';
    double d = strtod(text, NULL);
    if (text != small) free(text);
    if (isinf(d)) {
        errorf(P, P->line, P->col, VS_ERR_FORMAT, "number %.*s%s is out of range for a double", len > 40 ? 40 : (int)len,
               (const char *)start, len > 40 ? "..." : "");
        return NULL;
    }
    vs_json *n = node_at(P, VS_JSON_NUMBER, P->line, P->col);
    if (!n) return NULL;
    n->number = d;
    if (integral) {
        /* exact int64 when it fits: 2^63 - 1, or 2^63 for a negative number */
        uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        bool fits = true;
        for (const unsigned char *r = start + neg; r < int_end && fits; r++) {
            unsigned dgt = (unsigned)(*r - '0');
            if (v > (limit - dgt) / 10) fits = false;
            else v = v * 10 + dgt;
        }
        if (fits) {
            n->is_int = true;
            n->integer = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
        }
    }
    move_to(P, q);
    return n;
}

static vs_json *parse_value(parser *P);

static int cmp_member_ptr(const void *a, const void *b)
{
    const vs_json_member *x = *(const vs_json_member *const *)a, *y = *(const vs_json_member *const *)b;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    int c = memcmp(x->key, y->key, x->key_len);
    if (c) return c;
    return x < y ? -1 : x > y; /* same key: document order (members live in one array) */
}

/* Report the first repeated key of obj (O(n log n): sort pointers, compare neighbours). */
static int check_duplicates(parser *P, vs_json *obj)
{
    if (obj->n < 2) return 1;
    const vs_json_member **idx = malloc(obj->n * sizeof *idx);
    if (!idx) {
        oom(P);
        return 0;
    }
    for (size_t i = 0; i < obj->n; i++) idx[i] = &obj->members[i];
    qsort(idx, obj->n, sizeof *idx, cmp_member_ptr);
    const vs_json_member *dup = NULL, *first = NULL;
    for (size_t i = 1; i < obj->n; i++) {
        if (idx[i]->key_len == idx[i - 1]->key_len && memcmp(idx[i]->key, idx[i - 1]->key, idx[i]->key_len) == 0 &&
            (!dup || idx[i] < dup)) {
            dup = idx[i];
            first = idx[i - 1];
        }
    }
    free(idx);
    if (!dup) return 1;
    errorf(P, dup->line, dup->col, VS_ERR_FORMAT, "duplicate key \"%.*s\" (first at %d:%d)",
           dup->key_len > 60 ? 60 : (int)dup->key_len, dup->key, (int)first->line, (int)first->col);
    return 0;
}

static int enter(parser *P)
{
    if (++P->depth > P->max_depth) {
        errorf(P, P->line, P->col, VS_ERR_FORMAT, "nesting deeper than %d levels", P->max_depth);
        return 0;
    }
    return 1;
}

static vs_json *parse_object(parser *P)
{
    vs_json *obj = node_at(P, VS_JSON_OBJECT, P->line, P->col);
    if (!obj || !enter(P)) goto fail;
    move_to(P, P->p + 1);
    skip_ws(P);
    if (P->p < P->end && *P->p == '}') {
        move_to(P, P->p + 1);
        P->depth--;
        return obj;
    }
    for (;;) {
        if (P->p >= P->end || *P->p != '"') {
            expected(P, "a string key");
            goto fail;
        }
        int32_t kl = P->line, kc = P->col;
        size_t klen;
        char *key = parse_string(P, &klen);
        if (!key) goto fail;
        if (obj->n == obj->cap) {
            size_t ncap = obj->cap ? obj->cap * 2 : 4;
            vs_json_member *m = ncap <= SIZE_MAX / sizeof *m ? realloc(obj->members, ncap * sizeof *m) : NULL;
            if (!m) {
                free(key);
                oom(P);
                goto fail;
            }
            obj->members = m;
            obj->cap = ncap;
        }
        obj->members[obj->n++] = (vs_json_member){.key = key, .key_len = klen, .value = NULL, .line = kl, .col = kc};
        skip_ws(P);
        if (P->p >= P->end || *P->p != ':') {
            expected(P, "':' after the key");
            goto fail;
        }
        move_to(P, P->p + 1);
        vs_json *v = parse_value(P);
        if (!v) goto fail;
        obj->members[obj->n - 1].value = v;
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            move_to(P, P->p + 1);
            skip_ws(P);
            if (P->p < P->end && *P->p == '}') {
                expected(P, "another member after ',' (trailing commas are not allowed)");
                goto fail;
            }
            continue;
        }
        if (P->p < P->end && *P->p == '}') {
            move_to(P, P->p + 1);
            break;
        }
        expected(P, "',' or '}' after an object member");
        goto fail;
    }
    if (!P->allow_dups && !check_duplicates(P, obj)) goto fail;
    P->depth--;
    return obj;
fail:
    vs_json_free(obj);
    return NULL;
}

static vs_json *parse_array(parser *P)
{
    vs_json *arr = node_at(P, VS_JSON_ARRAY, P->line, P->col);
    if (!arr || !enter(P)) goto fail;
    move_to(P, P->p + 1);
    skip_ws(P);
    if (P->p < P->end && *P->p == ']') {
        move_to(P, P->p + 1);
        P->depth--;
        return arr;
    }
    for (;;) {
        vs_json *v = parse_value(P);
        if (!v) goto fail;
        if (vs_json_push(arr, v) != VS_OK) {
            oom(P);
            goto fail;
        }
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            move_to(P, P->p + 1);
            skip_ws(P);
            if (P->p < P->end && *P->p == ']') {
                expected(P, "another item after ',' (trailing commas are not allowed)");
                goto fail;
            }
            continue;
        }
        if (P->p < P->end && *P->p == ']') {
            move_to(P, P->p + 1);
            break;
        }
        expected(P, "',' or ']' after an array item");
        goto fail;
    }
    P->depth--;
    return arr;
fail:
    vs_json_free(arr);
    return NULL;
}

static vs_json *parse_literal(parser *P)
{
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(P->end - P->p) >= n && memcmp(P->p, words[i], n) == 0) {
            vs_json *v = node_at(P, i == 2 ? VS_JSON_NULL : VS_JSON_BOOL, P->line, P->col);
            if (!v) return NULL;
            v->boolean = i == 0;
            move_to(P, P->p + n);
            return v;
        }
    }
    expected(P, "a value (true, false or null here)");
    return NULL;
}

static vs_json *parse_value(parser *P)
{
    skip_ws(P);
    if (P->p >= P->end) {
        expected(P, "a value");
        return NULL;
    }
    switch (*P->p) {
    case '{': return parse_object(P);
    case '[': return parse_array(P);
    case '"': {
        int32_t line = P->line, col = P->col;
        size_t len;
        char *s = parse_string(P, &len);
        if (!s) return NULL;
        vs_json *v = node_at(P, VS_JSON_STRING, line, col);
        if (!v) {
            free(s);
            return NULL;
        }
        v->string = s;
        v->length = len;
        return v;
    }
    case 't':
    case 'f':
    case 'n': return parse_literal(P);
    default:
        if (*P->p == '-' || (*P->p >= '0' && *P->p <= '9')) return parse_number(P);
        expected(P, "a value (object, array, string, number, true, false or null)");
        return NULL;
    }
}

vs_status vs_json_parse(const char *text, size_t len, const char *name, const vs_json_parse_opts *opts,
                        vs_json **out, vs_error *err)
{
    *out = NULL;
    if (!text && len) return vs_error_set(err, VS_ERR_ARG, "vs_json_parse: no text");
    const char *shown = vs_io_name(name);
    char *source = strdup(shown);
    if (!source) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", shown);
    parser P = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len, .line = 1, .col = 1,
                .name = source, .source = source, .max_depth = VS_JSON_DEFAULT_DEPTH, .err = err};
    if (!text) P.p = P.end = (const unsigned char *)"";
    if (opts) {
        if (opts->max_depth > 0) P.max_depth = opts->max_depth < JSON_DEPTH_CAP ? opts->max_depth : JSON_DEPTH_CAP;
        P.allow_dups = opts->allow_duplicate_keys;
    }
    if (P.end - P.p >= 3 && memcmp(P.p, "\xEF\xBB\xBF", 3) == 0) P.p += 3; /* UTF-8 byte order mark */
    locale_t loc = vs_io_c_locale_begin();
    vs_json *root = parse_value(&P);
    vs_io_c_locale_end(loc);
    if (root) {
        skip_ws(&P);
        if (P.p < P.end) {
            expected(&P, "the end of input after the JSON value");
            vs_json_free(root);
            root = NULL;
        }
    }
    if (!root) {
        free(source);
        return P.code;
    }
    root->owns_source = true;
    *out = root;
    return VS_OK;
}

vs_status vs_json_parse_file(const char *path, const vs_json_parse_opts *opts, vs_json **out, vs_error *err)
{
    *out = NULL;
    unsigned char *buf;
    size_t len;
    vs_status s = vs_io_read_file(path, VS_JSON_MAX_FILE, &buf, &len, err);
    if (s) return s;
    s = vs_json_parse((const char *)buf, len, path, opts, out, err);
    free(buf);
    return s;
}
