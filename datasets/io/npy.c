/* nn/npy.c - .npy files: preamble and header-dict checks, dtype conversion, atomic writing.
 *
 * A file is read from a "source" (a memory buffer, or a file descriptor whose size is known from
 * fstat) in three steps: preamble (magic, version, header length), the header dict (a Python
 * literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }), then the data, converted
 * chunk by chunk straight into the result.  Sizes are checked against the source before any
 * allocation that depends on the header. */
#include "versus/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/io/io_util.h"

#define NPY_STAGE 65536 /* bytes converted per chunk */
#define NPY_ALIGN 64    /* numpy pads the header so the data starts on this boundary */

/* The dtypes read: code after the byte-order character, element type, size. */
static const struct {
    const char *code;
    vs_io_dtype dtype;
    size_t size;
} npy_types[] = {{"f4", VS_IO_F32, 4}, {"f8", VS_IO_F64, 8}, {"i8", VS_IO_I64, 8},
                 {"i4", VS_IO_I32, 4}, {"u1", VS_IO_U8, 1},  {"b1", VS_IO_BOOL, 1}};

#define NPY_SUPPORTED "'<f4', '<f8', '<i8', '<i4', '|u1', '|b1'"

typedef struct npy_header {
    vs_io_dtype dtype;
    size_t itemsize;
    char descr[24];
    bool fortran;
    int ndim;
    int64_t shape[VS_MAX_DIMS];
    size_t count;        /* elements */
    size_t data_offset;  /* bytes before the data */
    size_t data_bytes;
} npy_header;

static vs_status fail(vs_error *err, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static vs_status fail(vs_error *err, const char *name, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vs_error_set(err, VS_ERR_FORMAT, "%s: %s", name, msg);
}

/* "(2, 3)" as numpy prints a shape: "()" for 0-d, "(3,)" for 1-d. */
static void shape_repr(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < n) snprintf(buf + k, n - k, ndim == 1 ? ",)" : ")");
}

/* ---- the header dict --------------------------------------------------------------------------- */

typedef struct hparse {
    const char *p, *start, *end;
    const char *name;
    vs_error *err;
} hparse;

static void h_ws(hparse *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static const char *h_found(const hparse *h, char *buf, size_t n)
{
    if (h->p >= h->end) return "the end of the header";
    unsigned char c = (unsigned char)*h->p;
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02X", c);
    return buf;
}

static vs_status h_expected(hparse *h, const char *what)
{
    char b[32];
    return fail(h->err, h->name, "header: expected %s at offset %td, found %s", what, h->p - h->start,
                h_found(h, b, sizeof b));
}

/* A quoted Python string without escapes, copied into out (at most n-1 bytes). */
static vs_status h_string(hparse *h, char *out, size_t n, const char *what)
{
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return h_expected(h, what);
    char q = *h->p++;
    const char *s = h->p;
    while (h->p < h->end && *h->p != q && *h->p != '\\' && *h->p != '\n') h->p++;
    if (h->p >= h->end || *h->p != q) return fail(h->err, h->name, "header: unterminated or escaped string at offset %td", s - 1 - h->start);
    size_t len = (size_t)(h->p - s);
    h->p++;
    if (len >= n) return fail(h->err, h->name, "header: string '%.20s...' is too long for %s", s, what);
    memcpy(out, s, len);
    out[len] = '\0';
    return VS_OK;
}

static int h_word(hparse *h, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return 1;
    }
    return 0;
}

