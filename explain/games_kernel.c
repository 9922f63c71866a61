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
 * n + 1 - s, where each kernel takes the same per-coalition weight); while the draws left would be
 * expected to hit every coalition of both sizes (Kernel SHAP's rule) they are enumerated with weight
 * Lambda(s).  The rest of the budget samples the remaining sizes.  Kernel-Direct (stratified, the
 * default): each size gets its share of the distinct coalitions left in proportion to its kernel mass
 * C(n,s) Lambda(s) (a size whose share covers it is taken whole), filled with distinct uniform
 * coalitions of that size (drawn without replacement), each weighted C(n,s) Lambda(s) / k_s; this is
 * the paper's draw of s from p(s) with the size counts fixed at their expectations.  Leverage
 * sampling does the same with the sizes' shares of the fit's leverage scores (n + 1 - s for order 2,
 * equal for order 1: every coalition of a size has the same leverage, and the leverages of the
 * order-2 design sum to n + 1 - s over size s), which also decides the enumeration.  Unstratified
 * Kernel-Direct draws s from p(s), Kernel-Weighting a uniform coalition; a complement N \ S of a
 * sampled size is added to each draw when pairing is on.  There a sampled coalition of size s carries
 * the importance weight Lambda(s) / (expected copies of it), so both schemes estimate the same
 * weighted fit; a coalition drawn again adds to its weight without a new evaluation (draws go on
 * until the budget of distinct coalitions is spent). */
#include "explain/games_internal.h"
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
    o->pair_complements = false; /* measured: for order 2 pairing S with N \ S raises the MSE (the kernel is symmetric under s <-> n + 1 - s, not n - s) */
    o->enumerate_sizes = true;
    o->stratify = true;
}

double vs_kernel_weight(int order, int64_t n, int64_t s)
{
    double inner = order == 1 ? (double)s : (double)s * (double)(s - 1) / 2;
    if (s <= 0 || s >= n || inner <= 0) return INFINITY;
    return exp(log((double)(n - 1)) - log_choose(n, s) - log(inner) - log((double)(n - s)));
}

/* Mass of coalition size s under the scheme's proposal: the kernel's C(n,s) Lambda(s) (direct), the
 * leverage scores' n + 1 - s (order 2) or 1 (order 1) (leverage), C(n,s) (weighting). */
static double size_mass(const vs_kernel_opts *o, int64_t n, int64_t s)
{
    if (o->sampling == VS_KERNEL_LEVERAGE) return o->order == 2 ? (double)(n + 1 - s) : 1.0;
    return exp(log_choose(n, s) + (o->sampling == VS_KERNEL_WEIGHTING ? 0 : log(vs_kernel_weight(o->order, n, s))));
}

/* The mass that decides which sizes are enumerated: the proposal's for leverage sampling, the
 * kernel's otherwise (Kernel SHAP's rule). */
static double enumeration_mass(const vs_kernel_opts *o, int64_t n, int64_t s)
{
    return o->sampling == VS_KERNEL_LEVERAGE ? size_mass(o, n, s) : exp(log_choose(n, s) + log(vs_kernel_weight(o->order, n, s)));
}

/* Stratified Kernel-Direct or leverage sampling: the distinct coalitions left in the memo are shared among the sampled
 * sizes in proportion to q (largest remainders, at most C(n, s) each), and each size gets that many
 * distinct uniform coalitions (drawn without replacement), each weighted Lambda(s) C(n, s) / k_s. */
static void stratified(const vs_kernel_opts *o, vs_game_memo *m, const uint8_t *sampled, const double *q, double *w, uint8_t *z, int64_t *idx)
{
    const int64_t n = m->n, left = m->cap - m->count;
    int64_t *k = calloc((size_t)n + 1, sizeof *k);
    double *rem = calloc((size_t)n + 1, sizeof *rem);
    if (!k || !rem) {
        free(k);
        free(rem);
        return;
    }
    /* water-filling: sizes whose share exceeds their count are taken whole, the rest shared again */
    int64_t given = 0;
    for (bool again = true; again;) {
        again = false;
        double mass = 0;
        int64_t room = left;
        for (int64_t s = 0; s <= n; s++)
            if (sampled[s] && rem[s] >= 0) mass += q[s];
            else if (sampled[s]) room -= k[s];
        for (int64_t s = 0; s <= n && mass > 0; s++) {
            if (!sampled[s] || rem[s] < 0) continue;
            double share = (double)room * q[s] / mass, all = exp(log_choose(n, s));
            if (share >= all - 0.5) {
                k[s] = (int64_t)llround(all);
                rem[s] = -1;
                again = true;
            } else {
                k[s] = (int64_t)floor(share);
                rem[s] = share - (double)k[s];
            }
        }
    }
    for (int64_t s = 0; s <= n; s++) given += sampled[s] ? k[s] : 0;
    while (given < left) { /* largest remainders */
        int64_t best = -1;
        for (int64_t s = 0; s <= n; s++)
            if (sampled[s] && rem[s] >= 0 && (best < 0 || rem[s] > rem[best])) best = s;
        if (best < 0) break;
        k[best]++;
        rem[best] = -0.5;
        given++;
    }
    vs_rng r;
    vs_rng_seed(&r, o->seed);
    for (int64_t s = 0; s <= n; s++) {
        if (!sampled[s] || k[s] <= 0) continue;
        double lw = vs_kernel_weight(o->order, n, s) * exp(log_choose(n, s)) / (double)k[s];
        int64_t got = 0;
        for (int64_t tries = 0; got < k[s] && tries < 64 * k[s] + 1000; tries++) {
            vs_random_subset(&r, n, s, z, idx);
            bool added;
            int64_t at = vs_game_memo_add(m, z, &added);
            if (at < 0) break;
            if (!added) continue;
            w[at] = lw;
            got++;
        }
        if (got < k[s]) /* the memo or the draws ran out: the weights follow what was drawn */
            for (int64_t j = m->count - got; j < m->count; j++) w[j] *= (double)k[s] / (double)(got ? got : 1);
    }
    free(k);
    free(rem);
}

