/* graph_dir.c - a folder of graphs as every verb reads it: a set written by `versus data export`
 * (node_features.npy, node_graph.npy, edges.npy, y.npy) or a TU Dortmund folder (PREFIX_A.txt, ...,
 * the prefix found from its one *_A.txt file).  Every index is checked before a graph is built. */
#include "versus/data_io.h"
#include "versus/npy.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_edge(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Edges of graph g (global ids e[k] for k in [e0, e1)) into local lists with the reverse of each. */
static vs_status build_edges(vs_graph *gr, const int64_t *e, int64_t e0, int64_t e1, int64_t first, const char *path,
                             vs_error *err)
{
    int64_t ne = e1 - e0;
    gr->n_edges = ne;
    if (!ne) return VS_OK;
    int64_t(*s)[3] = malloc((size_t)ne * sizeof *s); /* src, dst, index in the file order */
    gr->src = malloc((size_t)ne * sizeof *gr->src);
    gr->dst = malloc((size_t)ne * sizeof *gr->dst);
    gr->rev = malloc((size_t)ne * sizeof *gr->rev);
    if (!s || !gr->src || !gr->dst || !gr->rev) {
        free(s);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %" PRId64 " edges", path, ne);
    }
    for (int64_t k = 0; k < ne; k++) {
        gr->src[k] = s[k][0] = e[2 * (e0 + k)] - first;
        gr->dst[k] = s[k][1] = e[2 * (e0 + k) + 1] - first;
        s[k][2] = k;
    }
    qsort(s, (size_t)ne, sizeof *s, cmp_edge);
    vs_status st = VS_OK;
    for (int64_t k = 0; k < ne && !st; k++) {
        int64_t key[3] = {gr->dst[k], gr->src[k], 0};
        const int64_t(*hit)[3] = bsearch(key, s, (size_t)ne, sizeof *s, cmp_edge);
        if (!hit)
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: edge %" PRId64 " -> %" PRId64 " has no reverse edge (graphs are undirected, each edge is stored both ways)",
                              path, gr->src[k] + first, gr->dst[k] + first);
        else
            gr->rev[k] = (*hit)[2];
    }
    free(s);
    return st;
}

/* The arrays of an exported set, checked against each other, into graphs. */
static vs_status from_arrays(const char *dir, const vs_tensor *x, const vs_i64_array *ng, const vs_i64_array *ed,
                             const vs_i64_array *y, vs_dataset *d, vs_error *err)
{
    char path[PATH_MAX];
    int64_t n = ng->size, F = x->ndim == 2 ? x->shape[1] : 0, G = y->data ? y->size : n ? ng->data[n - 1] + 1 : 0;
    snprintf(path, sizeof path, "%s/node_features.npy", dir);
    if (x->ndim != 2 || x->shape[0] != n || ng->ndim != 1)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: node features must be [nodes, F] with one row per entry of node_graph.npy (%" PRId64 ")", path, n);
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    if (ed->ndim != 2 || ed->shape[1] != 2) return vs_error_set(err, VS_ERR_FORMAT, "%s: edges must be [E, 2]", path);
    for (int64_t k = 0; k < ed->size; k++)
        if (ed->data[k] < 0 || ed->data[k] >= n)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: edge %" PRId64 " names node %" PRId64 ", expected a node id in [0, %" PRId64 ")",
                                path, k / 2, ed->data[k], n);
    snprintf(path, sizeof path, "%s/node_graph.npy", dir);
    if (G < 1) return vs_error_set(err, VS_ERR_FORMAT, "%s: no graphs", path);
    for (int64_t i = 0; i < n; i++)
        if (ng->data[i] < 0 || ng->data[i] >= G || (i && ng->data[i] < ng->data[i - 1]))
            return vs_error_set(err, VS_ERR_FORMAT, "%s: entry %" PRId64 " is %" PRId64 ", expected graph ids in [0, %" PRId64 ") that never decrease",
                                path, i, ng->data[i], G);
    if ((size_t)G > SIZE_MAX / sizeof(vs_graph) || vs_mem_check((size_t)G, sizeof(vs_graph), path, err))
        return VS_ERR_NOMEM;
    d->n = G;
    d->n_node_features = F;
    d->graphs = calloc((size_t)G, sizeof *d->graphs);
    d->y = calloc((size_t)G, sizeof *d->y);
    if (!d->graphs || !d->y) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %" PRId64 " graphs", path, G);
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    int64_t node = 0, edge = 0, m = ed->shape[0];
    for (int64_t g = 0; g < G; g++) {
        vs_graph *gr = &d->graphs[g];
        int64_t first = node;
        while (node < n && ng->data[node] == g) node++;
        gr->n_nodes = node - first;
        int64_t e0 = edge;
        for (; edge < m && ed->data[2 * edge] >= first && ed->data[2 * edge] < node; edge++)
            if (ed->data[2 * edge + 1] < first || ed->data[2 * edge + 1] >= node)
                return vs_error_set(err, VS_ERR_FORMAT, "%s: edge %" PRId64 " joins node %" PRId64 " of graph %" PRId64 " to node %" PRId64 " of another graph",
                                    path, edge, ed->data[2 * edge], g, ed->data[2 * edge + 1]);
        gr->x = malloc((size_t)(gr->n_nodes * F + 1) * sizeof *gr->x);
        if (!gr->x) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
        memcpy(gr->x, x->data + first * F, (size_t)(gr->n_nodes * F) * sizeof *gr->x);
        vs_status st = build_edges(gr, ed->data, e0, edge, first, path, err);
        if (st) return st;
    }
    if (edge < m)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: edge %" PRId64 " (%" PRId64 " -> %" PRId64 ") is out of order or names no node; edges are grouped by graph as data export writes them",
                            path, edge, ed->data[2 * edge], ed->data[2 * edge + 1]);
    int64_t k = 1;
    for (int64_t g = 0; g < G; g++) {
        d->y[g] = y->data ? y->data[g] : 0;
        if (d->y[g] < 0 || d->y[g] > 1000000)
            return vs_error_set(err, VS_ERR_FORMAT, "%s/y.npy: label %" PRId64 " of graph %" PRId64 " is not a class index", dir, d->y[g], g);
        if (d->y[g] + 1 > k) k = d->y[g] + 1;
    }
    d->class_names = calloc((size_t)k, sizeof *d->class_names);
    if (!d->class_names) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    d->n_classes = k;
    for (int64_t c = 0; c < k; c++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64, c);
        if (!(d->class_names[c] = strdup(buf))) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    }
    return VS_OK;
}

