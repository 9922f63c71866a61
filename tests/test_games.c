/* test_games.c - cooperative games (versus/games.h): dividends, Shapley values and Shapley-Taylor
 * indices against their brute-force definitions on random games; efficiency, symmetry and dummy;
 * Gray-code enumeration; the kernel estimators (exact when the budget covers every size, close when
 * sampled, both sampling schemes) and the permutation estimator. */
#include "vs_check.h"
#include "explain/lstsq.h"
#include "versus/explain.h"
#include "versus/games.h"
#include "versus/rng.h"

#include <math.h>

/* A random game on n players: v(S) uniform in [-1, 1], with player `dummy` (if >= 0) made a dummy
 * (v(S + dummy) = v(S)) and players 0 and 1 made symmetric when `sym`. */
static double *random_game(int n, uint64_t seed, int dummy, bool sym)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    uint32_t total = 1u << n;
    double *v = malloc(total * sizeof *v);
    for (uint32_t S = 0; S < total; S++) v[S] = 2 * vs_rng_uniform(&r) - 1;
    if (sym)
        for (uint32_t S = 0; S < total; S++)
            if ((S & 1) && !(S & 2)) v[S] = v[(S & ~1u) | 2u];
    if (dummy >= 0)
        for (uint32_t S = 0; S < total; S++)
            if (S >> dummy & 1) v[S] = v[S & ~(1u << dummy)];
    return v;
}

START_TEST(test_dividends_round_trip)
{
    const int n = 7;
    double *v = random_game(n, 1, -1, false), *d = malloc((1u << n) * sizeof *d);
    memcpy(d, v, (1u << n) * sizeof *d);
    vs_harsanyi_dividends(n, d);
    ck_assert_float_near(d[0], v[0], 1e-12);
    ck_assert_float_near(d[1], v[1] - v[0], 1e-12);
    ck_assert_float_near(d[3], v[3] - v[1] - v[2] + v[0], 1e-12);
    vs_harsanyi_values(n, d);
    for (uint32_t S = 0; S < (1u << n); S++) ck_assert_float_near(d[S], v[S], 1e-12);
    free(v);
    free(d);
}
END_TEST

START_TEST(test_shapley_and_taylor_vs_brute)
{
    const int n = 8, dummy = 5;
    double *v = random_game(n, 2, dummy, true), *d = malloc((1u << n) * sizeof *d), *out = malloc((1u << n) * sizeof *out);
    memcpy(d, v, (1u << n) * sizeof *d);
    vs_harsanyi_dividends(n, d);
    double phi[8], ref[8], legacy[8], eff = v[(1u << n) - 1] - v[0], sum = 0;
    vs_shapley_from_dividends(n, d, phi);
    vs_shapley_brute(n, v, ref);
    vs_shapley_from_values(n, v, legacy);
    for (int i = 0; i < n; i++) {
        ck_assert_float_near(phi[i], ref[i], 1e-12);
        ck_assert_float_near(phi[i], legacy[i], 1e-12);
        sum += phi[i];
    }
    ck_assert_float_near(sum, eff, 1e-12);          /* efficiency */
    ck_assert_float_near(phi[0], phi[1], 1e-12);    /* symmetry */
    ck_assert_float_near(phi[dummy], 0, 1e-12);     /* dummy */
    for (int k = 1; k <= 3; k++) {
        vs_shapley_taylor_from_dividends(n, d, k, out);
        double total = 0;
        for (uint32_t S = 0; S < (1u << n); S++) {
            int s = __builtin_popcount(S);
            total += out[S];
            if (s == k) ck_assert_float_near(out[S], vs_shapley_taylor_brute(n, v, S), 1e-10);
            if (s >= 1 && s < k) ck_assert_float_near(out[S], d[S], 1e-12);
            if (s >= 1 && (S >> dummy & 1)) ck_assert_float_near(out[S], 0, 1e-12);
        }
        ck_assert_float_near(total, eff, 1e-10);
        /* symmetry: the coalitions S + 0 and S + 1 (neither containing the other) */
        for (uint32_t S = 0; S < (1u << n); S += 4)
            if (__builtin_popcount(S) == k - 1) ck_assert_float_near(out[S | 1], out[S | 2], 1e-10);
    }
    /* the order-1 index is the Shapley value */
    vs_shapley_taylor_from_dividends(n, d, 1, out);
    for (int i = 0; i < n; i++) ck_assert_float_near(out[1u << i], phi[i], 1e-12);
    double m[64];
    vs_shapley_taylor2_matrix(n, d, m);
    vs_shapley_taylor_from_dividends(n, d, 2, out);
    sum = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            sum += m[i * n + j];
            ck_assert_float_near(m[i * n + j], i == j ? out[1u << i] : out[(1u << i) | (1u << j)] / 2, 1e-12);
        }
    ck_assert_float_near(sum, eff, 1e-10);
    free(v);
    free(d);
    free(out);
}
END_TEST

