/* nn/safetensors.c - safetensors reading (every header claim checked) and byte-exact F32 writing.
 *
 * Reading: length prefix -> JSON header (nn/json_parse.c, duplicate names refused) -> one record
 * per tensor (dtype, shape, offsets) -> the records sorted by offset must tile the data region ->
 * float32 tensors.  Writing builds the header as a vs_json tree and serialises it compactly, which
 * gives the same bytes as the reference serializer. */
#include "versus/safetensors.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/io/io_util.h"
#include "versus/json.h"

#define ST_MAX_FILE ((size_t)1 << 40)

/* Every dtype of the format: size in bytes, and the element type versus converts it from (-1: refused). */
static const struct {
    const char *name;
    size_t size;
    int as;
} st_dtypes[] = {{"F32", 4, VS_IO_F32}, {"F64", 8, VS_IO_F64}, {"F16", 2, VS_IO_F16},    {"BF16", 2, VS_IO_BF16},
                 {"I64", 8, -1},        {"I32", 4, -1},        {"I16", 2, -1},           {"I8", 1, -1},
                 {"U64", 8, -1},        {"U32", 4, -1},        {"U16", 2, -1},           {"U8", 1, -1},
                 {"BOOL", 1, -1},       {"F8_E4M3", 1, -1},    {"F8_E5M2", 1, -1}};

/* One tensor record of the header. */
typedef struct st_rec {
    const char *name;     /* the JSON key (lives in the parsed header) */
    int dtype;            /* index in st_dtypes */
    bool skip;            /* checked but not loaded (num_batches_tracked) */
    int ndim;
    int64_t shape[VS_MAX_DIMS];
    size_t count;
    uint64_t begin, end;  /* data_offsets */
} st_rec;

typedef struct st_ctx {
    const char *file;
    vs_error *err;
} st_ctx;

