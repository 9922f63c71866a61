/* games_lime.c - LIME (Ribeiro et al. 2016) on any game, first order and the second-order analogue
 * of Hamilton et al. (2022, Sec. 5.2): a ridge fit of v over random coalitions with linear (and pair)
 * terms and a free intercept, weighted by an exponential kernel on the cosine distance to the full
 * coalition.  (The paper adds an L1 penalty; this fit uses the L2 ridge of explain/lime.c.) */
#include "explain/games_internal.h"
#include "explain/internal.h"
#include "explain/lstsq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

vs_status vs_game_lime(vs_game *g, int order, int64_t samples, double width, double ridge, uint64_t seed, double *phi,
                       vs_error *err)
{
    const int64_t n = g->n, cols = (order == 2 ? n + n * (n - 1) / 2 : n) + 1;
    if ((order != 1 && order != 2) || n < 2 || samples < 2 || !(width > 0))
        return vs_error_set(err, VS_ERR_ARG, "lime: order 1 or 2, at least 2 players and 2 samples, a positive width");
    if ((double)samples * (double)cols > 2e9) return vs_error_set(err, VS_ERR_ARG, "lime: %lld samples of %lld terms is too large", (long long)samples, (long long)cols);
    vs_game_memo m;
    vs_status st = vs_game_memo_init(&m, g, samples, err);
    if (st != VS_OK) return st;
    uint8_t *z = malloc((size_t)n), *in = malloc((size_t)(samples * cols));
    int64_t *scratch = malloc((size_t)n * sizeof *scratch);
    double *w = calloc((size_t)samples, sizeof *w), *beta = calloc((size_t)cols, sizeof *beta);
    if (!z || !in || !scratch || !w || !beta) st = vs_error_set(err, VS_ERR_NOMEM, "lime: out of memory");
    if (st == VS_OK) {
        vs_rng r;
        vs_rng_seed(&r, seed);
        memset(z, 1, (size_t)n); /* the input itself */
        w[vs_game_memo_add(&m, z, NULL)] += 1;
        for (int64_t draws = 0; m.count < m.cap && draws < 100 * samples; draws++) {
            vs_random_subset(&r, n, 1 + (int64_t)vs_rng_below(&r, (uint64_t)n), z, scratch);
            w[vs_game_memo_add(&m, z, NULL)] += 1;
        }
        st = vs_game_memo_eval(&m, err);
    }
    if (st == VS_OK) {
        for (int64_t k = 0; k < m.count; k++) {
            const uint8_t *zk = m.z + k * n;
            uint8_t *row = in + k * cols;
            int64_t s = 0, c = n;
            for (int64_t i = 0; i < n; i++) s += row[i] = zk[i];
            for (int64_t i = 0; order == 2 && i < n; i++)
                for (int64_t j = i + 1; j < n; j++) row[c++] = zk[i] && zk[j];
            row[cols - 1] = 1; /* intercept, not penalised */
            double cosd = 1.0 - sqrt((double)s / (double)n);
            w[k] *= exp(-cosd * cosd / (width * width));
        }
        st = vs_lstsq_sets(m.count, cols, in, w, m.v, ridge, cols - 1, beta);
        if (st == VS_ERR_NUMERIC) st = vs_error_set(err, st, "lime: singular system");
        else if (st != VS_OK) st = vs_error_set(err, st, "lime: out of memory for the least-squares system");
    }
    if (st == VS_OK) {
        if (order == 1) {
            memcpy(phi, beta, (size_t)n * sizeof *phi);
        } else {
            for (int64_t i = 0; i < n; i++) phi[i * n + i] = beta[i];
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) phi[i * n + j] = phi[j * n + i] = beta[n + vs_pair_rank(n, i, j)] / 2;
        }
    }
    vs_game_memo_free(&m);
    free(z);
    free(in);
    free(scratch);
    free(w);
    free(beta);
    return st;
}
