/* datasets/io/onnx.c - ONNX ModelProto files into vs_onnx_model (versus/onnx.h): the message types
 * this reader needs (model, opset, graph, node, attribute, tensor, value info and its shape) decoded
 * over the bounded wire reader (protobuf.c), then the graph's order and names validated.  No op is
 * interpreted here. */
#include "versus/onnx.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/io/io_util.h"
#include "datasets/io/protobuf.h"

#define MAX_NAME 4096            /* bytes in a name, an op type, a string attribute */
#define MAX_ITEMS (1 << 22)      /* nodes, initializers, inputs, attributes, repeated entries */
#define MAX_ELEMS ((int64_t)1 << 40)

typedef struct rd {
    const char *path;            /* for messages and external data */
    vs_error *err;
    const uint8_t *base;
} rd;

static int fail(rd *r, const char *fmt, const char *a, const char *b)
{
    vs_error_set(r->err, VS_ERR_FORMAT, "%s: %s%s%s", r->path ? r->path : "<onnx>", a, b ? b : "", fmt);
    return -1;
}

/* Grow *arr (n used, *cap slots) by one element of size sz; returns the new slot or NULL. */
static void *push(void *arr, int *n, int *cap, size_t sz, rd *r, const char *what)
{
    void **a = arr;
    if (*n >= MAX_ITEMS) {
        vs_error_set(r->err, VS_ERR_FORMAT, "%s: more than %d %s", r->path, MAX_ITEMS, what);
        return NULL;
    }
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        if (vs_mem_check((size_t)nc, sz, what, r->err) != VS_OK) return NULL;
        void *g = realloc(*a, (size_t)nc * sz);
        if (!g) {
            vs_error_set(r->err, VS_ERR_NOMEM, "%s: out of memory", r->path);
            return NULL;
        }
        *a = g;
        *cap = nc;
    }
    char *slot = (char *)*a + (size_t)(*n)++ * sz;
    memset(slot, 0, sz);
    return slot;
}

static char *dup_bytes(rd *r, const vs_pb_field *f, const char *what)
{
    if (f->wire != VS_PB_BYTES) {
        fail(r, ": expected a string", what, NULL);
        return NULL;
    }
    if (f->len > MAX_NAME || memchr(f->bytes, 0, f->len)) {
        fail(r, ": longer than 4096 bytes or holding a NUL byte", what, NULL);
        return NULL;
    }
    char *s = malloc(f->len + 1);
    if (!s) {
        vs_error_set(r->err, VS_ERR_NOMEM, "%s: out of memory", r->path);
        return NULL;
    }
    memcpy(s, f->bytes, f->len);
    s[f->len] = 0;
    return s;
}

/* A repeated int64 field, packed or one value per field, appended to *v (*n used, *cap). */
static int ints_field(rd *r, vs_pb *msg, const vs_pb_field *f, int64_t **v, int64_t *n, int *cap, const char *what)
{
    uint64_t x;
    vs_pb sub = f->wire == VS_PB_BYTES ? vs_pb_sub(msg, f) : (vs_pb){0};
    for (;;) {
        if (f->wire == VS_PB_VARINT) x = f->u;
        else if (f->wire != VS_PB_BYTES) return fail(r, ": expected integers", what, NULL);
        else if (sub.p >= sub.end) return 0;
        else if (vs_pb_varint(&sub, &x, what, r->err)) return -1;
        int cnt = (int)*n;
        int64_t *slot = push(v, &cnt, cap, sizeof **v, r, what);
        if (!slot) return -1;
        *slot = (int64_t)x;
        *n = cnt;
        if (f->wire == VS_PB_VARINT) return 0;
    }
}

