/* datasets/io/protobuf.h - a bounded reader of the protocol buffers wire format (the ONNX file's
 * encoding): varints, fixed32/64 and length-delimited fields over a byte range.  It knows no message
 * types; callers (onnx.c) switch on field numbers.  Nothing is allocated here, and no read goes past
 * the range's end: a truncated varint or a length past the end is an error naming the offset.
 * Private to the file layer. */
#ifndef VERSUS_DATASETS_IO_PROTOBUF_H
#define VERSUS_DATASETS_IO_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"

/* Wire types (proto3 keeps 0, 1, 2 and 5; groups 3 and 4 are refused). */
enum { VS_PB_VARINT = 0, VS_PB_FIXED64 = 1, VS_PB_BYTES = 2, VS_PB_FIXED32 = 5 };

/* A message's bytes [p, end); base is the file's first byte, for offsets in messages. */
typedef struct vs_pb {
    const uint8_t *p, *end, *base;
} vs_pb;

/* One field: its number, wire type and value (u for varints and fixed ints, bytes/len for
 * length-delimited ones, pointing into the buffer). */
typedef struct vs_pb_field {
    uint32_t number;
    int wire;
    uint64_t u;
    const uint8_t *bytes;
    size_t len;
} vs_pb_field;

/* The next field of r into f: 1, 0 at the end of the message, or -1 with err set ("offset N:
 * truncated varint", "length L past the end of the message"). */
int vs_pb_next(vs_pb *r, vs_pb_field *f, const char *what, vs_error *err);
/* A sub-reader over a length-delimited field's bytes (an empty one for any other field). */
vs_pb vs_pb_sub(const vs_pb *parent, const vs_pb_field *f);
/* Read one varint from r (packed repeated fields): 0, or -1 with err set. */
int vs_pb_varint(vs_pb *r, uint64_t *v, const char *what, vs_error *err);
/* A fixed32 field's bits as a float. */
float vs_pb_float(uint32_t bits);

#endif