static vs_status cfail(const st_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static vs_status cfail(const st_ctx *c, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vs_error_set(c->err, VS_ERR_FORMAT, "%s: %s", c->file, msg);
}

/* "tensor "<name>": <problem> (header:line:col)" */
static vs_status tfail(const st_ctx *c, const char *tensor, const vs_json *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static vs_status tfail(const st_ctx *c, const char *tensor, const vs_json *at, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX], where[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at && at->line > 0) snprintf(where, sizeof where, " (header:%d:%d)", (int)at->line, (int)at->col);
    return vs_error_set(c->err, VS_ERR_FORMAT, "%s: tensor \"%.100s\": %s%s", c->file, tensor, msg, where);
}

static const char *kind(const vs_json *v, char *buf, size_t n)
{
    if (v->type == VS_JSON_NUMBER) {
        if (v->is_int)
            snprintf(buf, n, "%" PRId64, v->integer);
        else
            snprintf(buf, n, "%.9g", v->number);
        return buf;
    }
    return vs_json_type_name(v->type);
}

/* "[4, 3]" */
static void dims_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A non-negative integer from a JSON value (exact). */
static bool json_count(const vs_json *v, uint64_t *out)
{
    int64_t x;
    if (!v || vs_json_int(v, 0, INT64_MAX, &x, NULL) != VS_OK) return false;
    *out = (uint64_t)x;
    return true;
}

static vs_status parse_record(const st_ctx *c, const vs_json_member *m, size_t data_len, st_rec *r)
{
    const char *name = m->key;
    const vs_json *v = m->value;
    char b1[64], b2[200];
    memset(r, 0, sizeof *r);
    r->name = name;
    if (strlen(name) != m->key_len) return tfail(c, name, v, "name contains a NUL character");
    if (v->type != VS_JSON_OBJECT)
        return tfail(c, name, v, "expected an object with \"dtype\", \"shape\" and \"data_offsets\", found %s", kind(v, b1, sizeof b1));
    const vs_json *dt = vs_json_get(v, "dtype"), *sh = vs_json_get(v, "shape"), *off = vs_json_get(v, "data_offsets");
    if (!dt) return tfail(c, name, v, "missing \"dtype\"");
    if (!sh) return tfail(c, name, v, "missing \"shape\"");
    if (!off) return tfail(c, name, v, "missing \"data_offsets\"");
    if (dt->type != VS_JSON_STRING) return tfail(c, name, dt, "\"dtype\" must be a string, found %s", kind(dt, b1, sizeof b1));
    r->dtype = -1;
    for (int i = 0; i < (int)(sizeof st_dtypes / sizeof st_dtypes[0]); i++)
        if (strcmp(dt->string, st_dtypes[i].name) == 0 && strlen(dt->string) == dt->length) r->dtype = i;
    if (r->dtype < 0) return tfail(c, name, dt, "unknown dtype \"%.20s\"", dt->string);
    if (st_dtypes[r->dtype].as < 0) {
        if (!ends_with(name, ".num_batches_tracked"))
            return tfail(c, name, dt, "dtype %s is not supported (versus reads F32, and converts F64, F16 and BF16)",
                         st_dtypes[r->dtype].name);
        r->skip = true;
    }
    if (sh->type != VS_JSON_ARRAY)
        return tfail(c, name, sh, "\"shape\" must be an array of non-negative integers, found %s", kind(sh, b1, sizeof b1));
    if (sh->n > VS_MAX_DIMS) return tfail(c, name, sh, "\"shape\" has %zu dimensions, more than the %d supported", sh->n, VS_MAX_DIMS);
    r->ndim = (int)sh->n;
    size_t count = 1;
    bool overflow = false;
    for (size_t i = 0; i < sh->n; i++) {
        uint64_t d;
        if (!json_count(sh->items[i], &d))
            return tfail(c, name, sh->items[i], "\"shape\" item %zu: expected a non-negative integer, found %s", i,
                         kind(sh->items[i], b1, sizeof b1));
        r->shape[i] = (int64_t)d;
        if (!vs_size_mul(count, (size_t)d, &count) || count > (size_t)INT64_MAX / 8) overflow = true;
    }
    dims_str(r->ndim, r->shape, b2, sizeof b2);
    if (overflow) return tfail(c, name, sh, "shape %s has too many elements", b2);
    r->count = count;
    if (off->type != VS_JSON_ARRAY || off->n != 2 || !json_count(off->items[0], &r->begin) ||
        !json_count(off->items[1], &r->end))
        return tfail(c, name, off, "\"data_offsets\" must be an array of two non-negative integers [begin, end]");
    if (r->begin > r->end)
        return tfail(c, name, off, "data_offsets [%" PRIu64 ", %" PRIu64 "]: begin is after end", r->begin, r->end);
    if (r->end > data_len)
        return tfail(c, name, off, "data_offsets [%" PRIu64 ", %" PRIu64 "] run past the end of the data region (%zu bytes)",
                     r->begin, r->end, data_len);
    size_t need = count * st_dtypes[r->dtype].size; /* count <= INT64_MAX / 8 */
    if (r->end - r->begin != need)
        return tfail(c, name, off, "data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64 " bytes, but shape %s of %s needs %zu",
                     r->begin, r->end, r->end - r->begin, b2, st_dtypes[r->dtype].name, need);
    return VS_OK;
}

static int cmp_rec_offsets(const void *a, const void *b)
{
    const st_rec *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The tensors sorted by offset must cover [0, data_len) exactly once. */
static vs_status check_tiling(const st_ctx *c, st_rec *recs, size_t n, size_t data_len)
{
    qsort(recs, n, sizeof *recs, cmp_rec_offsets);
    uint64_t at = 0;
    const st_rec *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const st_rec *r = &recs[i];
        if (r->begin < at)
            return cfail(c, "tensors \"%.100s\" [%" PRIu64 ", %" PRIu64 "] and \"%.100s\" [%" PRIu64 ", %" PRIu64 "] overlap",
                         prev->name, prev->begin, prev->end, r->name, r->begin, r->end);
        if (r->begin > at)
            return cfail(c, "bytes [%" PRIu64 ", %" PRIu64 ") of the data region belong to no tensor", at, r->begin);
        if (r->end > r->begin) {
            at = r->end;
            prev = r;
        }
    }
    if (at != data_len)
        return cfail(c, "the last %" PRIu64 " bytes of the data region belong to no tensor (it has %zu bytes, the tensors cover %" PRIu64 ")",
                     (uint64_t)data_len - at, data_len, at);
    return VS_OK;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const vs_safetensors_entry *)a)->name, ((const vs_safetensors_entry *)b)->name);
}

