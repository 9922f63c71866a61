/* snx_module.c - a Siamese nn module (MLP or GNN encoder) as the model SNX explains. */
#include "versus/gnn.h"
#include "versus/nn.h"
#include "versus/snx.h"

static vs_module *encoder(void *ctx)
{
    vs_module *m = ((vs_siamese_module *)ctx)->module;
    vs_module *e = m->kind == VS_MODULE_SIAMESE ? vs_module_child(m, "encoder") : NULL;
    return e ? e : m;
}

static vs_tensor *embed_rows(void *ctx, vs_tensor *x)
{
    vs_forward_ctx fc = {0};
    return vs_module_forward(encoder(ctx), x, &fc);
}

/* Layers [0, end) of the encoder on one graph; end < 0: all of them. */
static vs_tensor *graph_range(void *ctx, const vs_graph *g, vs_tensor *w, int64_t end)
{
    vs_module *enc = encoder(ctx);
    vs_graph_batch b;
    vs_error err;
    if (vs_graph_batch_init(&b, g, NULL, 1, ((vs_siamese_module *)ctx)->n_node_features, &err) != VS_OK) {
        vs_set_last_error(err.code, "%s", err.msg);
        return NULL;
    }
    vs_scope_begin();
    vs_forward_ctx fc = {.graph = &b, .edge_weight = w};
    vs_tensor *x = vs_graph_batch_features(&b);
    vs_tensor *y = vs_sequential_forward_range(enc, x, &fc, 0, end < 0 ? enc->n_children : end, NULL);
    y = vs_scope_return(y);
    vs_graph_batch_clear(&b);
    return y;
}

static vs_tensor *embed_graph(void *ctx, const vs_graph *g, vs_tensor *w) { return graph_range(ctx, g, w, -1); }

static vs_tensor *embed_nodes(void *ctx, const vs_graph *g, vs_tensor *w)
{
    vs_module *enc = encoder(ctx);
    int64_t end = enc->n_children;
    for (int64_t i = 0; i < enc->n_children; i++) {
        vs_module_kind k = enc->children[i]->kind;
        if (k == VS_MODULE_MEAN_READOUT || k == VS_MODULE_SUM_READOUT || k == VS_MODULE_MAX_READOUT) {
            end = i;
            break;
        }
    }
    return graph_range(ctx, g, w, end);
}

vs_siamese vs_siamese_from_module(vs_siamese_module *sm)
{
    vs_module_train(sm->module, false);
    vs_siamese f = {embed_rows, embed_graph, embed_nodes, sm};
    return f;
}