/* A game that checks consecutive coalitions differ in one player. */
typedef struct gray_check {
    int n;
    uint8_t prev[24];
    int64_t seen, bad;
} gray_check;

static vs_status gray_values(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err)
{
    (void)err;
    gray_check *g = ctx;
    for (int64_t r = 0; r < m; r++) {
        int flips = 0;
        double val = 0;
        for (int i = 0; i < g->n; i++) {
            flips += z[r * g->n + i] != g->prev[i];
            val += z[r * g->n + i] * (double)(i + 1) * (i + 1);
        }
        if (g->seen > 0 && flips != 1) g->bad++;
        memcpy(g->prev, z + r * g->n, (size_t)g->n);
        g->seen++;
        v[r] = val;
    }
    return VS_OK;
}

START_TEST(test_gray_enumeration)
{
    gray_check c = {.n = 11};
    vs_game g = {.n = 11, .values = gray_values, .ctx = &c, .batch = 37};
    double *v = malloc((1u << 11) * sizeof *v);
    ck_assert_int_eq(vs_game_enumerate(&g, v, NULL), VS_OK);
    ck_assert_int_eq(c.seen, 1 << 11);
    ck_assert_int_eq(g.evaluations, 1 << 11);
    ck_assert_int_eq(c.bad, 0);
    for (uint32_t S = 0; S < (1u << 11); S++) {
        double want = 0;
        for (int i = 0; i < 11; i++) want += (S >> i & 1) * (double)(i + 1) * (i + 1);
        ck_assert_float_near(v[S], want, 1e-12);
    }
    vs_game too_many = {.n = 25, .values = gray_values, .ctx = &c};
    ck_assert_int_eq(vs_game_enumerate(&too_many, v, NULL), VS_ERR_ARG);
    free(v);
}
END_TEST

/* Exact order-1 and order-2 values of the table game t. */
static void exact(const vs_table_game *t, double *phi, double *phi2)
{
    int n = t->n;
    double *d = malloc((1u << n) * sizeof *d);
    memcpy(d, t->v, (1u << n) * sizeof *d);
    vs_harsanyi_dividends(n, d);
    vs_shapley_from_dividends(n, d, phi);
    vs_shapley_taylor2_matrix(n, d, phi2);
    free(d);
}

static double max_err(int64_t n, const double *a, const double *b)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
    return e;
}

START_TEST(test_kernel_exact_with_full_budget)
{
    const int n = 9;
    double *v = random_game(n, 3, 4, true);
    vs_table_game t = {n, v};
    double phi[9], phi2[81], est[81];
    exact(&t, phi, phi2);
    for (int sampling = 0; sampling < 3; sampling++) {
        vs_kernel_opts o;
        vs_kernel_opts_init(&o);
        o.sampling = (vs_kernel_sampling)sampling;
        o.budget = 1 << n;
        o.order = 1;
        vs_game g = vs_table_game_make(&t);
        ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_OK);
        ck_assert_int_le(g.evaluations, o.budget);
        ck_assert_double_lt(max_err(n, est, phi), 1e-9);
        o.order = 2;
        g = vs_table_game_make(&t);
        ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_OK);
        ck_assert_int_le(g.evaluations, o.budget);
        ck_assert_double_lt(max_err(n * n, est, phi2), 1e-9);
    }
    free(v);
}
END_TEST

