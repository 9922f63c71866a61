/* kernel_shap.c - Kernel SHAP (Lundberg & Lee 2017): Shapley values as the weighted least squares fit
 * of coalition values under the Shapley kernel, with efficiency as an exact constraint; every
 * coalition of a size is enumerated while the budget allows, the rest sampled. */
#include "explain/internal.h"
#include "explain/lstsq.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct kernel_shap_opts {
    int samples;
} kernel_shap_opts;

static void kernel_shap_defaults(void *o) { ((kernel_shap_opts *)o)->samples = 2000; }

/* Random coalition of exactly s of the m players. */
void vs_random_subset(vs_rng *r, int64_t m, int64_t s, uint8_t *z, int64_t *scratch)
{
    for (int64_t i = 0; i < m; i++) scratch[i] = i;
    memset(z, 0, (size_t)m);
    for (int64_t i = 0; i < s; i++) {
        int64_t k = i + (int64_t)vs_rng_below(r, (uint64_t)(m - i));
        int64_t t = scratch[i];
        scratch[i] = scratch[k];
        scratch[k] = t;
        z[scratch[i]] = 1;
    }
}

static vs_status kernel_shap_run(vs_attr_job *j, const void *opts, float *attr)
{
    vs_features f;
    vs_status st = vs_features_make(j, &f);
    if (st != VS_OK) return st;
    int64_t M = f.n, budget = ((const kernel_shap_opts *)opts)->samples;
    if (M < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "kernel shap needs at least 2 features");
    }
    if (budget < 2) {
        vs_features_free(&f);
        return vs_error_set(j->err, VS_ERR_ARG, "kernel shap needs a budget of at least 2 evaluations");
    }
    bool enumerate = M <= 30 && budget >= ((int64_t)1 << M) - 2;
    int64_t n = enumerate ? ((int64_t)1 << M) - 2 : budget;
    /* rows n and n + 1 of zs are the empty and the full coalition */
    uint8_t *zs = calloc((size_t)((n + 2) * M), 1), *in = malloc((size_t)(n * (M - 1)));
    double *v = malloc((size_t)(n + 2) * sizeof *v), *w = malloc((size_t)n * sizeof *w), *y = malloc((size_t)n * sizeof *y);
    double *phi = malloc((size_t)M * sizeof *phi), *p = malloc((size_t)M * sizeof *p);
    int64_t *scratch = malloc((size_t)M * sizeof *scratch);
    if (!zs || !in || !v || !w || !y || !phi || !p || !scratch) st = vs_error_set(j->err, VS_ERR_NOMEM, "kernel shap: out of memory");
    if (st == VS_OK) {
        if (enumerate) {
            for (int64_t S = 1; S <= n; S++) {
                int64_t s = 0;
                for (int64_t k = 0; k < M; k++) s += zs[(S - 1) * M + k] = (uint8_t)(S >> k & 1);
                /* Shapley kernel (M-1) / (C(M,s) s (M-s)) */
                w[S - 1] = exp(log((double)(M - 1)) - log_choose(M, s) - log((double)s) - log((double)(M - s)));
            }
        } else {
            /* Sizes drawn with probability proportional to the kernel mass of each size, (M-1)/(s(M-s)),
             * subsets uniform within a size, complements paired: the sample then needs equal weights. */
            double tot = 0;
            for (int64_t s = 1; s < M; s++) tot += p[s] = 1.0 / ((double)s * (double)(M - s));
            vs_rng r;
            vs_rng_seed(&r, j->r->seed);
            for (int64_t i = 0; i < n; i += 2) {
                double u = vs_rng_uniform(&r) * tot, c = 0;
                int64_t s = 1;
                for (; s < M - 1; s++) {
                    c += p[s];
                    if (u < c) break;
                }
                vs_random_subset(&r, M, s, zs + i * M, scratch);
                w[i] = 1;
                if (i + 1 < n) {
                    for (int64_t k = 0; k < M; k++) zs[(i + 1) * M + k] = (uint8_t)!zs[i * M + k];
                    w[i + 1] = 1;
                }
            }
        }
        memset(zs + (n + 1) * M, 1, (size_t)M);
        st = vs_coalition_values(j, &f, zs, n + 2, v);
    }
    if (st == VS_OK) {
        /* Efficiency as a constraint: phi_M = (v1 - v0) - sum_{k<M} phi_k, eliminated before solving.
         * Row r of the design is then z_k - z_M (k < M): +1 on the set where z_k != z_M when z_M = 0,
         * -1 there when z_M = 1, the sign moved onto the response (explain/lstsq.h). */
        const double v0 = v[n], v1 = v[n + 1];
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *z = zs + r * M;
            y[r] = v[r] - v0 - z[M - 1] * (v1 - v0);
            if (z[M - 1]) y[r] = -y[r];
            for (int64_t k = 0; k < M - 1; k++) in[r * (M - 1) + k] = z[k] != z[M - 1];
        }
        st = vs_lstsq_sets(n, M - 1, in, w, y, 0.0, 0, phi);
        if (st == VS_ERR_NUMERIC) {
            st = vs_error_set(j->err, VS_ERR_NUMERIC, "kernel shap: singular system (raise the budget)");
        } else if (st != VS_OK) {
            st = vs_error_set(j->err, st, "kernel shap: out of memory for the least-squares system");
        } else {
            double s = 0;
            for (int64_t k = 0; k < M - 1; k++) s += phi[k];
            phi[M - 1] = (v1 - v0) - s;
            vs_features_spread(j, &f, phi, attr);
        }
    }
    free(zs);
    free(in);
    free(v);
    free(w);
    free(y);
    free(phi);
    free(p);
    free(scratch);
    vs_features_free(&f);
    return st;
}


static const vs_method_param kernel_shap_params[] = {
    {"samples", VS_PARAM_INT, offsetof(kernel_shap_opts, samples), 1, 10000000, NULL, "coalitions evaluated"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_kernel_shap = {
    "kernel_shap", "Shapley values fitted by weighted least squares over coalitions (Lundberg & Lee 2017)", VS_OUTPUT_FEATURES,
    VS_METHOD_COMPLETE | VS_METHOD_SEGMENTS, sizeof(kernel_shap_opts), kernel_shap_defaults, kernel_shap_params,
    kernel_shap_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
