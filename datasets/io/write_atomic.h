/* datasets/write_atomic.h - internal: replace a file atomically (temporary file, fsync, rename); a device
 * or a pipe is written in place. */
#ifndef VERSUS_DATASETS_WRITE_ATOMIC_H
#define VERSUS_DATASETS_WRITE_ATOMIC_H

#include <stddef.h>

#include "versus/error.h"

/* Write data [n bytes] to a temporary file in path's directory, fsync it, rename it over path and
 * fsync the directory; a reader sees the old file or the whole new one, never a part.  On failure the
 * temporary file is removed and err names path and the failing step. */
vs_status vs_write_file_atomic(const char *path, const void *data, size_t n, vs_error *err);

#endif
