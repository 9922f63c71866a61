/* versus/games.h - cooperative games and their fair credit assignments, model-agnostic: Harsanyi
 * dividends, Shapley values and Shapley-Taylor indices, exact (enumeration in Gray-code order) and
 * estimated (Kernel SHAP's weighted regression, its second-order kernel of Hamilton et al. 2022,
 * Eq. 7, and Sundararajan et al.'s permutation estimator).  The games of similarity search (value
 * functions over a query/retrieved pair, Eqs. 2 and 6) are built in versus/search.h.
 *
 * Players are 0..n-1; a coalition is a row of n bytes (1 = the player is present) or, for n <= 30, a
 * bit mask (bit i = player i).  Arrays indexed by mask have 2^n entries.
 *
 * Storage of second-order results (every function below that returns pairs): a dense symmetric
 * matrix phi2 [n, n], row-major: phi2[i*n + i] holds the first-order term of player i and the
 * index of the pair {i, j} (i != j) is split in halves, phi2[i*n + j] = phi2[j*n + i] = phi/2, so
 * that the whole matrix sums to v(N) - v(empty) (efficiency) exactly as Integrated Hessians' [F, F]
 * interactions do; the pair's index is phi2[i*n + j] + phi2[j*n + i].  vs_pair_rank gives the
 * position of a pair in the packed upper triangle used internally by the estimators.
 *
 * Ownership: every array is the caller's; games hold no memory of their own (their ctx is the
 * caller's). */
#ifndef VERSUS_GAMES_H
#define VERSUS_GAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A game: v(S) for m coalitions z [m, n] (bytes) into v[m].  Consecutive rows of one call are
 * often one player apart (Gray code), so a game may compose each row from the previous one. */
typedef vs_status (*vs_game_values_fn)(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err);

typedef struct vs_game {
    int64_t n;                 /* players */
    vs_game_values_fn values;
    void *ctx;
    int64_t evaluations;       /* coalitions passed to values so far (the estimators' cost) */
    int batch;                 /* coalitions per call (0: 256) */
} vs_game;

/* ---- exact --------------------------------------------------------------------------------------- */

/* v[mask] for all 2^n coalitions (n <= 24), visited in Gray-code order (one player flips per row). */
vs_status vs_game_enumerate(vs_game *g, double *v, vs_error *err);

/* In place: v[2^n] -> Harsanyi dividends d(S) = sum_{T subset S} (-1)^{|S|-|T|} v(T) (Eq. 4; d(empty)
 * = v(empty)), by the fast Moebius transform, n 2^(n-1) subtractions. */
void vs_harsanyi_dividends(int n, double *v);
/* In place: the inverse, dividends -> v(S) = sum_{T subset S} d(T). */
void vs_harsanyi_values(int n, double *d);

/* phi[i] = sum_{T contains i} d(T) / |T| (Shapley values from dividends d[2^n]). */
void vs_shapley_from_dividends(int n, const double *d, double *phi);

/* Order-k Shapley-Taylor indices (Eq. 5) for every coalition, by mask: out[S] = d(S) for |S| < k,
 * out[S] = sum_{T superset S} d(T) / C(|T|, k) for |S| = k, 0 above k (and out[empty] = 0).  One
 * superset-sum transform, n 2^(n-1) additions.  sum_S out[S] = v(N) - v(empty). */
void vs_shapley_taylor_from_dividends(int n, const double *d, int k, double *out);

/* Order-2 indices as the dense matrix phi2 [n, n] described above, from dividends. */
void vs_shapley_taylor2_matrix(int n, const double *d, double *phi2);

/* Brute force references for the tests: phi[i] by Eq. 1 over all subsets, and the order-k index of
 * one coalition S (|S| = k) by Sundararajan et al.'s discrete-derivative definition
 * k/n sum_{T subset N\S} delta_S v(T) / C(n-1, |T|). */
void vs_shapley_brute(int n, const double *v, double *phi);
double vs_shapley_taylor_brute(int n, const double *v, uint32_t S);

/* ---- estimated ----------------------------------------------------------------------------------- */

