/* nn/io_util.c - whole-file reads, atomic file replacement and the C-locale bracket (see io_util.h). */
#include "nn/io_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* strerror_r in its POSIX form (we build with _POSIX_C_SOURCE, not _GNU_SOURCE). */
static const char *errno_text(int e, char *buf, size_t n)
{
    if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
    return buf;
}

vs_status vs_io_fail(vs_error *err, const char *path, const char *what, int e)
{
    char eb[128];
    return vs_error_set(err, VS_ERR_IO, "%s: cannot %s: %s", path, what, errno_text(e, eb, sizeof eb));
}

vs_status vs_io_read_file(const char *path, size_t max, unsigned char **buf, size_t *len, vs_error *err)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return vs_io_fail(err, path, "open", errno);
    return vs_io_read_fd(fd, path, max, buf, len, err);
}

vs_status vs_io_read_fd(int fd, const char *path, size_t max, unsigned char **buf, size_t *len, vs_error *err)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return vs_io_fail(err, path, "stat", e);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return vs_error_set(err, VS_ERR_IO, "%s: is a directory, expected a file", path);
    }
    /* Regular files: one allocation of the stat'ed size, read to that size; pipes, devices and files
     * that claim size 0 (/proc): grow as data arrives. */
    bool regular = S_ISREG(st.st_mode) && st.st_size > 0;
    if (regular && (uintmax_t)st.st_size > max) {
        close(fd);
        return vs_error_set(err, VS_ERR_FORMAT, "%s: file is %jd bytes, more than the %zu this reader accepts", path,
                            (intmax_t)st.st_size, max);
    }
    size_t cap = regular ? (size_t)st.st_size + 1 : 65536;
    unsigned char *b = malloc(cap);
    if (!b) {
        close(fd);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, cap);
    }
    size_t n = 0;
    for (;;) {
        if (regular && n + 1 == cap) break;
        if (!regular && n + 1 >= cap) {
            if (cap > max) {
                free(b);
                close(fd);
                return vs_error_set(err, VS_ERR_FORMAT, "%s: more than the %zu bytes this reader accepts", path, max);
            }
            size_t ncap = cap * 2;
            unsigned char *nb = realloc(b, ncap);
            if (!nb) {
                free(b);
                close(fd);
                return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, ncap);
            }
            b = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(b);
            close(fd);
            return vs_io_fail(err, path, "read", e);
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(b);
        return vs_error_set(err, VS_ERR_FORMAT, "%s: more than the %zu bytes this reader accepts", path, max);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return VS_OK;
}

vs_status vs_io_atomic_open(vs_io_atomic *a, const char *path, vs_error *err)
{
    a->fd = -1;
    a->path = path;
    size_t n = strlen(path);
    static const char suffix[] = ".tmp-XXXXXX";
    a->tmp = malloc(n + sizeof suffix);
    if (!a->tmp) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    memcpy(a->tmp, path, n);
    memcpy(a->tmp + n, suffix, sizeof suffix);
    a->fd = mkstemp(a->tmp);
    if (a->fd < 0) {
        int e = errno;
        free(a->tmp);
        a->tmp = NULL;
        return vs_io_fail(err, path, "create a temporary file beside it", e);
    }
    /* mkstemp makes the file 0600; a model or array is an ordinary shareable file. */
    (void)fchmod(a->fd, 0644);
    return VS_OK;
}

void vs_io_atomic_abort(vs_io_atomic *a)
{
    if (a->fd >= 0) close(a->fd);
    a->fd = -1;
    if (a->tmp) {
        unlink(a->tmp);
        free(a->tmp);
        a->tmp = NULL;
    }
}

vs_status vs_io_atomic_write(vs_io_atomic *a, const void *data, size_t n, vs_error *err)
{
    const unsigned char *p = data;
    while (n > 0) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        ssize_t w = write(a->fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            vs_io_atomic_abort(a);
            return vs_io_fail(err, a->path, "write", e);
        }
        p += w;
        n -= (size_t)w;
    }
    return VS_OK;
}

/* Make the rename itself durable: fsync the directory holding path (best effort). */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

