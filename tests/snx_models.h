/* tests/snx_models.h - small Siamese models built straight from ops for the SNX tests (independent
 * of nn/): a 2-layer tanh MLP encoder for tabular rows and a 2-layer GCN-style encoder with
 * edge-weighted message passing and mean readout for graphs, plus their training loops.
 *
 * Training objective: pairs (s, t, y) from vs_pairs_random; loss = BCE(sigmoid(scale * cos(emb s,
 * emb t)), y) with scale = 5 (cosine in [-1, 1] is too flat for a sigmoid otherwise); Adam, lr 0.01. */
#ifndef VERSUS_TESTS_SNX_MODELS_H
#define VERSUS_TESTS_SNX_MODELS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "versus/ops.h"
#include "versus/pairs.h"
#include "versus/snx.h"
#include "versus/synth.h"

#define SNX_TEST_SCALE 5.0f

/* ---- Adam over a list of parameter leaves ------------------------------------------------------ */
typedef struct test_adam {
    int n;
    vs_tensor **p;
    float **m, **v;
    int t;
} test_adam;

static void test_adam_init(test_adam *a, vs_tensor **params, int n)
{
    a->n = n;
    a->p = params;
    a->t = 0;
    a->m = calloc((size_t)n, sizeof *a->m);
    a->v = calloc((size_t)n, sizeof *a->v);
    for (int i = 0; i < n; i++) {
        a->m[i] = calloc((size_t)params[i]->size, sizeof(float));
        a->v[i] = calloc((size_t)params[i]->size, sizeof(float));
    }
}

static void test_adam_step(test_adam *a, vs_tensor **grads, float lr)
{
    a->t++;
    double c1 = 1 - pow(0.9, a->t), c2 = 1 - pow(0.999, a->t);
    for (int i = 0; i < a->n; i++)
        for (int64_t k = 0; k < a->p[i]->size; k++) {
            float g = grads[i]->data[k];
            a->m[i][k] = 0.9f * a->m[i][k] + 0.1f * g;
            a->v[i][k] = 0.999f * a->v[i][k] + 0.001f * g * g;
            a->p[i]->data[k] -= (float)(lr * (a->m[i][k] / c1) / (sqrt(a->v[i][k] / c2) + 1e-8));
        }
}

static void test_adam_free(test_adam *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->m[i]);
        free(a->v[i]);
    }
    free(a->m);
    free(a->v);
}

/* Loss of a batch of embeddings: rows [0, B) are queries, [B, 2B) references. */
static vs_tensor *test_pair_loss(vs_tensor *E, int64_t B, const float *y)
{
    vs_tensor *c = vs_cosine_similarity(vs_slice(E, 0, 0, B), vs_slice(E, 0, B, 2 * B), 1, 1e-8f);
    return vs_bce_with_logits(vs_mul_scalar(c, SNX_TEST_SCALE), vs_tensor_from(VS_SHAPE(B), y));
}

/* ---- MLP encoder: emb(x) = W2 tanh(W1 x + b1) + b2 ------------------------------------------- */
typedef struct test_mlp {
    vs_tensor *w1, *b1, *w2, *b2;
} test_mlp;

static vs_tensor *test_mlp_embed(void *ctx, vs_tensor *x)
{
    test_mlp *m = ctx;
    return vs_linear(vs_tanh(vs_linear(x, m->w1, m->b1)), m->w2, m->b2);
}

static void test_mlp_init(test_mlp *m, int64_t p, int64_t h, int64_t d, vs_rng *r)
{
    m->w1 = vs_tensor_randn(VS_SHAPE(h, p), r, 0, 1.0f / sqrtf((float)p));
    m->b1 = vs_tensor_zeros(VS_SHAPE(h));
    m->w2 = vs_tensor_randn(VS_SHAPE(d, h), r, 0, 1.0f / sqrtf((float)h));
    m->b2 = vs_tensor_zeros(VS_SHAPE(d));
}

static void test_mlp_free(test_mlp *m)
{
    vs_tensor_free(m->w1);
    vs_tensor_free(m->b1);
    vs_tensor_free(m->w2);
    vs_tensor_free(m->b2);
}