/* The fit's coalitions: memo indices with their weights (w [memo cap]; enumerated sizes Lambda(s),
 * sampled ones by draw counts), the exact constraints already in the memo. */
static vs_status choose_coalitions(const vs_kernel_opts *o, vs_game_memo *m, double *w, vs_error *err)
{
    const int order = o->order;
    const int64_t n = m->n, lo = order, hi = n - 1, mirror_sum = n + order - 1;
    uint8_t *sampled = calloc((size_t)n + 1, 1), *z = malloc((size_t)n);
    int64_t *idx = malloc((size_t)(n + 1) * sizeof *idx);
    double *q = calloc((size_t)n + 1, sizeof *q);
    if (!sampled || !z || !idx || !q) {
        free(sampled);
        free(z);
        free(idx);
        free(q);
        return vs_error_set(err, VS_ERR_NOMEM, "kernel estimator: out of memory");
    }
    double mass_left = 0;
    for (int64_t s = lo; s <= hi; s++) {
        sampled[s] = 1;
        mass_left += enumeration_mass(o, n, s);
    }
    for (int64_t s = lo; o->enumerate_sizes && 2 * s <= mirror_sum; s++) {
        /* as Kernel SHAP does: enumerate when the draws left would be expected to hit every
         * coalition of the two sizes at least once (and the budget covers them) */
        int64_t mi = mirror_sum - s;
        double count = exp(log_choose(n, s)) + (mi != s ? exp(log_choose(n, mi)) : 0), left = (double)(m->cap - m->count);
        double mass = enumeration_mass(o, n, s) + (mi != s ? enumeration_mass(o, n, mi) : 0);
        if (count > left + 0.5 || left * mass / mass_left < count * (1 - 1e-9)) break;
        mass_left -= mass;
        for (int pass = 0; pass < (mi != s ? 2 : 1); pass++) {
            int64_t size = pass ? mi : s;
            double lw = vs_kernel_weight(order, n, size);
            for (int64_t i = 0; i < size; i++) idx[i] = i;
            for (;;) {
                memset(z, 0, (size_t)n);
                for (int64_t i = 0; i < size; i++) z[idx[i]] = 1;
                w[vs_game_memo_add(m, z, NULL)] = lw;
                int64_t i = size - 1;
                while (i >= 0 && idx[i] == n - size + i) i--;
                if (i < 0) break;
                idx[i]++;
                for (int64_t k = i + 1; k < size; k++) idx[k] = idx[k - 1] + 1;
            }
        }
        sampled[s] = sampled[mi] = 0;
    }
    /* proposal over the sampled sizes: kernel mass (direct) or coalition count (weighting) */
    double tot = 0;
    for (int64_t s = lo; s <= hi; s++)
        if (sampled[s]) tot += q[s] = size_mass(o, n, s);
    int64_t first = m->count, draws = 0;
    if (tot > 0 && m->count < m->cap && o->stratify && o->sampling != VS_KERNEL_WEIGHTING && !o->pair_complements) {
        stratified(o, m, sampled, q, w, z, idx);
        tot = 0; /* the weights are set */
    }
    if (tot > 0 && m->count < m->cap) {
        for (int64_t s = lo; s <= hi; s++) q[s] /= tot;
        vs_rng r;
        vs_rng_seed(&r, o->seed);
        /* draw until the memo is full; a drawn coalition seen before costs nothing but counts again */
        for (int64_t max_draws = 100 * m->cap; draws < max_draws && m->count < m->cap; draws++) {
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
            int64_t k = vs_game_memo_add(m, z, NULL);
            if (k < 0) break;
            w[k] += 1;
            if (o->pair_complements && sampled[n - s]) {
                for (int64_t i = 0; i < n; i++) z[i] = !z[i];
                if ((k = vs_game_memo_add(m, z, NULL)) < 0) break;
                w[k] += 1;
            }
        }
    }
    /* importance weights: Lambda(s) / expected copies of one coalition of size s in all the draws */
    for (int64_t k = first; k < m->count && tot > 0; k++) {
        int64_t s = 0;
        for (int64_t i = 0; i < n; i++) s += m->z[k * n + i];
        double dens = (q[s] + (o->pair_complements && sampled[n - s] ? q[n - s] : 0)) * (double)(draws > 0 ? draws : 1);
        w[k] *= vs_kernel_weight(order, n, s) * exp(log_choose(n, s)) / dens;
    }
    free(sampled);
    free(z);
    free(idx);
    free(q);
    return VS_OK;
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
    if ((double)o->budget * (double)cols > 2e9)
        return vs_error_set(err, VS_ERR_ARG, "kernel estimator: %lld coalitions of %lld players is too large a system", (long long)o->budget,
                            (long long)n);
    vs_game_memo m;
    vs_status st = vs_game_memo_init(&m, g, o->budget, err);
    if (st != VS_OK) return st;
    double *w = calloc((size_t)o->budget, sizeof *w), *y = malloc((size_t)o->budget * sizeof *y), *beta = calloc((size_t)cols, sizeof *beta);
    uint8_t *in = malloc((size_t)(o->budget * (cols - 1))), *zp = malloc((size_t)cols), *e = calloc((size_t)n, 1);
    double *ww = malloc((size_t)o->budget * sizeof *ww);
    if (!w || !y || !beta || !in || !zp || !e || !ww) st = vs_error_set(err, VS_ERR_NOMEM, "kernel estimator: out of memory");
    /* the exact constraints first: empty (0), full (1), then (order 2) singletons (2 + i) */
    if (st == VS_OK) {
        vs_game_memo_add(&m, e, NULL);
        memset(e, 1, (size_t)n);
        vs_game_memo_add(&m, e, NULL);
        for (int64_t i = 0; order == 2 && i < n; i++) {
            memset(e, 0, (size_t)n);
            e[i] = 1;
            vs_game_memo_add(&m, e, NULL);
        }
        st = choose_coalitions(o, &m, w, err);
    }
    if (st == VS_OK) st = vs_game_memo_eval(&m, err);
    int64_t rows = 0;
    if (st == VS_OK) {
        const double v0 = m.v[0], v1 = m.v[1];
        double fsum = 0;
        if (order == 2)
            for (int64_t i = 0; i < n; i++) fsum += phi[i * n + i] = m.v[2 + i] - v0;
        const double total = v1 - v0 - fsum;
        for (int64_t k = n_exact; k < m.count; k++) {
            const uint8_t *z = m.z + k * n;
            double res = m.v[k] - v0;
            if (order == 1) {
                memcpy(zp, z, (size_t)n);
            } else {
                for (int64_t i = 0; i < n; i++) {
                    if (z[i]) res -= phi[i * n + i];
                    for (int64_t j = i + 1; j < n; j++) zp[vs_pair_rank(n, i, j)] = z[i] && z[j];
                }
            }
            uint8_t last = zp[cols - 1];
            y[rows] = last ? -(res - total) : res;
            ww[rows] = w[k];
            for (int64_t c = 0; c < cols - 1; c++) in[rows * (cols - 1) + c] = zp[c] != last;
            rows++;
        }
        st = rows > 0 ? vs_lstsq_sets(rows, cols - 1, in, ww, y, o->ridge, cols - 1, beta) : VS_ERR_NUMERIC;
        if (st == VS_ERR_NUMERIC) st = vs_error_set(err, VS_ERR_NUMERIC, "kernel estimator: singular system (raise the budget)");
        else if (st != VS_OK) st = vs_error_set(err, st, "kernel estimator: out of memory for the least-squares system");
    }
    if (st == VS_OK) {
        double s = 0;
        for (int64_t k = 0; k < cols - 1; k++) s += beta[k];
        if (order == 1) {
            memcpy(phi, beta, (size_t)(n - 1) * sizeof *phi);
            phi[n - 1] = (m.v[1] - m.v[0]) - s;
        } else {
            double fsum = 0;
            for (int64_t i = 0; i < n; i++) fsum += phi[i * n + i];
            beta[cols - 1] = (m.v[1] - m.v[0] - fsum) - s;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) phi[i * n + j] = phi[j * n + i] = beta[vs_pair_rank(n, i, j)] / 2;
        }
    }
    vs_game_memo_free(&m);
    free(w);
    free(y);
    free(beta);
    free(in);
    free(zp);
    free(e);
    free(ww);
    return st;
}
