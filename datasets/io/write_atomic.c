/* write_atomic.c - atomic file replacement for the PNG and SVG writers: the same writer as the model
 * files' (nn/io_util.c), so devices and pipes are written in place there too. */
#include "datasets/io/write_atomic.h"

#include "datasets/io/io_util.h"

vs_status vs_write_file_atomic(const char *path, const void *data, size_t n, vs_error *err)
{
    if (!path || !*path || (!data && n > 0)) return vs_error_set(err, VS_ERR_ARG, "write: no path or no data");
    return vs_io_write_file(path, data, n, err);
}
