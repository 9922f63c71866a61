/* games_permutation.c - Sundararajan et al. (2020)'s permutation estimator of order-2
 * Shapley-Taylor indices, the baseline of the kernel estimator (games_kernel.c).
 *
 * The index of a pair S = {i, j} is the expectation over uniform permutations pi of
 * delta_S v(T) = v(T + i + j) - v(T + i) - v(T + j) + v(T), T = the players before the first of
 * i, j in pi (P(T) = 2 t! (n - t - 1)! / n!, Sundararajan et al.'s weight).  One permutation serves
 * every pair: with p_a = pi(a) and prefixes P_a, the pair {p_a, p_b} (a < b) needs v(P_a), v(P_a+1),
 * v(P_a + p_b) and v(P_a+1 + p_b) (a prefix again when b = a + 1): n^2 - n + 2 evaluations. */
#include "explain/internal.h"
#include "versus/games.h"

#include <stdlib.h>
#include <string.h>

vs_status vs_game_permutation_st2(vs_game *g, int64_t budget, uint64_t seed, double *phi, vs_error *err)
{
    const int64_t n = g->n;
    if (n < 2) return vs_error_set(err, VS_ERR_ARG, "permutation estimator needs at least 2 players");
    const int64_t per = n * n - n + 2, pairs = n * (n - 1) / 2;
    int64_t perms = (budget - n - 1) / per;
    if (perms < 1) perms = 1;
    /* rows: [0, n] prefixes, then A(a, b) = P_a + p_b for each pair, then B(a, b) = P_a+1 + p_b, b > a + 1 */
    const int64_t rows = per;
    uint8_t *z = calloc((size_t)(rows * n), 1), *single = calloc((size_t)((n + 1) * n), 1);
    double *v = malloc((size_t)rows * sizeof *v), *sum = calloc((size_t)pairs, sizeof *sum), *v1 = malloc((size_t)(n + 1) * sizeof *v1);
    size_t *pi = malloc((size_t)n * sizeof *pi);
    vs_status st = z && single && v && sum && v1 && pi ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "permutation estimator: out of memory");
    int64_t B = g->batch > 0 ? g->batch : 256;
    /* singletons exactly: v(empty), v({i}) */
    for (int64_t i = 0; i < n && st == VS_OK; i++) single[(i + 1) * n + i] = 1;
    for (int64_t r0 = 0; r0 < n + 1 && st == VS_OK; r0 += B) {
        int64_t m = n + 1 - r0 < B ? n + 1 - r0 : B;
        st = g->values(g->ctx, m, single + r0 * n, v1 + r0, err);
        g->evaluations += m;
    }
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int64_t p = 0; p < perms && st == VS_OK; p++) {
        for (int64_t i = 0; i < n; i++) pi[i] = (size_t)i;
        vs_rng_shuffle(&r, pi, (size_t)n);
        memset(z, 0, (size_t)(rows * n));
        for (int64_t a = 1; a <= n; a++) {
            memcpy(z + a * n, z + (a - 1) * n, (size_t)n);
            z[a * n + pi[a - 1]] = 1;
        }
        int64_t row = n + 1;
        for (int64_t a = 0; a < n; a++)
            for (int64_t b = a + 1; b < n; b++) {
                memcpy(z + row * n, z + a * n, (size_t)n);
                z[row++ * n + pi[b]] = 1;
            }
        for (int64_t a = 0; a < n; a++)
            for (int64_t b = a + 2; b < n; b++) {
                memcpy(z + row * n, z + (a + 1) * n, (size_t)n);
                z[row++ * n + pi[b]] = 1;
            }
        for (int64_t r0 = 0; r0 < rows && st == VS_OK; r0 += B) {
            int64_t m = rows - r0 < B ? rows - r0 : B;
            st = g->values(g->ctx, m, z + r0 * n, v + r0, err);
            g->evaluations += m;
        }
        int64_t ra = n + 1, rb = n + 1 + pairs;
        for (int64_t a = 0; a < n && st == VS_OK; a++)
            for (int64_t b = a + 1; b < n; b++) {
                double with_a = v[a + 1], with_b = v[ra++], both = b == a + 1 ? v[a + 2] : v[rb++];
                int64_t i = (int64_t)pi[a], j = (int64_t)pi[b];
                sum[i < j ? vs_pair_rank(n, i, j) : vs_pair_rank(n, j, i)] += both - with_a - with_b + v[a];
            }
    }
    if (st == VS_OK)
        for (int64_t i = 0; i < n; i++) {
            phi[i * n + i] = v1[i + 1] - v1[0];
            for (int64_t j = i + 1; j < n; j++) phi[i * n + j] = phi[j * n + i] = sum[vs_pair_rank(n, i, j)] / (double)perms / 2;
        }
    free(z);
    free(single);
    free(v);
    free(sum);
    free(v1);
    free(pi);
    return st;
}