vs_status vs_io_atomic_commit(vs_io_atomic *a, vs_error *err)
{
    if (fsync(a->fd) != 0) {
        int e = errno;
        vs_io_atomic_abort(a);
        return vs_io_fail(err, a->path, "flush to disk", e);
    }
    int rc = close(a->fd);
    a->fd = -1;
    if (rc != 0) {
        int e = errno;
        vs_io_atomic_abort(a);
        return vs_io_fail(err, a->path, "close", e);
    }
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        vs_io_atomic_abort(a);
        return vs_io_fail(err, a->path, "replace", e);
    }
    free(a->tmp);
    a->tmp = NULL;
    sync_parent_dir(a->path);
    return VS_OK;
}

vs_status vs_io_write_file(const char *path, const void *data, size_t n, vs_error *err)
{
    vs_io_atomic a;
    vs_status s = vs_io_atomic_open(&a, path, err);
    if (s == VS_OK) s = vs_io_atomic_write(&a, data, n, err);
    if (s == VS_OK) s = vs_io_atomic_commit(&a, err);
    return s;
}

/* Length of the valid UTF-8 sequence at q (RFC 3629: no overlongs, no surrogates, <= U+10FFFF),
 * or 0 when it is invalid. */
size_t vs_io_utf8_len(const unsigned char *q, const unsigned char *end)
{
    size_t avail = (size_t)(end - q);
    unsigned char c = q[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) n = 3;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return 0;
    if (avail < n || q[1] < lo || q[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((q[i] & 0xC0) != 0x80) return 0;
    return n;
}

vs_status vs_io_sink_put(vs_io_sink *k, const void *data, size_t n, vs_error *err)
{
    if (k->file) return vs_io_atomic_write(k->file, data, n, err);
    if (n) memcpy(k->mem + k->pos, data, n);
    k->pos += n;
    return VS_OK;
}

#define SINK_STAGE 16384

/* n items of item bytes each, stored by put(stage + item * i, index). */
static vs_status sink_items(vs_io_sink *k, size_t n, size_t item, const void *src,
                            void (*put)(unsigned char *, const void *, size_t), vs_error *err)
{
    unsigned char stage[SINK_STAGE];
    size_t per = SINK_STAGE / item;
    vs_status s = VS_OK;
    for (size_t done = 0; done < n && !s;) {
        size_t m = n - done < per ? n - done : per;
        for (size_t i = 0; i < m; i++) put(stage + item * i, src, done + i);
        s = vs_io_sink_put(k, stage, m * item, err);
        done += m;
    }
    return s;
}

static void put_f32(unsigned char *p, const void *src, size_t i) { vs_put_le32(p, vs_f32_bits(((const float *)src)[i])); }
static void put_i64(unsigned char *p, const void *src, size_t i) { vs_put_le64(p, (uint64_t)((const int64_t *)src)[i]); }

vs_status vs_io_sink_f32le(vs_io_sink *k, const float *x, size_t n, vs_error *err)
{
    return sink_items(k, n, 4, x, put_f32, err);
}

vs_status vs_io_sink_i64le(vs_io_sink *k, const int64_t *x, size_t n, vs_error *err)
{
    return sink_items(k, n, 8, x, put_i64, err);
}

void vs_io_decode_f32(vs_io_dtype t, const unsigned char *p, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case VS_IO_F32: out[i] = vs_bits_f32(vs_le32(p + 4 * i)); break;
        case VS_IO_F64: out[i] = (float)vs_bits_f64(vs_le64(p + 8 * i)); break;
        case VS_IO_F16: out[i] = vs_f16_to_f32(vs_le16(p + 2 * i)); break;
        case VS_IO_BF16: out[i] = vs_bf16_to_f32(vs_le16(p + 2 * i)); break;
        case VS_IO_I64: out[i] = (float)(int64_t)vs_le64(p + 8 * i); break;
        case VS_IO_I32: out[i] = (float)(int32_t)vs_le32(p + 4 * i); break;
        case VS_IO_U8: out[i] = (float)p[i]; break;
        case VS_IO_BOOL: out[i] = p[i] ? 1.0f : 0.0f; break;
        }
    }
}

vs_status vs_io_prefix_path(vs_error *err, vs_status s, const char *path)
{
    if (err) {
        char msg[VS_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        vs_error_set(err, s, "%s: %s", path, msg);
    }
    return s;
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale = (locale_t)0;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

locale_t vs_io_c_locale_begin(void)
{
    pthread_once(&c_locale_once, make_c_locale);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void vs_io_c_locale_end(locale_t previous)
{
    if (previous) uselocale(previous);
}
