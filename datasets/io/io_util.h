/* datasets/io/io_util.h - the file layer's private helpers, shared by every format reader and writer
 * in datasets/io/ and by the floors above that read or write files (report's journals; not installed).
 *
 * Whole-file reads with a size cap, atomic file replacement, a C-locale bracket for strtod/printf,
 * and byte-order/half-float conversions.  Nothing here is public API. */
#ifndef VERSUS_DATASETS_IO_UTIL_H
#define VERSUS_DATASETS_IO_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <locale.h>

#include "versus/error.h"

/* The most a pipe (or a file that does not say its size) is read up to: 256 MiB. */
#define VS_IO_STREAM_MAX ((size_t)1 << 28)

/* How long a reader waits for someone to open a FIFO it was given for writing: 5 s. */
#define VS_IO_FIFO_WAIT_S 5

/* Read all of path into a new malloc'd buffer (one extra NUL byte after the data, not counted in
 * *len).  A regular file larger than max bytes or the memory budget is refused before it is read,
 * a pipe is read up to that limit and VS_IO_STREAM_MAX; devices and directories are refused (vs_io_open_input). */
vs_status vs_io_read_file(const char *path, size_t max, unsigned char **buf, size_t *len, vs_error *err);
/* The same from an open descriptor (closed before returning; blocking or not); path names it in
 * messages. */
vs_status vs_io_read_fd(int fd, const char *path, size_t max, unsigned char **buf, size_t *len, vs_error *err);

/* Open path for reading: a regular file or a pipe (a FIFO without a writer reads as empty rather than
 * blocking); directories and devices (/dev/zero, /dev/urandom) are refused with a message.  Returns
 * the descriptor (st = its fstat), or -1 with err set. */
struct stat;
int vs_io_open_input(const char *path, struct stat *st, vs_error *err);

/* err = VS_ERR_IO "<path>: cannot <what>: <strerror(e)>"; returns VS_ERR_IO. */
vs_status vs_io_fail(vs_error *err, const char *path, const char *what, int e);

/* Replace a file atomically: data goes to a temporary file "<path>.tmp-PID-XXXXXX" in the same
 * directory, which is fsync'ed and renamed over path only by vs_io_atomic_commit().  Any failure (or
 * an abort) removes the temporary file, so path keeps its old contents; opening removes temporaries
 * a killed process left in that directory (its PID no longer runs, or untouched for a minute).  A
 * symbolic link at path is replaced, never followed (but /dev/stdout and its kin are written
 * through).  When path is a device, a pipe or a socket it is written in place (tmp NULL) and a
 * failed write is reported (/dev/full). */
typedef struct vs_io_atomic {
    int fd;          /* -1 when closed */
    char *tmp;       /* temporary file name, malloc'd */
    const char *path;
} vs_io_atomic;

vs_status vs_io_atomic_open(vs_io_atomic *a, const char *path, vs_error *err);
/* On failure the temporary file is already removed (a later abort is harmless). */
vs_status vs_io_atomic_write(vs_io_atomic *a, const void *data, size_t n, vs_error *err);
vs_status vs_io_atomic_commit(vs_io_atomic *a, vs_error *err); /* closes a whatever happens */
void vs_io_atomic_abort(vs_io_atomic *a);                      /* removes the temporary file */
/* Open, write one buffer, commit. */
vs_status vs_io_write_file(const char *path, const void *data, size_t n, vs_error *err);

/* Where encoded bytes go: an open atomic file, or a memory buffer large enough for them. */
typedef struct vs_io_sink {
    vs_io_atomic *file;
    unsigned char *mem;
    size_t pos;
} vs_io_sink;

vs_status vs_io_sink_put(vs_io_sink *k, const void *data, size_t n, vs_error *err);
/* x[0..n) as little-endian float32 / int64, converted through a small staging buffer. */
vs_status vs_io_sink_f32le(vs_io_sink *k, const float *x, size_t n, vs_error *err);
vs_status vs_io_sink_i64le(vs_io_sink *k, const int64_t *x, size_t n, vs_error *err);

/* Element types found in .npy and safetensors files, as stored (little-endian). */
typedef enum vs_io_dtype { VS_IO_F32, VS_IO_F64, VS_IO_F16, VS_IO_BF16, VS_IO_I64, VS_IO_I32, VS_IO_U8, VS_IO_BOOL } vs_io_dtype;
/* out[i] = float32 value of element i of the n elements at p. */
void vs_io_decode_f32(vs_io_dtype t, const unsigned char *p, size_t n, float *out);

/* Put "<path>: " in front of err's message (after a failure reported without the path); returns s. */
vs_status vs_io_prefix_path(vs_error *err, vs_status s, const char *path);

/* Run number parsing/formatting in the "C" locale on this thread whatever setlocale() says:
 * vs_io_c_locale_begin() returns the previous locale to hand to vs_io_c_locale_end(). */
locale_t vs_io_c_locale_begin(void);
void vs_io_c_locale_end(locale_t previous);

/* Length of the valid UTF-8 sequence at q (RFC 3629: shortest form, no surrogates, at most
 * U+10FFFF) given the bytes up to end, or 0 when it is invalid.  q < end. */
size_t vs_io_utf8_len(const unsigned char *q, const unsigned char *end);

/* The name to put in messages for a buffer parsed from memory. */
static inline const char *vs_io_name(const char *name) { return name && *name ? name : "<memory>"; }

/* ---- little-endian loads and stores (any host byte order, any alignment) ---------------------- */
static inline uint16_t vs_le16(const unsigned char *p) { return (uint16_t)(p[0] | (unsigned)p[1] << 8); }
static inline uint32_t vs_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t vs_le64(const unsigned char *p) { return vs_le32(p) | (uint64_t)vs_le32(p + 4) << 32; }
static inline void vs_put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void vs_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void vs_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline float vs_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t vs_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline double vs_bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* IEEE binary16 -> float32 (exact: every half is a float). */
static inline float vs_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return vs_bits_f32(sign | 0x7f800000u | man << 13); /* inf, NaN (payload kept) */
    if (exp != 0) return vs_bits_f32(sign | (exp + 112) << 23 | man << 13);
    if (man == 0) return vs_bits_f32(sign);                              /* signed zero */
    /* subnormal: man * 2^-24, exact in float32 */
    float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
}
/* bfloat16 -> float32: the upper half of the float's bits. */
static inline float vs_bf16_to_f32(uint16_t h) { return vs_bits_f32((uint32_t)h << 16); }

#endif
