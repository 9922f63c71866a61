/* versus/npy.h - NumPy .npy arrays: read into tensors (or int64 labels), write atomically.
 *
 * Reads format 1.0, 2.0 and 3.0 headers ({'descr': ..., 'fortran_order': ..., 'shape': (...)}),
 * little-endian, C order.  '<f4' is read as is; '<f8', '<i8', '<i4', '|u1' and '|b1' are
 * converted to float32.  Anything else - big-endian data, other dtypes, a Fortran-ordered
 * multi-dimensional array, more than VS_MAX_DIMS dimensions, a truncated file or trailing bytes -
 * is refused with a message naming the file and the header field.  No allocation is made before the
 * header has been checked against the file size, so a lying header cannot exhaust memory.
 *
 * Writes '<f4' (tensors) and '<i8' (labels) byte-for-byte as numpy.save does (format 1.0, header
 * padded to 64 bytes), through a temporary file renamed over the target: a failed write never
 * leaves a partial file in place of a good one. */
#ifndef VERSUS_NPY_H
#define VERSUS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An int64 array (class labels: y.npy).  Owns data; release with vs_i64_array_free. */
typedef struct vs_i64_array {
    int ndim;
    int64_t shape[VS_MAX_DIMS];
    int64_t size;               /* product of shape */
    int64_t *data;              /* size values, row-major */
} vs_i64_array;

#define VS_NPY_MAX_HEADER ((size_t)1 << 20) /* longest header accepted */

/* Read a float32 tensor from path.  *out is a new tensor owned like any new tensor (the current
 * scope, or the caller when none is open). */
vs_status vs_npy_read(const char *path, vs_tensor **out, vs_error *err);
/* vs_npy_read for a model's inputs, attributions and references: an array holding NaN or an infinity
 * is refused (VS_ERR_NUMERIC) with a message naming path and the first such element. */
vs_status vs_npy_read_finite(const char *path, vs_tensor **out, vs_error *err);
/* The same from the bytes buf[0..len); name labels messages ("<memory>" if NULL). */
vs_status vs_npy_parse(const void *buf, size_t len, const char *name, vs_tensor **out, vs_error *err);

/* Read integer values (labels).  Accepts '<i8', '<i4', '|u1', '|b1' and, when every element is an
 * integer, '<f4' and '<f8'.  On failure *out is left empty. */
vs_status vs_npy_read_i64(const char *path, vs_i64_array *out, vs_error *err);
vs_status vs_npy_parse_i64(const void *buf, size_t len, const char *name, vs_i64_array *out, vs_error *err);
void vs_i64_array_free(vs_i64_array *a);  /* frees a->data and zeroes a; NULL is fine */

/* Write t as '<f4' to path (atomically). */
vs_status vs_npy_write(const char *path, const vs_tensor *t, vs_error *err);
/* Write data (size = prod(shape)) as '<i8' to path (atomically). */
vs_status vs_npy_write_i64(const char *path, int ndim, const int64_t *shape, const int64_t *data, vs_error *err);
/* The bytes vs_npy_write would write, in a new malloc'd buffer. */
vs_status vs_npy_encode(const vs_tensor *t, unsigned char **buf, size_t *len, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