/* A repeated float field (packed or not). */
static int floats_field(rd *r, vs_pb *msg, const vs_pb_field *f, float **v, int64_t *n, int *cap, const char *what)
{
    vs_pb sub = f->wire == VS_PB_BYTES ? vs_pb_sub(msg, f) : (vs_pb){0};
    if (f->wire == VS_PB_BYTES && f->len % 4) return fail(r, ": packed floats of a length not a multiple of 4", what, NULL);
    for (;;) {
        uint32_t bits;
        if (f->wire == VS_PB_FIXED32) bits = (uint32_t)f->u;
        else if (f->wire != VS_PB_BYTES) return fail(r, ": expected floats", what, NULL);
        else if (sub.p >= sub.end) return 0;
        else {
            bits = (uint32_t)sub.p[0] | (uint32_t)sub.p[1] << 8 | (uint32_t)sub.p[2] << 16 | (uint32_t)sub.p[3] << 24;
            sub.p += 4;
        }
        int cnt = (int)*n;
        float *slot = push(v, &cnt, cap, sizeof **v, r, what);
        if (!slot) return -1;
        *slot = vs_pb_float(bits);
        *n = cnt;
        if (f->wire == VS_PB_FIXED32) return 0;
    }
}

/* ---- tensors -------------------------------------------------------------------------------------- */

static size_t dtype_size(int t)
{
    switch (t) {
    case VS_ONNX_FLOAT: case VS_ONNX_INT32: return 4;
    case VS_ONNX_DOUBLE: case VS_ONNX_INT64: return 8;
    case VS_ONNX_FLOAT16: return 2;
    case VS_ONNX_UINT8: case VS_ONNX_INT8: case VS_ONNX_BOOL: return 1;
    default: return 0;
    }
}

static bool is_float_type(int t) { return t == VS_ONNX_FLOAT || t == VS_ONNX_DOUBLE || t == VS_ONNX_FLOAT16; }

/* Elements from little-endian raw bytes (len == n * size checked by the caller). */
static void decode_raw(vs_onnx_tensor *t, const uint8_t *p)
{
    for (int64_t k = 0; k < t->n; k++) {
        const uint8_t *q = p + (size_t)k * dtype_size(t->dtype);
        uint64_t u = 0;
        for (size_t b = 0; b < dtype_size(t->dtype); b++) u |= (uint64_t)q[b] << (8 * b);
        switch (t->dtype) {
        case VS_ONNX_FLOAT: t->f[k] = vs_pb_float((uint32_t)u); break;
        case VS_ONNX_DOUBLE: { double d; memcpy(&d, &u, 8); t->f[k] = (float)d; break; }
        case VS_ONNX_FLOAT16: t->f[k] = vs_f16_to_f32((uint16_t)u); break;
        case VS_ONNX_INT64: t->i[k] = (int64_t)u; break;
        case VS_ONNX_INT32: t->i[k] = (int32_t)(uint32_t)u; break;
        case VS_ONNX_INT8: t->i[k] = (int8_t)(uint8_t)u; break;
        default: t->i[k] = (int64_t)u; break; /* uint8, bool */
        }
    }
}

static int alloc_elems(rd *r, vs_onnx_tensor *t, const char *what)
{
    size_t n = t->n ? (size_t)t->n : 1;
    if (vs_mem_check(n, is_float_type(t->dtype) ? sizeof(float) : sizeof(int64_t), what, r->err) != VS_OK) return -1;
    if (is_float_type(t->dtype) ? !(t->f = malloc(n * sizeof *t->f)) : !(t->i = malloc(n * sizeof *t->i))) {
        vs_error_set(r->err, VS_ERR_NOMEM, "%s: out of memory", r->path);
        return -1;
    }
    return 0;
}

