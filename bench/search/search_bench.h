/* bench/search/search_bench.h - the parts of the search experiment (bench/search/;
 * versus/experiment.h has its entry point): data and backbones, and the explainers run on one pair
 * with their pixel maps, the convergence study.  Not installed. */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_SEARCH_H
#define VERSUS_EXPLAIN_EXPERIMENT_SEARCH_H

#include "versus/versus.h"
#include "versus/search.h"

#include <math.h>
#include <stdio.h>

#define VS_SEARCH_PLANTED_CLASSES 4

/* n gray images [n, 1, side, side]: faint noise, one bright object of class y (square, plus, ring,
 * cross; side/3 wide) and a fainter distractor of another class; masks [n, side * side] mark the class object
 * (new arrays; the caller frees the data set and free()s the masks). */
vs_status vs_search_planted_images(int64_t n, int side, uint64_t seed, vs_dataset **out, uint8_t **masks, vs_error *err);
/* masks[k] = X[k] > threshold (the digit of an MNIST image). */
void vs_search_foreground_masks(const vs_dataset *d, float threshold, uint8_t *masks);
/* A GAP CNN (3 convs, pools to a 3 x 3 map of 28x28 images, or 7 x 7 when fine: no last pool; GAP, a
 * linear layer: the classes, or a 16-d embedding) trained on train as a classifier or as a Siamese
 * model (cosine, random pairs); *accuracy its held-out accuracy. */
vs_status vs_search_backbone_train(const vs_dataset *train, bool siamese, bool fine, int64_t epochs, uint64_t seed, FILE *progress,
                                   vs_module **out, double *accuracy, vs_error *err);
/* The backbone as a search model: feature maps before the GAP; embedding: the classifier's GAP
 * features, the Siamese model's linear embedding of them. */
vs_search_model vs_search_backbone_model(vs_module *m, vs_search_similarity sim);

/* One pair to explain, with what every method needs. */
typedef struct vs_search_case {
    const vs_search_model *model;
    vs_tensor *x, *y;             /* [1, 1, H, W] query and retrieved */
    vs_tensor *bx, *by;           /* blurred backgrounds */
    vs_tensor *mx, *my;           /* mean-colour backgrounds (LIME, SBSM) */
    const uint8_t *qmask, *rmask; /* [H W] the shared object in each */
    int h, w;
    int32_t *qseg, *rseg;         /* [H W] superpixels, owned */
    int64_t nq_seg, nr_seg;
    int64_t budget1, budget2;     /* sampled methods: coalitions of order 1 and 2 */
    uint64_t seed;
} vs_search_case;

typedef struct vs_search_method_row {
    const char *name;             /* as in Table 1: "SBSM", "PSHAP", ... */
    /* first order: heat [H W] (larger = more important) and |sum - (v(N) - v(empty))| (NaN: not defined) */
    vs_status (*first)(const vs_search_case *c, float *heat, double *ineff, vs_error *err);
    /* second order: the query object projected onto the retrieved pixels [H W], inefficiency */
    vs_status (*second)(const vs_search_case *c, float *proj, double *ineff, vs_error *err);
} vs_search_method_row;

/* The retrieved object's mask averaged over the backbone's feature cells and upsampled as the
 * feature-map methods' maps are (proj [H W]): the map of a perfect cell-level explanation, whose
 * mIoU bounds what SAM, IG-SAM and KSAM can reach on these cells. */
vs_status vs_search_cell_oracle(const vs_search_case *c, float *proj, vs_error *err);

/* KSAM's second-order budget for v2 of n players: max(budget2, n^2 + 2), twice the n(n - 1)/2 pair
 * terms plus the n + 2 exact constraints (7 x 7 maps: 98 players, 4753 pairs; fewer coalitions leave
 * the fit underdetermined); 3 x 3 maps keep budget2 (n^2 + 2 = 326). */
int64_t vs_search_ksam2_budget(int64_t budget2, int64_t players);

/* The methods of Table 1 in its column order. */
extern const vs_search_method_row vs_search_methods[];
extern const int vs_search_n_methods;

/* A json number, or null when v is not finite. */
static inline vs_json *vs_search_number_or_null(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* evals_ratio_15 and its variants as the claims table reads them (NAN: not measured). */
typedef struct vs_search_study_ratios {
    double mlp, product;              /* per-pair permutation / Kernel-Direct, mean MSE over the games */
    double mlp_leverage, product_leverage;
    double mlp_per_game;              /* the geometric mean of each game's own ratio */
    double readings[4];               /* the other readings of the networks (VS_STUDY_MLP_BIASED ... SHALLOW) */
} vs_search_study_ratios;

/* The convergence study (Figs. 5, 10; bench/search/study.c) on `games` random games of
 * each kind into rep and obj, its ratios into *out. */
vs_status vs_search_study(vs_report *rep, int64_t games, uint64_t seed, vs_json *obj, vs_search_study_ratios *out, vs_error *err);

#endif