static int cmp_meta(const void *a, const void *b)
{
    return strcmp(((const vs_safetensors_meta *)a)->key, ((const vs_safetensors_meta *)b)->key);
}

static vs_status read_metadata(const st_ctx *c, const vs_json *v, vs_safetensors *st)
{
    char b[64];
    if (v->type != VS_JSON_OBJECT)
        return cfail(c, "\"__metadata__\" must be an object of strings, found %s", kind(v, b, sizeof b));
    st->meta = calloc(v->n ? v->n : 1, sizeof *st->meta);
    if (!st->meta) return vs_error_set(c->err, VS_ERR_NOMEM, "%s: out of memory", c->file);
    for (size_t i = 0; i < v->n; i++) {
        const vs_json_member *m = &v->members[i];
        if (m->value->type != VS_JSON_STRING)
            return cfail(c, "\"__metadata__\" value of \"%.100s\" must be a string, found %s", m->key, kind(m->value, b, sizeof b));
        if (strlen(m->key) != m->key_len || strlen(m->value->string) != m->value->length)
            return cfail(c, "\"__metadata__\" entry \"%.100s\" contains a NUL character", m->key);
        vs_safetensors_meta *e = &st->meta[st->n_meta];
        e->key = strdup(m->key);
        e->value = strdup(m->value->string);
        st->n_meta++;
        if (!e->key || !e->value) return vs_error_set(c->err, VS_ERR_NOMEM, "%s: out of memory", c->file);
    }
    qsort(st->meta, (size_t)st->n_meta, sizeof *st->meta, cmp_meta);
    return VS_OK;
}

/* Tensors for the loaded records, owned by st (moved out of any open scope). */
static vs_status load_tensors(const st_ctx *c, const st_rec *recs, size_t n, const unsigned char *data, vs_safetensors *st)
{
    st->entries = calloc(n ? n : 1, sizeof *st->entries);
    if (!st->entries) return vs_error_set(c->err, VS_ERR_NOMEM, "%s: out of memory", c->file);
    for (size_t i = 0; i < n; i++) {
        const st_rec *r = &recs[i];
        if (r->skip) continue;
        vs_safetensors_entry *e = &st->entries[st->n];
        e->name = strdup(r->name);
        if (!e->name) return vs_error_set(c->err, VS_ERR_NOMEM, "%s: out of memory", c->file);
        st->n++;
        snprintf(e->dtype, sizeof e->dtype, "%s", st_dtypes[r->dtype].name);
        e->tensor = vs_tensor_new(r->ndim, r->shape);
        if (!e->tensor)
            return vs_error_set(c->err, VS_ERR_NOMEM, "%s: tensor \"%.100s\": out of memory for %zu floats", c->file, r->name,
                                r->count);
        for (int d = vs_scope_depth(); d > 0; d--) vs_keep(e->tensor);
        vs_io_decode_f32((vs_io_dtype)st_dtypes[r->dtype].as, data + r->begin, r->count, e->tensor->data);
    }
    qsort(st->entries, (size_t)st->n, sizeof *st->entries, cmp_entry);
    return VS_OK;
}