/* Embeddings [n, d] of data set rows rows[0..n). */
static vs_tensor *test_mlp_rows(void *model, const vs_dataset *d, const int64_t *rows, int64_t n)
{
    vs_tensor *X = vs_tensor_new(VS_SHAPE(n, d->dim));
    for (int64_t k = 0; k < n; k++) memcpy(X->data + k * d->dim, d->X + rows[k] * d->dim, (size_t)d->dim * sizeof(float));
    return test_mlp_embed(model, X);
}

/* ---- GCN encoder ------------------------------------------------------------------------------------ */
/* Layer: H' = relu(H Ws^T + b + (sum_{e: dst e = v} w_e H[src e]) Wn^T); two layers, then
 * emb = Wo mean_v H2 + bo.  One code path serves one graph and a disjoint union of graphs. */
typedef struct test_gcn {
    vs_tensor *ws1, *wn1, *b1, *ws2, *wn2, *b2, *wo, *bo;
} test_gcn;

static vs_tensor *gcn_layer(vs_tensor *H, const int64_t *src, const int64_t *dst, int64_t n, int64_t ne, vs_tensor *w,
                            vs_tensor *ws, vs_tensor *wn, vs_tensor *b)
{
    vs_tensor *out = vs_linear(H, ws, b);
    if (ne > 0) {
        vs_tensor *msg = vs_index_select(H, 0, src, ne);
        if (w) msg = vs_mul(msg, vs_reshape(w, VS_SHAPE(ne, 1)));
        out = vs_add(out, vs_linear(vs_scatter_add(msg, 0, dst, n), wn, NULL));
    }
    return vs_relu(out);
}

static vs_tensor *gcn_nodes(test_gcn *m, const float *x, int64_t F, const int64_t *src, const int64_t *dst, int64_t n, int64_t ne,
                            vs_tensor *w)
{
    vs_tensor *H = vs_tensor_from(VS_SHAPE(n, F), x);
    H = gcn_layer(H, src, dst, n, ne, w, m->ws1, m->wn1, m->b1);
    return gcn_layer(H, src, dst, n, ne, w, m->ws2, m->wn2, m->b2);
}

static vs_tensor *test_gcn_embed_nodes(void *ctx, const vs_graph *g, vs_tensor *w)
{
    return gcn_nodes(ctx, g->x, VS_SYNTH_N_ATOMS, g->src, g->dst, g->n_nodes, g->n_edges, w);
}

static vs_tensor *test_gcn_embed_graph(void *ctx, const vs_graph *g, vs_tensor *w)
{
    test_gcn *m = ctx;
    vs_tensor *H = test_gcn_embed_nodes(ctx, g, w);
    return vs_linear(vs_mean(H, VS_AXIS(0), true), m->wo, m->bo);
}

static void test_gcn_init(test_gcn *m, int64_t F, int64_t h, int64_t d, vs_rng *r)
{
    m->ws1 = vs_tensor_randn(VS_SHAPE(h, F), r, 0, 1.0f / sqrtf((float)F));
    m->wn1 = vs_tensor_randn(VS_SHAPE(h, F), r, 0, 1.0f / sqrtf((float)F));
    m->b1 = vs_tensor_zeros(VS_SHAPE(h));
    m->ws2 = vs_tensor_randn(VS_SHAPE(h, h), r, 0, 1.0f / sqrtf((float)h));
    m->wn2 = vs_tensor_randn(VS_SHAPE(h, h), r, 0, 1.0f / sqrtf((float)h));
    m->b2 = vs_tensor_zeros(VS_SHAPE(h));
    m->wo = vs_tensor_randn(VS_SHAPE(d, h), r, 0, 1.0f / sqrtf((float)h));
    m->bo = vs_tensor_zeros(VS_SHAPE(d));
}

static void test_gcn_free(test_gcn *m)
{
    vs_tensor *p[8] = {m->ws1, m->wn1, m->b1, m->ws2, m->wn2, m->b2, m->wo, m->bo};
    for (int i = 0; i < 8; i++) vs_tensor_free(p[i]);
}

