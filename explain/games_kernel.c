/* games_kernel.c - kernel estimators of Shapley values (order 1, Lundberg & Lee 2017) and of
 * second-order Shapley-Taylor indices (order 2, the kernel of Hamilton et al. 2022, Eq. 7) for any
 * game: a weighted least-squares fit of v over coalitions with the infinite-weight coalitions as
 * exact constraints.
 *
 * Order 1 fits v(S) - v(empty) = sum_{i in S} phi_i with sum phi = v(N) - v(empty).  Order 2 takes
 * the singletons exactly (phi_i = v({i}) - v(empty): the kernel is infinite at |S| = 1) and fits
 * v(S) - v(empty) - sum_{i in S} phi_i = sum_{i<j in S} phi_ij with sum phi_ij fixed by v(N).  The
 * constraint removes the last column (explain/lstsq.h folds the signs).
 *
 * Coalitions: sizes are visited from the outside in, s with its mirror (order 1: n - s, order 2:
 * n + 1 - s, where each kernel takes the same per-coalition weight); while the budget left covers
 * every coalition of both sizes they are enumerated with weight Lambda(s).  The rest of the budget
 * samples the remaining sizes: Kernel-Direct draws s with probability proportional to its kernel
 * mass C(n,s) Lambda(s), Kernel-Weighting a uniform coalition; a complement N \ S of a sampled size is
 * added to each draw when pairing is on.  A sampled coalition of size s carries the importance
 * weight Lambda(s) / (expected copies of it), so both schemes estimate the same weighted fit. */
#include "explain/internal.h"
#include "explain/lstsq.h"
#include "versus/games.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_kernel_opts_init(vs_kernel_opts *o)
{
    memset(o, 0, sizeof *o);
    o->order = 2;
    o->budget = 2000;
    o->sampling = VS_KERNEL_DIRECT;
    o->pair_complements = true;
    o->enumerate_sizes = true;
}

static double log_choose(int64_t n, int64_t k) { return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma((double)(n - k) + 1.0); }

double vs_kernel_weight(int order, int64_t n, int64_t s)
{
    double inner = order == 1 ? (double)s : (double)s * (double)(s - 1) / 2;
    if (s <= 0 || s >= n || inner <= 0) return INFINITY;
    return exp(log((double)(n - 1)) - log_choose(n, s) - log(inner) - log((double)(n - s)));
}

/* Coalitions collected for the fit: rows of n bytes, their weights; values come later. */
typedef struct coalitions {
    int64_t n, rows, cap;
    uint8_t *z;
    double *w;
} coalitions;

static bool push(coalitions *c, const uint8_t *z, double w)
{
    if (c->rows == c->cap) return false;
    memcpy(c->z + c->rows * c->n, z, (size_t)c->n);
    c->w[c->rows++] = w;
    return true;
}

/* Every coalition of size s, weight w each (lexicographic combinations). */
static void push_all_of_size(coalitions *c, int64_t s, double w, int64_t *idx, uint8_t *z)
{
    const int64_t n = c->n;
    for (int64_t i = 0; i < s; i++) idx[i] = i;
    for (;;) {
        memset(z, 0, (size_t)n);
        for (int64_t i = 0; i < s; i++) z[idx[i]] = 1;
        push(c, z, w);
        int64_t i = s - 1;
        while (i >= 0 && idx[i] == n - s + i) i--;
        if (i < 0) return;
        idx[i]++;
        for (int64_t k = i + 1; k < s; k++) idx[k] = idx[k - 1] + 1;
    }
}