vs_status vs_safetensors_parse(const void *buf, size_t len, const char *name, vs_safetensors **out, vs_error *err)
{
    *out = NULL;
    st_ctx c = {.file = vs_io_name(name), .err = err};
    const unsigned char *b = buf;
    if (!b) len = 0;
    /* torch.save writes a zip archive (PK\3\4) or, before PyTorch 1.6, a pickle (0x80, protocol 2-5); a
     * safetensors file's JSON header always opens at byte 8, and its length's first byte may well be 0x80 */
    const bool header = len > 8 && b[8] == '{';
    if (!header && len >= 4 && memcmp(b, "PK\3\4", 4) == 0)
        return cfail(&c, "a PyTorch file (torch.save's zip archive), not safetensors; write the model with torch_to_versus.py (share/versus/)");
    if (!header && len >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
        return cfail(&c, "a Python pickle (torch.save), not safetensors; write the model with torch_to_versus.py (share/versus/)");
    if (len < 8) return cfail(&c, "truncated: %zu bytes, shorter than the 8-byte header length", len);
    uint64_t hlen = vs_le64(b);
    if (hlen > VS_SAFETENSORS_MAX_HEADER)
        return cfail(&c, "header length %" PRIu64 " out of range (at most %zu)", hlen, VS_SAFETENSORS_MAX_HEADER);
    if (hlen > len - 8)
        return cfail(&c, "header length %" PRIu64 " is larger than the %zu bytes after the length field", hlen, len - 8);
    vs_json *hdr = NULL;
    vs_error jerr;
    vs_status s = vs_json_parse((const char *)b + 8, (size_t)hlen, "header", NULL, &hdr, &jerr);
    if (s) return vs_error_set(err, s, "%s: %s", c.file, jerr.msg);
    const unsigned char *data = b + 8 + hlen;
    size_t data_len = len - 8 - (size_t)hlen;
    vs_safetensors *st = NULL;
    st_rec *recs = NULL;
    size_t n = 0;
    if (hdr->type != VS_JSON_OBJECT) {
        char k[64];
        s = cfail(&c, "header: expected a JSON object, found %s", kind(hdr, k, sizeof k));
        goto done;
    }
    st = calloc(1, sizeof *st);
    recs = calloc(hdr->n ? hdr->n : 1, sizeof *recs);
    if (!st || !recs) {
        s = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", c.file);
        goto done;
    }
    for (size_t i = 0; i < hdr->n && !s; i++) {
        const vs_json_member *m = &hdr->members[i];
        if (strcmp(m->key, "__metadata__") == 0 && m->key_len == 12)
            s = read_metadata(&c, m->value, st);
        else if (!(s = parse_record(&c, m, data_len, &recs[n])))
            n++;
    }
    if (!s) s = check_tiling(&c, recs, n, data_len);
    if (!s) s = load_tensors(&c, recs, n, data, st);
done:
    free(recs);
    vs_json_free(hdr);
    if (s) {
        vs_safetensors_free(st);
        return s;
    }
    *out = st;
    return VS_OK;
}

vs_status vs_safetensors_read(const char *path, vs_safetensors **out, vs_error *err)
{
    *out = NULL;
    unsigned char *buf;
    size_t len;
    vs_status s = vs_io_read_file(path, ST_MAX_FILE, &buf, &len, err);
    if (s) return s;
    s = vs_safetensors_parse(buf, len, path, out, err);
    free(buf);
    return s;
}

static vs_safetensors_entry *find(const vs_safetensors *st, const char *name)
{
    if (!st || !name || st->n == 0) return NULL;
    vs_safetensors_entry key = {.name = (char *)name};
    return bsearch(&key, st->entries, (size_t)st->n, sizeof key, cmp_entry);
}

vs_tensor *vs_safetensors_get(const vs_safetensors *st, const char *name)
{
    vs_safetensors_entry *e = find(st, name);
    return e ? e->tensor : NULL;
}

vs_tensor *vs_safetensors_take(vs_safetensors *st, const char *name)
{
    vs_safetensors_entry *e = find(st, name);
    if (!e) return NULL;
    vs_tensor *t = e->tensor;
    e->tensor = NULL;
    return t;
}

const char *vs_safetensors_meta_get(const vs_safetensors *st, const char *key)
{
    if (!st || !key || st->n_meta == 0) return NULL;
    vs_safetensors_meta k = {.key = (char *)key};
    vs_safetensors_meta *m = bsearch(&k, st->meta, (size_t)st->n_meta, sizeof k, cmp_meta);
    return m ? m->value : NULL;
}

void vs_safetensors_free(vs_safetensors *st)
{
    if (!st) return;
    for (int64_t i = 0; i < st->n; i++) {
        free(st->entries[i].name);
        vs_tensor_free(st->entries[i].tensor);
    }
    for (int64_t i = 0; i < st->n_meta; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->entries);
    free(st->meta);
    free(st);
}

/* ---- writing ----------------------------------------------------------------------------------- */

typedef struct named {
    const char *name;
    size_t index;
} named;

static int cmp_named(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }

/* Sort n names; fail on NULL or repeated ones.  what: "tensor name", "metadata key". */
static vs_status sort_names(named *v, size_t n, const char *what, vs_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!v[i].name) return vs_error_set(err, VS_ERR_ARG, "safetensors: %s %zu is missing", what, v[i].index);
    qsort(v, n, sizeof *v, cmp_named);
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i].name, v[i - 1].name) == 0)
            return vs_error_set(err, VS_ERR_ARG, "safetensors: duplicate %s \"%.100s\"", what, v[i].name);
    return VS_OK;
}

