/* gnn_batch.c - concatenating graphs of different sizes into one batch of node rows and edges. */
#include "nn/internal.h"

#include <stdlib.h>
#include <string.h>

void vs_graph_batch_clear(vs_graph_batch *b)
{
    if (!b) return;
    free(b->x);
    free(b->src);
    free(b->dst);
    free(b->node_graph);
    free(b->node_ptr);
    free(b->edge_ptr);
    memset(b, 0, sizeof *b);
}

/* malloc of n items of size sz, checked for overflow; n = 0 gives a 1-byte block (never NULL on success). */
static void *alloc_n(int64_t n, size_t sz)
{
    size_t bytes;
    if (n < 0 || !vs_size_mul((size_t)n, sz, &bytes)) return NULL;
    return malloc(bytes ? bytes : 1);
}

vs_status vs_graph_batch_init(vs_graph_batch *b, const vs_graph *graphs, const int64_t *idx, int64_t n,
                              int64_t n_features, vs_error *err)
{
    memset(b, 0, sizeof *b);
    if (n < 0 || n_features < 1) return vs_error_set(err, VS_ERR_ARG, "graph batch: need n >= 0 graphs and features >= 1");
    int64_t nodes = 0, edges = 0;
    for (int64_t k = 0; k < n; k++) {
        const vs_graph *g = &graphs[idx ? idx[k] : k];
        if (g->n_nodes < 0 || g->n_edges < 0 || (g->n_nodes && !g->x) || (g->n_edges && (!g->src || !g->dst)))
            return vs_error_set(err, VS_ERR_FORMAT, "graph %lld: malformed (negative sizes or missing arrays)",
                                (long long)(idx ? idx[k] : k));
        if (g->n_nodes > INT64_MAX / 2 - nodes || g->n_edges > INT64_MAX / 2 - edges)
            return vs_error_set(err, VS_ERR_NOMEM, "graph batch: too many nodes or edges");
        nodes += g->n_nodes;
        edges += g->n_edges;
    }
    size_t feat;
    if (!vs_size_mul((size_t)nodes, (size_t)n_features, &feat) || feat > (size_t)INT64_MAX)
        return vs_error_set(err, VS_ERR_NOMEM, "graph batch: too many node features");
    b->n_graphs = n, b->n_nodes = nodes, b->n_edges = edges, b->n_features = n_features;
    b->x = alloc_n((int64_t)feat, sizeof(float));
    b->src = alloc_n(edges, sizeof(int64_t));
    b->dst = alloc_n(edges, sizeof(int64_t));
    b->node_graph = alloc_n(nodes, sizeof(int64_t));
    b->node_ptr = alloc_n(n + 1, sizeof(int64_t));
    b->edge_ptr = alloc_n(n + 1, sizeof(int64_t));
    if (!b->x || !b->src || !b->dst || !b->node_graph || !b->node_ptr || !b->edge_ptr) {
        vs_graph_batch_clear(b);
        return vs_error_set(err, VS_ERR_NOMEM, "graph batch: out of memory");
    }
    int64_t v0 = 0, e0 = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t gi = idx ? idx[k] : k;
        const vs_graph *g = &graphs[gi];
        b->node_ptr[k] = v0;
        b->edge_ptr[k] = e0;
        for (int64_t e = 0; e < g->n_edges; e++) {
            if (g->src[e] < 0 || g->src[e] >= g->n_nodes || g->dst[e] < 0 || g->dst[e] >= g->n_nodes) {
                vs_graph_batch_clear(b);
                return vs_error_set(err, VS_ERR_FORMAT, "graph %lld: edge %lld (%lld -> %lld) outside its %lld nodes",
                                    (long long)gi, (long long)e, (long long)g->src[e], (long long)g->dst[e],
                                    (long long)g->n_nodes);
            }
            b->src[e0 + e] = v0 + g->src[e];
            b->dst[e0 + e] = v0 + g->dst[e];
        }
        for (int64_t v = 0; v < g->n_nodes; v++) b->node_graph[v0 + v] = k;
        if (g->n_nodes) memcpy(b->x + v0 * n_features, g->x, (size_t)(g->n_nodes * n_features) * sizeof(float));
        v0 += g->n_nodes;
        e0 += g->n_edges;
    }
    b->node_ptr[n] = v0;
    b->edge_ptr[n] = e0;
    return VS_OK;
}

vs_tensor *vs_graph_batch_features(const vs_graph_batch *b)
{
    return vs_tensor_from(2, (int64_t[]){b->n_nodes, b->n_features}, b->x);
}