/* The external file's bytes [offset, offset + length) for tensor t (location beside r->path). */
static int external_data(rd *r, vs_onnx_tensor *t, const char *loc, int64_t off, int64_t length)
{
    char what[160];
    snprintf(what, sizeof what, "tensor \"%.100s\"", t->name ? t->name : "");
    if (!r->path) return fail(r, ": external data needs the model's file path", what, NULL);
    if (!loc || !*loc || loc[0] == '/' || strstr(loc, ".."))
        return fail(r, ": external data location must be a relative path beside the model, without \"..\"", what, NULL);
    const char *slash = strrchr(r->path, '/');
    size_t dl = slash ? (size_t)(slash - r->path) + 1 : 0;
    char *p = malloc(dl + strlen(loc) + 1);
    if (!p) return vs_error_set(r->err, VS_ERR_NOMEM, "out of memory"), -1;
    memcpy(p, r->path, dl);
    strcpy(p + dl, loc);
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = -1;
    size_t need = (size_t)t->n * dtype_size(t->dtype);
    if (vs_io_read_file(p, SIZE_MAX, &buf, &len, r->err) == VS_OK) {
        if (length < 0) length = (int64_t)need;
        if (off < 0 || (uint64_t)off > len || (uint64_t)length > len - (uint64_t)off || (size_t)length != need)
            vs_error_set(r->err, VS_ERR_FORMAT, "%s: %s: external data at offset %lld, length %lld does not hold %lld elements in %s (%zu bytes)",
                         r->path, what, (long long)off, (long long)length, (long long)t->n, p, len);
        else if (!alloc_elems(r, t, what)) {
            decode_raw(t, buf + off);
            rc = 0;
        }
    }
    free(buf);
    free(p);
    return rc;
}

static int read_tensor(rd *r, vs_pb msg, vs_onnx_tensor *t, const char *ctx)
{
    vs_pb_field f;
    int k;
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    bool has_raw = false, external = false;
    int64_t *dims = NULL, n_dims = 0, *ints = NULL, n_ints = 0;
    float *floats = NULL;
    int64_t n_floats = 0;
    double *doubles = NULL;
    int64_t n_doubles = 0;
    int cap_d = 0, cap_i = 0, cap_f = 0, cap_db = 0, rc = -1;
    char *loc = NULL;
    int64_t ext_off = 0, ext_len = -1;
    t->dtype = 0;
    while ((k = vs_pb_next(&msg, &f, ctx, r->err)) > 0) {
        switch (f.number) {
        case 1: if (ints_field(r, &msg, &f, &dims, &n_dims, &cap_d, ctx)) goto done; break;
        case 2: t->dtype = (int)f.u; break;
        case 4: if (floats_field(r, &msg, &f, &floats, &n_floats, &cap_f, ctx)) goto done; break;
        case 5: case 7: case 11: if (ints_field(r, &msg, &f, &ints, &n_ints, &cap_i, ctx)) goto done; break;
        case 8: free(t->name); if (!(t->name = dup_bytes(r, &f, ctx))) goto done; break;
        case 9:
            if (f.wire != VS_PB_BYTES) { fail(r, ": raw_data is not bytes", ctx, NULL); goto done; }
            raw = f.bytes, raw_len = f.len, has_raw = true;
            break;
        case 10: {
            vs_pb sub = vs_pb_sub(&msg, &f);
            if (f.wire != VS_PB_BYTES || f.len % 8) { fail(r, ": double_data is not packed doubles", ctx, NULL); goto done; }
            for (; sub.p < sub.end; sub.p += 8) {
                uint64_t u = 0;
                for (int b = 0; b < 8; b++) u |= (uint64_t)sub.p[b] << (8 * b);
                int cnt = (int)n_doubles;
                double *slot = push(&doubles, &cnt, &cap_db, sizeof *doubles, r, ctx);
                if (!slot) goto done;
                memcpy(slot, &u, 8);
                n_doubles = cnt;
            }
            break;
        }
        case 13: { /* external_data: {key, value} */
            vs_pb e = vs_pb_sub(&msg, &f), ee;
            vs_pb_field g;
            char *key = NULL, *val = NULL;
            int kk;
            if (f.wire != VS_PB_BYTES) { fail(r, ": external_data is not a message", ctx, NULL); goto done; }
            ee = e;
            while ((kk = vs_pb_next(&ee, &g, ctx, r->err)) > 0) {
                if (g.number == 1) { free(key); key = dup_bytes(r, &g, ctx); if (!key) kk = -1; }
                if (g.number == 2) { free(val); val = dup_bytes(r, &g, ctx); if (!val) kk = -1; }
                if (kk < 0) break;
            }
            if (kk < 0) { free(key); free(val); goto done; }
            if (key && val && !strcmp(key, "location")) { free(loc); loc = val; val = NULL; }
            else if (key && val && !strcmp(key, "offset")) ext_off = strtoll(val, NULL, 10);
            else if (key && val && !strcmp(key, "length")) ext_len = strtoll(val, NULL, 10);
            free(key);
            free(val);
            break;
        }
        case 14: external = f.u == 1; break;
        case 3: fail(r, ": segmented tensors are not supported", ctx, NULL); goto done;
        default: break; /* string_data, doc_string, uint64_data: not needed */
        }
    }
    if (k < 0) goto done;
    if (n_dims > VS_ONNX_MAX_DIMS) { fail(r, ": more than 8 dims", ctx, NULL); goto done; }
    t->ndim = (int)n_dims;
    t->n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (dims[d] < 0 || dims[d] > MAX_ELEMS || (dims[d] && t->n > MAX_ELEMS / dims[d])) {
            fail(r, ": a negative dim or more than 2^40 elements", ctx, NULL);
            goto done;
        }
        t->dims[d] = dims[d];
        t->n *= dims[d];
    }
    if (!dtype_size(t->dtype)) {
        char m[64];
        snprintf(m, sizeof m, ": data type %d is not supported", t->dtype);
        fail(r, m, ctx, NULL);
        goto done;
    }
    if (external) {
        rc = external_data(r, t, loc, ext_off, ext_len);
        goto done;
    }
    int64_t have = n_ints; /* int32_data holds float16 bits too */
    if (has_raw) have = (int64_t)(raw_len / dtype_size(t->dtype));
    else if (t->dtype == VS_ONNX_FLOAT) have = n_floats;
    else if (t->dtype == VS_ONNX_DOUBLE) have = n_doubles;
    if ((has_raw && raw_len % dtype_size(t->dtype)) || have != t->n) {
        char m[160];
        snprintf(m, sizeof m, ": holds %lld elements, its dims say %lld", (long long)have, (long long)t->n);
        fail(r, m, ctx, NULL);
        goto done;
    }
    if (alloc_elems(r, t, ctx)) goto done;
    if (has_raw) decode_raw(t, raw);
    else
        for (int64_t e = 0; e < t->n; e++) {
            if (t->dtype == VS_ONNX_FLOAT) t->f[e] = floats[e];
            else if (t->dtype == VS_ONNX_DOUBLE) t->f[e] = (float)doubles[e];
            else if (t->dtype == VS_ONNX_FLOAT16) t->f[e] = vs_f16_to_f32((uint16_t)ints[e]);
            else t->i[e] = ints[e];
        }
    rc = 0;