/* {"dtype":"F32","shape":[...],"data_offsets":[begin,end]} */
static vs_json *tensor_info(const vs_tensor *t, uint64_t begin, uint64_t end)
{
    vs_json *o = vs_json_new_object(), *shape = vs_json_new_array(), *off = vs_json_new_array();
    vs_status s = vs_json_set(o, "dtype", vs_json_new_string("F32"));
    for (int i = 0; i < t->ndim && !s; i++) s = vs_json_push(shape, vs_json_new_int(t->shape[i]));
    if (!s) s = vs_json_push(off, vs_json_new_int((int64_t)begin));
    if (!s) s = vs_json_push(off, vs_json_new_int((int64_t)end));
    if (!s) {
        s = vs_json_set(o, "shape", shape);
        shape = NULL;
    }
    if (!s) {
        s = vs_json_set(o, "data_offsets", off);
        off = NULL;
    }
    vs_json_free(shape);
    vs_json_free(off);
    if (s) {
        vs_json_free(o);
        return NULL;
    }
    return o;
}

/* The padded header text and the tensors in file order. */
static vs_status build_header(const vs_safetensors_item *items, int64_t n, const char *const *meta, int64_t n_meta,
                              char **text, size_t *text_len, named **order, uint64_t *data_len, vs_error *err)
{
    *text = NULL;
    *order = NULL;
    if (n < 0 || n_meta < 0 || (n > 0 && !items) || (n_meta > 0 && !meta) || (uint64_t)n > SIZE_MAX / sizeof(named) ||
        (uint64_t)n_meta > SIZE_MAX / sizeof(named))
        return vs_error_set(err, VS_ERR_ARG, "safetensors: invalid item or metadata counts %" PRId64 ", %" PRId64, n, n_meta);
    named *tn = malloc((size_t)(n ? n : 1) * sizeof *tn), *mn = malloc((size_t)(n_meta ? n_meta : 1) * sizeof *mn);
    vs_json *root = vs_json_new_object();
    vs_status s = tn && mn && root ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "safetensors: out of memory");
    for (int64_t i = 0; i < n && !s; i++) {
        tn[i] = (named){items[i].name, (size_t)i};
        if (!items[i].tensor)
            s = vs_error_set(err, VS_ERR_ARG, "safetensors: tensor \"%.100s\" is missing", items[i].name ? items[i].name : "?");
        else if (items[i].name && strcmp(items[i].name, "__metadata__") == 0)
            s = vs_error_set(err, VS_ERR_ARG, "safetensors: \"__metadata__\" is reserved and cannot name a tensor");
    }
    for (int64_t i = 0; i < n_meta && !s; i++) {
        mn[i] = (named){meta[2 * i], (size_t)i};
        if (!meta[2 * i + 1])
            s = vs_error_set(err, VS_ERR_ARG, "safetensors: metadata \"%.100s\" has no value", meta[2 * i] ? meta[2 * i] : "?");
    }
    if (!s) s = sort_names(tn, (size_t)n, "tensor name", err);
    if (!s) s = sort_names(mn, (size_t)n_meta, "metadata key", err);
    if (!s && n_meta > 0) {
        vs_json *m = vs_json_new_object();
        for (int64_t i = 0; i < n_meta && !s; i++) s = vs_json_set(m, mn[i].name, vs_json_new_string(meta[2 * mn[i].index + 1]));
        if (!s)
            s = vs_json_set(root, "__metadata__", m);
        else
            vs_json_free(m);
    }
    uint64_t at = 0;
    for (int64_t i = 0; i < n && !s; i++) {
        const vs_tensor *t = items[tn[i].index].tensor;
        uint64_t bytes = (uint64_t)t->size * 4; /* size <= INT64_MAX / 4 for any tensor */
        if (bytes > (uint64_t)INT64_MAX - at) {
            s = vs_error_set(err, VS_ERR_ARG, "safetensors: tensors too large for one file");
            break;
        }
        s = vs_json_set(root, tn[i].name, tensor_info(t, at, at + bytes));
        at += bytes;
    }
    if (s == VS_ERR_NOMEM && err && !err->msg[0]) vs_error_set(err, s, "safetensors: out of memory");
    char *json = NULL;
    size_t jn = 0;
    if (!s) s = vs_json_write(root, 0, &json, &jn, err);
    vs_json_free(root);
    free(mn);
    if (!s) {
        size_t padded = (jn + 7) / 8 * 8;
        char *p = realloc(json, padded + 1);
        if (!p) {
            s = vs_error_set(err, VS_ERR_NOMEM, "safetensors: out of memory");
        } else {
            memset(p + jn, ' ', padded - jn); /* the reference pads with spaces to 8-byte alignment */
            p[padded] = '\0';
            json = p;
            jn = padded;
        }
    }
    if (s) {
        free(json);
        free(tn);
        return s;
    }
    *text = json;
    *text_len = jn;
    *order = tn;
    *data_len = at;
    return VS_OK;
}

