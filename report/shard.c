/* shard.c - shards ("K/N", item ranges), per-item seeds, item payloads, and a run: its journal of
 * finished items (opened fresh or resumed, one append per item) and its progress lines.  The file
 * format is in shard_internal.h; merging parts is shard_merge.c. */
#include "report/internal.h"
#include "report/shard_internal.h"
#include "datasets/io/io_util.h"
#include "versus/versus.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- shards and seeds ---------------------------------------------------------------------------- */

vs_status vs_shard_parse(const char *text, vs_shard *out, vs_error *err)
{
    long long k = 0, n = 0;
    int used = 0;
    if (!text || sscanf(text, "%lld/%lld%n", &k, &n, &used) != 2 || text[used] != '\0' || text[0] < '0' || text[0] > '9' || n < 1 ||
        n > 1000000 || k < 1 || k > n || strchr(text, ' ') || strchr(text, '+'))
        return vs_error_set(err, VS_ERR_ARG, "--shard expects K/N with 1 <= K <= N <= 1000000 (e.g. 2/8), got '%s'", text ? text : "");
    *out = (vs_shard){k, n};
    return VS_OK;
}

void vs_shard_range(vs_shard s, int64_t n_items, int64_t *begin, int64_t *end)
{
    if (s.n < 1) s = (vs_shard){1, 1};
    /* n_items * k fits: items < 2^62 / 10^6 in practice; use 128-bit-free floor division by parts */
    int64_t q = n_items / s.n, r = n_items % s.n;
    *begin = q * (s.k - 1) + r * (s.k - 1) / s.n;
    *end = q * s.k + r * s.k / s.n;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t vs_item_seed(uint64_t seed, int64_t item) { return mix64(seed ^ mix64((uint64_t)item)); }

/* ---- payloads -------------------------------------------------------------------------------------- */

static unsigned char *reserve(vs_item_buf *b, size_t n)
{
    if (b->oom) return NULL;
    if (n > SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return NULL;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->data = p;
        b->cap = cap;
    }
    unsigned char *p = b->data + b->len;
    b->len += n;
    return p;
}

void vs_item_put_f32(vs_item_buf *b, const float *x, size_t n)
{
    unsigned char *p = reserve(b, 4 * n);
    for (size_t i = 0; p && i < n; i++) vs_put_le32(p + 4 * i, vs_f32_bits(x[i]));
}

void vs_item_put_f64(vs_item_buf *b, const double *x, size_t n)
{
    unsigned char *p = reserve(b, 8 * n);
    for (size_t i = 0; p && i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], sizeof u);
        vs_put_le64(p + 8 * i, u);
    }
}

void vs_item_put_i64(vs_item_buf *b, const int64_t *x, size_t n)
{
    unsigned char *p = reserve(b, 8 * n);
    for (size_t i = 0; p && i < n; i++) vs_put_le64(p + 8 * i, (uint64_t)x[i]);
}

void vs_item_buf_reset(vs_item_buf *b)
{
    b->len = 0;
    b->oom = false;
}

void vs_item_buf_clear(vs_item_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* The next n elements of size w, or NULL (bad set) when the payload is shorter. */
static const unsigned char *take(vs_item_reader *r, size_t n, size_t w)
{
    if (r->bad || n > (r->len - r->pos) / w) {
        r->bad = true;
        return NULL;
    }
    const unsigned char *p = r->p + r->pos;
    r->pos += n * w;
    return p;
}

void vs_item_get_f32(vs_item_reader *r, float *x, size_t n)
{
    const unsigned char *p = take(r, n, 4);
    for (size_t i = 0; i < n; i++) x[i] = p ? vs_bits_f32(vs_le32(p + 4 * i)) : 0.0f;
}

void vs_item_get_f64(vs_item_reader *r, double *x, size_t n)
{
    const unsigned char *p = take(r, n, 8);
    for (size_t i = 0; i < n; i++) x[i] = p ? vs_bits_f64(vs_le64(p + 8 * i)) : 0.0;
}

void vs_item_get_i64(vs_item_reader *r, int64_t *x, size_t n)
{
    const unsigned char *p = take(r, n, 8);
    for (size_t i = 0; i < n; i++) x[i] = p ? (int64_t)vs_le64(p + 8 * i) : 0;
}

/* ---- runs ------------------------------------------------------------------------------------------ */

struct vs_run {
    char *path;
    int fd;
    bool sharded;
    int64_t n_items, begin, end, todo_at_start, done_here;
    journal j;                  /* finished items read back (resume) */
    unsigned char **fresh;      /* [end - begin] payloads recorded by this process (owned) */
    size_t *fresh_len;
    const char *unit;
    FILE *progress;
    double t0, last;
    double first_put;           /* when this process finished its first item (-1: none yet) */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t vs_run_items(const vs_run *r) { return r->n_items; }

int64_t vs_run_begin(const vs_run *r) { return r->begin; }
int64_t vs_run_end(const vs_run *r) { return r->end; }
bool vs_run_sharded(const vs_run *r) { return r->sharded; }

const unsigned char *vs_run_get(const vs_run *r, int64_t item, size_t *len)
{
    if (item < r->begin || item >= r->end) return NULL;
    size_t i = (size_t)(item - r->begin);
    if (r->fresh[i]) {
        *len = r->fresh_len[i];
        return r->fresh[i];
    }
    if (r->j.data && r->j.data[i]) {
        *len = r->j.len[i];
        return r->j.data[i];
    }
    return NULL;
}

int64_t vs_run_missing(const vs_run *r) { return r->todo_at_start - r->done_here; }

static vs_status write_all(int fd, const unsigned char *p, size_t n, const char *path, vs_error *err)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return vs_io_fail(err, path, "append to the journal", errno);
        p += w;
        n -= (size_t)w;
    }
    return VS_OK;
}

