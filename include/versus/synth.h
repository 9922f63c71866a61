/* versus/synth.h - synthetic data sets with planted ground truth.
 *
 * Three generators whose explanation is known by construction, so an explainer can be scored
 * against the truth fields of vs_dataset (feature_truth, group_truth, vs_graph.edge_truth):
 *   - tabular "credit applicants" (SNX Fig. 1): one-hot categorical features, the label a rule over
 *     a few salient major features, plus correlated (non-causal) and pure-noise distractors;
 *   - graphs: Barabasi-Albert / Erdos-Renyi backgrounds, positives carry a planted motif;
 *   - images: colored MNIST (GANMEX colour ablation) and "shapes" (class set by one known region).
 *
 * Determinism: every generator draws only from a vs_rng (seeded from opts.seed or passed in) and
 * uses integer arithmetic or exactly rounded IEEE operations (no libm), so the same seed gives
 * bit-identical data on every run and machine.
 *
 * Ownership: a generator stores a new vs_dataset in *out (the caller frees it with vs_dataset_free);
 * on failure *out is NULL, err says why, nothing leaks.  Inputs are never modified. */
#ifndef VERSUS_SYNTH_H
#define VERSUS_SYNTH_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tabular: credit applicants ------------------------------------------------------------- */

#define VS_SYNTH_TABULAR_MAX_FEATURES 16

/* Major features are the first n_features of a fixed catalogue (income, employment, housing,
 * credit_history, age_band, purpose, savings, phone, deposits, marital, ...), each with 2-6 ordered
 * categories (index 0 = least favourable).  A seeded permutation picks their roles:
 *   salient S (n_salient): category c of a k-category feature scores w = 2c - (k - 1);
 *     clean label y* = 1[sum_S w > 0]; a tie (sum 0) goes to 1[2 c_{S1} >= k_{S1}] (first salient);
 *     y = y* flipped with probability label_noise.  group_truth / feature_truth mark S.
 *   correlated (n_correlated): with probability corr_strength copy a salient parent's category
 *     (scaled c_d = c_p * k_d / k_p), else uniform - predictive of y, but not causal;
 *   noise (the rest): uniform, independent of everything.
 * Salient and noise categories are uniform.  Class 0 = "reject", 1 = "approve". */
typedef struct vs_synth_tabular_opts {
    int64_t n;              /* rows (>= 1); default 1000 */
    int64_t n_features;     /* major features, 2..VS_SYNTH_TABULAR_MAX_FEATURES; default 10 */
    int64_t n_salient;      /* 1..n_features; default 3 */
    int64_t n_correlated;   /* 0..n_features - n_salient; default 2 */
    double label_noise;     /* probability of flipping y*, [0, 0.5]; default 0.1 */
    double corr_strength;   /* probability a correlated feature copies its parent, [0, 1]; default 0.8 */
    uint64_t seed;          /* default 1 */
} vs_synth_tabular_opts;

void vs_synth_tabular_defaults(vs_synth_tabular_opts *o);   /* fill o with the defaults above */
/* X [n, p] one-hot (exactly one 1 per group per row), p = sum of category counts; feature_names
 * "income=high"; groups one per major feature; truth as described.  VS_ERR_ARG on bad options. */
vs_status vs_synth_tabular(const vs_synth_tabular_opts *o, vs_dataset **out, vs_error *err);

/* ---- graphs: planted motifs ------------------------------------------------------------------ */

/* Node types, one-hot in vs_graph.x (n_node_features = VS_SYNTH_N_ATOMS). */
typedef enum vs_synth_atom { VS_ATOM_C = 0, VS_ATOM_N = 1, VS_ATOM_O = 2, VS_SYNTH_N_ATOMS = 3 } vs_synth_atom;

typedef enum vs_synth_motif {
    VS_MOTIF_NONE = 0,
    VS_MOTIF_CYCLE5,        /* 5-cycle: 5 nodes, 5 edges */
    VS_MOTIF_CYCLE6,        /* 6-cycle: 6 nodes, 6 edges */
    VS_MOTIF_HOUSE,         /* square 0-1-2-3 plus roof node 4 on 0,1: 5 nodes, 6 edges */
    VS_MOTIF_NITRO_RING     /* 6-ring with one N, a nitro group N(-O)(-O) on the ring: 9 nodes, 9 edges */
} vs_synth_motif;

