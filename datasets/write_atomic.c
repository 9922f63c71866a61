/* write_atomic.c - atomic file replacement shared by the PNG and SVG writers. */
#include "datasets/write_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Directory part of path ("." when it has none), in a new string. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

vs_status vs_write_file_atomic(const char *path, const void *data, size_t n, vs_error *err)
{
    if (!path || !*path || (!data && n > 0)) return vs_error_set(err, VS_ERR_ARG, "write: no path or no data");
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof ".tmp.XXXXXX");
    if (!tmp) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");

    int fd = mkstemp(tmp);
    if (fd < 0) {
        vs_status s = vs_error_set(err, VS_ERR_IO, "%s: cannot create temporary file: %s", path, strerror(errno));
        free(tmp);
        return s;
    }
    const char *step = NULL;
    int e = 0;
    const unsigned char *p = data;
    size_t left = n;
    /* mkstemp creates mode 0600; the final file should be as readable as one made by fopen. */
    if (fchmod(fd, 0644) != 0) step = "chmod", e = errno;
    while (!step && left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            step = "write", e = errno;
        } else {
            p += w;
            left -= (size_t)w;
        }
    }
    if (!step && fsync(fd) != 0) step = "fsync", e = errno;
    if (close(fd) != 0 && !step) step = "close", e = errno;
    if (!step && rename(tmp, path) != 0) step = "rename", e = errno;
    if (step) {
        unlink(tmp);
        free(tmp);
        return vs_error_set(err, VS_ERR_IO, "%s: %s failed: %s", path, step, strerror(e));
    }
    free(tmp);
    /* Make the rename itself durable; a failure here loses nothing already visible, so it is ignored. */
    char *dir = dir_of(path);
    if (dir) {
        int dfd = open(dir, O_RDONLY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    return VS_OK;
}