done:
    free(dims);
    free(ints);
    free(floats);
    free(doubles);
    free(loc);
    return rc;
}

static void tensor_clear(vs_onnx_tensor *t)
{
    if (!t) return;
    free(t->name);
    free(t->f);
    free(t->i);
}

/* ---- attributes and nodes ------------------------------------------------------------------------- */

static int read_attr(rd *r, vs_pb msg, vs_onnx_attr *a, const char *ctx)
{
    vs_pb_field f;
    int k, cap_f = 0, cap_i = 0;
    int64_t nf = 0, ni = 0;
    while ((k = vs_pb_next(&msg, &f, ctx, r->err)) > 0) {
        switch (f.number) {
        case 1: free(a->name); if (!(a->name = dup_bytes(r, &f, ctx))) return -1; break;
        case 20: a->type = (vs_onnx_attr_type)f.u; break;
        case 2: if (f.wire != VS_PB_FIXED32) return fail(r, ": attribute f is not a float", ctx, NULL); a->f = vs_pb_float((uint32_t)f.u); break;
        case 3: if (f.wire != VS_PB_VARINT) return fail(r, ": attribute i is not an integer", ctx, NULL); a->i = (int64_t)f.u; break;
        case 4: free(a->s); if (!(a->s = dup_bytes(r, &f, ctx))) return -1; break;
        case 5:
            if (f.wire != VS_PB_BYTES) return fail(r, ": attribute t is not a tensor", ctx, NULL);
            if (a->t) tensor_clear(a->t), free(a->t);
            if (!(a->t = calloc(1, sizeof *a->t))) return vs_error_set(r->err, VS_ERR_NOMEM, "out of memory"), -1;
            if (read_tensor(r, vs_pb_sub(&msg, &f), a->t, ctx)) return -1;
            break;
        case 7: if (floats_field(r, &msg, &f, &a->floats, &nf, &cap_f, ctx)) return -1; break;
        case 8: if (ints_field(r, &msg, &f, &a->ints, &ni, &cap_i, ctx)) return -1; break;
        default: break; /* graphs, strings, sparse tensors: kept out; ops that need them are refused */
        }
    }
    if (k < 0) return -1;
    a->n = a->type == VS_ONNX_ATTR_FLOATS ? nf : ni;
    if (!a->name) return fail(r, ": an attribute without a name", ctx, NULL);
    if (a->type == VS_ONNX_ATTR_TENSOR && !a->t) return fail(r, ": a tensor attribute without its tensor", ctx, NULL);
    return 0;
}

