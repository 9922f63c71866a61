/* versus/dataset.h - the in-memory data set every loader and generator produces.
 *
 * One struct for the three kinds of data versus compares: tabular rows (one-hot encoded, with the
 * major -> minor feature grouping SNX needs), images (NCHW in [0,1]) and graphs (edge lists with
 * node features).  A vs_dataset owns every array it points to; free it with vs_dataset_free().
 * Ground truth planted by synthetic generators travels with the data (truth fields). */
#ifndef VERSUS_DATASET_H
#define VERSUS_DATASET_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_data_kind { VS_DATA_TABULAR = 0, VS_DATA_IMAGES = 1, VS_DATA_GRAPHS = 2 } vs_data_kind;

/* A major feature ("education") and its one-hot minor columns [first, first + count) of X. */
typedef struct vs_feature_group {
    char *name;
    int64_t first, count;
} vs_feature_group;

/* One undirected graph.  Each undirected edge {u,v} is stored twice, as (u,v) and (v,u), so message
 * passing is a plain scatter over the edge list; edge e and its reverse are paired by rev[e]. */
typedef struct vs_graph {
    int64_t n_nodes, n_edges;   /* n_edges counts directed edges (twice the undirected count) */
    int64_t *src, *dst;         /* [n_edges] node ids in [0, n_nodes) */
    int64_t *rev;               /* [n_edges] index of the reverse edge */
    float *x;                   /* [n_nodes, n_node_features] node features (one-hot labels) */
    int64_t *edge_label;        /* [n_edges] or NULL */
    uint8_t *edge_truth;        /* [n_edges] 1 = planted motif edge, or NULL when unknown */
} vs_graph;

typedef struct vs_dataset {
    vs_data_kind kind;
    char *name;                 /* "adult", "mnist", "synthetic-tabular", ... */
    int64_t n;                  /* number of examples */
    int64_t n_classes;
    char **class_names;         /* [n_classes] or NULL */
    int64_t *y;                 /* [n] labels in [0, n_classes) */

    /* tabular and images: X is [n, dim] row-major, dim = prod(shape[0..ndim)). */
    int ndim;                   /* 1 for tabular ([p]); 3 for images ([c,h,w]); 0 for graphs */
    int64_t shape[3];
    int64_t dim;
    float *X;

    /* tabular only */
    char **feature_names;       /* [dim] minor feature descriptions: "age in [25,32)", "sex=Male" */
    int64_t n_groups;
    vs_feature_group *groups;   /* [n_groups] covering the columns in order */

    /* graphs only */
    vs_graph *graphs;           /* [n] */
    int64_t n_node_features;

    /* planted ground truth (synthetic data), NULL when unknown */
    uint8_t *feature_truth;     /* tabular: [dim] 1 = column of a salient major feature; images: [dim] mask */
    int64_t *group_truth;       /* tabular: [n_groups] 1 = salient major feature */
} vs_dataset;

/* Allocate an empty data set of the given kind (all arrays NULL); NULL when out of memory. */
vs_dataset *vs_dataset_new(vs_data_kind kind, const char *name);
/* Free the data set and everything it owns; NULL is fine. */
void vs_dataset_free(vs_dataset *d);
/* Free the arrays of one graph (not the struct itself, which lives in an array). */
void vs_graph_clear(vs_graph *g);

#ifdef __cplusplus
}
#endif
#endif