/* Embeddings [G, d] of graphs rows[0..G) as one disjoint union (training batches). */
static vs_tensor *gcn_embed_batch(void *model, const vs_dataset *d, const int64_t *rows, int64_t G)
{
    test_gcn *m = model;
    int64_t n = 0, ne = 0;
    for (int64_t k = 0; k < G; k++) {
        n += d->graphs[rows[k]].n_nodes;
        ne += d->graphs[rows[k]].n_edges;
    }
    float *x = malloc((size_t)(n * VS_SYNTH_N_ATOMS) * sizeof *x), *cnt = malloc((size_t)G * sizeof *cnt);
    int64_t *src = malloc((size_t)(ne + 1) * sizeof *src), *dst = malloc((size_t)(ne + 1) * sizeof *dst);
    int64_t *gid = malloc((size_t)n * sizeof *gid);
    int64_t o = 0, oe = 0;
    for (int64_t k = 0; k < G; k++) {
        const vs_graph *g = &d->graphs[rows[k]];
        memcpy(x + o * VS_SYNTH_N_ATOMS, g->x, (size_t)(g->n_nodes * VS_SYNTH_N_ATOMS) * sizeof *x);
        for (int64_t e = 0; e < g->n_edges; e++) {
            src[oe + e] = g->src[e] + o;
            dst[oe + e] = g->dst[e] + o;
        }
        for (int64_t v = 0; v < g->n_nodes; v++) gid[o + v] = k;
        cnt[k] = 1.0f / (float)g->n_nodes;
        o += g->n_nodes;
        oe += g->n_edges;
    }
    vs_tensor *H = gcn_nodes(m, x, VS_SYNTH_N_ATOMS, src, dst, n, ne, NULL);
    vs_tensor *mean = vs_mul(vs_scatter_add(H, 0, gid, G), vs_tensor_from(VS_SHAPE(G, 1), cnt));
    vs_tensor *E = vs_linear(mean, m->wo, m->bo);
    free(x);
    free(cnt);
    free(src);
    free(dst);
    free(gid);
    return E;
}

/* ---- training ------------------------------------------------------------------------------------ */

typedef vs_tensor *(*test_embed_rows)(void *model, const vs_dataset *d, const int64_t *rows, int64_t n);

/* Adam (lr 0.01) on `steps` batches of B random balanced pairs of the given rows; returns the
 * running mean of the loss. */
static double test_train(void *model, test_embed_rows embed, vs_tensor **params, int n_params, const vs_dataset *d,
                         const int64_t *rows, int64_t n_rows, int steps, int64_t B, vs_rng *r)
{
    for (int i = 0; i < n_params; i++) vs_set_requires_grad(params[i], true);
    test_adam a;
    test_adam_init(&a, params, n_params);
    vs_pairs *pairs = NULL;
    vs_pairs_random(d->y, d->n, d->n_classes, rows, n_rows, steps * B, r, &pairs, NULL);
    double last = 0;
    float *y = malloc((size_t)B * sizeof *y);
    int64_t *batch = malloc((size_t)(2 * B) * sizeof *batch);
    vs_tensor **g = malloc((size_t)n_params * sizeof *g);
    for (int it = 0; it < steps && pairs; it++) {
        vs_scope_begin();
        for (int64_t b = 0; b < B; b++) {
            int64_t k = it * B + b;
            batch[b] = pairs->idx[2 * k];
            batch[B + b] = pairs->idx[2 * k + 1];
            y[b] = (float)pairs->label[k];
        }
        vs_tensor *loss = test_pair_loss(embed(model, d, batch, 2 * B), B, y);
        vs_grad(1, &loss, NULL, n_params, params, g, false);
        test_adam_step(&a, g, 0.01f);
        last = it ? 0.9 * last + 0.1 * vs_item(loss) : vs_item(loss);
        vs_scope_end();
    }
    free(g);
    free(y);
    free(batch);
    vs_pairs_free(pairs);
    test_adam_free(&a);
    for (int i = 0; i < n_params; i++) vs_set_requires_grad(params[i], false);
    return last;
}

static double test_mlp_train(test_mlp *m, const vs_dataset *d, const int64_t *rows, int64_t n_rows, int steps, int64_t B, vs_rng *r)
{
    vs_tensor *params[4] = {m->w1, m->b1, m->w2, m->b2};
    return test_train(m, test_mlp_rows, params, 4, d, rows, n_rows, steps, B, r);
}

static double test_gcn_train(test_gcn *m, const vs_dataset *d, const int64_t *rows, int64_t n_rows, int steps, int64_t B, vs_rng *r)
{
    vs_tensor *params[8] = {m->ws1, m->wn1, m->b1, m->ws2, m->wn2, m->b2, m->wo, m->bo};
    return test_train(m, gcn_embed_batch, params, 8, d, rows, n_rows, steps, B, r);
}

#endif
