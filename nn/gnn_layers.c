/* gnn_layers.c - message passing (weighted aggregation, GCN normalisation), readouts per graph and
 * the forward passes of the GCN, GIN and readout modules.  Everything is composed from
 * index_select / scatter_add and elementwise ops, so gradients reach the node features, the weights
 * and the per-edge weights, to any order.  The public functions build their results in scopes of
 * their own, leaving the caller only the result. */
#include "nn/internal.h"

#include <stdio.h>
#include <stdlib.h>

static bool check_nodes(const char *op, const vs_tensor *x, const vs_graph_batch *g, const vs_tensor *w)
{
    char s[96];
    if (x->ndim != 2 || x->shape[0] != g->n_nodes) {
        vs_shape_str(x, s, sizeof s);
        vs_set_last_error(VS_ERR_SHAPE, "%s: node features %s must be [%lld, features] for this batch", op, s,
                          (long long)g->n_nodes);
        return false;
    }
    if (w && (w->ndim != 1 || w->shape[0] != g->n_edges)) {
        vs_shape_str(w, s, sizeof s);
        vs_set_last_error(VS_ERR_SHAPE, "%s: edge weights %s must be [%lld]", op, s, (long long)g->n_edges);
        return false;
    }
    return true;
}

/* sum over edges e into dst_e of coef_e * x[src_e]; coef [E] or NULL (all 1). */
static vs_tensor *propagate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *coef)
{
    if (g->n_edges == 0) return vs_mul_scalar(x, 0.0f); /* no messages: zeros, still connected to x */
    vs_tensor *msg = vs_index_select(x, 0, g->src, g->n_edges);
    if (coef) msg = vs_mul(msg, vs_reshape(coef, VS_SHAPE(g->n_edges, 1)));
    return vs_scatter_add(msg, 0, g->dst, g->n_nodes);
}

vs_tensor *vs_graph_aggregate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *w)
{
    if (!x || !g) return NULL;
    if (!check_nodes("graph_aggregate", x, g, w)) return NULL;
    vs_scope_begin();
    return vs_scope_return(propagate(x, g, w));
}

static vs_tensor *gcn_propagate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *w)
{
    if (g->n_edges == 0) return vs_reshape(x, x->ndim, x->shape); /* only self loops: d = 1 */
    if (!w) {
        bool prev = vs_set_grad_enabled(false);
        w = vs_tensor_full(VS_SHAPE(g->n_edges), 1.0f);
        vs_set_grad_enabled(prev);
    }
    /* d_i = 1 + sum_{e: dst_e = i} w_e;  norm_e = d_src^-1/2 w_e d_dst^-1/2;  self loop weight 1/d_i */
    vs_tensor *deg = vs_add_scalar(vs_scatter_add(w, 0, g->dst, g->n_nodes), 1.0f);
    vs_tensor *dinv = vs_pow_scalar(deg, -0.5f);
    vs_tensor *norm = vs_mul(vs_mul(vs_index_select(dinv, 0, g->src, g->n_edges), w),
                             vs_index_select(dinv, 0, g->dst, g->n_edges));
    vs_tensor *self = vs_mul(x, vs_reshape(vs_mul(dinv, dinv), VS_SHAPE(g->n_nodes, 1)));
    return vs_add(propagate(x, g, norm), self);
}

vs_tensor *vs_gcn_propagate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *w)
{
    if (!x || !g) return NULL;
    if (!check_nodes("gcn_propagate", x, g, w)) return NULL;
    vs_scope_begin();
    return vs_scope_return(gcn_propagate(x, g, w));
}

static vs_tensor *readout(vs_tensor *x, const vs_graph_batch *g, vs_module_kind kind)
{
    const char *op = vs_module_kind_name(kind);
    int64_t G = g->n_graphs, F = x->shape[1];
    if (G == 0) return vs_tensor_zeros(VS_SHAPE(0, F));
    switch (kind) {
    case VS_MODULE_SUM_READOUT:
        return vs_scatter_add(x, 0, g->node_graph, G);
    case VS_MODULE_MEAN_READOUT: {
        bool prev = vs_set_grad_enabled(false);
        vs_tensor *inv = vs_tensor_new(VS_SHAPE(G, 1));
        vs_set_grad_enabled(prev);
        if (!inv) return NULL;
        for (int64_t k = 0; k < G; k++) {
            int64_t c = g->node_ptr[k + 1] - g->node_ptr[k];
            inv->data[k] = c > 0 ? 1.0f / (float)c : 0.0f;
        }
        return vs_mul(vs_scatter_add(x, 0, g->node_graph, G), inv);
    }
    case VS_MODULE_MAX_READOUT: {
        /* nodes of a graph are contiguous: one slice and one max per graph */
        vs_tensor **rows = malloc((size_t)G * sizeof *rows);
        if (!rows) {
            vs_set_last_error(VS_ERR_NOMEM, "max_readout: out of memory");
            return NULL;
        }
        vs_tensor *y = NULL;
        bool ok = true;
        for (int64_t k = 0; k < G && ok; k++) {
            int64_t a = g->node_ptr[k], b = g->node_ptr[k + 1];
            rows[k] = b > a ? vs_max(vs_slice(x, 0, a, b), VS_AXIS(0), true) : vs_tensor_zeros(VS_SHAPE(1, F));
            ok = rows[k] != NULL;
        }
        if (ok) y = vs_concat((int)G, rows, 0);
        free(rows);
        return y;
    }
    default:
        vs_set_last_error(VS_ERR_ARG, "graph readout: %s is not a readout", op);
        return NULL;
    }
}

vs_tensor *vs_graph_readout(vs_tensor *x, const vs_graph_batch *g, vs_module_kind kind)
{
    if (!x || !g) return NULL;
    if (!check_nodes(vs_module_kind_name(kind), x, g, NULL)) return NULL;
    vs_scope_begin();
    return vs_scope_return(readout(x, g, kind));
}

vs_tensor *vs_gnn_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx)
{
    const char *op = vs_module_kind_name(m->kind);
    const vs_graph_batch *g = ctx->graph;
    if (!g) {
        vs_set_last_error(VS_ERR_ARG, "%s: the forward context has no graph batch", op);
        return NULL;
    }
    switch (m->kind) {
    case VS_MODULE_GCN_CONV: {
        vs_tensor *h = vs_module_forward(m->children[0], x, ctx); /* x W^T */
        return vs_add(vs_gcn_propagate(h, g, ctx->edge_weight), m->params[0]);
    }
    case VS_MODULE_GIN_CONV: {
        vs_tensor *eps = vs_module_param(m, "eps");
        vs_tensor *h = vs_add(vs_mul(x, vs_add_scalar(eps, 1.0f)), vs_graph_aggregate(x, g, ctx->edge_weight));
        return vs_module_forward(m->children[0], h, ctx);
    }
    default:
        return vs_graph_readout(x, g, m->kind);
    }
}