/* "1h02m", "3m05s", "12s" */
static void duration(double s, char *buf, size_t n)
{
    long t = s < 0 ? 0 : s > 1e8 ? 100000000L : (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, n, "%lds", t);
}

static void progress_line(vs_run *r, bool last)
{
    double t = now();
    if (!r->progress || (!last && t - r->last < 1.0)) return;
    r->last = t;
    int64_t total = r->end - r->begin, done = total - vs_run_missing(r);
    /* the rate counts the items after the first: the first one carries what the command did before its
     * loop (loading, training a model) and its warm-up, which made early estimates far too long */
    double span = t - r->first_put, rate = r->done_here > 1 && span > 1e-9 ? (double)(r->done_here - 1) / span
                                          : r->done_here / (t - r->t0 > 1e-9 ? t - r->t0 : 1e-9);
    char left[48];
    if (r->done_here > 1 || vs_run_missing(r) == 0) {
        duration(rate > 0 ? (double)vs_run_missing(r) / rate : 0, left, sizeof left);
        strcat(left, " left");
    } else {
        snprintf(left, sizeof left, "time left: estimating");
    }
    fprintf(r->progress, "versus: %" PRId64 "/%" PRId64 " %s (%.0f%%), %.*f %s/s, %s\n", done, total, r->unit,
            total ? 100.0 * (double)done / (double)total : 100.0, rate >= 10 ? 0 : 2, rate, r->unit, left);
    fflush(r->progress);
}

/* A new journal at path: its header record, written to a temporary file and renamed over path. */
static vs_status new_journal(vs_run *r, const vs_run_header *h, vs_error *err)
{
    /* the directories above it (bench/results/ on a first run) */
    const char *slash = strrchr(r->path, '/');
    if (slash && slash != r->path) {
        char dir[4096];
        if ((size_t)(slash - r->path) >= sizeof dir) return vs_error_set(err, VS_ERR_ARG, "%s: path too long", r->path);
        memcpy(dir, r->path, (size_t)(slash - r->path));
        dir[slash - r->path] = '\0';
        vs_status st = vs_report_make_dirs(dir, err);
        if (st != VS_OK) return st;
    }
    char *text = journal_header_text(h);
    size_t n;
    unsigned char *rec = text ? journal_record(-1, (const unsigned char *)text, strlen(text), &n) : NULL;
    vs_status st = rec ? vs_io_write_file(r->path, rec, n, err) : vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", r->path);
    free(text);
    free(rec);
    return st;
}

/* Keep the finished items of the journal at r->path if it is this run's; rc as vs_status. */
static vs_status resume_journal(vs_run *r, const vs_run_header *h, vs_error *err)
{
    vs_status st = journal_read(r->path, &r->j, err);
    if (st != VS_OK) return st;
    const vs_run_header *o = &r->j.h;
    char why[512];
    if (!journal_same_command(o, h, why, sizeof why))
        return vs_error_set(err, VS_ERR_ARG, "%s: the journal belongs to another command (%s); remove it or drop --resume", r->path, why);
    if (o->seed != h->seed || strcmp(o->version, h->version) != 0 || o->items != h->items || o->shard.k != h->shard.k ||
        o->shard.n != h->shard.n)
        return vs_error_set(err, VS_ERR_ARG,
                            "%s: the journal is of seed %" PRIu64 ", versus %s, %" PRId64 " items, shard %" PRId64 "/%" PRId64
                            "; this run is of seed %" PRIu64 ", versus %s, %" PRId64 " items, shard %" PRId64 "/%" PRId64
                            "; remove it or drop --resume",
                            r->path, o->seed, o->version, o->items, o->shard.k, o->shard.n, h->seed, h->version, h->items, h->shard.k,
                            h->shard.n);
    if (r->j.torn && truncate(r->path, (off_t)r->j.valid) != 0) return vs_io_fail(err, r->path, "cut the torn last record", errno);
    return VS_OK;
}

