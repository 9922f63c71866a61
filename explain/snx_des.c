/* snx_des.c - DES, the unsupervised feature-selection baseline of SNX (Section IV-A, ref. [47]),
 * as a documented simplification: kNN pseudo-labels over (a pool of) training rows supervise a
 * gate g in [0,1]^p on the features; the query's selected features g (x) x_s are its mask. */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_snx_des_free(vs_snx_des *des)
{
    if (!des) return;
    free(des->gate);
    free(des);
}

typedef struct des_pair {
    int64_t i, j;
    float y;
} des_pair;

/* Pseudo-labelled pairs: for each pool row its k nearest pool rows (squared distance, ties by lower
 * position) labelled 1 and k random non-neighbours labelled 0. */
static int64_t des_pairs(const vs_dataset *d, const int64_t *pool, int64_t np, int64_t k, vs_rng *r, des_pair *out,
                         float *dist, int64_t *order, uint8_t *nb)
{
    int64_t p = d->dim, n = 0;
    for (int64_t a = 0; a < np; a++) {
        const float *xa = d->X + pool[a] * p;
        for (int64_t c = 0; c < np; c++) {
            const float *xc = d->X + pool[c] * p;
            double s = 0;
            for (int64_t j = 0; j < p; j++) s += (double)(xa[j] - xc[j]) * (xa[j] - xc[j]);
            dist[c] = c == a ? INFINITY : (float)s;
            nb[c] = 0;
        }
        /* partial selection of the k smallest */
        for (int64_t c = 0; c < np; c++) order[c] = c;
        for (int64_t q = 0; q < k; q++) {
            int64_t best = q;
            for (int64_t c = q + 1; c < np; c++)
                if (dist[order[c]] < dist[order[best]] || (dist[order[c]] == dist[order[best]] && order[c] < order[best])) best = c;
            int64_t tmp = order[q];
            order[q] = order[best];
            order[best] = tmp;
            nb[order[q]] = 1;
            out[n++] = (des_pair){pool[a], pool[order[q]], 1.0f};
        }
        nb[a] = 1;
        int64_t others = np - 1 - k;
        for (int64_t q = 0; q < k && q < others; q++) {
            int64_t c;
            do c = (int64_t)vs_rng_below(r, (uint64_t)np);
            while (nb[c]);
            nb[c] = 1;
            out[n++] = (des_pair){pool[a], pool[c], 0.0f};
        }
    }
    return n;
}

vs_status vs_snx_des_fit(const vs_dataset *d, const int64_t *rows, int64_t n_rows, const vs_snx_opts *o, vs_snx_des **out,
                         vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "snx des: out is NULL");
    *out = NULL;
    if (!d || !o || d->kind != VS_DATA_TABULAR || !d->X || d->dim < 1)
        return vs_error_set(err, VS_ERR_ARG, "snx des: needs a tabular data set and options");
    int64_t n = rows ? n_rows : d->n, p = d->dim;
    for (int64_t k = 0; rows && k < n; k++)
        if (rows[k] < 0 || rows[k] >= d->n)
            return vs_error_set(err, VS_ERR_ARG, "snx des: training row %lld outside the data set", (long long)rows[k]);
    if (n < 3 || o->des_knn < 1 || o->des_pool < 3 || o->des_iters < 0 || !(o->des_lr > 0))
        return vs_error_set(err, VS_ERR_ARG, "snx des: need >= 3 training rows, des_knn >= 1, des_pool >= 3, des_lr > 0");
    vs_rng r;
    vs_rng_seed(&r, o->seed ^ 0xD35D35D35ull);
    int64_t np = n < o->des_pool ? n : o->des_pool, k = o->des_knn < np - 1 ? o->des_knn : np - 1;
    int64_t *pool = malloc((size_t)n * sizeof *pool), *order = malloc((size_t)np * sizeof *order);
    float *dist = malloc((size_t)np * sizeof *dist), *theta = calloc((size_t)(p + 2), sizeof *theta), *Delta = NULL;
    uint8_t *nb = malloc((size_t)np);
    des_pair *pairs = malloc((size_t)(np * 2 * k) * sizeof *pairs);
    float *y = NULL;
    vs_snx_des *des = calloc(1, sizeof *des);
    vs_flat_adam adam = {0};
    vs_status st = VS_OK;
    if (!pool || !order || !dist || !theta || !nb || !pairs || !des) goto nomem;
    /* the pool: a uniform subset of the training rows (partial Fisher-Yates) */
    for (int64_t i = 0; i < n; i++) pool[i] = rows ? rows[i] : i;
    for (int64_t i = 0; i < np; i++) {
        int64_t j = i + (int64_t)vs_rng_below(&r, (uint64_t)(n - i)), tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
    }
    int64_t P = des_pairs(d, pool, np, k, &r, pairs, dist, order, nb);
    Delta = malloc((size_t)(P * p) * sizeof *Delta);
    y = malloc((size_t)P * sizeof *y);
    if (!Delta || !y || vs_flat_adam_init(&adam, p + 2, err) != VS_OK) goto nomem;
    for (int64_t q = 0; q < P; q++) {
        const float *xi = d->X + pairs[q].i * p, *xj = d->X + pairs[q].j * p;
        for (int64_t j = 0; j < p; j++) Delta[q * p + j] = (xi[j] - xj[j]) * (xi[j] - xj[j]);
        y[q] = pairs[q].y;
    }
    /* theta = [u (p); a; b]: P(neighbour) = sigmoid(b - softplus(a) * Delta @ sigmoid(u)) */
    vs_scope_begin();
    vs_tensor *D = vs_tensor_from(VS_SHAPE(P, p), Delta), *Y = vs_tensor_from(VS_SHAPE(P), y);
    for (int it = 0; it < o->des_iters && st == VS_OK; it++) {
        vs_scope_begin();
        vs_tensor *th = vs_tensor_from(VS_SHAPE(p + 2), theta), *g = NULL;
        vs_set_requires_grad(th, true);
        vs_tensor *gate = vs_sigmoid(vs_slice(th, 0, 0, p));
        vs_tensor *dist_w = vs_reshape(vs_matmul(D, vs_reshape(gate, VS_SHAPE(p, 1))), VS_SHAPE(P));
        vs_tensor *logit = vs_sub(vs_slice(th, 0, p + 1, p + 2), vs_mul(vs_softplus(vs_slice(th, 0, p, p + 1)), dist_w));
        vs_tensor *loss = vs_add(vs_bce_with_logits(logit, Y), vs_mul_scalar(vs_mean(gate, VS_ALL_AXES, false), o->des_l1));
        if (!loss || vs_grad(1, &loss, NULL, 1, &th, &g, false) != VS_OK)
            st = vs_error_set(err, VS_ERR_SHAPE, "snx des: %s", vs_last_error()->msg);
        else
            vs_flat_adam_step(&adam, theta, g->data, o->des_lr);
        vs_scope_end();
    }
    vs_scope_end();
    if (st != VS_OK) goto out;
    des->p = p;
    des->gate = malloc((size_t)p * sizeof *des->gate);
    if (!des->gate) goto nomem;
    for (int64_t j = 0; j < p; j++) des->gate[j] = 1.0f / (1.0f + expf(-theta[j]));
    *out = des;
    des = NULL;
    goto out;
nomem:
    st = vs_error_set(err, VS_ERR_NOMEM, "snx des: out of memory");
out:
    free(pool);
    free(order);
    free(dist);
    free(theta);
    free(nb);
    free(pairs);
    free(Delta);
    free(y);
    vs_flat_adam_free(&adam);
    vs_snx_des_free(des);
    return st;
}