/* The fit's coalitions (exact constraints excluded) into c; c->cap = the budget for them. */
static void choose_coalitions(const vs_kernel_opts *o, int64_t n, coalitions *c)
{
    const int order = o->order;
    const int64_t lo = order, hi = n - 1, mirror_sum = n + order - 1;
    uint8_t *sampled = calloc((size_t)n + 1, 1), *z = malloc((size_t)n);
    int64_t *idx = malloc((size_t)(n + 1) * sizeof *idx);
    double *q = calloc((size_t)n + 1, sizeof *q);
    if (!sampled || !z || !idx || !q) goto done;
    for (int64_t s = lo; s <= hi; s++) sampled[s] = 1;
    for (int64_t s = lo; o->enumerate_sizes && 2 * s <= mirror_sum; s++) {
        int64_t m = mirror_sum - s;
        double count = exp(log_choose(n, s)) + (m != s ? exp(log_choose(n, m)) : 0);
        if (count > (double)(c->cap - c->rows) + 0.5) break;
        push_all_of_size(c, s, vs_kernel_weight(order, n, s), idx, z);
        if (m != s) push_all_of_size(c, m, vs_kernel_weight(order, n, m), idx, z);
        sampled[s] = sampled[m] = 0;
    }
    /* proposal over the sampled sizes: kernel mass (direct) or coalition count (weighting) */
    double tot = 0;
    for (int64_t s = lo; s <= hi; s++)
        if (sampled[s]) tot += q[s] = exp(log_choose(n, s) + (o->sampling == VS_KERNEL_DIRECT ? log(vs_kernel_weight(order, n, s)) : 0));
    if (tot <= 0 || c->rows >= c->cap) goto done;
    for (int64_t s = lo; s <= hi; s++) q[s] /= tot;
    vs_rng r;
    vs_rng_seed(&r, o->seed);
    int64_t left = c->cap - c->rows, per_draw = o->pair_complements ? 2 : 1;
    int64_t draws = left / per_draw > 0 ? left / per_draw : 1;
    int64_t first = c->rows;
    for (int64_t d = 0; d < draws && c->rows < c->cap; d++) {
        double u = vs_rng_uniform(&r), acc = 0;
        int64_t s = hi;
        for (int64_t t = lo; t <= hi; t++) {
            if (!sampled[t]) continue;
            acc += q[t];
            if (u < acc) {
                s = t;
                break;
            }
        }
        while (!sampled[s]) s--; /* rounding at the top end */
        vs_random_subset(&r, n, s, z, idx);
        push(c, z, (double)s); /* the size, until the weights are known */
        if (o->pair_complements && sampled[n - s] && c->rows < c->cap) {
            for (int64_t i = 0; i < n; i++) z[i] = !z[i];
            push(c, z, (double)(n - s));
        }
    }
    /* importance weights: Lambda(s) / expected copies of one coalition of size s over all draws */
    for (int64_t r0 = first; r0 < c->rows; r0++) {
        int64_t s = (int64_t)c->w[r0];
        double dens = q[s] + (o->pair_complements && sampled[n - s] ? q[n - s] : 0);
        c->w[r0] = vs_kernel_weight(order, n, s) * exp(log_choose(n, s)) / (dens * (double)draws);
    }
done:
    free(sampled);
    free(z);
    free(idx);
    free(q);
}

