/* snx_pg.c - PGExplainer (Luo et al. 2020) for Siamese graph networks: one MLP generator
 * [h_u; h_v] -> edge logit shared by every graph, trained over all training pairs with concrete
 * (Gumbel-sigmoid) edge samples to keep the Siamese prediction; explanations are sigmoid(logit). */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct vs_snx_pg {
    int64_t in_dim, hidden;  /* in_dim = 2 d' (two node embeddings) */
    bool node_embed;         /* node embeddings from embed_nodes (else node features) */
    float *theta;            /* [W1 (hidden x in_dim); b1 (hidden); W2 (hidden); b2 (1)] */
};

void vs_snx_pg_free(vs_snx_pg *pg)
{
    if (!pg) return;
    free(pg->theta);
    free(pg);
}

static int64_t pg_size(int64_t in, int64_t h) { return h * in + h + h + 1; }

/* Edge inputs [n_edges, 2 d']: [h_src; h_dst] with node embeddings (no gradient). */
static vs_tensor *edge_inputs(const vs_snx_pg *pg, const vs_siamese *f, const vs_graph *g, int64_t n_feat)
{
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *h = pg->node_embed ? f->embed_nodes(f->ctx, g, NULL) : vs_tensor_from(VS_SHAPE(g->n_nodes, n_feat), g->x);
    vs_tensor *z = NULL;
    if (h && h->ndim == 2 && h->shape[0] == g->n_nodes && 2 * h->shape[1] == pg->in_dim)
        z = vs_concat(2, (vs_tensor *[]){vs_index_select(h, 0, g->src, g->n_edges), vs_index_select(h, 0, g->dst, g->n_edges)}, 1);
    vs_set_grad_enabled(grad);
    return z;
}

/* Symmetric edge logits [n_edges] of one graph from the generator parameters th. */
static vs_tensor *edge_logits(const vs_snx_pg *pg, vs_tensor *th, vs_tensor *z, const vs_graph *g)
{
    int64_t H = pg->hidden, I = pg->in_dim, o = 0;
    vs_tensor *W1 = vs_reshape(vs_slice(th, 0, o, o + H * I), VS_SHAPE(H, I));
    o += H * I;
    vs_tensor *b1 = vs_slice(th, 0, o, o + H);
    o += H;
    vs_tensor *W2 = vs_reshape(vs_slice(th, 0, o, o + H), VS_SHAPE(1, H));
    o += H;
    vs_tensor *b2 = vs_slice(th, 0, o, o + 1);
    vs_tensor *w = vs_reshape(vs_linear(vs_relu(vs_linear(z, W1, b1)), W2, b2), VS_SHAPE(g->n_edges));
    return g->rev ? vs_mul_scalar(vs_add(w, vs_index_select(w, 0, g->rev, g->n_edges)), 0.5f) : w;
}

