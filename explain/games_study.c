/* games_study.c - the convergence study of Hamilton et al. (2022), Figs. 5 and 10: random games
 * (3-layer ReLU networks with Glorot weights on n inputs, and other readings of A.2's unstated
 * details; Boolean product games with uniform coefficients), the MSE of each order-2 estimator
 * against the exact Shapley-Taylor indices as the evaluations grow, and the ratio of evaluations two
 * estimators need for the same MSE at each point and as a geometric mean. */
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
    /* f(x) = W3 relu(W2 relu(W1 x + b1) + b2) + b3 (n-20-20-1; VS_STUDY_MLP_SHALLOW: W2 relu(W1 x +
     * b1) + b2, n-20-1), Glorot-uniform weights (VS_STUDY_MLP_NORMAL: Glorot-normal, the same
     * variance 2 / (fan_in + fan_out)), zero biases (VS_STUDY_MLP_BIASED: uniform in +-1/sqrt(fan_in),
     * PyTorch's nn.Linear default); v(S) = f(x masked by S, zeros elsewhere) at a standard normal x
     * (VS_STUDY_MLP_BOOLEAN: x = 1, v(S) = f(the indicator of S)). */
    enum { H = 20 };
    const int layers = kind == VS_STUDY_MLP_SHALLOW ? 2 : 3, d[4] = {n, H, layers == 3 ? H : 1, 1};
    double *w[3], b[3][H] = {{0}}, x[32];
    w[0] = malloc((size_t)(H * n + H * H + H) * sizeof *w[0]);
    if (!w[0]) {
        free(v);
        return NULL;
    }
    w[1] = w[0] + H * n;
    w[2] = w[1] + H * H;
    for (int l = 0; l < layers; l++) {
        double a = sqrt(6.0 / (d[l] + d[l + 1])), sd = sqrt(2.0 / (d[l] + d[l + 1]));
        for (int k = 0; k < d[l] * d[l + 1]; k++) w[l][k] = kind == VS_STUDY_MLP_NORMAL ? sd * vs_rng_normal(r) : a * (2 * vs_rng_uniform(r) - 1);
    }
    for (int l = 0; l < layers && kind == VS_STUDY_MLP_BIASED; l++)
        for (int o = 0; o < d[l + 1]; o++) b[l][o] = (2 * vs_rng_uniform(r) - 1) / sqrt((double)d[l]);
    for (int i = 0; i < n; i++) x[i] = kind == VS_STUDY_MLP_BOOLEAN ? 1 : vs_rng_normal(r);
    for (uint32_t S = 0; S < total; S++) {
        double h[H], t[H];
        for (int o = 0; o < H; o++) {
            double s = b[0][o];
            for (int i = 0; i < n; i++)
                if (S >> i & 1) s += w[0][o * n + i] * x[i];
            h[o] = s > 0 ? s : 0;
        }
        for (int l = 1; l < layers; l++) {
            for (int o = 0; o < d[l + 1]; o++) {
                double s = b[l][o];
                for (int i = 0; i < d[l]; i++) s += w[l][o * d[l] + i] * h[i];
                t[o] = s > 0 || l == layers - 1 ? s : 0; /* no ReLU after the last layer */
            }
            memcpy(h, t, (size_t)d[l + 1] * sizeof *h);
        }
        v[S] = h[0];
    }
    free(w[0]);
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
                             vs_study_point *out, vs_study_point *per_game, vs_error *err)
{
    if (n < 3 || n > 20 || games < 1 || nb < 1 || (unsigned)e >= VS_STUDY_ESTIMATORS || (unsigned)kind > VS_STUDY_MLP_SHALLOW)
        return vs_error_set(err, VS_ERR_ARG, "convergence study: 3 to 20 players, at least one game and one budget, a known game and estimator");
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
            vs_study_point p = {(double)g.evaluations, pair_mse(n, est, exact)};
            out[b].evaluations += p.evaluations / games;
            out[b].mse += p.mse / games;
            if (per_game) per_game[gi * nb + b] = p;
        }
        free(v);
    }
    free(exact);
    free(est);
    return st;
}

/* The log-log line through points a and b of curve c at mse m: log evaluations. */
static double log_line(const vs_study_point *a, const vs_study_point *b, double m)
{
    double t = a->mse == b->mse ? 0 : (log(m) - log(a->mse)) / (log(b->mse) - log(a->mse));
    return log(a->evaluations) + t * (log(b->evaluations) - log(a->evaluations));
}

/* The end segment of curve c [n points] at its low-evaluation end (dir 1) or its high one (dir -1):
 * the first (last) two points of positive MSE and distinct evaluations, in *a and *b; false without. */
static bool end_segment(const vs_study_point *c, int n, int dir, int *a, int *b)
{
    int i = dir > 0 ? 0 : n - 1;
    while (i >= 0 && i < n && !(c[i].mse > 0 && c[i].evaluations > 0)) i += dir;
    for (int j = i + dir; i >= 0 && i < n && j >= 0 && j < n; j += dir)
        if (c[j].mse > 0 && c[j].evaluations != c[i].evaluations) {
            *a = i;
            *b = j;
            return true;
        }
    return false;
}

double vs_study_evals_at(const vs_study_point *c, int n, double m, bool *extrapolated)
{
    if (extrapolated) *extrapolated = false;
    if (!(m > 0)) return NAN;
    double hi = 0;
    for (int i = 0; i + 1 < n; i++) {
        double m0 = c[i].mse, m1 = c[i + 1].mse;
        if (!(m0 > 0 && m1 > 0)) continue;
        if ((m <= m0 && m >= m1) || (m >= m0 && m <= m1)) return exp(log_line(c + i, c + i + 1, m));
    }
    for (int i = 0; i < n; i++)
        if (c[i].mse > 0) hi = fmax(hi, c[i].mse);
    /* outside the curve's MSE range: the line through its end points on that side (MSE falling) */
    int a, b;
    if (!(hi > 0) || !end_segment(c, n, m > hi ? 1 : -1, &a, &b) || !(c[a].mse != c[b].mse)) return NAN;
    if ((c[b].mse - c[a].mse) * (c[b].evaluations - c[a].evaluations) >= 0) return NAN;
    if (extrapolated) *extrapolated = true;
    return exp(log_line(c + a, c + b, m));
}

double vs_evals_ratio(const vs_study_point *slow, int ns, const vs_study_point *fast, int nf, bool allow_extrapolation, int *extrapolated)
{
    double s = 0;
    int k = 0, x = 0;
    for (int i = 0; i < nf; i++) {
        bool ex;
        double e = vs_study_evals_at(slow, ns, fast[i].mse, &ex);
        if (isnan(e) || !(fast[i].evaluations > 0) || (ex && !allow_extrapolation)) continue;
        s += log(e) - log(fast[i].evaluations);
        k++;
        x += ex;
    }
    if (extrapolated) *extrapolated = x;
    return k ? exp(s / k) : NAN;
}
