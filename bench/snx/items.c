/* bench/snx/items.c - the SNX experiment's explanation loop as items: item k is test pair k with
 * the local masks (and GDA trace rows) of every planned explanation (b->jobs: every method under each
 * protocol, the dual variants of Table V).  Pairs are explained in chunks of o.batch
 * (the chunk SNX optimises together; the masks do not depend on it), each finished pair becomes one
 * record, journalled through versus/shard.h when the experiment has a run (shards, --resume), and
 * every record - fresh or read back - is decoded by the same code into the methods' explanations.
 * A record: per job, in plan order, T (trace iterations), the pair's share of the chunk's seconds,
 * the query and reference masks, then the four trace rows of T floats. */
#include "bench/snx/snx_bench.h"
#include "explain/snx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int failed(const snx_bench *b, vs_status code, const char *what, const char *msg)
{
    vs_error_set(b->err, code, "%s%s%s", what, *what ? ": " : "", msg);
    return 1;
}

/* Pair k of chunk e (item c of e) into the record. */
static void encode(vs_item_buf *rec, const vs_snx_expl *e, int64_t c, double seconds)
{
    int64_t T = e->trace.n_iters;
    vs_item_put_i64(rec, &T, 1);
    vs_item_put_f64(rec, &seconds, 1);
    vs_item_put_f32(rec, e->ms + e->s_off[c], (size_t)(e->s_off[c + 1] - e->s_off[c]));
    vs_item_put_f32(rec, e->mt + e->t_off[c], (size_t)(e->t_off[c + 1] - e->t_off[c]));
    float *rows[4] = {e->trace.objective, e->trace.grad_primal, e->trace.grad_dual, e->trace.violated};
    for (int q = 0; q < 4 && T; q++) vs_item_put_f32(rec, rows[q] + c * T, (size_t)T);
}

/* The trace arrays of e for n pairs of T iterations (once); false when out of memory. */
static bool trace_alloc(vs_snx_expl *e, int64_t n, int64_t T)
{
    if (e->trace.n_iters) return e->trace.n_iters == T;
    size_t sz = (size_t)(n * T);
    e->trace.n_blocks = n;
    e->trace.n_iters = T;
    e->trace.objective = calloc(sz, sizeof(float));
    e->trace.grad_primal = calloc(sz, sizeof(float));
    e->trace.grad_dual = calloc(sz, sizeof(float));
    e->trace.violated = calloc(sz, sizeof(float));
    return e->trace.objective && e->trace.grad_primal && e->trace.grad_dual && e->trace.violated;
}

/* Record p (len bytes) of pair k into every job's explanation and seconds; rc. */
static int decode(snx_bench *b, int64_t k, const unsigned char *p, size_t len)
{
    vs_item_reader rd = {p, len, 0, false};
    for (int i = 0; i < b->n_jobs && !rd.bad; i++) {
        const snx_local_job *job = &b->jobs[i];
        vs_snx_expl *e = *job->out;
        int64_t T;
        double seconds;
        vs_item_get_i64(&rd, &T, 1);
        vs_item_get_f64(&rd, &seconds, 1);
        if (job->seconds) *job->seconds += seconds;
        vs_item_get_f32(&rd, e->ms + e->s_off[k], (size_t)(e->s_off[k + 1] - e->s_off[k]));
        vs_item_get_f32(&rd, e->mt + e->t_off[k], (size_t)(e->t_off[k + 1] - e->t_off[k]));
        if (rd.bad || T < 0 || T > 1000000) {
            rd.bad = true;
            break;
        }
        if (T && !trace_alloc(e, b->res.set.pairs.n, T)) return failed(b, VS_ERR_NOMEM, "", "out of memory for traces");
        float *rows[4] = {e->trace.objective, e->trace.grad_primal, e->trace.grad_dual, e->trace.violated};
        for (int q = 0; q < 4 && T; q++) vs_item_get_f32(&rd, rows[q] + k * T, (size_t)T);
    }
    if (rd.bad || rd.pos != rd.len) {
        char msg[160];
        snprintf(msg, sizeof msg, "the journalled record of pair %lld does not fit this run (another data set or options?)", (long long)k);
        return failed(b, VS_ERR_FORMAT, b->res.set.opt->run ? b->res.set.opt->run->path : "", msg);
    }
    return 0;
}