static vs_status emit(vs_io_sink *k, const vs_safetensors_item *items, int64_t n, const char *text, size_t text_len,
                      const named *order, vs_error *err)
{
    unsigned char len8[8];
    vs_put_le64(len8, (uint64_t)text_len);
    vs_status s = vs_io_sink_put(k, len8, 8, err);
    if (!s) s = vs_io_sink_put(k, text, text_len, err);
    for (int64_t i = 0; i < n && !s; i++) {
        const vs_tensor *t = items[order[i].index].tensor;
        s = vs_io_sink_f32le(k, t->data, (size_t)t->size, err);
    }
    return s;
}

vs_status vs_safetensors_encode(const vs_safetensors_item *items, int64_t n, const char *const *meta, int64_t n_meta,
                                unsigned char **buf, size_t *len, vs_error *err)
{
    *buf = NULL;
    *len = 0;
    vs_error_clear(err);
    char *text;
    size_t text_len = 0, total = 0;
    named *order;
    uint64_t data_len;
    vs_status s = build_header(items, n, meta, n_meta, &text, &text_len, &order, &data_len, err);
    if (s) return s;
    if (data_len > SIZE_MAX || !vs_size_add(8 + text_len, (size_t)data_len, &total)) {
        s = vs_error_set(err, VS_ERR_NOMEM, "safetensors: %" PRIu64 " bytes of data do not fit in memory", data_len);
    } else {
        vs_io_sink k = {.mem = malloc(total)};
        if (!k.mem) s = vs_error_set(err, VS_ERR_NOMEM, "safetensors: out of memory for %zu bytes", total);
        if (!s) s = emit(&k, items, n, text, text_len, order, err);
        if (s) {
            free(k.mem);
        } else {
            *buf = k.mem;
            *len = total;
        }
    }
    free(text);
    free(order);
    return s;
}

vs_status vs_safetensors_write(const char *path, const vs_safetensors_item *items, int64_t n, const char *const *meta,
                               int64_t n_meta, vs_error *err)
{
    vs_error_clear(err);
    char *text;
    size_t text_len = 0;
    named *order;
    uint64_t data_len;
    vs_status s = build_header(items, n, meta, n_meta, &text, &text_len, &order, &data_len, err);
    if (s) return vs_io_prefix_path(err, s, path);
    vs_io_atomic a;
    s = vs_io_atomic_open(&a, path, err);
    if (!s) {
        vs_io_sink k = {.file = &a};
        s = emit(&k, items, n, text, text_len, order, err);
        if (!s)
            s = vs_io_atomic_commit(&a, err);
        else
            vs_io_atomic_abort(&a);
    }
    free(text);
    free(order);
    return s;
}