START_TEST(test_kernel_sampled)
{
    const int n = 12;
    double *v = random_game(n, 4, 7, false);
    vs_table_game t = {n, v};
    double phi[12], phi2[144], est[144];
    exact(&t, phi, phi2);
    double eff = v[(1u << n) - 1] - v[0];
    for (int sampling = 0; sampling < 3; sampling++)
        for (int variant = 0; variant < 4; variant++) {
            const bool enumerate = variant & 1, stratify = variant & 2;
            vs_kernel_opts o;
            vs_kernel_opts_init(&o);
            o.sampling = (vs_kernel_sampling)sampling;
            o.enumerate_sizes = enumerate;
            o.stratify = stratify;
            o.budget = 3000;
            o.seed = 11;
            vs_game g = vs_table_game_make(&t);
            ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_OK);
            ck_assert_int_le(g.evaluations, o.budget);
            /* stratified: every coalition drawn is distinct, so the budget is spent exactly */
            if (stratify && sampling != VS_KERNEL_WEIGHTING) ck_assert_int_eq(g.evaluations, o.budget);
            double s = 0;
            for (int k = 0; k < n * n; k++) s += est[k];
            ck_assert_float_near(s, eff, 1e-9); /* efficiency holds for any sample */
            for (int i = 0; i < n; i++) ck_assert_float_near(est[i * n + i], phi2[i * n + i], 1e-12);
            /* a random game has interactions of every order: the sampled estimate is near, not equal */
            ck_assert_double_lt(max_err(n * n, est, phi2), enumerate ? 0.05 : 0.3);
            /* deterministic for a seed */
            double again[144];
            g = vs_table_game_make(&t);
            ck_assert_int_eq(vs_game_kernel(&g, &o, again, NULL), VS_OK);
            ck_assert_double_eq(max_err(n * n, est, again), 0);
        }
    vs_kernel_opts o;
    vs_kernel_opts_init(&o);
    o.budget = 10;
    vs_game g = vs_table_game_make(&t);
    ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_ERR_ARG);
    o.order = 3;
    o.budget = 1000;
    ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_ERR_ARG);
    free(v);
}
END_TEST

/* v(S) = sum over pairs in S of c_ij + sum over singles of c_i: a game of order 2, where every
 * estimator's per-sample terms are exact. */
START_TEST(test_estimators_on_a_pairwise_game)
{
    const int n = 10;
    vs_rng r;
    vs_rng_seed(&r, 5);
    double *v = calloc(1u << n, sizeof *v), c[10][10];
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) c[i][j] = 4 * vs_rng_uniform(&r) - 2;
    for (uint32_t S = 0; S < (1u << n); S++)
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++)
                if ((S >> i & 1) && (S >> j & 1)) v[S] += c[i][j];
    vs_table_game t = {n, v};
    double phi[10], phi2[100], est[100];
    exact(&t, phi, phi2);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) ck_assert_float_near(phi2[i * n + j], i == j ? c[i][i] : c[i < j ? i : j][i < j ? j : i] / 2, 1e-12);
    vs_game g = vs_table_game_make(&t);
    ck_assert_int_eq(vs_game_permutation_st2(&g, 500, 3, VS_PERMUTATION_SHARED, est, NULL), VS_OK);
    ck_assert_int_le(g.evaluations, 500);
    ck_assert_double_lt(max_err(n * n, est, phi2), 1e-12);
    vs_kernel_opts o;
    vs_kernel_opts_init(&o);
    o.budget = 200;
    o.enumerate_sizes = false;
    g = vs_table_game_make(&t);
    ck_assert_int_eq(vs_game_kernel(&g, &o, est, NULL), VS_OK);
    ck_assert_double_lt(max_err(n * n, est, phi2), 1e-8);
    free(v);
}
END_TEST

START_TEST(test_permutation_converges)
{
    const int n = 8;
    double *v = random_game(n, 6, 2, false);
    vs_table_game t = {n, v};
    double phi[8], phi2[64], est[64];
    exact(&t, phi, phi2);
    vs_game g;
    for (int mode = 0; mode < 3; mode++) {
        g = vs_table_game_make(&t);
        const int64_t budget = 400000;
        ck_assert_int_eq(vs_game_permutation_st2(&g, budget, 9, (vs_permutation_mode)mode, est, NULL), VS_OK);
        /* memoised: every coalition evaluated once at most; uncached: the budget spent */
        if (mode != VS_PERMUTATION_PER_PAIR_UNCACHED) ck_assert_int_le(g.evaluations, 1u << n);
        else ck_assert(g.evaluations <= budget && g.evaluations > budget - 4 * 28 - 9);
        ck_assert_double_lt(max_err(n * n, est, phi2), 0.03);
        for (int j = 0; j < n; j++) ck_assert_float_near(est[2 * n + j], 0, 1e-12); /* dummy: every delta is 0 */
    }
    free(v);
}
END_TEST

/* The leverage scores of the order-2 fit (the constraint folded as the estimator folds it) sum to
 * n + 1 - s over the coalitions of size s: what VS_KERNEL_LEVERAGE samples by. */