vs_status vs_run_open(const vs_run_opts *o, int64_t n_items, vs_run **out, vs_error *err)
{
    *out = NULL;
    if (!o || !o->path || !o->verb || n_items < 0) return vs_error_set(err, VS_ERR_ARG, "run: a journal path, a verb and items are required");
    vs_run *r = calloc(1, sizeof *r);
    if (!r) return vs_error_set(err, VS_ERR_NOMEM, "run: out of memory");
    r->fd = -1;
    r->sharded = o->sharded;
    r->unit = o->unit ? o->unit : "items";
    r->progress = o->progress;
    vs_run_header h = {.seed = o->seed, .items = n_items, .shard = o->shard.n >= 1 ? o->shard : (vs_shard){1, 1}};
    vs_status st = VS_OK;
    if (!(r->path = strdup(o->path)) || !(h.verb = strdup(o->verb)) || !(h.version = strdup(vs_version())))
        st = vs_error_set(err, VS_ERR_NOMEM, "run: out of memory");
    if (st == VS_OK) st = journal_set_argv(&h, o->argc, o->argv, err);
    r->n_items = n_items;
    vs_shard_range(h.shard, n_items, &r->begin, &r->end);
    size_t n = (size_t)(r->end - r->begin);
    if (st == VS_OK) st = vs_mem_check(n, sizeof *r->fresh + sizeof *r->fresh_len, "the run's item index", err);
    if (st == VS_OK && (!(r->fresh = calloc(n ? n : 1, sizeof *r->fresh)) || !(r->fresh_len = calloc(n ? n : 1, sizeof *r->fresh_len))))
        st = vs_error_set(err, VS_ERR_NOMEM, "run: out of memory");
    bool resumed = false;
    if (st == VS_OK && o->resume && access(o->path, F_OK) == 0) {
        st = resume_journal(r, &h, err);
        resumed = st == VS_OK;
    }
    if (st == VS_OK && !resumed) st = new_journal(r, &h, err);
    if (st == VS_OK && (r->fd = open(r->path, O_WRONLY | O_APPEND)) < 0) st = vs_io_fail(err, r->path, "open the journal", errno);
    vs_run_header_clear(&h);
    if (st != VS_OK) {
        vs_run_free(r);
        return st;
    }
    r->todo_at_start = (int64_t)n - r->j.done;
    r->t0 = r->last = now();
    if (r->progress && resumed)
        fprintf(r->progress, "versus: resuming %s: %" PRId64 " of %" PRId64 " %s already done\n", r->path, r->j.done, (int64_t)n, r->unit);
    *out = r;
    return VS_OK;
}

vs_status vs_run_put(vs_run *r, int64_t item, const vs_item_buf *payload, vs_error *err)
{
    size_t len;
    if (item < r->begin || item >= r->end)
        return vs_error_set(err, VS_ERR_ARG, "%s: item %" PRId64 " is not in this run's items %" PRId64 "..%" PRId64, r->path, item, r->begin,
                            r->end - 1);
    if (vs_run_get(r, item, &len)) return vs_error_set(err, VS_ERR_ARG, "%s: item %" PRId64 " is already recorded", r->path, item);
    if (payload->oom) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for item %" PRId64, r->path, item);
    size_t i = (size_t)(item - r->begin), n;
    unsigned char *copy = malloc(payload->len ? payload->len : 1), *rec = journal_record(item, payload->data, payload->len, &n);
    vs_status st = copy && rec ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for item %" PRId64, r->path, item);
    if (st == VS_OK) st = write_all(r->fd, rec, n, r->path, err);
    free(rec);
    if (st != VS_OK) {
        free(copy);
        return st;
    }
    if (payload->len) memcpy(copy, payload->data, payload->len);
    r->fresh[i] = copy;
    r->fresh_len[i] = payload->len;
    if (r->done_here++ == 0) r->first_put = now();
    progress_line(r, vs_run_missing(r) == 0);
    return VS_OK;
}

vs_status vs_run_finish(vs_run *r, vs_error *err)
{
    if (r->fd >= 0) {
        int rc = fsync(r->fd);
        int e = errno;
        close(r->fd);
        r->fd = -1;
        if (rc != 0) return vs_io_fail(err, r->path, "flush the journal", e);
    }
    if (!r->sharded && unlink(r->path) != 0 && errno != ENOENT) return vs_io_fail(err, r->path, "remove the finished journal", errno);
    return VS_OK;
}

void vs_run_free(vs_run *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    for (int64_t i = 0; r->fresh && i < r->end - r->begin; i++) free(r->fresh[i]);
    free(r->fresh);
    free(r->fresh_len);
    journal_clear(&r->j);
    free(r->path);
    free(r);
}
