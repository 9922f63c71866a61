/* shapley_sampling.c - Shapley value sampling (Castro et al. 2009), as Captum's ShapleyValueSampling:
 * for each random order of the features (or groups), add them one by one to the baseline and credit
 * each with the change of S it causes; average over orders.  Orders come in antithetic pairs (an
 * order, then its reverse), drawn from the request's seed.  Every order's credits sum to
 * S(x) - S(x'), so the estimate is efficient at any sample count; as in Captum, every element of a
 * group carries the group's whole value. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct svs_opts {
    int samples;
} svs_opts;

static void svs_defaults(void *o) { ((svs_opts *)o)->samples = 25; }

/* acc[order[t]] += S(prefix t + 1) - S(prefix t), prefixes of order built and scored batch by batch;
 * buf: chunk + 1 rows, the first carrying the last prefix of the previous batch. */
static vs_status order_credits(vs_attr_job *j, const vs_features *f, const size_t *order, float *buf, double *s, double *acc)
{
    float *carry = buf, *rows = buf + j->dim;
    int64_t chunk = vs_job_chunk(j), n = f->n;
    double prev;
    vs_status st = vs_job_scores(j, j->baseline->data, 1, &prev);
    const float *cur = j->baseline->data;
    for (int64_t t0 = 0; t0 < n && st == VS_OK; t0 += chunk) {
        int64_t m = n - t0 < chunk ? n - t0 : chunk;
        for (int64_t r = 0; r < m; r++) {
            float *row = rows + r * j->dim;
            int32_t k = (int32_t)order[t0 + r];
            memcpy(row, cur, (size_t)j->dim * sizeof *row);
            for (int64_t i = 0; i < j->dim; i++)
                if (f->id[i] == k) row[i] = j->x->data[i];
            cur = row;
        }
        st = vs_job_scores(j, rows, m, s);
        for (int64_t r = 0; r < m && st == VS_OK; r++) {
            acc[order[t0 + r]] += s[r] - prev;
            prev = s[r];
        }
        memcpy(carry, rows + (m - 1) * j->dim, (size_t)j->dim * sizeof *rows);
        cur = carry;
    }
    return st;
}

static vs_status svs_run(vs_attr_job *j, const void *opts, float *attr)
{
    int samples = ((const svs_opts *)opts)->samples;
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    int64_t chunk = vs_job_chunk(j);
    size_t *order = malloc((size_t)f.n * sizeof *order);
    float *rows = malloc((size_t)((chunk + 1) * j->dim) * sizeof *rows);
    double *s = malloc((size_t)chunk * sizeof *s), *acc = calloc((size_t)f.n, sizeof *acc);
    if (!order || !rows || !s || !acc) st = vs_error_set(j->err, VS_ERR_NOMEM, "shapley_value_sampling: out of memory");
    vs_rng r;
    vs_rng_seed(&r, j->r->seed);
    for (int k = 0; k < samples && st == VS_OK; k++) {
        if (k % 2 == 0) {
            for (int64_t i = 0; i < f.n; i++) order[i] = (size_t)i;
            vs_rng_shuffle(&r, order, (size_t)f.n);
        } else { /* the antithetic partner: the reverse order */
            for (int64_t a = 0, b = f.n - 1; a < b; a++, b--) {
                size_t t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
        }
        st = order_credits(j, &f, order, rows, s, acc);
    }
    if (st == VS_OK) {
        for (int64_t i = 0; i < f.n; i++) acc[i] /= samples;
        vs_features_assign(j, &f, acc, attr);
    }
    free(order);
    free(rows);
    free(s);
    free(acc);
    vs_features_free(&f);
    return st;
}

static const vs_method_param svs_params[] = {
    {"samples", VS_PARAM_INT, offsetof(svs_opts, samples), 1, 10000000, NULL, "random feature orders (antithetic pairs)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_shapley_value_sampling = {
    "shapley_value_sampling", "Shapley values estimated over random feature orders, in antithetic pairs (Castro et al. 2009)",
    VS_OUTPUT_FEATURES, VS_METHOD_SEGMENTS, sizeof(svs_opts), svs_defaults, svs_params, svs_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