START_TEST(test_leverage_by_size)
{
    for (int n = 5; n <= 8; n++) {
        const int P = n * (n - 1) / 2, C = P - 1, rows = (1 << n) - 2 - n;
        double *D = malloc((size_t)rows * C * sizeof *D), *w = malloc((size_t)rows * sizeof *w), *A = calloc((size_t)C * C, sizeof *A);
        double *x = calloc((size_t)C, sizeof *x), by_size[9] = {0};
        int *size = malloc((size_t)rows * sizeof *size), r = 0;
        for (uint32_t S = 0; S < (1u << n); S++) {
            int s = __builtin_popcount(S);
            if (s < 2 || s == n) continue;
            double last = (S >> (n - 2) & 1) && (S >> (n - 1) & 1);
            for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++) {
                    int64_t c = vs_pair_rank(n, i, j);
                    if (c < C) D[r * C + c] = ((S >> i & 1) && (S >> j & 1)) - last;
                }
            w[r] = vs_kernel_weight(2, n, s);
            size[r++] = s;
        }
        ck_assert_int_eq(r, rows);
        for (int k = 0; k < rows; k++)
            for (int a = 0; a < C; a++)
                for (int b = a; b < C; b++) A[a * C + b] += w[k] * D[k * C + a] * D[k * C + b];
        ck_assert(vs_spd_solve(C, A, x)); /* factors A in place (x is scratch) */
        for (int k = 0; k < rows; k++) {
            /* A is factored as U^T U: the leverage w d^T A^-1 d = w |U^-T d|^2 */
            for (int a = 0; a < C; a++) {
                double t = D[k * C + a];
                for (int b = 0; b < a; b++) t -= A[b * C + a] * x[b];
                x[a] = t / A[a * C + a];
            }
            double l = 0;
            for (int a = 0; a < C; a++) l += x[a] * x[a];
            by_size[size[k]] += w[k] * l;
        }
        for (int s = 2; s < n; s++) ck_assert_double_eq_tol(by_size[s], n + 1 - s, 1e-9);
        free(D);
        free(w);
        free(A);
        free(x);
        free(size);
    }
}
END_TEST

START_TEST(test_kernel_weights)
{
    ck_assert(isinf(vs_kernel_weight(2, 10, 1)));
    ck_assert(isinf(vs_kernel_weight(2, 10, 10)));
    ck_assert(isinf(vs_kernel_weight(1, 10, 0)));
    ck_assert(isfinite(vs_kernel_weight(1, 10, 1)));
    /* Eq. 7 at n = 15, s = 2: 14 / (105 * 1 * 13); symmetric under s <-> n + 1 - s */
    ck_assert_float_near(vs_kernel_weight(2, 15, 2), 14.0 / (105 * 13), 1e-15);
    for (int s = 2; s < 15; s++) ck_assert_float_near(vs_kernel_weight(2, 15, s), vs_kernel_weight(2, 15, 16 - s), 1e-15);
    ck_assert_int_eq(vs_pair_rank(5, 0, 1), 0);
    ck_assert_int_eq(vs_pair_rank(5, 3, 4), 9);
    ck_assert_int_eq(vs_pair_rank(5, 1, 2), 4);
}
END_TEST

