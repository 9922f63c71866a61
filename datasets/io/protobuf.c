/* datasets/io/protobuf.c - the protocol buffers wire format, read field by field within bounds
 * (protobuf.h).  Message types live with their formats (onnx.c). */
#include "datasets/io/protobuf.h"

#include <string.h>

static long long offset(const vs_pb *r, const uint8_t *p) { return (long long)(p - r->base); }

int vs_pb_varint(vs_pb *r, uint64_t *v, const char *what, vs_error *err)
{
    uint64_t x = 0;
    const uint8_t *start = r->p;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) {
            vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: truncated varint", what, offset(r, start));
            return -1;
        }
        uint8_t b = *r->p++;
        if (shift == 63 && (b & 0x7e)) break; /* more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: varint longer than 64 bits", what, offset(r, start));
    return -1;
}

int vs_pb_next(vs_pb *r, vs_pb_field *f, const char *what, vs_error *err)
{
    if (r->p >= r->end) return 0;
    const uint8_t *start = r->p;
    uint64_t key;
    if (vs_pb_varint(r, &key, what, err)) return -1;
    f->number = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    f->bytes = NULL;
    f->len = 0;
    f->u = 0;
    if (key >> 3 == 0 || key >> 32) {
        vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: field number %llu is not valid", what, offset(r, start),
                     (unsigned long long)(key >> 3));
        return -1;
    }
    size_t left;
    switch (f->wire) {
    case VS_PB_VARINT:
        return vs_pb_varint(r, &f->u, what, err) ? -1 : 1;
    case VS_PB_FIXED64:
    case VS_PB_FIXED32: {
        size_t n = f->wire == VS_PB_FIXED64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) {
            vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: field %u: %zu bytes past the end of the message", what,
                         offset(r, start), f->number, n);
            return -1;
        }
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 1;
    }
    case VS_PB_BYTES:
        if (vs_pb_varint(r, &f->u, what, err)) return -1;
        left = (size_t)(r->end - r->p);
        if (f->u > left) {
            vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: field %u: length %llu past the end of the message (%zu bytes left)",
                         what, offset(r, start), f->number, (unsigned long long)f->u, left);
            return -1;
        }
        f->bytes = r->p;
        f->len = (size_t)f->u;
        r->p += f->len;
        return 1;
    default:
        vs_error_set(err, VS_ERR_FORMAT, "%s: offset %lld: field %u: wire type %d is not supported", what, offset(r, start),
                     f->number, f->wire);
        return -1;
    }
}

vs_pb vs_pb_sub(const vs_pb *parent, const vs_pb_field *f)
{
    if (f->wire != VS_PB_BYTES || !f->bytes) return (vs_pb){parent->p, parent->p, parent->base}; /* empty */
    vs_pb s = {f->bytes, f->bytes + f->len, parent->base};
    return s;
}

float vs_pb_float(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