typedef enum vs_kernel_sampling {
    VS_KERNEL_DIRECT,     /* size s drawn from p(s) ~ total kernel mass of size s, then a uniform coalition */
    VS_KERNEL_WEIGHTING,  /* a uniform coalition (of the finite-weight sizes), weighted by the kernel */
    VS_KERNEL_LEVERAGE    /* size s by its leverage in the weighted fit, n + 1 - s (order 2; order 1: uniform,
                             Musco & Witter 2024), then a uniform coalition, weighted by the kernel */
} vs_kernel_sampling;

typedef struct vs_kernel_opts {
    int order;                   /* 1: Shapley values (Kernel SHAP), 2: Shapley-Taylor indices (Eq. 7) */
    int64_t budget;              /* evaluations of v, including the exact constraint coalitions */
    vs_kernel_sampling sampling;
    bool pair_complements;       /* sample S and N \ S together */
    bool enumerate_sizes;        /* every coalition of a size (and its complement size) while the budget covers it */
    bool stratify;               /* Kernel-Direct or leverage without pairing: each sampled size gets its expected share of the
                                    budget (not a random count), its coalitions drawn without replacement */
    double ridge;                /* L2 penalty on the fitted terms (0: none; LIME-style fits use > 0) */
    uint64_t seed;
} vs_kernel_opts;
void vs_kernel_opts_init(vs_kernel_opts *o); /* order 2, budget 2000, direct, enumeration and stratification on, pairing off */

/* The kernel of order k at coalition size s of n players: order 1 (n-1) / (C(n,s) s (n-s)), order 2
 * Lambda(s) = (n-1) / (C(n,s) C(s,2) (n-s)) (Eq. 7); INFINITY where a factor of the denominator is 0
 * (those coalitions are exact constraints: v(empty), v(N), and for order 2 every singleton). */
double vs_kernel_weight(int order, int64_t n, int64_t s);

/* Kernel estimate.  Order 1: phi[n] Shapley values, sum = v(N) - v(empty) exactly.  Order 2:
 * phi [n * n] the matrix above; singletons exact (v({i}) - v(empty)), pairs fitted by weighted
 * least squares over the sampled coalitions with the efficiency sum as an exact constraint.
 * n >= 2 (order 2: n >= 3); the budget must cover the constraints (order 1: 2, order 2: n + 2).
 * Deterministic for a seed; g->evaluations grows by at most the budget. */
vs_status vs_game_kernel(vs_game *g, const vs_kernel_opts *o, double *phi, vs_error *err);

/* Sundararajan et al. (2020)'s permutation estimator of order-2 Shapley-Taylor indices: for random
 * permutations pi, every pair {i, j} takes delta_ij v(T) = v(T+i+j) - v(T+i) - v(T+j) + v(T), T the
 * players before the first of i, j; singletons exact.  phi [n, n].  Modes:
 *   SHARED: one permutation serves every pair (its prefixes are shared; at most n^2 - n + 2
 *     coalitions each); permutations are drawn until the next would pass the budget of distinct
 *     coalitions (a coalition seen before is not evaluated again) or as many have been drawn as the
 *     budget would buy without the memo; at least one.
 *   PER_PAIR: every pair draws its own T from the same distribution, in rounds over the pairs, and
 *     its four coalitions, memoised and stopped like SHARED; at least one round.
 *   PER_PAIR_UNCACHED: the same draws, every coalition evaluated (four per draw): the baseline as
 *     Hamilton et al. describe it ("estimating each interaction term separately"). */
typedef enum vs_permutation_mode { VS_PERMUTATION_SHARED, VS_PERMUTATION_PER_PAIR, VS_PERMUTATION_PER_PAIR_UNCACHED } vs_permutation_mode;
vs_status vs_game_permutation_st2(vs_game *g, int64_t budget, uint64_t seed, vs_permutation_mode mode, double *phi, vs_error *err);

/* LIME on the game's players: `samples` uniform random coalitions weighted by exp(-D^2 / width^2),
 * D = 1 - sqrt(|S| / n) (cosine distance to the full coalition), a ridge fit of v with a free
 * intercept and linear terms (order 1, phi [n]) or linear and pair terms (order 2, phi [n, n] of
 * versus/games.h).  Seeded. */
vs_status vs_game_lime(vs_game *g, int order, int64_t samples, double width, double ridge, uint64_t seed, double *phi,
                       vs_error *err);