START_TEST(test_convergence_study)
{
    /* at least one permutation (9 + 58) or round of pairs (9 + 4 * 28) is drawn; n = 8: a budget of 2^8 lets the kernel enumerate everything (MSE 0); the MSE falls with budget */
    const int64_t budgets[] = {60, 120, 256};
    vs_study_point out[VS_STUDY_ESTIMATORS * 3], per_game[9];
    for (int kind = VS_STUDY_MLP; kind <= VS_STUDY_MLP_SHALLOW; kind++) {
        for (int e = 0; e < VS_STUDY_ESTIMATORS; e++) {
            ck_assert_int_eq(vs_st2_convergence((vs_study_game)kind, 8, 3, 7, (vs_study_estimator)e, budgets, 3, out + e * 3, per_game, NULL), VS_OK);
            for (int b = 0; b < 3; b++) /* the mean of the games' own points */
                ck_assert_double_eq_tol((per_game[b].mse + per_game[3 + b].mse + per_game[6 + b].mse) / 3, out[e * 3 + b].mse, 1e-12 * (1 + out[e * 3 + b].mse));
            ck_assert_ptr_nonnull(vs_study_estimator_name((vs_study_estimator)e));
            for (int b = 0; b < 3; b++) ck_assert_double_le(out[e * 3 + b].evaluations, (double)(budgets[b] > 121 ? budgets[b] : 121) + 1e-9);
            if (e == VS_STUDY_PERMUTATION_UNCACHED) continue; /* 256 evaluations buy only two rounds: no fall in MSE to assert */
            ck_assert_double_lt(out[e * 3 + 2].mse, out[e * 3].mse);
        }
        ck_assert_double_lt(out[VS_STUDY_KERNEL_DIRECT * 3 + 2].mse, 1e-18 * (1 + out[VS_STUDY_KERNEL_DIRECT * 3].mse));
    }
    ck_assert_int_eq(vs_st2_convergence(VS_STUDY_MLP, 2, 3, 7, VS_STUDY_KERNEL_DIRECT, budgets, 3, out, NULL, NULL), VS_ERR_ARG);
    ck_assert_int_eq(vs_st2_convergence((vs_study_game)(VS_STUDY_MLP_SHALLOW + 1), 8, 3, 7, VS_STUDY_KERNEL_DIRECT, budgets, 3, out, NULL, NULL), VS_ERR_ARG);
    /* a curve needing 3x the evaluations of another for every MSE */
    vs_study_point fast[4] = {{100, 1}, {200, 0.5}, {400, 0.25}, {800, 0.125}}, slow[4];
    for (int i = 0; i < 4; i++) slow[i] = (vs_study_point){3 * fast[i].evaluations, fast[i].mse};
    int x = -1;
    ck_assert_float_near(vs_evals_ratio(slow, 4, fast, 4, true, &x), 3, 1e-9);
    ck_assert_int_eq(x, 0);
    /* a curve whose MSE is 1000 / evaluations, entirely above the fast one: read off its line beyond
     * its last point (10x everywhere), or nothing when extrapolation is not allowed */
    vs_study_point apart[2] = {{100, 10}, {200, 5}};
    ck_assert_float_near(vs_evals_ratio(apart, 2, fast, 4, true, &x), 10, 1e-9);
    ck_assert_int_eq(x, 4);
    ck_assert(isnan(vs_evals_ratio(apart, 2, fast, 4, false, &x)));
    /* below its first point: the line through its first two of distinct evaluations (200 for MSE 5) */
    vs_study_point low[3] = {{1000, 1}, {1000, 1.1}, {2000, 0.5}};
    bool ex = false;
    ck_assert_float_near(vs_study_evals_at(low, 3, 5, &ex), 200, 1e-9);
    ck_assert(ex);
    ck_assert_float_near(vs_study_evals_at(low, 3, 0.75, &ex), 1000 * pow(2, log(0.75 / 1.1) / log(0.5 / 1.1)), 1e-6);
    ck_assert(!ex);
    /* a curve that does not fall gives no line to read */
    vs_study_point flat[2] = {{100, 1}, {200, 2}};
    ck_assert(isnan(vs_study_evals_at(flat, 2, 0.1, &ex)));
}
END_TEST

START_TEST(test_uncached_mse_falls_as_one_over_evaluations)
{
    /* the uncached per-pair estimator averages independent draws: its MSE is the draws' variance over
     * their number, so 4x the evaluations (past the singletons) divide it by 4: the law the study's
     * extrapolation of this curve rests on */
    const int64_t budgets[] = {9 + 4 * 28 * 8, 9 + 4 * 28 * 32};
    vs_study_point out[2];
    ck_assert_int_eq(vs_st2_convergence(VS_STUDY_MLP, 8, 40, 11, VS_STUDY_PERMUTATION_UNCACHED, budgets, 2, out, NULL, NULL), VS_OK);
    ck_assert_double_eq_tol(out[0].evaluations, (double)budgets[0], 1e-9);
    ck_assert_double_eq_tol(out[1].evaluations, (double)budgets[1], 1e-9);
    ck_assert_double_eq_tol(out[0].mse / out[1].mse, 4, 0.6);
}
END_TEST

static Suite *games_suite(void)
{
    Suite *s = suite_create("games");
    TCase *tc = vs_tcase(s, "exact", 60);
    tcase_add_test(tc, test_dividends_round_trip);
    tcase_add_test(tc, test_shapley_and_taylor_vs_brute);
    tcase_add_test(tc, test_gray_enumeration);
    tcase_add_test(tc, test_kernel_weights);
    tcase_add_test(tc, test_leverage_by_size);
    tc = vs_tcase(s, "estimators", 120);
    tcase_add_test(tc, test_kernel_exact_with_full_budget);
    tcase_add_test(tc, test_kernel_sampled);
    tcase_add_test(tc, test_estimators_on_a_pairwise_game);
    tcase_add_test(tc, test_permutation_converges);
    tcase_add_test(tc, test_convergence_study);
    tcase_add_test(tc, test_uncached_mse_falls_as_one_over_evaluations);
    return s;
}

VS_TEST_MAIN(games_suite)