typedef enum vs_synth_background { VS_BG_BARABASI_ALBERT = 0, VS_BG_ERDOS_RENYI = 1 } vs_synth_background;

/* Every graph has the same node-count distribution in both classes: total = b + motif_nodes(motif)
 * with b uniform in [min_nodes, max_nodes]; a negative fills the motif's share with background
 * (or with a decoy motif plus background).  Background node types: C 3/4, N 1/8, O 1/8; cycle and
 * house motif nodes use the same distribution (the motif is pure structure); the nitro ring has
 * fixed types.  The motif is attached by attach_edges edges between distinct motif nodes (ring
 * nodes for the nitro ring) and random background nodes; node ids are then shuffled and the
 * directed edges sorted by (src, dst).  ER backgrounds are made connected by joining components
 * with one random edge each.  edge_truth = 1 on both directions of every motif edge (decoy and
 * attachment edges are 0); edge_label is NULL.  Class 0 = "negative", 1 = "positive" (motif). */
typedef struct vs_synth_graph_opts {
    int64_t n;                      /* graphs (>= 1); default 200 */
    int64_t min_nodes, max_nodes;   /* background size range, 4 <= min <= max <= 1000; default 10, 30 */
    vs_synth_background background; /* default Barabasi-Albert */
    int64_t ba_m;                   /* BA: edges per new node, 1..min_nodes-1; default 1 */
    double er_p;                    /* ER: edge probability, [0, 1]; default 0.15 */
    vs_synth_motif motif;           /* planted in positives, not NONE; default HOUSE */
    vs_synth_motif decoy;           /* planted in negatives (NONE or != motif); default NONE */
    double positive_fraction;       /* probability a graph is positive, [0, 1]; default 0.5 */
    int64_t attach_edges;           /* 1 or 2; default 1 */
    uint64_t seed;                  /* default 1 */
} vs_synth_graph_opts;

void vs_synth_graph_defaults(vs_synth_graph_opts *o);   /* fill o with the defaults above */
int64_t vs_synth_motif_nodes(vs_synth_motif m);         /* nodes of the motif (0 for NONE) */
int64_t vs_synth_motif_edges(vs_synth_motif m);         /* undirected edges of the motif (0 for NONE) */
/* Graph data set as described; kind VS_DATA_GRAPHS, n_node_features = VS_SYNTH_N_ATOMS. */
vs_status vs_synth_graphs(const vs_synth_graph_opts *o, vs_dataset **out, vs_error *err);

/* ---- images ---------------------------------------------------------------------------------- */

/* Colored (Fashion-)MNIST: gray [n,1,h,w] -> [n,3,h,w] where image i is put in one channel
 * colour[i] ~ uniform{0 red, 1 green, 2 blue}, drawn independently of y:
 *   out[i, c] = (c == colour[i]) ? gray[i, 0] : 0, so sum_c out[i, c] = gray[i, 0] exactly.
 * y, class names and n_classes are copied; a pixel mask in feature_truth is repeated over the three
 * channels.  colours (may be NULL) receives a new int64 array [n] the caller frees with free(). */
vs_status vs_synth_colorize(const vs_dataset *gray, vs_rng *rng, vs_dataset **out, int64_t **colours,
                            vs_error *err);

/* Shapes: [n, 1, size, size] images on faint noise, class decided by the top-left quadrant
 * R = [0, size/2) x [0, size/2) alone: y = 1 iff R holds a filled square; for y = 0, R holds
 * nothing, a plus or a bar (each 1/3).  n_distractors random shapes (squares, pluses, bars) lie
 * entirely outside R.  Shape side a = size/4 (>= 3), intensity in [0.7, 1); noise in [0, noise).
 * feature_truth = mask of R.  Class 0 = "other", 1 = "square". */
typedef struct vs_synth_shapes_opts {
    int64_t n;                 /* images (>= 1); default 500 */
    int64_t size;              /* side, 12..256; default 16 */
    int64_t n_distractors;     /* 0..8; default 3 */
    float noise;               /* background noise amplitude, [0, 0.5]; default 0.1 */
    double positive_fraction;  /* probability of y = 1, [0, 1]; default 0.5 */
    uint64_t seed;             /* default 1 */
} vs_synth_shapes_opts;

void vs_synth_shapes_defaults(vs_synth_shapes_opts *o);  /* fill o with the defaults above */
vs_status vs_synth_shapes(const vs_synth_shapes_opts *o, vs_dataset **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