/* Probe the node embedding width: d' of embed_nodes, or the node feature count. */
static vs_status pg_alloc(const vs_siamese *f, const vs_dataset *d, int64_t row, const vs_snx_opts *o, vs_snx_pg **out,
                          vs_error *err)
{
    vs_snx_pg *pg = calloc(1, sizeof *pg);
    if (!pg) return vs_error_set(err, VS_ERR_NOMEM, "snx pgexplainer: out of memory");
    pg->node_embed = f->embed_nodes != NULL;
    pg->hidden = o->pg_hidden;
    int64_t dn = d->n_node_features;
    if (pg->node_embed) {
        vs_scope_begin();
        bool grad = vs_set_grad_enabled(false);
        vs_tensor *h = f->embed_nodes(f->ctx, &d->graphs[row], NULL);
        dn = h && h->ndim == 2 ? h->shape[1] : -1;
        vs_set_grad_enabled(grad);
        vs_scope_end();
    }
    if (dn < 1) {
        free(pg);
        return vs_error_set(err, VS_ERR_SHAPE, "snx pgexplainer: node embeddings are not [n_nodes, d]");
    }
    pg->in_dim = 2 * dn;
    int64_t n = pg_size(pg->in_dim, pg->hidden);
    pg->theta = malloc((size_t)n * sizeof *pg->theta);
    if (!pg->theta) {
        free(pg);
        return vs_error_set(err, VS_ERR_NOMEM, "snx pgexplainer: out of memory");
    }
    /* PyTorch Linear initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    vs_rng r;
    vs_rng_seed(&r, o->seed ^ 0x9E9E9E9Eull);
    int64_t H = pg->hidden, I = pg->in_dim;
    for (int64_t i = 0; i < n; i++) {
        double fan = i < H * I + H ? (double)I : (double)H;
        pg->theta[i] = (float)((2 * vs_rng_uniform(&r) - 1) / sqrt(fan));
    }
    *out = pg;
    return VS_OK;
}

vs_status vs_snx_pg_train(const vs_siamese *f, const vs_dataset *d, const vs_pairs *train, const vs_snx_opts *o, vs_snx_pg **out,
                          vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "snx pgexplainer: out is NULL");
    *out = NULL;
    if (!train || train->n < 1 || !o) return vs_error_set(err, VS_ERR_ARG, "snx pgexplainer: training pairs and options are required");
    vs_status st = snx_check(f, d, train->idx, 2 * train->n, "snx pgexplainer", err);
    if (st != VS_OK) return st;
    if (d->kind != VS_DATA_GRAPHS) return vs_error_set(err, VS_ERR_ARG, "snx pgexplainer: graph data only");
    if (o->pg_epochs < 0 || o->pg_hidden < 1 || o->pg_batch < 1 || !(o->pg_lr > 0) || !(o->pg_t0 > 0) || !(o->pg_t1 > 0))
        return vs_error_set(err, VS_ERR_ARG, "snx pgexplainer: epochs >= 0, hidden >= 1, batch >= 1, lr and temperatures > 0");
    vs_snx_pg *pg = NULL;
    st = pg_alloc(f, d, train->idx[0], o, &pg, err);
    if (st != VS_OK) return st;

    int64_t n = train->n, np = pg_size(pg->in_dim, pg->hidden);
    vs_tensor **z = calloc((size_t)d->n, sizeof *z);
    size_t *order = malloc((size_t)n * sizeof *order);
    float *p0 = malloc((size_t)n * sizeof *p0), *noise = NULL;
    int64_t max_e = 1;
    vs_flat_adam adam = {0};
    for (int64_t r = 0; r < d->n; r++) max_e = d->graphs[r].n_edges > max_e ? d->graphs[r].n_edges : max_e;
    noise = malloc((size_t)max_e * sizeof *noise);
    if (!z || !order || !p0 || !noise || vs_flat_adam_init(&adam, np, err) != VS_OK) {
        st = vs_error_set(err, VS_ERR_NOMEM, "snx pgexplainer: out of memory");
        goto out;
    }
    vs_scope_begin();
    /* edge inputs of every graph in the pairs, and the unmasked predictions p0 */
    for (int64_t k = 0; k < 2 * n && st == VS_OK; k++) {
        int64_t r = train->idx[k];
        if (!z[r] && !(z[r] = edge_inputs(pg, f, &d->graphs[r], d->n_node_features)))
            st = vs_error_set(err, VS_ERR_SHAPE, "snx pgexplainer: node embeddings of graph %lld have the wrong shape", (long long)r);
    }
    for (int64_t k = 0; k < n && st == VS_OK; k++) {
        snx_task t;
        st = snx_task_init(&t, f, d, train->idx + 2 * k, train->idx + 2 * k + 1, 1, SNX_LAYOUT_SEPARATE, true, err);
        if (st == VS_OK) p0[k] = t.p0[0];
        snx_task_free(&t);
    }
    vs_rng r;
    vs_rng_seed(&r, o->seed ^ 0x7E57ull);
    for (int64_t k = 0; k < n; k++) order[k] = (size_t)k;
    const float bias = 0.01f;  /* noise u ~ U(bias, 1 - bias), as PyG */
    for (int ep = 0; ep < o->pg_epochs && st == VS_OK; ep++) {
        float tau = o->pg_t0 * powf(o->pg_t1 / o->pg_t0, (float)ep / (float)o->pg_epochs);
        vs_rng_shuffle(&r, order, (size_t)n);
        for (int64_t b0 = 0; b0 < n && st == VS_OK; b0 += o->pg_batch) {
            int64_t nb = n - b0 < o->pg_batch ? n - b0 : o->pg_batch;
            vs_scope_begin();
            vs_tensor *th = vs_tensor_from(VS_SHAPE(np), pg->theta), *grad = NULL;
            vs_set_requires_grad(th, true);
            vs_tensor *loss = vs_scalar(0.0f);
            for (int64_t q = 0; q < nb && loss; q++) {
                int64_t k = (int64_t)order[b0 + q];
                vs_tensor *emb[2], *masks[2];
                int nm = 0;
                for (int s = 0; s < 2; s++) {
                    const vs_graph *g = &d->graphs[train->idx[2 * k + s]];
                    if (g->n_edges == 0) {
                        emb[s] = f->embed_graph(f->ctx, g, NULL);
                        continue;
                    }
                    /* symmetric noise: an edge and its reverse share one draw */
                    for (int64_t e = 0; e < g->n_edges; e++) {
                        int64_t rv = g->rev ? g->rev[e] : e;
                        noise[e] = rv >= 0 && rv < e ? noise[rv] : bias + (1 - 2 * bias) * vs_rng_uniformf(&r);
                    }
                    vs_tensor *u = vs_tensor_from(VS_SHAPE(g->n_edges), noise);
                    vs_tensor *gumbel = vs_sub(vs_log(u), vs_log(vs_add_scalar(vs_neg(u), 1.0f)));
                    vs_tensor *m = vs_sigmoid(vs_mul_scalar(vs_add(gumbel, edge_logits(pg, th, z[train->idx[2 * k + s]], g)), 1.0f / tau));
                    masks[nm++] = m;
                    emb[s] = f->embed_graph(f->ctx, g, m);
                }
                vs_tensor *pm = vs_mul_scalar(vs_add_scalar(vs_cosine_similarity(emb[0], emb[1], 1, 1e-8f), 1.0f), 0.5f);
                vs_tensor *fa = vs_sum(vs_snx_faithfulness_loss(vs_tensor_from(VS_SHAPE(1), p0 + k), pm), VS_ALL_AXES, false);
                vs_tensor *reg = vs_scalar(0.0f);
                if (nm > 0) {
                    vs_tensor *m = nm == 2 ? vs_concat(2, masks, 0) : masks[0];
                    vs_tensor *mc = vs_clamp(m, SNX_PROB_EPS, 1 - SNX_PROB_EPS), *mc1 = vs_add_scalar(vs_neg(mc), 1.0f);
                    vs_tensor *H = vs_neg(vs_add(vs_mul(mc, vs_log(mc)), vs_mul(mc1, vs_log(mc1))));
                    reg = vs_add(vs_mul_scalar(vs_sum(m, VS_ALL_AXES, false), o->pg_size),
                                 vs_mul_scalar(vs_mean(H, VS_ALL_AXES, false), o->pg_ent));
                }
                loss = vs_add(loss, vs_add(fa, reg));
            }
            loss = vs_mul_scalar(loss, 1.0f / (float)nb);
            if (!loss || vs_grad(1, &loss, NULL, 1, &th, &grad, false) != VS_OK)
                st = vs_error_set(err, VS_ERR_SHAPE, "snx pgexplainer: %s", vs_last_error()->msg);
            else
                vs_flat_adam_step(&adam, pg->theta, grad->data, o->pg_lr);
            vs_scope_end();
        }
    }
    vs_scope_end();
out:
    free(z);
    free(order);
    free(p0);
    free(noise);
    vs_flat_adam_free(&adam);
    if (st != VS_OK) {
        vs_snx_pg_free(pg);
        return st;
    }
    *out = pg;
    return VS_OK;
}