/* The shape tuple: "()", "(3,)", "(2, 3)", "(2, 3,)"; Python 2's "3L" is accepted. */
static vs_status h_shape(hparse *h, npy_header *hd)
{
    if (h->p >= h->end || *h->p != '(') return h_expected(h, "a tuple of integers for 'shape'");
    h->p++;
    int n = 0;
    bool comma_after_last = false;
    for (;;) {
        h_ws(h);
        if (h->p < h->end && *h->p == ')') break;
        if (h->p < h->end && *h->p == '-')
            return fail(h->err, h->name, "header field 'shape': negative dimension at offset %td", h->p - h->start);
        if (h->p >= h->end || *h->p < '0' || *h->p > '9') return h_expected(h, "a dimension in 'shape'");
        uint64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            unsigned d = (unsigned)(*h->p++ - '0');
            if (v > ((uint64_t)INT64_MAX - d) / 10)
                return fail(h->err, h->name, "header field 'shape': dimension %d is larger than 2^63-1", n);
            v = v * 10 + d;
        }
        if (h->p < h->end && *h->p == 'L') h->p++;
        if (n == VS_MAX_DIMS)
            return fail(h->err, h->name, "header field 'shape': more than %d dimensions are not supported", VS_MAX_DIMS);
        hd->shape[n++] = (int64_t)v;
        h_ws(h);
        comma_after_last = false;
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            comma_after_last = true;
            continue;
        }
        if (h->p < h->end && *h->p == ')') break;
        return h_expected(h, "',' or ')' in 'shape'");
    }
    h->p++;
    if (n == 1 && !comma_after_last)
        return fail(h->err, h->name, "header field 'shape': (%" PRId64 ") is not a tuple (a 1-d shape is written (%" PRId64 ",))",
                    hd->shape[0], hd->shape[0]);
    hd->ndim = n;
    return VS_OK;
}

static vs_status check_descr(hparse *h, npy_header *hd)
{
    const char *d = hd->descr;
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return fail(h->err, h->name, "header field 'descr': '%s' has no byte-order character (expected one of " NPY_SUPPORTED ")", d);
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
        if (strcmp(d + 1, npy_types[i].code) != 0) continue;
        if (npy_types[i].size > 1 && order == '>')
            return fail(h->err, h->name,
                        "header field 'descr': '%s' is big-endian; versus reads little-endian data (save it with "
                        "arr.astype('<%s'))", d, npy_types[i].code);
        if (npy_types[i].size > 1 && order != '<')
            return fail(h->err, h->name, "header field 'descr': '%s' does not say little-endian ('<%s')", d, npy_types[i].code);
        hd->dtype = npy_types[i].dtype;
        hd->itemsize = npy_types[i].size;
        return VS_OK;
    }
    return fail(h->err, h->name, "header field 'descr': dtype '%s' is not supported (versus reads " NPY_SUPPORTED ")", d);
}