/* Index of the pair {i, j}, i < j < n, in the packed upper triangle: i (2n - i - 1) / 2 + j - i - 1. */
static inline int64_t vs_pair_rank(int64_t n, int64_t i, int64_t j) { return i * (2 * n - i - 1) / 2 + j - i - 1; }

/* ---- games for tests and studies ----------------------------------------------------------------- */

/* A game given by all its values v[2^n] (the caller's array, kept). */
typedef struct vs_table_game {
    int n;
    const double *v;
} vs_table_game;
vs_game vs_table_game_make(vs_table_game *t);

/* The convergence study (Hamilton et al. 2022, Figs. 5 and 10). */
typedef enum vs_study_game {
    VS_STUDY_MLP,        /* f(x masked by S, zeros elsewhere), f a 3-layer ReLU net n-20-20-1, Glorot-uniform weights, zero biases, x ~ N(0, I) */
    VS_STUDY_PRODUCT,    /* v(S) = sum_{T subset S} c_T, c_T ~ U(0, 10): every product of Boolean inputs */
    /* other readings of the ReLU networks (Hamilton et al. A.2 leaves them open), one change each: */
    VS_STUDY_MLP_BIASED,  /* biases uniform in +-1/sqrt(fan_in) (PyTorch's nn.Linear default) */
    VS_STUDY_MLP_NORMAL,  /* Glorot-normal weights (the same variance, 2 / (fan_in + fan_out)) */
    VS_STUDY_MLP_BOOLEAN, /* x = 1: v(S) = f(the indicator vector of S) */
    VS_STUDY_MLP_SHALLOW  /* one hidden layer of 20: n-20-1 */
} vs_study_game;
typedef enum vs_study_estimator {
    VS_STUDY_KERNEL_DIRECT, VS_STUDY_KERNEL_WEIGHTING, VS_STUDY_KERNEL_LEVERAGE,
    VS_STUDY_PERMUTATION,         /* one permutation serves every pair, coalitions memoised */
    VS_STUDY_PERMUTATION_PER_PAIR, /* every pair sampled on its own, coalitions memoised */
    VS_STUDY_PERMUTATION_UNCACHED, /* every pair sampled on its own, every coalition evaluated */
    VS_STUDY_ESTIMATORS
} vs_study_estimator;
/* "kernel-direct", "kernel-weighting", "kernel-leverage", "permutation", "permutation-per-pair", "permutation-uncached" */
const char *vs_study_estimator_name(vs_study_estimator e);
typedef struct vs_study_point {
    double evaluations;  /* mean evaluations of v spent */
    double mse;          /* mean over games of mean_{i<j} (estimate - exact)^2 of the pair indices */
} vs_study_point;
/* For `games` random games of the kind on n <= 20 players (the same games for every estimator:
 * they come from the seed), estimator e at each budget: out[b] (nb points), and when per_game is
 * not NULL each game's own points, per_game[g * nb + b].  The singletons are exact in every
 * estimator, so the MSE over all order-2 indices (pairs and singletons) is the pairs' MSE times
 * C(n, 2) / (C(n, 2) + n).  Deterministic. */
vs_status vs_st2_convergence(vs_study_game kind, int n, int games, uint64_t seed, vs_study_estimator e, const int64_t *budgets, int nb,
                             vs_study_point *out, vs_study_point *per_game, vs_error *err);
/* Evaluations the slow curve [ns points, increasing evaluations] needs for MSE m: log-log
 * interpolation between its neighbouring points; beyond its ends, the log-log line through its two
 * first (last) points of distinct evaluations, *extrapolated set (NULL allowed).  NAN without two
 * such points. */
double vs_study_evals_at(const vs_study_point *slow, int ns, double m, bool *extrapolated);
/* Evaluations the slow curve needs over those the fast one needs for the same MSE, the geometric
 * mean over every point of the fast curve: exp(mean_i log(vs_study_evals_at(slow, fast[i].mse) /
 * fast[i].evaluations)).  *extrapolated (NULL allowed) counts the points read off the slow curve's
 * extrapolated ends; with allow_extrapolation false those points are left out instead (NAN when no
 * point is left). */
double vs_evals_ratio(const vs_study_point *slow, int ns, const vs_study_point *fast, int nf, bool allow_extrapolation, int *extrapolated);

#ifdef __cplusplus
}
#endif
#endif
