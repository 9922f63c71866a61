/* shard_merge.c - partial results (the journals of shards 1..N of one command) checked and joined
 * into the journal of the whole run, which the command then resumes to write its files. */
#include "report/shard_internal.h"
#include "datasets/io/io_util.h"
#include "versus/versus.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The command's words with --out's value (either form) replaced by out; h->argv is replaced. */
static vs_status set_out(vs_run_header *h, const char *out, vs_error *err)
{
    for (int i = 0; i < h->argc; i++) {
        char *w = NULL;
        if (i > 0 && !strcmp(h->argv[i - 1], "--out")) w = strdup(out);
        else if (!strncmp(h->argv[i], "--out=", 6) && (w = malloc(strlen(out) + 7))) sprintf(w, "--out=%s", out);
        else continue;
        if (!w) return vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
        free(h->argv[i]);
        h->argv[i] = w;
        return VS_OK;
    }
    return vs_error_set(err, VS_ERR_ARG, "merge: the parts' command has no --out to replace");
}

/* Every check of the set; 0 or VS_ERR_ARG with the message. */
static vs_status check_parts(const char *const *parts, int n_parts, const journal *js, vs_error *err)
{
    const vs_run_header *h0 = &js[0].h;
    char why[512];
    for (int p = 1; p < n_parts; p++) {
        const vs_run_header *h = &js[p].h;
        if (!journal_same_command(h0, h, why, sizeof why))
            return vs_error_set(err, VS_ERR_ARG, "%s and %s are parts of different commands (%s)", parts[0], parts[p], why);
        if (h->seed != h0->seed)
            return vs_error_set(err, VS_ERR_ARG, "%s and %s are parts of runs with different seeds (%" PRIu64 " and %" PRIu64 ")", parts[0],
                                parts[p], h0->seed, h->seed);
        if (strcmp(h->version, h0->version) != 0)
            return vs_error_set(err, VS_ERR_ARG, "%s and %s were written by different versions of versus (%s and %s)", parts[0], parts[p],
                                h0->version, h->version);
        if (h->items != h0->items || h->shard.n != h0->shard.n)
            return vs_error_set(err, VS_ERR_ARG, "%s and %s split different runs (%" PRId64 " items in %" PRId64 " shards, %" PRId64
                                                 " items in %" PRId64 " shards)",
                                parts[0], parts[p], h0->items, h0->shard.n, h->items, h->shard.n);
    }
    if (strcmp(h0->version, vs_version()) != 0)
        return vs_error_set(err, VS_ERR_ARG, "%s was written by versus %s; this is versus %s (merge with the version that ran the shards)",
                            parts[0], h0->version, vs_version());
    int64_t N = h0->shard.n;
    for (int p = 0; p < n_parts; p++)
        for (int q = 0; q < p; q++)
            if (js[q].h.shard.k == js[p].h.shard.k)
                return vs_error_set(err, VS_ERR_ARG, "%s and %s are the same shard %" PRId64 "/%" PRId64, parts[q], parts[p],
                                    js[p].h.shard.k, N);
    if (n_parts != N) {
        char missing[256];
        size_t o = 0;
        int listed = 0;
        missing[0] = '\0';
        for (int64_t k = 1; k <= N && o < sizeof missing - 16; k++) {
            bool have = false;
            for (int p = 0; p < n_parts; p++) have |= js[p].h.shard.k == k;
            if (!have && listed++ < 12) o += (size_t)snprintf(missing + o, sizeof missing - o, "%s%" PRId64, o ? ", " : "", k);
        }
        return vs_error_set(err, VS_ERR_ARG, "shards missing: %s%s of %" PRId64 " (given %d parts)", missing, listed > 12 ? ", ..." : "", N,
                            n_parts);
    }
    for (int p = 0; p < n_parts; p++)
        if (js[p].done != js[p].end - js[p].begin)
            return vs_error_set(err, VS_ERR_ARG, "%s is incomplete: %" PRId64 " of the %" PRId64 " items of shard %" PRId64 "/%" PRId64
                                                 " are done (resume that shard with --resume)",
                                parts[p], js[p].done, js[p].end - js[p].begin, js[p].h.shard.k, N);
    return VS_OK;
}

/* The whole run's journal: header (shard 1/1), then every item in order, written atomically. */
static vs_status write_merged(const journal *js, int n_parts, const vs_run_header *h, const char *path, vs_error *err)
{
    int64_t N = h->shard.n;
    vs_run_header whole = *h;
    whole.shard = (vs_shard){1, 1};
    char *text = journal_header_text(&whole);
    size_t n;
    unsigned char *rec = text ? journal_record(-1, (const unsigned char *)text, strlen(text), &n) : NULL;
    free(text);
    if (!rec) return vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
    vs_io_atomic a;
    vs_status st = vs_io_atomic_open(&a, path, err);
    if (st == VS_OK) st = vs_io_atomic_write(&a, rec, n, err);
    free(rec);
    for (int64_t k = 1; st == VS_OK && k <= N; k++) {
        const journal *j = NULL;
        for (int p = 0; p < n_parts; p++)
            if (js[p].h.shard.k == k) j = &js[p];
        for (int64_t i = j->begin; st == VS_OK && i < j->end; i++) {
            rec = journal_record(i, j->data[i - j->begin], j->len[i - j->begin], &n);
            st = rec ? vs_io_atomic_write(&a, rec, n, err) : vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
            free(rec);
        }
    }
    if (st == VS_OK) st = vs_io_atomic_commit(&a, err); /* a failed write already removed the temporary file */
    return st;
}

vs_status vs_run_merge(const char *const *parts, int n_parts, const char *out, const char *journal_path, vs_run_header *h, vs_error *err)
{
    return vs_run_merge_checked(parts, n_parts, out, journal_path, NULL, NULL, h, err);
}

vs_status vs_run_merge_checked(const char *const *parts, int n_parts, const char *out, const char *journal_path,
                               vs_run_check_fn check, void *ctx, vs_run_header *h, vs_error *err)
{
    memset(h, 0, sizeof *h);
    if (!parts || n_parts < 1 || !out || !journal_path) return vs_error_set(err, VS_ERR_ARG, "merge: parts and an output are required");
    journal *js = calloc((size_t)n_parts, sizeof *js);
    if (!js) return vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
    vs_status st = VS_OK;
    for (int p = 0; p < n_parts && st == VS_OK; p++) st = journal_read(parts[p], &js[p], err);
    if (st == VS_OK) st = check_parts(parts, n_parts, js, err);
    if (st == VS_OK) {
        /* a copy of the first header becomes the whole run's command */
        *h = js[0].h;
        h->verb = strdup(h->verb);
        h->version = strdup(h->version);
        h->argv = calloc((size_t)(h->argc ? h->argc : 1), sizeof *h->argv);
        for (int i = 0; h->argv && i < h->argc; i++) h->argv[i] = strdup(js[0].h.argv[i]);
        bool ok = h->verb && h->version && h->argv;
        for (int i = 0; ok && i < h->argc; i++) ok = h->argv[i] != NULL;
        st = ok ? set_out(h, out, err) : vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
    }
    if (st == VS_OK && check) st = check(ctx, h, err);
    if (st == VS_OK) st = write_merged(js, n_parts, h, journal_path, err);
    if (st == VS_OK) h->shard = (vs_shard){1, 1};
    for (int p = 0; p < n_parts; p++) journal_clear(&js[p]);
    free(js);
    if (st != VS_OK) vs_run_header_clear(h);
    return st;
}
