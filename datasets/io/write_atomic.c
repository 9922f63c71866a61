/* write_atomic.c - atomic file replacement for the PNG and SVG writers and the stdio text outputs
 * (vs_out: reports, metrics JSON, feature lists): the same writer as the model files' (io_util.c), so
 * devices and pipes are written in place and planted links replaced there too. */
#include "datasets/io/write_atomic.h"

#include "datasets/io/io_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "versus/data_io.h"

vs_status vs_write_file_atomic(const char *path, const void *data, size_t n, vs_error *err)
{
    if (!path || !*path || (!data && n > 0)) return vs_error_set(err, VS_ERR_ARG, "write: no path or no data");
    return vs_io_write_file(path, data, n, err);
}

vs_status vs_out_open(vs_out *o, const char *path, vs_error *err)
{
    o->f = NULL;
    o->priv = NULL;
    if (!path) {
        o->f = stdout;
        return VS_OK;
    }
    vs_io_atomic *a = malloc(sizeof *a);
    if (!a) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_status s = vs_io_atomic_open(a, path, err);
    if (s != VS_OK) {
        free(a);
        return s;
    }
    o->f = fdopen(a->fd, "w");
    if (!o->f) {
        int e = errno;
        vs_io_atomic_abort(a);
        free(a);
        return vs_io_fail(err, path, "open for writing", e);
    }
    o->priv = a;
    return VS_OK;
}

vs_status vs_out_commit(vs_out *o, vs_error *err)
{
    vs_io_atomic *a = o->priv;
    FILE *f = o->f;
    o->f = NULL;
    o->priv = NULL;
    if (!f) return VS_OK;
    if (!a) return fflush(f) == 0 && !ferror(f) ? VS_OK : vs_error_set(err, VS_ERR_IO, "stdout: write failed");
    /* fclose closes the descriptor too: flush first, then let the atomic writer fsync and rename a
     * duplicate of it. */
    int e = 0;
    if (fflush(f) != 0 || ferror(f)) e = errno ? errno : EIO;
    int dup_fd = e ? -1 : dup(a->fd);
    if (!e && dup_fd < 0) e = errno;
    fclose(f);
    a->fd = dup_fd;
    vs_status s;
    if (e) {
        vs_io_atomic_abort(a);
        s = vs_io_fail(err, a->path, "write", e);
    } else {
        s = vs_io_atomic_commit(a, err);
    }
    free(a);
    return s;
}

void vs_out_abort(vs_out *o)
{
    vs_io_atomic *a = o->priv;
    if (o->f && a) fclose(o->f);
    else if (o->f) fflush(o->f);
    if (a) {
        a->fd = -1; /* closed with the stream */
        vs_io_atomic_abort(a);
        free(a);
    }
    o->f = NULL;
    o->priv = NULL;
}