static vs_status parse_dict(const char *text, size_t len, const char *name, npy_header *hd, vs_error *err)
{
    hparse h = {.p = text, .start = text, .end = text + len, .name = name, .err = err};
    bool seen[3] = {false, false, false};
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    vs_status s;
    h_ws(&h);
    if (h.p >= h.end || *h.p != '{') return h_expected(&h, "'{' opening the header dict");
    h.p++;
    for (;;) {
        h_ws(&h);
        if (h.p < h.end && *h.p == '}') break;
        char key[32];
        if ((s = h_string(&h, key, sizeof key, "a quoted key"))) return s;
        int k = -1;
        for (int i = 0; i < 3; i++)
            if (strcmp(key, keys[i]) == 0) k = i;
        if (k < 0) return fail(err, name, "header: unexpected key '%s' (expected 'descr', 'fortran_order' and 'shape')", key);
        if (seen[k]) return fail(err, name, "header: key '%s' appears twice", key);
        seen[k] = true;
        h_ws(&h);
        if (h.p >= h.end || *h.p != ':') return h_expected(&h, "':' after the key");
        h.p++;
        h_ws(&h);
        if (k == 0) {
            if (h.p < h.end && *h.p == '[')
                return fail(err, name, "header field 'descr': structured dtypes (a list of fields) are not supported");
            if ((s = h_string(&h, hd->descr, sizeof hd->descr, "a quoted dtype for 'descr'"))) return s;
            if ((s = check_descr(&h, hd))) return s;
        } else if (k == 1) {
            if (h_word(&h, "True"))
                hd->fortran = true;
            else if (h_word(&h, "False"))
                hd->fortran = false;
            else
                return h_expected(&h, "True or False for 'fortran_order'");
        } else if ((s = h_shape(&h, hd))) {
            return s;
        }
        h_ws(&h);
        if (h.p < h.end && *h.p == ',') {
            h.p++;
            continue;
        }
        if (h.p < h.end && *h.p == '}') break;
        return h_expected(&h, "',' or '}' in the header dict");
    }
    h.p++;
    h_ws(&h);
    if (h.p < h.end) return h_expected(&h, "only padding after the header dict");
    for (int i = 0; i < 3; i++)
        if (!seen[i]) return fail(err, name, "header: missing key '%s'", keys[i]);
    int big_dims = 0;
    for (int i = 0; i < hd->ndim; i++) big_dims += hd->shape[i] > 1;
    if (hd->fortran && big_dims > 1)
        return fail(err, name, "header field 'fortran_order': True (column-major) is not supported; save a C-ordered "
                    "array (np.ascontiguousarray)");
    size_t count = 1;
    for (int i = 0; i < hd->ndim; i++) {
        if (!vs_size_mul(count, (size_t)hd->shape[i], &count) || count > (size_t)INT64_MAX / 8) {
            char r[256];
            shape_repr(hd->ndim, hd->shape, r, sizeof r);
            return fail(err, name, "header field 'shape': %s has too many elements", r);
        }
    }
    hd->count = count;
    hd->data_bytes = count * hd->itemsize; /* count <= INT64_MAX / 8: no overflow */
    return VS_OK;
}

/* ---- sources ---------------------------------------------------------------------------------- */

typedef struct npy_src {
    const unsigned char *mem; /* the whole input, or NULL for a file */
    int fd;
    size_t total, pos;
    const char *name;
} npy_src;