/* Explain pairs [k0, k1) by every method and record each pair; rc. */
static int explain_chunk(snx_bench *b, vs_run *run, int64_t k0, int64_t k1, vs_item_buf *rec)
{
    int64_t m = k1 - k0;
    vs_pairs sub = {m, b->res.set.pairs.idx + 2 * k0, b->res.set.pairs.label ? b->res.set.pairs.label + k0 : NULL};
    vs_snx_expl *e[SNX_MAX_JOBS] = {0};
    double sec[SNX_MAX_JOBS];
    int rc = 0;
    vs_error err;
    for (int i = 0; i < b->n_jobs && rc == 0; i++) {
        const snx_local_job *job = &b->jobs[i];
        vs_snx_opts o = *job->o;
        o.first_item = k0; /* GNNExplainer's initial masks: seeded by the pair's index in the whole run */
        double t = now();
        if (vs_snx_local(&b->f, b->res.set.d, &sub, job->method, job->global, job->pg, &o, &e[i], &err) != VS_OK)
            rc = failed(b, err.code, vs_snx_method_name(job->method), err.msg);
        sec[i] = (now() - t) / (double)m;
    }
    for (int64_t c = 0; c < m && rc == 0; c++) {
        vs_item_buf_reset(rec);
        for (int i = 0; i < b->n_jobs; i++) encode(rec, e[i], c, sec[i]);
        if (rec->oom) rc = failed(b, VS_ERR_NOMEM, "", "out of memory for a pair's record");
        if (rc == 0 && run && vs_run_put(run, k0 + c, rec, &err) != VS_OK) rc = failed(b, err.code, "", err.msg);
        if (rc == 0 && !(run && vs_run_sharded(run))) rc = decode(b, k0 + c, rec->data, rec->len);
    }
    for (int i = 0; i < b->n_jobs; i++) vs_snx_expl_free(e[i]);
    return rc;
}

int vs_snx_bench_local_masks(snx_bench *b, bool *partial)
{
    int64_t n = b->res.set.pairs.n;
    vs_run *run = NULL;
    vs_error err;
    *partial = false;
    if (b->res.set.opt->run && vs_run_open(b->res.set.opt->run, n, &run, &err) != VS_OK) return failed(b, err.code, "", err.msg);
    bool shard = run && vs_run_sharded(run);
    int64_t begin = run ? vs_run_begin(run) : 0, end = run ? vs_run_end(run) : n, chunk = b->res.set.o.batch > 0 ? b->res.set.o.batch : 64;
    int64_t *s = malloc((size_t)n * sizeof *s), *t = malloc((size_t)n * sizeof *t);
    int rc = s && t ? 0 : failed(b, VS_ERR_NOMEM, "", "out of memory");
    for (int64_t k = 0; rc == 0 && k < n; k++) {
        s[k] = b->res.set.pairs.idx[2 * k];
        t[k] = b->res.set.pairs.idx[2 * k + 1];
    }
    /* every job's explanation of all pairs, filled pair by pair (a shard keeps only its journal) */
    for (int i = 0; rc == 0 && !shard && i < b->n_jobs; i++) {
        if (b->jobs[i].seconds) *b->jobs[i].seconds = 0;
        if (snx_expl_new(b->jobs[i].method, false, b->res.set.d, s, t, n, b->jobs[i].out, &err) != VS_OK) rc = failed(b, err.code, "", err.msg);
    }
    if (b->res.set.opt->progress && rc == 0)
        fprintf(b->res.set.opt->progress, "versus bench snx: %d explanations (methods, protocols, dual variants) of pairs %lld..%lld of %lld\n",
                b->n_jobs, (long long)begin, (long long)end - 1, (long long)n);
    vs_item_buf rec = {0};
    size_t len;
    for (int64_t k = begin; rc == 0 && k < end;) {
        const unsigned char *p = run ? vs_run_get(run, k, &len) : NULL;
        if (p) { /* journalled before a kill, or by the shards of a merge */
            rc = shard ? 0 : decode(b, k, p, len);
            k++;
            continue;
        }
        int64_t k1 = k + 1;
        while (k1 < end && k1 - k < chunk && !(run && vs_run_get(run, k1, &len))) k1++;
        rc = explain_chunk(b, run, k, k1, &rec);
        k = k1;
    }
    vs_item_buf_clear(&rec);
    free(s);
    free(t);
    if (rc == 0 && run && (shard || !b->res.set.opt->journal) && vs_run_finish(run, &err) != VS_OK) rc = failed(b, err.code, "", err.msg);
    if (run && !shard && b->res.set.opt->journal && rc == 0) *b->res.set.opt->journal = run;
    else vs_run_free(run);
    *partial = shard;
    return rc;
}