vs_status vs_game_kernel(vs_game *g, const vs_kernel_opts *o, double *phi, vs_error *err)
{
    const int64_t n = g->n;
    const int order = o->order;
    if (order != 1 && order != 2) return vs_error_set(err, VS_ERR_ARG, "kernel estimator: order must be 1 or 2, not %d", order);
    if (n < order + 1) return vs_error_set(err, VS_ERR_ARG, "kernel estimator of order %d needs at least %d players", order, order + 1);
    const int64_t n_exact = order == 1 ? 2 : n + 2, cols = order == 1 ? n : n * (n - 1) / 2;
    if (o->budget < n_exact + 1)
        return vs_error_set(err, VS_ERR_ARG, "kernel estimator of order %d on %lld players needs a budget above %lld evaluations", order,
                            (long long)n, (long long)n_exact);
    coalitions c = {.n = n, .cap = o->budget - n_exact};
    if ((double)(c.cap + n_exact) * (double)n > 1e9 || (double)c.cap * (double)cols > 2e9)
        return vs_error_set(err, VS_ERR_ARG, "kernel estimator: %lld coalitions of %lld players is too large a system", (long long)c.cap,
                            (long long)n);
    c.z = calloc((size_t)((c.cap + n_exact) * n), 1);
    c.w = malloc((size_t)(c.cap + n_exact) * sizeof *c.w);
    double *v = malloc((size_t)(c.cap + n_exact) * sizeof *v), *y = NULL, *beta = NULL;
    uint8_t *in = NULL, *zp = malloc((size_t)cols);
    vs_status st = c.z && c.w && v && zp ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "kernel estimator: out of memory");
    if (st == VS_OK) choose_coalitions(o, n, &c);
    const int64_t rows = c.rows;
    if (st == VS_OK && rows < 1) st = vs_error_set(err, VS_ERR_NOMEM, "kernel estimator: out of memory");
    if (st == VS_OK) {
        /* the exact constraints after the fitted rows: empty, full, then (order 2) singletons */
        uint8_t *e = c.z + rows * n;
        memset(e + n, 1, (size_t)n);
        for (int64_t i = 0; order == 2 && i < n; i++) e[(2 + i) * n + i] = 1;
        int64_t total = rows + n_exact, B = g->batch > 0 ? g->batch : 256;
        for (int64_t r0 = 0; r0 < total && st == VS_OK; r0 += B) {
            int64_t m = total - r0 < B ? total - r0 : B;
            st = g->values(g->ctx, m, c.z + r0 * n, v + r0, err);
            g->evaluations += m;
        }
    }
    if (st == VS_OK) {
        in = malloc((size_t)(rows * (cols - 1)));
        y = malloc((size_t)rows * sizeof *y);
        beta = calloc((size_t)cols, sizeof *beta);
        if (!in || !y || !beta) st = vs_error_set(err, VS_ERR_NOMEM, "kernel estimator: out of memory");
    }
    if (st == VS_OK) {
        const double v0 = v[rows], v1 = v[rows + 1];
        double *first = phi; /* order 2: the diagonal, read back below */
        double fsum = 0;
        if (order == 2)
            for (int64_t i = 0; i < n; i++) fsum += first[i * n + i] = v[rows + 2 + i] - v0;
        const double total = v1 - v0 - fsum;
        for (int64_t r = 0; r < rows; r++) {
            const uint8_t *z = c.z + r * n;
            double res = v[r] - v0;
            if (order == 1) {
                memcpy(zp, z, (size_t)n);
            } else {
                for (int64_t i = 0; i < n; i++) {
                    if (z[i]) res -= first[i * n + i];
                    for (int64_t j = i + 1; j < n; j++) zp[vs_pair_rank(n, i, j)] = z[i] && z[j];
                }
            }
            uint8_t last = zp[cols - 1];
            y[r] = last ? -(res - total) : res;
            for (int64_t k = 0; k < cols - 1; k++) in[r * (cols - 1) + k] = zp[k] != last;
        }
        st = vs_lstsq_sets(rows, cols - 1, in, c.w, y, o->ridge, cols - 1, beta);
        if (st == VS_ERR_NUMERIC) st = vs_error_set(err, VS_ERR_NUMERIC, "kernel estimator: singular system (raise the budget)");
        else if (st != VS_OK) st = vs_error_set(err, st, "kernel estimator: out of memory for the least-squares system");
    }
    if (st == VS_OK) {
        double s = 0;
        for (int64_t k = 0; k < cols - 1; k++) s += beta[k];
        if (order == 1) {
            memcpy(phi, beta, (size_t)(n - 1) * sizeof *phi);
            phi[n - 1] = (v[rows + 1] - v[rows]) - s;
        } else {
            double fsum = 0;
            for (int64_t i = 0; i < n; i++) fsum += phi[i * n + i];
            beta[cols - 1] = (v[rows + 1] - v[rows] - fsum) - s;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) phi[i * n + j] = phi[j * n + i] = beta[vs_pair_rank(n, i, j)] / 2;
        }
    }
    free(c.z);
    free(c.w);
    free(v);
    free(y);
    free(beta);
    free(in);
    free(zp);
    return st;
}
