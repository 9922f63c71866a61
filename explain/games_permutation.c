/* games_permutation.c - Sundararajan et al. (2020)'s permutation estimator of order-2
 * Shapley-Taylor indices, the baseline of the kernel estimator (games_kernel.c).
 *
 * The index of a pair S = {i, j} is the expectation over uniform permutations pi of
 * delta_S v(T) = v(T + i + j) - v(T + i) - v(T + j) + v(T), T = the players before the first of
 * i, j in pi (P(T) = 2 t! (n - t - 1)! / n!, Sundararajan et al.'s weight).  One permutation serves
 * every pair: with p_a = pi(a) and prefixes P_a, the pair {p_a, p_b} (a < b) needs v(P_a), v(P_a+1),
 * v(P_a + p_b) and v(P_a+1 + p_b) (a prefix again when b = a + 1): n^2 - n + 2 coalitions, of which
 * those seen before (the empty set, singletons, small prefixes) are not evaluated again.  Without
 * sharing (as Hamilton et al. describe the baseline: every interaction estimated on its own) each pair
 * draws its own T and pays for its four coalitions. */
#include "explain/games_internal.h"
#include "explain/internal.h"
#include "versus/rng.h"

#include <stdlib.h>
#include <string.h>

/* Each pair on its own: rounds over the pairs, each pair drawing T (|T| = t with probability
 * 2 (n - t - 1) / (n (n - 1)), then uniform) and its four coalitions, through the memo (cached) or
 * all evaluated (every draw pays four evaluations). */
static vs_status per_pair(vs_game_memo *m, bool cached, int64_t budget, vs_rng *r, double *sum, int64_t *cnt, vs_error *err)
{
    const int64_t n = m->n, pairs = n * (n - 1) / 2;
    vs_game *g = m->g;
    uint8_t *rows = malloc((size_t)(4 * pairs * n));
    int64_t *scratch = malloc((size_t)n * sizeof *scratch), *at = malloc((size_t)(4 * pairs) * sizeof *at);
    double *vals = malloc((size_t)(4 * pairs) * sizeof *vals);
    vs_status st = rows && scratch && at && vals ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "permutation estimator: out of memory");
    const int64_t B = g->batch > 0 ? g->batch : 256;
    bool full = false;
    /* rounds stop where the budget would end without the memo (or before it passes with it) */
    const int64_t max_rounds = budget / (4 * pairs) > 1 ? budget / (4 * pairs) : 1;
    for (int64_t round = 0; st == VS_OK && !full && round < max_rounds; round++) {
        int64_t done = 0;
        for (int64_t i = 0; i < n && !full; i++)
            for (int64_t j = i + 1; j < n && !full; j++) {
                if (!cached && round > 0 && g->evaluations + 4 * (done + 1) > budget) {
                    full = true;
                    break;
                }
                double u = vs_rng_uniform(r) * (double)pairs, acc = 0;
                int64_t t = 0;
                for (; t < n - 2; t++) {
                    acc += (double)(n - t - 1);
                    if (u < acc) break;
                }
                /* T: t of the n - 2 others (players past i and j shifted over them) */
                uint8_t *z = rows + 4 * done * n;
                vs_random_subset(r, n - 2, t, z, scratch);
                memmove(z + j + 1, z + j - 1, (size_t)(n - j - 1));
                memmove(z + i + 1, z + i, (size_t)(j - i - 1));
                z[i] = z[j] = 0;
                for (int c = 1; c < 4; c++) {
                    memcpy(z + c * n, z, (size_t)n);
                    if (c & 1) z[c * n + i] = 1;
                    if (c & 2) z[c * n + j] = 1;
                }
                if (cached) {
                    int64_t before = m->count;
                    for (int c = 0; c < 4; c++) at[4 * done + c] = vs_game_memo_add(m, z + c * n, NULL);
                    if (m->count > budget && round > 0) {
                        m->count = before; /* not evaluated; the memo is not used for adding again */
                        full = true;
                        break;
                    }
                }
                done++;
            }
        if (cached) {
            st = vs_game_memo_eval(m, err);
            for (int64_t k = 0; k < 4 * done && st == VS_OK; k++) vals[k] = m->v[at[k]];
        } else {
            for (int64_t r0 = 0; r0 < 4 * done && st == VS_OK; r0 += B) {
                int64_t k = 4 * done - r0 < B ? 4 * done - r0 : B;
                st = g->values(g->ctx, k, rows + r0 * n, vals + r0, err);
                g->evaluations += k;
            }
        }
        int64_t k = 0;
        for (int64_t i = 0; i < n && st == VS_OK; i++)
            for (int64_t j = i + 1; j < n && k < done; j++, k++) {
                sum[vs_pair_rank(n, i, j)] += vals[4 * k + 3] - vals[4 * k + 1] - vals[4 * k + 2] + vals[4 * k];
                cnt[vs_pair_rank(n, i, j)]++;
            }
    }
    free(rows);
    free(scratch);
    free(at);
    free(vals);
    return st;
}

