/* nn/io_util.c - bounded whole-file reads, atomic file replacement (devices and pipes written in place,
 * stale temporaries removed) and the C-locale bracket (see io_util.h). */
#include "datasets/io/io_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* Why an input of this mode cannot be read whole, or NULL when it can (a regular file or a pipe). */
static const char *input_refusal(mode_t m)
{
    if (S_ISDIR(m)) return "is a directory, expected a file";
    if (S_ISCHR(m) || S_ISBLK(m)) return "is a device, expected a regular file or a pipe";
    return NULL;
}

/* The input at path opened for reading: a regular file or a pipe, opened without blocking (the open
 * of a FIFO would wait for a writer forever; vs_io_read_fd waits a bounded time); directories and
 * devices (/dev/zero, /dev/urandom, a terminal) are refused, they have no end to read to.
 * *st receives fstat's answer. */
int vs_io_open_input(const char *path, struct stat *st, vs_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        vs_io_fail(err, path, "open", errno);
        return -1;
    }
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        vs_io_fail(err, path, "stat", e);
        return -1;
    }
    const char *refuse = input_refusal(st->st_mode);
    if (refuse) {
        close(fd);
        vs_error_set(err, VS_ERR_IO, "%s: %s", path, refuse);
        return -1;
    }
    return fd;
}

vs_status vs_io_read_file(const char *path, size_t max, unsigned char **buf, size_t *len, vs_error *err)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    int fd = vs_io_open_input(path, &st, err);
    if (fd < 0) return err ? err->code : VS_ERR_IO;
    return vs_io_read_fd(fd, path, max, buf, len, err);
}

/* path holds more than limit bytes (size: the stat'ed size of a file, 0 for a stream). */
static vs_status too_big(const char *path, size_t size, size_t limit, vs_error *err)
{
    char a[32], b[32];
    vs_mem_size_str(limit, b, sizeof b);
    if (!size)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: the input holds more than the %s read from a pipe "
                            "(save it to a file)", path, b);
    if (limit == vs_mem_budget())
        return vs_error_set(err, VS_ERR_NOMEM, "%s: the file holds %s, more than the memory budget of %s (--max-memory)",
                            path, vs_mem_size_str(size, a, sizeof a), b);
    return vs_error_set(err, VS_ERR_FORMAT, "%s: the file holds %s, more than the %s this reader accepts", path,
                        vs_mem_size_str(size, a, sizeof a), b);
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
    const char *refuse = input_refusal(st.st_mode);
    if (refuse) {
        close(fd);
        return vs_error_set(err, VS_ERR_IO, "%s: %s", path, refuse);
    }
    /* Regular files: one allocation of the stat'ed size, read to that size; pipes and files that
     * claim size 0 (/proc): grow as data arrives, up to VS_IO_STREAM_MAX (cat /dev/zero | ...). */
    bool regular = S_ISREG(st.st_mode) && st.st_size > 0;
    size_t limit = max < vs_mem_budget() ? max : vs_mem_budget();
    if (!regular && limit > VS_IO_STREAM_MAX) limit = VS_IO_STREAM_MAX;
    if (regular && (uintmax_t)st.st_size > limit) {
        close(fd);
        return too_big(path, (uintmax_t)st.st_size < SIZE_MAX ? (size_t)st.st_size : SIZE_MAX, limit, err);
    }
    size_t cap = regular ? (size_t)st.st_size + 1 : 65536;
    unsigned char *b = malloc(cap);
    if (!b) {
        close(fd);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, cap);
    }
    size_t n = 0;
    bool writer = false;
    for (;;) {
        if (regular && n + 1 == cap) break;
        if (!regular && n + 1 >= cap) {
            if (cap > limit) {
                free(b);
                close(fd);
                return too_big(path, 0, limit, err);
            }
            size_t ncap = cap <= limit / 2 ? cap * 2 : limit + 1; /* one byte past the limit tells "more" */
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
        if (r > 0) {
            n += (size_t)r;
            writer = true;
            continue;
        }
        int e = errno;
        if (r < 0 && e == EINTR) continue;
        /* A descriptor opened without blocking: EAGAIN = a writer is there but has sent nothing yet;
         * end of file before any writer = a FIFO nobody has opened for writing, waited for a while. */
        bool wait = r < 0 ? e == EAGAIN || e == EWOULDBLOCK : !writer && S_ISFIFO(st.st_mode);
        if (!wait && r < 0) {
            free(b);
            close(fd);
            return vs_io_fail(err, path, "read", e);
        }
        if (!wait) break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, r < 0 ? -1 : VS_IO_FIFO_WAIT_S * 1000);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            e = errno;
            free(b);
            close(fd);
            if (ready < 0) return vs_io_fail(err, path, "wait for data", e);
            return vs_error_set(err, VS_ERR_IO, "%s: a pipe nobody wrote to within %d s", path, VS_IO_FIFO_WAIT_S);
        }
        writer = true; /* data, or a writer came and went (a pipe with nothing in it) */
    }
    close(fd);
    if (n > limit) {
        free(b);
        return too_big(path, regular ? n : 0, limit, err);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return VS_OK;
}

