/* shapley_taylor.c - second-order Shapley-Taylor indices of any model's features as a registered
 * method: the kernel estimator of Hamilton et al. (2022, Eq. 7; versus/games.h), exact once the
 * budget covers every coalition.  The [F, F] result spreads the index of features (p, q) evenly over
 * their element pairs and a feature's own (first-order) index over its element pairs with itself,
 * so the matrix sums to S(x) - S(x') (efficiency).  With a reference on both sides the features of
 * the query come first: block [0:F/2, F/2:F] is the query x reference correspondence. */
#include "explain/internal.h"
#include "versus/games.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct st_opts {
    int samples;
    int sampling;   /* vs_kernel_sampling */
    bool pairing;
} st_opts;

static void st_defaults(void *o) { *(st_opts *)o = (st_opts){2000, VS_KERNEL_DIRECT, false}; }

typedef struct job_game {
    vs_attr_job *j;
    const vs_features *f;
} job_game;

static vs_status job_values(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err)
{
    (void)err;
    const job_game *g = ctx;
    return vs_coalition_values(g->j, g->f, z, m, v);
}

static vs_status st_run(vs_attr_job *j, const void *opts, float *out)
{
    const st_opts *o = opts;
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    const int64_t n = f.n, dim = j->dim;
    if (n < 3 || n > 256) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "shapley_taylor: %lld features; it takes 3 to 256 (use segments)", (long long)n);
    }
    job_game jg = {j, &f};
    vs_game g = {.n = n, .values = job_values, .ctx = &jg, .batch = j->r->batch > 0 ? j->r->batch : 64};
    vs_kernel_opts ko;
    vs_kernel_opts_init(&ko);
    ko.budget = o->samples;
    ko.sampling = (vs_kernel_sampling)o->sampling;
    ko.pair_complements = o->pairing;
    ko.seed = j->r->seed;
    double *phi2 = malloc((size_t)(n * n) * sizeof *phi2);
    int64_t *size = calloc((size_t)n, sizeof *size);
    if (!phi2 || !size) st = vs_error_set(j->err, VS_ERR_NOMEM, "shapley_taylor: out of memory");
    if (st == VS_OK) st = vs_game_kernel(&g, &ko, phi2, j->err);
    if (st == VS_OK) {
        for (int64_t e = 0; e < dim; e++) size[f.id[e]]++;
        for (int64_t a = 0; a < dim; a++)
            for (int64_t b = 0; b < dim; b++) {
                int32_t p = f.id[a], q = f.id[b];
                out[a * dim + b] = (float)(phi2[p * n + q] / ((double)size[p] * (double)size[q]));
            }
    }
    free(phi2);
    free(size);
    vs_features_free(&f);
    return st;
}

static const vs_method_param st_params[] = {
    {"samples", VS_PARAM_INT, offsetof(st_opts, samples), 4, 10000000, NULL, "coalitions evaluated (at least the features + 3)"},
    {"sampling", VS_PARAM_CHOICE, offsetof(st_opts, sampling), 0, 0, "direct|weighting|leverage",
     "coalition sizes drawn by kernel mass (direct), uniform coalitions weighted by the kernel, or sizes drawn by their leverage in the weighted fit"},
    {"pairing", VS_PARAM_SWITCH, offsetof(st_opts, pairing), 0, 0, NULL, "also evaluate the complement of every sampled coalition"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_shapley_taylor = {
    "shapley_taylor", "second-order Shapley-Taylor indices by the kernel of Hamilton et al. 2022 (exact when the budget covers 2^F)",
    VS_OUTPUT_INTERACTIONS, VS_METHOD_COMPLETE | VS_METHOD_SEGMENTS, sizeof(st_opts), st_defaults, st_params, st_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