static vs_status load_export(const char *dir, vs_dataset **out, vs_error *err)
{
    char path[PATH_MAX];
    vs_tensor *x = NULL;
    vs_i64_array ng = {0}, ed = {0}, y = {0};
    vs_status st;
    snprintf(path, sizeof path, "%s/node_features.npy", dir);
    st = vs_npy_read(path, &x, err);
    snprintf(path, sizeof path, "%s/node_graph.npy", dir);
    if (!st) st = vs_npy_read_i64(path, &ng, err);
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    if (!st) st = vs_npy_read_i64(path, &ed, err);
    snprintf(path, sizeof path, "%s/y.npy", dir);
    if (!st && access(path, F_OK) == 0) st = vs_npy_read_i64(path, &y, err);
    vs_dataset *d = st ? NULL : vs_dataset_new(VS_DATA_GRAPHS, "graphs");
    if (!st && !d) st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    if (!st) st = from_arrays(dir, x, &ng, &ed, &y, d, err);
    if (st) vs_dataset_free(d);
    else *out = d;
    vs_tensor_free(x);
    vs_i64_array_free(&ng);
    vs_i64_array_free(&ed);
    vs_i64_array_free(&y);
    return st;
}

vs_status vs_load_graph_dir(const char *dir, vs_dataset **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!dir || !out) return vs_error_set(err, VS_ERR_ARG, "vs_load_graph_dir: NULL argument");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/node_features.npy", dir);
    if (access(path, F_OK) == 0) return load_export(dir, out, err);
    DIR *dp = opendir(dir);
    if (!dp) return vs_error_set(err, VS_ERR_IO, "%s: not a folder of graphs (cannot open it)", dir);
    char prefix[256] = "";
    int found = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, "_A.txt") == 0 && len - 6 < sizeof prefix) {
            if (found++ == 0) snprintf(prefix, sizeof prefix, "%.*s", (int)(len - 6), e->d_name);
        }
    }
    closedir(dp);
    if (found != 1)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: %s (a graph folder holds node_features.npy from 'versus data export', or one TU set PREFIX_A.txt, ...)",
                            dir, found ? "more than one *_A.txt, give tu:DIR/PREFIX" : "no node_features.npy and no *_A.txt");
    return vs_load_tu(dir, prefix, out, err);
}