vs_status vs_game_permutation_st2(vs_game *g, int64_t budget, uint64_t seed, vs_permutation_mode mode, double *phi, vs_error *err)
{
    const int64_t n = g->n;
    if (n < 2) return vs_error_set(err, VS_ERR_ARG, "permutation estimator needs at least 2 players");
    const int64_t rows = n * n - n + 2, pairs = n * (n - 1) / 2;
    if (budget < n + 1 + rows) budget = n + 1 + rows; /* one permutation at least */
    vs_game_memo m;
    /* the memo never holds more than the 2^n distinct coalitions (uncached: only the singletons) */
    int64_t cap = mode == VS_PERMUTATION_PER_PAIR_UNCACHED ? n + 1 : budget;
    if (n < 40 && cap > ((int64_t)1 << n)) cap = (int64_t)1 << n;
    vs_status st = vs_game_memo_init(&m, g, cap + rows, err);
    if (st != VS_OK) return st;
    /* rows: [0, n] prefixes P_a, then A(a, b) = P_a + p_b for each pair, then B(a, b) = P_a+1 + p_b, b > a + 1 */
    uint8_t *z = calloc((size_t)(rows * n), 1);
    int64_t *at = malloc((size_t)rows * sizeof *at);
    double *sum = calloc((size_t)pairs, sizeof *sum);
    size_t *pi = malloc((size_t)n * sizeof *pi);
    int64_t *cnt = calloc((size_t)pairs, sizeof *cnt);
    if (!z || !at || !sum || !pi || !cnt) st = vs_error_set(err, VS_ERR_NOMEM, "permutation estimator: out of memory");
    /* singletons exactly: v(empty), v({i}) */
    for (int64_t i = 0; i <= n && st == VS_OK; i++) {
        memset(z, 0, (size_t)n);
        if (i) z[i - 1] = 1;
        vs_game_memo_add(&m, z, NULL);
    }
    if (st == VS_OK) st = vs_game_memo_eval(&m, err);
    vs_rng r;
    vs_rng_seed(&r, seed);
    int64_t perms = 0;
    const bool shared = mode == VS_PERMUTATION_SHARED;
    if (st == VS_OK && !shared) st = per_pair(&m, mode == VS_PERMUTATION_PER_PAIR, budget, &r, sum, cnt, err);
    /* permutations stop where the budget would end without the memo (or before it passes with it) */
    const int64_t max_perms = budget / rows > 1 ? budget / rows : 1;
    while (st == VS_OK && shared && perms < max_perms) {
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
        /* a coalition seen in an earlier permutation costs nothing; stop before the budget is passed */
        int64_t before = m.count;
        for (int64_t k = 0; k < rows; k++) at[k] = vs_game_memo_add(&m, z + k * n, NULL);
        if (m.count > budget && perms > 0) {
            m.count = before; /* not evaluated; the memo is not used for adding again */
            break;
        }
        st = vs_game_memo_eval(&m, err);
        int64_t ra = n + 1, rb = n + 1 + pairs;
        for (int64_t a = 0; a < n && st == VS_OK; a++)
            for (int64_t b = a + 1; b < n; b++) {
                double with_a = m.v[at[a + 1]], with_b = m.v[at[ra++]], both = b == a + 1 ? m.v[at[a + 2]] : m.v[at[rb++]];
                int64_t i = (int64_t)pi[a], j = (int64_t)pi[b];
                int64_t p = i < j ? vs_pair_rank(n, i, j) : vs_pair_rank(n, j, i);
                sum[p] += both - with_a - with_b + m.v[at[a]];
                cnt[p]++;
            }
        perms++;
    }
    if (st == VS_OK)
        for (int64_t i = 0; i < n; i++) {
            phi[i * n + i] = m.v[i + 1] - m.v[0];
            for (int64_t j = i + 1; j < n; j++) phi[i * n + j] = phi[j * n + i] = sum[vs_pair_rank(n, i, j)] / (double)(cnt[vs_pair_rank(n, i, j)] ? cnt[vs_pair_rank(n, i, j)] : 1) / 2;
        }
    vs_game_memo_free(&m);
    free(z);
    free(at);
    free(sum);
    free(pi);
    free(cnt);
    return st;
}