static int read_node(rd *r, vs_pb msg, vs_onnx_node *n, int idx)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "node %d", idx);
    vs_pb_field f;
    int k, cap_in = 0, cap_out = 0, cap_a = 0;
    while ((k = vs_pb_next(&msg, &f, ctx, r->err)) > 0) {
        char **slot;
        switch (f.number) {
        case 1: case 2:
            slot = f.number == 1 ? push(&n->in, &n->n_in, &cap_in, sizeof *n->in, r, ctx) : push(&n->out, &n->n_out, &cap_out, sizeof *n->out, r, ctx);
            if (!slot || !(*slot = dup_bytes(r, &f, ctx))) return -1;
            break;
        case 3: free(n->name); if (!(n->name = dup_bytes(r, &f, ctx))) return -1; break;
        case 4: free(n->op_type); if (!(n->op_type = dup_bytes(r, &f, ctx))) return -1; break;
        case 7: free(n->domain); if (!(n->domain = dup_bytes(r, &f, ctx))) return -1; break;
        case 5: {
            if (f.wire != VS_PB_BYTES) return fail(r, ": attribute is not a message", ctx, NULL);
            vs_onnx_attr *a = push(&n->attr, &n->n_attr, &cap_a, sizeof *n->attr, r, ctx);
            if (!a || read_attr(r, vs_pb_sub(&msg, &f), a, ctx)) return -1;
            break;
        }
        default: break;
        }
    }
    if (k < 0) return -1;
    if (!n->op_type) return fail(r, ": a node without op_type", ctx, NULL);
    if (!n->name && !(n->name = calloc(1, 1))) return vs_error_set(r->err, VS_ERR_NOMEM, "out of memory"), -1;
    if (!n->domain && !(n->domain = calloc(1, 1))) return vs_error_set(r->err, VS_ERR_NOMEM, "out of memory"), -1;
    return 0;
}