/* Remove temporaries an earlier process left behind in path's directory (killed while writing):
 * "<name>.tmp-PID-XXXXXX" of any file whose process no longer runs (a resumed run may never write
 * that file again), and those of path itself not touched for STALE_TMP_SECONDS (the older form
 * "<path>.tmp-XXXXXX" has no PID: only its age counts).  A writer still at work keeps its own. */
#define STALE_TMP_SECONDS 60
static bool tmp_of_dead_process(const char *name)
{
    const char *t = strstr(name, ".tmp-");
    while (t && strstr(t + 1, ".tmp-")) t = strstr(t + 1, ".tmp-");
    if (!t) return false;
    const char *p = t + 5, *dash = strchr(p, '-');
    if (!dash || dash == p || strlen(dash + 1) != 6) return false;
    long pid = 0;
    for (const char *c = p; c < dash; c++) {
        if (*c < '0' || *c > '9' || pid > 99999999) return false;
        pid = pid * 10 + (*c - '0');
    }
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void remove_stale_tmp(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    DIR *d = dir ? opendir(dir) : NULL;
    size_t blen = strlen(base);
    time_t now = time(NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        bool own = strncmp(name, base, blen) == 0 && strncmp(name + blen, ".tmp-", 5) == 0 && strlen(name + blen + 5) >= 6;
        bool dead = tmp_of_dead_process(name);
        if (!own && !dead) continue;
        char full[4096];
        struct stat st;
        if (snprintf(full, sizeof full, "%s/%s", dir, name) >= (int)sizeof full) continue;
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && (dead || now - st.st_mtime > STALE_TMP_SECONDS)) (void)unlink(full);
    }
    if (d) closedir(d);
    free(dir);
}

vs_status vs_io_atomic_open(vs_io_atomic *a, const char *path, vs_error *err)
{
    a->fd = -1;
    a->path = path;
    a->tmp = NULL;
    /* A device, a pipe or a socket is written in place: renaming over it would replace /dev/null
     * (or the FIFO a reader waits on) with a regular file.  A symbolic link is never followed (a
     * link planted at an output path must not redirect the write): it is replaced like a file,
     * except the links /dev keeps to open descriptors (/dev/stdout, /dev/fd/N). */
    struct stat st;
    bool is_link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    bool dev_link = is_link && strncmp(path, "/dev/", 5) == 0;
    if (dev_link || (!is_link && stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        if (S_ISDIR(st.st_mode)) return vs_error_set(err, VS_ERR_IO, "%s: is a directory, expected a file name", path);
        a->fd = open(path, O_WRONLY | O_NONBLOCK);
        int flags = a->fd < 0 ? -1 : fcntl(a->fd, F_GETFL);
        if (a->fd < 0 || flags < 0 || fcntl(a->fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
            int e = errno;
            if (a->fd >= 0) close(a->fd);
            a->fd = -1;
            return vs_io_fail(err, path, e == ENXIO ? "write (a pipe with no reader)" : "open for writing", e);
        }
        return VS_OK;
    }
    remove_stale_tmp(path);
    size_t n = strlen(path) + 32;
    a->tmp = malloc(n);
    if (!a->tmp) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    snprintf(a->tmp, n, "%s.tmp-%ld-XXXXXX", path, (long)getpid());
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
    if (!a->tmp) { /* written in place (a device or a pipe): only the close can still fail */
        int rc = close(a->fd), e = errno;
        a->fd = -1;
        return rc == 0 ? VS_OK : vs_io_fail(err, a->path, "close", e);
    }
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