static vs_status src_read(npy_src *s, void *dst, size_t n, vs_error *err)
{
    if (n > s->total - s->pos) return fail(err, s->name, "truncated: %zu bytes missing", n - (s->total - s->pos));
    if (s->mem) {
        memcpy(dst, s->mem + s->pos, n);
        s->pos += n;
        return VS_OK;
    }
    unsigned char *d = dst;
    while (n > 0) {
        ssize_t r = read(s->fd, d, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return vs_io_fail(err, s->name, "read", errno);
        if (r == 0) return fail(err, s->name, "file shrank while being read");
        d += r;
        n -= (size_t)r;
        s->pos += (size_t)r;
    }
    return VS_OK;
}

/* Preamble and header of src into hd; leaves src at the first data byte. */
static vs_status read_header(npy_src *src, npy_header *hd, vs_error *err)
{
    const char *name = src->name;
    unsigned char pre[12];
    memset(hd, 0, sizeof *hd);
    if (src->total < 10)
        return fail(err, name, "truncated: %zu bytes, shorter than the 10-byte .npy preamble", src->total);
    vs_status s = src_read(src, pre, 10, err);
    if (s) return s;
    if (memcmp(pre, "\x93NUMPY", 6) != 0) return fail(err, name, "not a .npy file (it does not start with \\x93NUMPY)");
    unsigned major = pre[6], minor = pre[7];
    size_t hlen;
    if (major == 1 && minor == 0) {
        hlen = vs_le16(pre + 8);
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (src->total < 12)
            return fail(err, name, "truncated: %zu bytes, shorter than the 12-byte .npy %u.0 preamble", src->total, major);
        if ((s = src_read(src, pre + 10, 2, err))) return s;
        hlen = vs_le32(pre + 8);
    } else {
        return fail(err, name, "unsupported .npy format version %u.%u (versus reads 1.0, 2.0 and 3.0)", major, minor);
    }
    if (hlen > VS_NPY_MAX_HEADER)
        return fail(err, name, "header length %zu out of range (at most %zu)", hlen, VS_NPY_MAX_HEADER);
    if (hlen > src->total - src->pos)
        return fail(err, name, "header length %zu runs past the end of the file (%zu bytes)", hlen, src->total);
    char *text = malloc(hlen + 1);
    if (!text) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", name);
    s = src_read(src, text, hlen, err);
    text[hlen] = '\0';
    if (!s && memchr(text, '\0', hlen)) s = fail(err, name, "NUL byte in the header (a Python literal has none)");
    if (!s) s = parse_dict(text, hlen, name, hd, err);
    free(text);
    if (s) return s;
    hd->data_offset = src->pos;
    size_t avail = src->total - src->pos;
    if (avail != hd->data_bytes) {
        char r[256];
        shape_repr(hd->ndim, hd->shape, r, sizeof r);
        if (avail < hd->data_bytes)
            return fail(err, name, "truncated data: shape %s of '%s' needs %zu bytes, the file has %zu after the header", r,
                        hd->descr, hd->data_bytes, avail);
        return fail(err, name, "%zu unexpected bytes after the data of shape %s '%s'", avail - hd->data_bytes, r, hd->descr);
    }
    return VS_OK;
}

/* ---- data conversion ----------------------------------------------------------------------------- */

/* Integer values; returns n, or the index of the first value that is not an integer. */
static size_t to_i64(vs_io_dtype dt, const unsigned char *p, size_t n, int64_t *out)
{
    for (size_t i = 0; i < n; i++) {
        double d;
        switch (dt) {
        case VS_IO_I64: out[i] = (int64_t)vs_le64(p + 8 * i); continue;
        case VS_IO_I32: out[i] = (int32_t)vs_le32(p + 4 * i); continue;
        case VS_IO_U8: out[i] = p[i]; continue;
        case VS_IO_BOOL: out[i] = p[i] != 0; continue;
        case VS_IO_F32: d = vs_bits_f32(vs_le32(p + 4 * i)); break;
        case VS_IO_F64: d = vs_bits_f64(vs_le64(p + 8 * i)); break;
        default: return i;
        }
        if (!(d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return i;
        out[i] = (int64_t)d;
    }
    return n;
}

/* Read the data of src (after read_header) into f32 (or i64) elements. */
static vs_status read_data(npy_src *src, const npy_header *hd, float *f32, int64_t *i64, vs_error *err)
{
    unsigned char *stage = malloc(NPY_STAGE);
    if (!stage) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", src->name);
    size_t per = NPY_STAGE / hd->itemsize, done = 0;
    vs_status s = VS_OK;
    while (done < hd->count && !s) {
        size_t k = hd->count - done < per ? hd->count - done : per;
        if ((s = src_read(src, stage, k * hd->itemsize, err))) break;
        if (f32) {
            vs_io_decode_f32(hd->dtype, stage, k, f32 + done);
        } else {
            size_t bad = to_i64(hd->dtype, stage, k, i64 + done);
            if (bad < k) {
                double v = hd->dtype == VS_IO_F32 ? (double)vs_bits_f32(vs_le32(stage + 4 * bad))
                                               : vs_bits_f64(vs_le64(stage + 8 * bad));
                s = fail(err, src->name, "element %zu is %.9g, not an integer (dtype '%s' read as int64)", done + bad, v,
                         hd->descr);
            }
        }
        done += k;
    }
    free(stage);
    return s;
}

static vs_status load(npy_src *src, vs_tensor **t_out, vs_i64_array *a_out, vs_error *err)
{
    npy_header hd;
    vs_status s = read_header(src, &hd, err);
    if (s) return s;
    if ((s = vs_mem_check(hd.count, t_out ? sizeof(float) : sizeof(int64_t), src->name, err))) return s;
    if (t_out) {
        vs_tensor *t = vs_tensor_new(hd.ndim, hd.shape);
        if (!t) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu floats", src->name, hd.count);
        if ((s = read_data(src, &hd, t->data, NULL, err))) {
            vs_tensor_free(t);
            return s;
        }
        *t_out = t;
        return VS_OK;
    }
    int64_t *data = malloc(hd.count ? hd.count * sizeof *data : 1);
    if (!data) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu integers", src->name, hd.count);
    if ((s = read_data(src, &hd, NULL, data, err))) {
        free(data);
        return s;
    }
    a_out->ndim = hd.ndim;
    memcpy(a_out->shape, hd.shape, sizeof hd.shape);
    a_out->size = (int64_t)hd.count;
    a_out->data = data;
    return VS_OK;
}

static vs_status parse_mem(const void *buf, size_t len, const char *name, vs_tensor **t, vs_i64_array *a, vs_error *err)
{
    npy_src src = {.mem = buf ? buf : (const void *)"", .fd = -1, .total = buf ? len : 0, .name = vs_io_name(name)};
    return load(&src, t, a, err);
}

static vs_status read_path(const char *path, vs_tensor **t, vs_i64_array *a, vs_error *err)
{
    struct stat st;
    int fd = vs_io_open_input(path, &st, err);
    if (fd < 0) return err ? err->code : VS_ERR_IO;
    if (S_ISREG(st.st_mode)) {
        npy_src src = {.fd = fd, .total = (size_t)st.st_size, .name = path};
        vs_status s = load(&src, t, a, err);
        close(fd);
        return s;
    }
    /* a pipe: its size is known only once it has been read (from this descriptor: a pipe reopened
     * would have lost its data) */
    unsigned char *buf;
    size_t len;
    vs_status s = vs_io_read_fd(fd, path, SIZE_MAX / 2, &buf, &len, err);
    if (s) return s;
    s = parse_mem(buf, len, path, t, a, err);
    free(buf);
    return s;
}

vs_status vs_npy_read(const char *path, vs_tensor **out, vs_error *err)
{
    *out = NULL;
    return read_path(path, out, NULL, err);
}

vs_status vs_npy_read_finite(const char *path, vs_tensor **out, vs_error *err)
{
    vs_status st = vs_npy_read(path, out, err);
    if (st != VS_OK) return st;
    size_t n = (size_t)(*out)->size, i = vs_first_nonfinite((*out)->data, n);
    if (i == n) return VS_OK;
    float v = (*out)->data[i];
    vs_tensor_free(*out);
    *out = NULL;
    return vs_error_set(err, VS_ERR_NUMERIC, "%s: element %zu is %s; a model's inputs, attributions and references must be finite", path,
                        i, isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf");
}

vs_status vs_npy_parse(const void *buf, size_t len, const char *name, vs_tensor **out, vs_error *err)
{
    *out = NULL;
    return parse_mem(buf, len, name, out, NULL, err);
}

vs_status vs_npy_read_i64(const char *path, vs_i64_array *out, vs_error *err)
{
    memset(out, 0, sizeof *out);
    return read_path(path, NULL, out, err);
}

vs_status vs_npy_parse_i64(const void *buf, size_t len, const char *name, vs_i64_array *out, vs_error *err)
{
    memset(out, 0, sizeof *out);
    return parse_mem(buf, len, name, NULL, out, err);
}

void vs_i64_array_free(vs_i64_array *a)
{
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- writing ----------------------------------------------------------------------------------- */

/* The preamble and header numpy.save writes (format 1.0): the dict, spare room to grow shape[0] in
 * place (21 - digits of shape[0] spaces), then spaces and '\n' up to a multiple of 64 bytes. */
static size_t make_header(const char *descr, int ndim, const int64_t *shape, unsigned char *out, size_t cap)
{
    char dict[400], r[256];
    shape_repr(ndim, shape, r, sizeof r);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, r);
    if (ndim > 0) {
        char d0[24];
        int digits = snprintf(d0, sizeof d0, "%" PRId64, shape[0]);
        for (int i = digits; i < 21; i++) dict[n++] = ' ';
    }
    size_t hlen = (size_t)n + 1;
    size_t pad = NPY_ALIGN - (10 + hlen) % NPY_ALIGN;
    size_t total = 10 + hlen + pad;
    if (total > cap) return 0;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    vs_put_le16(out + 8, (uint16_t)(hlen + pad));
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', pad);
    out[total - 1] = '\n';
    return total;
}

/* Header then data (f32 as '<f4' or i64 as '<i8'). */
static vs_status encode(vs_io_sink *k, int ndim, const int64_t *shape, size_t count, const float *f32,
                        const int64_t *i64, vs_error *err)
{
    unsigned char hdr[512];
    size_t hn = make_header(f32 ? "<f4" : "<i8", ndim, shape, hdr, sizeof hdr);
    vs_status s = vs_io_sink_put(k, hdr, hn, err);
    if (!s) s = f32 ? vs_io_sink_f32le(k, f32, count, err) : vs_io_sink_i64le(k, i64, count, err);
    return s;
}

/* Validate a shape for writing; *count = product. */
static vs_status check_shape(const char *what, int ndim, const int64_t *shape, size_t *count, vs_error *err)
{
    if (ndim < 0 || ndim > VS_MAX_DIMS || (ndim > 0 && !shape))
        return vs_error_set(err, VS_ERR_ARG, "%s: %d dimensions (expected 0 to %d)", what, ndim, VS_MAX_DIMS);
    size_t c = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || !vs_size_mul(c, (size_t)shape[i], &c) || c > (size_t)INT64_MAX / 8)
            return vs_error_set(err, VS_ERR_ARG, "%s: dimension %d of size %" PRId64 " is invalid", what, i, shape[i]);
    *count = c;
    return VS_OK;
}

static vs_status write_file(const char *path, int ndim, const int64_t *shape, const float *f32, const int64_t *i64,
                            vs_error *err)
{
    size_t count = 0;
    vs_status s = check_shape(path, ndim, shape, &count, err);
    if (s) return s;
    if (count && !f32 && !i64) return vs_error_set(err, VS_ERR_ARG, "%s: no data to write", path);
    vs_io_atomic a;
    if ((s = vs_io_atomic_open(&a, path, err))) return s;
    vs_io_sink k = {.file = &a};
    s = encode(&k, ndim, shape, count, f32, i64, err);
    if (!s) return vs_io_atomic_commit(&a, err);
    vs_io_atomic_abort(&a); /* nothing left to do when a failed write already removed the temporary */
    return s;
}

vs_status vs_npy_write(const char *path, const vs_tensor *t, vs_error *err)
{
    if (!t) return vs_error_set(err, VS_ERR_ARG, "%s: no tensor to write", path);
    return write_file(path, t->ndim, t->shape, t->data, NULL, err);
}

vs_status vs_npy_write_i64(const char *path, int ndim, const int64_t *shape, const int64_t *data, vs_error *err)
{
    return write_file(path, ndim, shape, NULL, data, err);
}

vs_status vs_npy_encode(const vs_tensor *t, unsigned char **buf, size_t *len, vs_error *err)
{
    *buf = NULL;
    *len = 0;
    if (!t) return vs_error_set(err, VS_ERR_ARG, "npy: no tensor to encode");
    unsigned char hdr[512];
    size_t hn = make_header("<f4", t->ndim, t->shape, hdr, sizeof hdr), bytes;
    if (!vs_size_mul((size_t)t->size, 4, &bytes) || !vs_size_add(bytes, hn, &bytes))
        return vs_error_set(err, VS_ERR_NOMEM, "npy: tensor too large to encode");
    vs_io_sink k = {.mem = malloc(bytes)};
    if (!k.mem) return vs_error_set(err, VS_ERR_NOMEM, "npy: out of memory for %zu bytes", bytes);
    vs_status s = encode(&k, t->ndim, t->shape, (size_t)t->size, t->data, NULL, err);
    if (s) {
        free(k.mem);
        return s;
    }
    *buf = k.mem;
    *len = bytes;
    return VS_OK;
}
