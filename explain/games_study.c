/* games_study.c - the convergence study of Hamilton et al. (2022), Figs. 5 and 10: random games
 * (3-layer ReLU networks with Glorot weights on n inputs; Boolean product games with uniform
 * coefficients), the MSE of each order-2 estimator against the exact Shapley-Taylor indices as the
 * evaluations grow, and the ratio of evaluations two estimators need for the same MSE. */
#include "versus/games.h"
#include "versus/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the random games --------------------------------------------------------------------------- */

/* v[2^n] of one random game of the kind (caller frees). */
static double *random_values(vs_study_game kind, int n, vs_rng *r)
{
    const uint32_t total = 1u << n;
    double *v = calloc(total, sizeof *v);
    if (!v) return NULL;
    if (kind == VS_STUDY_PRODUCT) {
        /* v(S) = sum_{T subset S} c_T, c_T ~ U(0, 10): the dividends are the coefficients */
        for (uint32_t T = 1; T < total; T++) v[T] = 10 * vs_rng_uniform(r);
        vs_harsanyi_values(n, v);
        return v;
    }
    /* f(x) = w3 relu(W2 relu(W1 x)), Glorot-uniform weights, zero biases; v(S) = f(x masked by S,
     * zeros elsewhere) at a standard normal x. */
    enum { H = 20 };
    double *w1 = malloc((size_t)(H * n) * sizeof *w1), w2[H * H], w3[H], x[32];
    if (!w1) {
        free(v);
        return NULL;
    }
    double a1 = sqrt(6.0 / (n + H)), a2 = sqrt(6.0 / (H + H)), a3 = sqrt(6.0 / (H + 1));
    for (int k = 0; k < H * n; k++) w1[k] = a1 * (2 * vs_rng_uniform(r) - 1);
    for (int k = 0; k < H * H; k++) w2[k] = a2 * (2 * vs_rng_uniform(r) - 1);
    for (int k = 0; k < H; k++) w3[k] = a3 * (2 * vs_rng_uniform(r) - 1);
    for (int i = 0; i < n; i++) x[i] = vs_rng_normal(r);
    for (uint32_t S = 0; S < total; S++) {
        double h1[H], h2[H], out = 0;
        for (int o = 0; o < H; o++) {
            double s = 0;
            for (int i = 0; i < n; i++)
                if (S >> i & 1) s += w1[o * n + i] * x[i];
            h1[o] = s > 0 ? s : 0;
        }
        for (int o = 0; o < H; o++) {
            double s = 0;
            for (int i = 0; i < H; i++) s += w2[o * H + i] * h1[i];
            h2[o] = s > 0 ? s : 0;
        }
        for (int o = 0; o < H; o++) out += w3[o] * h2[o];
        v[S] = out;
    }
    free(w1);
    return v;
}

const char *vs_study_estimator_name(vs_study_estimator e)
{
    static const char *const names[] = {"kernel-direct", "kernel-weighting", "kernel-leverage", "permutation", "permutation-per-pair", "permutation-uncached"};
    return (unsigned)e < VS_STUDY_ESTIMATORS ? names[e] : NULL;
}

/* Mean squared error of the pair indices (i < j) of est against ref, both [n, n] matrices. */
static double pair_mse(int n, const double *est, const double *ref)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double e = 2 * (est[i * n + j] - ref[i * n + j]);
            s += e * e;
        }
    return s / (n * (n - 1) / 2);
}

vs_status vs_st2_convergence(vs_study_game kind, int n, int games, uint64_t seed, vs_study_estimator e, const int64_t *budgets, int nb,
                             vs_study_point *out, vs_error *err)
{
    if (n < 3 || n > 20 || games < 1 || nb < 1 || (unsigned)e >= VS_STUDY_ESTIMATORS)
        return vs_error_set(err, VS_ERR_ARG, "convergence study: 3 to 20 players, at least one game and one budget, a known estimator");
    vs_rng r;
    vs_rng_seed(&r, seed);
    double *exact = malloc((size_t)(n * n) * sizeof *exact), *est = malloc((size_t)(n * n) * sizeof *est);
    vs_status st = exact && est ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "convergence study: out of memory");
    for (int b = 0; b < nb; b++) out[b] = (vs_study_point){0, 0};
    for (int gi = 0; gi < games && st == VS_OK; gi++) {
        double *v = random_values(kind, n, &r), *d = malloc(((size_t)1 << n) * sizeof *d);
        if (!v || !d) {
            free(v);
            free(d);
            st = vs_error_set(err, VS_ERR_NOMEM, "convergence study: out of memory");
            break;
        }
        memcpy(d, v, ((size_t)1 << n) * sizeof *d);
        vs_harsanyi_dividends(n, d);
        vs_shapley_taylor2_matrix(n, d, exact);
        free(d);
        vs_table_game t = {n, v};
        for (int b = 0; b < nb && st == VS_OK; b++) {
            vs_game g = vs_table_game_make(&t);
            uint64_t s = seed ^ (0x9e3779b97f4a7c15u * (uint64_t)(gi * 131 + b * 7 + (int)e + 1));
            if (e >= VS_STUDY_PERMUTATION) {
                vs_permutation_mode mode = e == VS_STUDY_PERMUTATION            ? VS_PERMUTATION_SHARED
                                           : e == VS_STUDY_PERMUTATION_PER_PAIR ? VS_PERMUTATION_PER_PAIR
                                                                                : VS_PERMUTATION_PER_PAIR_UNCACHED;
                st = vs_game_permutation_st2(&g, budgets[b], s, mode, est, err);
            } else {
                vs_kernel_opts o;
                vs_kernel_opts_init(&o);
                o.budget = budgets[b];
                o.seed = s;
                o.sampling = e == VS_STUDY_KERNEL_DIRECT ? VS_KERNEL_DIRECT : e == VS_STUDY_KERNEL_WEIGHTING ? VS_KERNEL_WEIGHTING : VS_KERNEL_LEVERAGE;
                st = vs_game_kernel(&g, &o, est, err);
            }
            out[b].evaluations += (double)g.evaluations / games;
            out[b].mse += pair_mse(n, est, exact) / games;
        }
        free(v);
    }
    free(exact);
    free(est);
    return st;
}

/* log evaluations that curve c [n points] needs for mse m (log-log interpolation between the two
 * neighbouring points); NAN outside its range.  Points are assumed in increasing evaluations. */
static double log_evals_at(const vs_study_point *c, int n, double m)
{
    for (int i = 0; i + 1 < n; i++) {
        double m0 = c[i].mse, m1 = c[i + 1].mse;
        if (!(m0 > 0 && m1 > 0)) continue;
        if ((m <= m0 && m >= m1) || (m >= m0 && m <= m1)) {
            double t = m0 == m1 ? 0 : (log(m) - log(m0)) / (log(m1) - log(m0));
            return log(c[i].evaluations) + t * (log(c[i + 1].evaluations) - log(c[i].evaluations));
        }
    }
    return NAN;
}

double vs_evals_ratio(const vs_study_point *slow, int ns, const vs_study_point *fast, int nf)
{
    /* geometric mean over the fast curve's points whose MSE the slow curve also reaches */
    double s = 0;
    int k = 0;
    for (int i = 0; i < nf; i++) {
        double ls = log_evals_at(slow, ns, fast[i].mse);
        if (isnan(ls) || !(fast[i].evaluations > 0)) continue;
        s += ls - log(fast[i].evaluations);
        k++;
    }
    return k ? exp(s / k) : NAN;
}