/* Local masks of the pairs of e: sigmoid of the generator's symmetric edge logits. */
vs_status snx_pg_masks(const vs_snx_pg *pg, const vs_siamese *f, const vs_dataset *d, vs_snx_expl *e, vs_error *err)
{
    vs_status st = VS_OK;
    bool grad = vs_set_grad_enabled(false);
    for (int64_t k = 0; k < e->n && st == VS_OK; k++)
        for (int s = 0; s < 2 && st == VS_OK; s++) {
            int64_t row = s ? e->t[k] : e->s[k];
            const vs_graph *g = &d->graphs[row];
            float *out = s ? e->mt + e->t_off[k] : e->ms + e->s_off[k];
            if (g->n_edges == 0) continue;
            vs_scope_begin();
            vs_tensor *th = vs_tensor_from(VS_SHAPE(pg_size(pg->in_dim, pg->hidden)), pg->theta);
            vs_tensor *z = edge_inputs(pg, f, g, d->n_node_features);
            vs_tensor *m = z ? vs_sigmoid(edge_logits(pg, th, z, g)) : NULL;
            if (!m)
                st = vs_error_set(err, VS_ERR_SHAPE, "snx pgexplainer: node embeddings of graph %lld do not fit the generator",
                                  (long long)row);
            else
                memcpy(out, m->data, (size_t)g->n_edges * sizeof *out);
            vs_scope_end();
        }
    vs_set_grad_enabled(grad);
    return st;
}
