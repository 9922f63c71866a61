/* fuzz_tu.c - libFuzzer entry for vs_parse_tu_mem.  The input holds the six TU files separated by
 * '#' in the order A, graph_indicator, graph_labels, node_labels, node_attributes, edge_labels;
 * a missing or empty optional part is absent.  Checks the graph invariants of what loads. */
#include "versus/data_io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vs_tu_part parts[6];
    memset(parts, 0, sizeof parts);
    size_t start = 0;
    for (int k = 0; k < 6 && start <= size; k++) {
        const uint8_t *hash = memchr(data + start, '#', size - start);
        size_t end = hash ? (size_t)(hash - data) : size;
        parts[k].data = data + start;
        parts[k].n = end - start;
        if (k >= 3 && parts[k].n == 0) parts[k].data = NULL;
        start = end + 1;
    }
    if (!parts[0].data || !parts[1].data || !parts[2].data) return 0;
    vs_tu_files f = {parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]};
    vs_dataset *d = NULL;
    vs_error err;
    vs_status st = vs_parse_tu_mem(&f, "FUZZ", &d, &err);
    if (st != VS_OK) {
        if (d || err.code != st || err.msg[0] == '\0') abort();
        return 0;
    }
    if (d->n < 1 || d->n_classes < 1 || d->n_node_features < 1) abort();
    for (int64_t i = 0; i < d->n; i++) {
        const vs_graph *g = &d->graphs[i];
        if (d->y[i] < 0 || d->y[i] >= d->n_classes || g->n_nodes < 1 || g->n_edges % 2) abort();
        for (int64_t e = 0; e < g->n_edges; e++) {
            int64_t r = g->rev[e];
            if (g->src[e] < 0 || g->src[e] >= g->n_nodes || g->dst[e] < 0 || g->dst[e] >= g->n_nodes) abort();
            if (r < 0 || r >= g->n_edges || g->rev[r] != e || g->src[r] != g->dst[e]) abort();
        }
    }
    vs_dataset_free(d);
    return 0;
}