/* ValueInfoProto: name, TypeProto.tensor_type {elem_type, shape {dim {dim_value | dim_param}}}. */
static int read_value(rd *r, vs_pb msg, vs_onnx_value *v, const char *ctx)
{
    vs_pb_field f, g, h, d, e;
    int k;
    v->ndim = -1;
    while ((k = vs_pb_next(&msg, &f, ctx, r->err)) > 0) {
        if (f.number == 1) {
            free(v->name);
            if (!(v->name = dup_bytes(r, &f, ctx))) return -1;
        } else if (f.number == 2 && f.wire == VS_PB_BYTES) {
            vs_pb type = vs_pb_sub(&msg, &f);
            while ((k = vs_pb_next(&type, &g, ctx, r->err)) > 0) {
                if (g.number != 1 || g.wire != VS_PB_BYTES) continue; /* not a tensor type */
                vs_pb tt = vs_pb_sub(&type, &g);
                while ((k = vs_pb_next(&tt, &h, ctx, r->err)) > 0) {
                    if (h.number == 1) v->elem_type = (int)h.u;
                    if (h.number != 2 || h.wire != VS_PB_BYTES) continue;
                    vs_pb shape = vs_pb_sub(&tt, &h);
                    v->ndim = 0;
                    while ((k = vs_pb_next(&shape, &d, ctx, r->err)) > 0) {
                        if (d.number != 1 || d.wire != VS_PB_BYTES) continue;
                        if (v->ndim >= VS_ONNX_MAX_DIMS) return fail(r, ": a value of more than 8 dims", ctx, NULL);
                        int64_t dim = -1;
                        vs_pb dm = vs_pb_sub(&shape, &d);
                        while ((k = vs_pb_next(&dm, &e, ctx, r->err)) > 0)
                            if (e.number == 1 && e.wire == VS_PB_VARINT) dim = (int64_t)e.u;
                        if (k < 0) return -1;
                        if (dim < -1 || dim > MAX_ELEMS) return fail(r, ": a negative or overflowing dim", ctx, NULL);
                        v->dims[v->ndim++] = dim;
                    }
                    if (k < 0) return -1;
                }
                if (k < 0) return -1;
            }
            if (k < 0) return -1;
        }
    }
    if (k < 0) return -1;
    if (!v->name) return fail(r, ": a value without a name", ctx, NULL);
    return 0;
}

/* ---- the graph and the model --------------------------------------------------------------------- */

typedef struct lists {
    int cap_nodes, cap_init, cap_in, cap_out;
    vs_onnx_value *all_in;
    int n_all_in, cap_all_in;
} lists;

static int read_graph(rd *r, vs_pb msg, vs_onnx_model *m, lists *l)
{
    vs_pb_field f;
    int k;
    while ((k = vs_pb_next(&msg, &f, "graph", r->err)) > 0) {
        if (f.wire != VS_PB_BYTES) continue;
        vs_pb sub = vs_pb_sub(&msg, &f);
        char ctx[64];
        if (f.number == 1) {
            vs_onnx_node *n = push(&m->nodes, &m->n_nodes, &l->cap_nodes, sizeof *m->nodes, r, "nodes");
            if (!n || read_node(r, sub, n, m->n_nodes - 1)) return -1;
        } else if (f.number == 5) {
            snprintf(ctx, sizeof ctx, "initializer %d", m->n_init);
            vs_onnx_tensor *t = push(&m->init, &m->n_init, &l->cap_init, sizeof *m->init, r, "initializers");
            if (!t || read_tensor(r, sub, t, ctx)) return -1;
            if (!t->name) return fail(r, ": an initializer without a name", ctx, NULL);
        } else if (f.number == 11 || f.number == 12) {
            snprintf(ctx, sizeof ctx, "graph %s %d", f.number == 11 ? "input" : "output", f.number == 11 ? l->n_all_in : m->n_outputs);
            vs_onnx_value *v = f.number == 11 ? push(&l->all_in, &l->n_all_in, &l->cap_all_in, sizeof *l->all_in, r, "inputs")
                                              : push(&m->outputs, &m->n_outputs, &l->cap_out, sizeof *m->outputs, r, "outputs");
            if (!v || read_value(r, sub, v, ctx)) return -1;
        } else if (f.number == 15) {
            return fail(r, "sparse initializers are not supported", "", NULL);
        }
    }
    return k < 0 ? -1 : 0;
}

const vs_onnx_tensor *vs_onnx_initializer(const vs_onnx_model *m, const char *name)
{
    for (int i = 0; m && i < m->n_init; i++)
        if (strcmp(m->init[i].name, name) == 0) return &m->init[i];
    return NULL;
}

const vs_onnx_attr *vs_onnx_attr_get(const vs_onnx_node *n, const char *name)
{
    for (int i = 0; n && i < n->n_attr; i++)
        if (strcmp(n->attr[i].name, name) == 0) return &n->attr[i];
    return NULL;
}

