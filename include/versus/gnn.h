/* versus/gnn.h - batches of graphs and the graph layers of Siamese GNNs (GCN, GIN, readouts).
 *
 * A batch concatenates the node rows of several graphs of different sizes: node features
 * [total_nodes, F], edges as (src, dst) pairs of batch node ids, and the graph each node belongs to.
 * Nodes of graph g occupy rows [node_ptr[g], node_ptr[g+1]) and its edges [edge_ptr[g], edge_ptr[g+1]),
 * so an explainer maps a per-edge mask of the batch back to each graph by these offsets.
 *
 * Graph layers are modules (versus/nn.h); their forward reads the batch and an optional per-edge
 * weight tensor from the forward context.  Messages flow src -> dst, as in PyTorch Geometric, and
 * gradients flow into the edge weights (GNNExplainer, PGExplainer and SNX optimise edge masks
 * through them).  Every operation is built from differentiable ops (index_select, scatter_add), so
 * second derivatives work too.
 */
#ifndef VERSUS_GNN_H
#define VERSUS_GNN_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/nn.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Owns every array; vs_graph_batch_clear() frees them. */
struct vs_graph_batch {
    int64_t n_graphs, n_nodes, n_edges, n_features;
    float *x;              /* [n_nodes, n_features] node features */
    int64_t *src, *dst;    /* [n_edges] batch node ids: a message goes from src to dst */
    int64_t *node_graph;   /* [n_nodes] graph of each node, nondecreasing */
    int64_t *node_ptr;     /* [n_graphs + 1] first node of each graph */
    int64_t *edge_ptr;     /* [n_graphs + 1] first edge of each graph */
};

/* Batch graphs[idx[0]], ..., graphs[idx[n-1]] (idx NULL: graphs[0..n)), each with n_features
 * features per node.  Checks every edge end against its graph's node count. */
vs_status vs_graph_batch_init(vs_graph_batch *b, const vs_graph *graphs, const int64_t *idx, int64_t n,
                              int64_t n_features, vs_error *err);
void vs_graph_batch_clear(vs_graph_batch *b);           /* free the arrays, zero the struct */
vs_tensor *vs_graph_batch_features(const vs_graph_batch *b); /* new [n_nodes, n_features] copy of x */

/* ---- functional forms (what the layers compute) -------------------------------------------------- */

/* y_i = sum_{e: dst_e = i} w_e x_{src_e}; x [n_nodes, F], w [n_edges] or NULL (all 1). */
vs_tensor *vs_graph_aggregate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *w);
/* y = D^-1/2 (A + I) D^-1/2 x with A_ij = w_e for the edge j -> i and d_i = 1 + sum_{e: dst_e = i} w_e
 * (PyTorch Geometric's gcn_norm: weighted in-degree plus a self loop of weight 1). */
vs_tensor *vs_gcn_propagate(vs_tensor *x, const vs_graph_batch *g, vs_tensor *w);
/* One row per graph: mean / sum / max of its node rows (an empty graph gives a zero row);
 * kind is VS_MODULE_MEAN_READOUT, VS_MODULE_SUM_READOUT or VS_MODULE_MAX_READOUT. */
vs_tensor *vs_graph_readout(vs_tensor *x, const vs_graph_batch *g, vs_module_kind kind);

/* ---- layers ---------------------------------------------------------------------------------------- */

/* GCNConv: y = D^-1/2 (A+I) D^-1/2 (x W^T) + b; "bias" [out], "lin.weight" [out,in] (Glorot init, bias 0). */
vs_module *vs_gcn_conv_new(int64_t in, int64_t out, vs_rng *r);
/* GINConv: y = nn((1 + eps) x_i + sum_j w_ij x_j), nn = Linear(in,hidden), ReLU, Linear(hidden,out);
 * "eps" (a parameter when train_eps, else a buffer), "nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias". */
vs_module *vs_gin_conv_new(int64_t in, int64_t hidden, int64_t out, float eps, bool train_eps, vs_rng *r);
/* kind: VS_MODULE_MEAN_READOUT, VS_MODULE_SUM_READOUT or VS_MODULE_MAX_READOUT. */
vs_module *vs_readout_new(vs_module_kind kind);

#ifdef __cplusplus
}
#endif
#endif
