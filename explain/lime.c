/* lime.c - LIME (Ribeiro et al. 2016): a ridge regression of coalition values on the kept features,
 * weighted by an exponential kernel on the cosine distance to the full input. */
#include "explain/internal.h"
#include "explain/lstsq.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct lime_opts {
    int samples;
    float kernel_width, ridge;
} lime_opts;

static void lime_defaults(void *o) { *(lime_opts *)o = (lime_opts){1000, 0.25f, 1.0f}; }

/* LIME: random coalitions (number of kept features uniform in 1..M), exponential kernel on cosine
 * distance to the full input, ridge regression with an unpenalised intercept. */
static vs_status lime_run(vs_attr_job *j, const void *opts, float *attr)
{
    const lime_opts *o = opts;
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    int64_t M = f.n, n = o->samples;
    if (n < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "lime needs at least 2 samples");
    }
    uint8_t *zs = calloc((size_t)(n * M), 1);
    double *v = malloc((size_t)n * sizeof *v), *w = malloc((size_t)n * sizeof *w);
    double *beta = malloc((size_t)(M + 1) * sizeof *beta);
    uint8_t *in = malloc((size_t)(n * (M + 1)));
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    if (!zs || !v || !w || !in || !beta || !scratch) st = vs_error_set(j->err, VS_ERR_NOMEM, "lime: out of memory");
    if (st == VS_OK) {
        vs_rng r;
        vs_rng_seed(&r, j->r->seed);
        memset(zs, 1, (size_t)M); /* the input itself */
        for (int64_t i = 1; i < n; i++) vs_random_subset(&r, M, 1 + (int64_t)vs_rng_below(&r, (uint64_t)M), zs + i * M, scratch);
        st = vs_coalition_values(j, &f, zs, n, v);
    }
    if (st == VS_OK) {
        double kw = o->kernel_width > 0 ? o->kernel_width : 0.25;
        for (int64_t i = 0; i < n; i++) {
            int64_t s = 0;
            for (int64_t k = 0; k < M; k++) {
                s += zs[i * M + k];
                in[i * (M + 1) + k] = zs[i * M + k];
            }
            in[i * (M + 1) + M] = 1; /* intercept */
            double cosd = 1.0 - (double)s / (sqrt((double)s) * sqrt((double)M));
            w[i] = exp(-cosd * cosd / (kw * kw));
        }
        st = vs_lstsq_sets(n, M + 1, in, w, v, o->ridge, M, beta);
        if (st == VS_ERR_NUMERIC)
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "lime: singular system");
        else if (st != VS_OK)
            st = vs_error_set(j->err, st, "lime: out of memory for the least-squares system");
        else
            vs_features_spread(j, &f, beta, attr);
    }
    free(zs);
    free(v);
    free(w);
    free(in);
    free(beta);
    free(scratch);
    vs_features_free(&f);
    return st;
}

static const vs_method_param lime_params[] = {
    {"samples", VS_PARAM_INT, offsetof(lime_opts, samples), 2, 10000000, NULL, "coalitions evaluated"},
    {"kernel-width", VS_PARAM_FLOAT, offsetof(lime_opts, kernel_width), 1e-6, 1e6, NULL, "width of the exponential kernel on cosine distance"},
    {"ridge", VS_PARAM_FLOAT, offsetof(lime_opts, ridge), 0, 1e12, NULL, "L2 penalty of the regression"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_lime = {
    "lime", "a local linear surrogate fitted on random coalitions (Ribeiro et al. 2016)", VS_OUTPUT_FEATURES,
    VS_METHOD_SEGMENTS, sizeof(lime_opts), lime_defaults, lime_params, lime_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