/* Names seen so far, in an open-addressing hash set (the graph may have 10^5 values). */
typedef struct nameset {
    const char **slot;
    size_t cap, n;
} nameset;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static bool set_has(const nameset *s, const char *name)
{
    for (size_t i = hash(name) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (!strcmp(s->slot[i], name)) return true;
    return false;
}

static void set_add(nameset *s, const char *name)
{
    size_t i = hash(name) & (s->cap - 1);
    while (s->slot[i]) i = (i + 1) & (s->cap - 1);
    s->slot[i] = name;
    s->n++;
}

/* Topological order, single assignment, defined outputs. */
static int validate(rd *r, vs_onnx_model *m)
{
    size_t total = (size_t)m->n_init + (size_t)m->n_inputs;
    for (int i = 0; i < m->n_nodes; i++) total += (size_t)m->nodes[i].n_out;
    nameset s = {0};
    s.cap = 16;
    while (s.cap < 2 * total + 2) s.cap *= 2;
    if (vs_mem_check(s.cap, sizeof *s.slot, "onnx names", r->err) != VS_OK) return -1;
    if (!(s.slot = calloc(s.cap, sizeof *s.slot))) return vs_error_set(r->err, VS_ERR_NOMEM, "out of memory"), -1;
    int rc = -1;
    char msg[VS_ERROR_MSG_MAX];
    for (int i = 0; i < m->n_init; i++) {
        if (set_has(&s, m->init[i].name)) {
            snprintf(msg, sizeof msg, "initializer \"%.200s\" is defined twice", m->init[i].name);
            goto bad;
        }
        set_add(&s, m->init[i].name);
    }
    for (int i = 0; i < m->n_inputs; i++) set_add(&s, m->inputs[i].name);
    for (int i = 0; i < m->n_nodes; i++) {
        const vs_onnx_node *n = &m->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j][0] && !set_has(&s, n->in[j])) {
                snprintf(msg, sizeof msg, "node %d (%.60s \"%.100s\"): input \"%.100s\" is not an initializer, a graph input or an "
                         "earlier node's output (a cycle, or nodes out of order)", i, n->op_type, n->name, n->in[j]);
                goto bad;
            }
        for (int j = 0; j < n->n_out; j++) {
            if (!n->out[j][0]) continue;
            if (set_has(&s, n->out[j])) {
                snprintf(msg, sizeof msg, "node %d (%.60s \"%.100s\"): output \"%.100s\" is written twice", i, n->op_type, n->name, n->out[j]);
                goto bad;
            }
            set_add(&s, n->out[j]);
        }
    }
    for (int i = 0; i < m->n_outputs; i++)
        if (!set_has(&s, m->outputs[i].name)) {
            snprintf(msg, sizeof msg, "graph output \"%.200s\" is not defined by any node", m->outputs[i].name);
            goto bad;
        }
    if (m->n_outputs == 0) {
        snprintf(msg, sizeof msg, "the graph has no outputs");
        goto bad;
    }
    rc = 0;
    goto done;
bad:
    vs_error_set(r->err, VS_ERR_FORMAT, "%s: %s", r->path, msg);
done:
    free(s.slot);
    return rc;
}

static void value_clear(vs_onnx_value *v) { free(v->name); }

void vs_onnx_free(vs_onnx_model *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_nodes; i++) {
        vs_onnx_node *n = &m->nodes[i];
        free(n->name), free(n->op_type), free(n->domain);
        for (int j = 0; j < n->n_in; j++) free(n->in[j]);
        for (int j = 0; j < n->n_out; j++) free(n->out[j]);
        free(n->in), free(n->out);
        for (int j = 0; j < n->n_attr; j++) {
            vs_onnx_attr *a = &n->attr[j];
            free(a->name), free(a->s), free(a->floats), free(a->ints);
            if (a->t) tensor_clear(a->t), free(a->t);
        }
        free(n->attr);
    }
    free(m->nodes);
    for (int i = 0; i < m->n_init; i++) tensor_clear(&m->init[i]);
    free(m->init);
    for (int i = 0; i < m->n_inputs; i++) value_clear(&m->inputs[i]);
    free(m->inputs);
    for (int i = 0; i < m->n_outputs; i++) value_clear(&m->outputs[i]);
    free(m->outputs);
    free(m->producer);
    free(m);
}

