/* games.c - exact credit assignment of cooperative games (versus/games.h): all 2^n values in
 * Gray-code order, Harsanyi dividends by the Moebius transform, Shapley values and Shapley-Taylor
 * indices from the dividends, brute-force definitions for the tests, and table games.  The
 * estimators live in games_kernel.c and games_permutation.c. */
#include "versus/games.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int game_batch(const vs_game *g) { return g->batch > 0 ? g->batch : 256; }

vs_status vs_game_enumerate(vs_game *g, double *v, vs_error *err)
{
    if (g->n < 1 || g->n > 24) return vs_error_set(err, VS_ERR_ARG, "games: exact enumeration takes 1 to 24 players, not %lld", (long long)g->n);
    const int n = (int)g->n, B = game_batch(g);
    const uint64_t total = (uint64_t)1 << n;
    uint8_t *z = calloc((size_t)B * (size_t)n, 1), cur[24] = {0};
    uint32_t *mask = malloc((size_t)B * sizeof *mask);
    double *vb = malloc((size_t)B * sizeof *vb);
    vs_status st = z && mask && vb ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "games: out of memory");
    /* Row i is the Gray code i ^ (i >> 1): row i differs from row i - 1 in the lowest set bit of i. */
    for (uint64_t i0 = 0; i0 < total && st == VS_OK; i0 += (uint64_t)B) {
        int m = total - i0 < (uint64_t)B ? (int)(total - i0) : B;
        for (int r = 0; r < m; r++) {
            uint64_t i = i0 + (uint64_t)r;
            if (i) cur[__builtin_ctzll(i)] ^= 1;
            memcpy(z + (size_t)r * (size_t)n, cur, (size_t)n);
            mask[r] = (uint32_t)(i ^ (i >> 1));
        }
        st = g->values(g->ctx, m, z, vb, err);
        g->evaluations += m;
        for (int r = 0; r < m && st == VS_OK; r++) v[mask[r]] = vb[r];
    }
    free(z);
    free(mask);
    free(vb);
    return st;
}

void vs_harsanyi_dividends(int n, double *v)
{
    const uint64_t total = (uint64_t)1 << n;
    for (int i = 0; i < n; i++)
        for (uint64_t S = 0; S < total; S++)
            if (S >> i & 1) v[S] -= v[S ^ ((uint64_t)1 << i)];
}

void vs_harsanyi_values(int n, double *d)
{
    const uint64_t total = (uint64_t)1 << n;
    for (int i = 0; i < n; i++)
        for (uint64_t S = 0; S < total; S++)
            if (S >> i & 1) d[S] += d[S ^ ((uint64_t)1 << i)];
}

void vs_shapley_from_dividends(int n, const double *d, double *phi)
{
    const uint64_t total = (uint64_t)1 << n;
    for (int i = 0; i < n; i++) phi[i] = 0;
    for (uint64_t T = 1; T < total; T++) {
        double share = d[T] / __builtin_popcountll(T);
        for (uint64_t b = T; b; b &= b - 1) phi[__builtin_ctzll(b)] += share;
    }
}

static double choose(int n, int k)
{
    if (k < 0 || k > n) return 0;
    double c = 1;
    for (int i = 1; i <= k; i++) c = c * (n - k + i) / i;
    return c;
}

void vs_shapley_taylor_from_dividends(int n, const double *d, int k, double *out)
{
    const uint64_t total = (uint64_t)1 << n;
    for (uint64_t T = 0; T < total; T++) {
        int t = __builtin_popcountll(T);
        out[T] = t >= k ? d[T] / choose(t, k) : 0;
    }
    /* superset sums: out[S] = sum_{T superset S} out[T] */
    for (int i = 0; i < n; i++)
        for (uint64_t S = 0; S < total; S++)
            if (!(S >> i & 1)) out[S] += out[S | ((uint64_t)1 << i)];
    for (uint64_t S = 0; S < total; S++) {
        int s = __builtin_popcountll(S);
        if (s == 0 || s > k) out[S] = 0;
        else if (s < k) out[S] = d[S];
    }
}

void vs_shapley_taylor2_matrix(int n, const double *d, double *phi2)
{
    for (int i = 0; i < n; i++) {
        phi2[i * n + i] = d[(uint64_t)1 << i];
        for (int j = i + 1; j < n; j++) {
            /* the pair's index: its dividend and a share of every larger coalition's */
            uint64_t S = ((uint64_t)1 << i) | ((uint64_t)1 << j), rest = (((uint64_t)1 << n) - 1) ^ S;
            double s = 0;
            for (uint64_t U = rest;; U = (U - 1) & rest) {
                s += d[S | U] / choose(__builtin_popcountll(U) + 2, 2);
                if (!U) break;
            }
            phi2[i * n + j] = phi2[j * n + i] = s / 2;
        }
    }
}

void vs_shapley_brute(int n, const double *v, double *phi)
{
    const uint64_t total = (uint64_t)1 << n;
    for (int i = 0; i < n; i++) {
        phi[i] = 0;
        for (uint64_t S = 0; S < total; S++) {
            if (S >> i & 1) continue;
            int s = __builtin_popcountll(S);
            double w = exp(lgamma(s + 1.0) + lgamma((double)(n - s)) - lgamma(n + 1.0));
            phi[i] += w * (v[S | ((uint64_t)1 << i)] - v[S]);
        }
    }
}

double vs_shapley_taylor_brute(int n, const double *v, uint32_t S)
{
    const uint64_t total = (uint64_t)1 << n;
    int k = __builtin_popcount(S);
    double sum = 0;
    for (uint64_t T = 0; T < total; T++) {
        if (T & S) continue;
        /* delta_S v(T) = sum_{W subset S} (-1)^{|S| - |W|} v(T + W) */
        double delta = 0;
        for (uint64_t W = S;; W = (W - 1) & S) {
            delta += ((k - __builtin_popcountll(W)) % 2 ? -1.0 : 1.0) * v[T | W];
            if (!W) break;
        }
        sum += delta / choose(n - 1, __builtin_popcountll(T));
    }
    return (double)k / n * sum;
}

static vs_status table_values(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err)
{
    (void)err;
    const vs_table_game *t = ctx;
    for (int64_t r = 0; r < m; r++) {
        uint32_t mask = 0;
        for (int i = 0; i < t->n; i++) mask |= (uint32_t)(z[r * t->n + i] != 0) << i;
        v[r] = t->v[mask];
    }
    return VS_OK;
}

vs_game vs_table_game_make(vs_table_game *t) { return (vs_game){.n = t->n, .values = table_values, .ctx = t}; }
