/* versus/safetensors.h - model weights in the safetensors format (what PyTorch users save).
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON
 *   {"__metadata__": {"k": "v"}, "<name>": {"dtype": "F32", "shape": [4, 3], "data_offsets": [b, e]}, ...}
 * then the raw little-endian data; offsets are relative to the end of the header.
 *
 * Reading checks everything before trusting it, as the reference implementation does: N against
 * the file size, well-formed JSON without duplicate names, non-negative shapes whose element count
 * does not overflow, offsets inside the data region with e - b = elements * dtype size, and tensors
 * that tile the data region exactly (no overlap, no gap, no trailing bytes).  F32 is read as is;
 * F64, F16 and BF16 are converted to float32; any other dtype is an error naming the tensor and the
 * dtype - except `*.num_batches_tracked` (a PyTorch BatchNorm counter, I64), which is checked and
 * skipped.  Messages name the file, the tensor and the problem.
 *
 * Writing produces exactly the bytes of safetensors' own serialize() for F32 tensors: names sorted,
 * "__metadata__" first (its keys sorted), compact JSON, header padded with spaces to a multiple of
 * 8 bytes.  Files are replaced atomically: a failed write leaves any existing file untouched. */
#ifndef VERSUS_SAFETENSORS_H
#define VERSUS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_safetensors_entry {
    char *name;          /* tensor name ("0.weight") */
    vs_tensor *tensor;   /* float32 copy of the data; owned by the handle (NULL once taken) */
    char dtype[8];       /* dtype stored in the file: "F32", "F16", "BF16" or "F64" */
} vs_safetensors_entry;

typedef struct vs_safetensors_meta {
    char *key, *value;
} vs_safetensors_meta;

/* A loaded file.  It owns its entries and their tensors whatever scope is open when it is read
 * (they are not released by vs_scope_end); vs_safetensors_free releases everything left. */
typedef struct vs_safetensors {
    int64_t n;                       /* tensors */
    vs_safetensors_entry *entries;   /* [n] sorted by name */
    int64_t n_meta;
    vs_safetensors_meta *meta;       /* [n_meta] sorted by key */
} vs_safetensors;

/* One tensor to write. */
typedef struct vs_safetensors_item {
    const char *name;
    const vs_tensor *tensor;
} vs_safetensors_item;

#define VS_SAFETENSORS_MAX_HEADER ((size_t)100000000) /* as the reference implementation */

/* Read path (one read of the whole file).  *out is a new handle, NULL on failure. */
vs_status vs_safetensors_read(const char *path, vs_safetensors **out, vs_error *err);
/* The same from the bytes buf[0..len); name labels messages ("<memory>" if NULL). */
vs_status vs_safetensors_parse(const void *buf, size_t len, const char *name, vs_safetensors **out, vs_error *err);

vs_tensor *vs_safetensors_get(const vs_safetensors *st, const char *name);  /* borrowed; NULL if absent */
/* Move a tensor out of the handle: the caller owns it (frees it with vs_tensor_free, or lets the
 * current scope do so); later gets of that name return NULL. */
vs_tensor *vs_safetensors_take(vs_safetensors *st, const char *name);
const char *vs_safetensors_meta_get(const vs_safetensors *st, const char *key); /* borrowed; NULL if absent */
void vs_safetensors_free(vs_safetensors *st);                                  /* NULL is fine */

/* Write n tensors as F32 with n_meta metadata pairs meta[2i] -> meta[2i+1] (may be NULL when
 * n_meta is 0) to path, atomically.  Names must be distinct, as must metadata keys. */
vs_status vs_safetensors_write(const char *path, const vs_safetensors_item *items, int64_t n,
                               const char *const *meta, int64_t n_meta, vs_error *err);
/* The bytes vs_safetensors_write would write, in a new malloc'd buffer. */
vs_status vs_safetensors_encode(const vs_safetensors_item *items, int64_t n, const char *const *meta, int64_t n_meta,
                                unsigned char **buf, size_t *len, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