vs_status vs_onnx_read_buffer(const uint8_t *buf, size_t len, const char *path, vs_onnx_model **out, vs_error *err)
{
    *out = NULL;
    rd r = {path ? path : "<onnx>", err, buf};
    vs_onnx_model *m = calloc(1, sizeof *m);
    lists l = {0};
    if (!m) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    m->opset = -1;
    vs_pb msg = {buf, buf + len, buf};
    vs_pb_field f;
    int k, graphs = 0;
    char what[300];
    snprintf(what, sizeof what, "%.250s: model", r.path);
    while ((k = vs_pb_next(&msg, &f, what, err)) > 0) {
        if (f.number == 1 && f.wire == VS_PB_VARINT) m->ir_version = (int64_t)f.u;
        else if (f.number == 2 && f.wire == VS_PB_BYTES) {
            free(m->producer);
            if (!(m->producer = dup_bytes(&r, &f, "producer_name"))) k = -1;
        } else if (f.number == 8 && f.wire == VS_PB_BYTES) {
            vs_pb op = vs_pb_sub(&msg, &f);
            vs_pb_field g;
            bool default_domain = true;
            int64_t version = -1;
            while ((k = vs_pb_next(&op, &g, what, err)) > 0) {
                if (g.number == 1 && g.wire == VS_PB_BYTES)
                    default_domain = g.len == 0 || (g.len == 7 && !memcmp(g.bytes, "ai.onnx", 7));
                if (g.number == 2 && g.wire == VS_PB_VARINT) version = (int64_t)g.u;
            }
            if (k >= 0 && default_domain) m->opset = version;
        } else if (f.number == 7 && f.wire == VS_PB_BYTES) {
            graphs++;
            if (read_graph(&r, vs_pb_sub(&msg, &f), m, &l)) k = -1;
        }
        if (k < 0) break;
    }
    /* graph inputs that are initializers too (older exporters) are constants, not inputs */
    for (int i = 0; k >= 0 && i < l.n_all_in; i++) {
        if (vs_onnx_initializer(m, l.all_in[i].name)) {
            value_clear(&l.all_in[i]);
            continue;
        }
        vs_onnx_value *v = push(&m->inputs, &m->n_inputs, &l.cap_in, sizeof *m->inputs, &r, "inputs");
        if (!v) {
            k = -1;
            break;
        }
        *v = l.all_in[i];
        l.all_in[i].name = NULL;
    }
    for (int i = 0; i < l.n_all_in; i++) value_clear(&l.all_in[i]);
    free(l.all_in);
    if (k >= 0 && !graphs) k = -1, vs_error_set(err, VS_ERR_FORMAT, "%s: no graph (is this an ONNX model file?)", r.path);
    if (k >= 0 && m->opset < 0) k = -1, vs_error_set(err, VS_ERR_FORMAT, "%s: no opset_import for the default ONNX domain", r.path);
    if (k >= 0 && validate(&r, m)) k = -1;
    if (k < 0) {
        vs_onnx_free(m);
        if (err && strncmp(err->msg, r.path, strlen(r.path)) != 0) vs_io_prefix_path(err, err->code, r.path);
        return err && err->code ? err->code : VS_ERR_FORMAT;
    }
    *out = m;
    return VS_OK;
}

vs_status vs_onnx_read_file(const char *path, vs_onnx_model **out, vs_error *err)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    vs_status st = vs_io_read_file(path, SIZE_MAX, &buf, &len, err);
    if (st == VS_OK) st = vs_onnx_read_buffer(buf, len, path, out, err);
    free(buf);
    return st;
}
