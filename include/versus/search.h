/* versus/search.h - axiomatic explanations of similarity and search (Hamilton et al., "Axiomatic
 * explanations for visual search, retrieval, and similarity learning", ICLR 2022): the value functions
 * of a query/retrieved pair as cooperative games (versus/games.h), and the first- and second-order
 * explainers built on them.
 *
 * A search model compares two images through a backbone: a sequential encoder whose layers
 * [0, split) give feature maps f(x) [N, C, h, w] and whose layers [split, end) (a global average pool,
 * maybe more) give the embedding; the similarity is the dot product or the cosine of embeddings.
 *
 * A pair (x query, y retrieved, images [1, C, H, W]) with backgrounds (bx, by: blurred, mean, zeros
 * or another image - "why this and not that") defines
 *     v1(S) = d(x, mask(y, S))               players on the retrieved side    (Eq. 2)
 *     v2(S) = d(mask(x, S), mask(y, S))      players on both sides, query first (Eq. 6)
 * where mask keeps the players of S and takes the background elsewhere.  Players are superpixels
 * (SLIC), square patches or feature-map locations; for feature-map locations the masking is applied
 * to the feature maps (the background's feature maps), for the others to the pixels.
 *
 * Results: first order phi [n_r] over the retrieved players; second order the matrix phi2 [n, n]
 * of versus/games.h over n = n_q + n_r players (query players first), whose block
 * [0:n_q, n_q:n] (doubled) is the correspondence of query and retrieved players.
 *
 * Ownership: the model, images and player maps stay the caller's; vs_search_pair owns the feature
 * maps it computes (vs_search_pair_release). */
#ifndef VERSUS_SEARCH_H
#define VERSUS_SEARCH_H

#include "versus/explain.h"
#include "versus/games.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_search_similarity { VS_SEARCH_DOT, VS_SEARCH_COSINE } vs_search_similarity;

typedef struct vs_search_model {
    vs_module *encoder;              /* a sequential (the caller's) */
    int64_t split;                   /* layers [0, split) give the feature maps */
    int64_t end;                     /* layers [split, end) give the embedding; 0: to the last layer */
    vs_search_similarity similarity;
    /* Optional: d of feature maps [N] in place of layers [split, end) and the similarity (e.g. the
     * function of A.4 that ignores the left half of the retrieved feature map); differentiable. */
    vs_tensor *(*head)(void *ctx, vs_tensor *fx, vs_tensor *fy);
    void *head_ctx;
} vs_search_model;

vs_tensor *vs_search_features(const vs_search_model *m, vs_tensor *x);                /* f(x) [N, C, h, w] */
vs_tensor *vs_search_head(const vs_search_model *m, vs_tensor *fx, vs_tensor *fy);    /* d of feature maps, [N] */
vs_tensor *vs_search_similarity_of(const vs_search_model *m, vs_tensor *x, vs_tensor *y); /* head(f(x), f(y)) [N] */
/* The model as explainers see a pair model: forward_pair = vs_search_similarity_of (eval mode). */
vs_model_fn vs_search_model_fn(vs_search_model *m);

/* ---- players -------------------------------------------------------------------------------------- */

/* Player of every pixel of an h x w image: square patches of side `patch` in raster order; returns
 * their number. */
int64_t vs_players_patches(int h, int w, int patch, int32_t *map);
/* The location of an (fh x fw) feature map each pixel falls into (nearest): fh * fw players. */
int64_t vs_players_feature_cells(int h, int w, int fh, int fw, int32_t *map);

/* ---- pairs as games ------------------------------------------------------------------------------ */

/* A pair score over batches: [B] for a [B, ...], b [B, ...]. */
typedef vs_tensor *(*vs_pair_score_fn)(void *ctx, vs_tensor *a, vs_tensor *b);

/* The masked pair game: v(S) = score(mask(x, S), mask(y, S)); element e of x is player qx[e] (-1:
 * never masked), of y player ry[e]; qx or ry NULL: that side is never masked (v1: qx NULL). */
typedef struct vs_masked_pair {
    vs_pair_score_fn score;
    void *ctx;
    const vs_tensor *x, *y, *bx, *by;  /* [1, ...] each; bx, by the backgrounds */
    const int32_t *qx, *ry;
    int64_t n;                          /* players */
} vs_masked_pair;
vs_game vs_masked_pair_game(vs_masked_pair *p);  /* batch 64 */

/* A pair with its feature maps and the games on them. */
typedef struct vs_search_pair {
    const vs_search_model *model;
    vs_tensor *x, *y, *bx, *by;        /* [1, C, H, W] the caller's */
    vs_tensor *fx, *fy, *fbx, *fby;    /* [1, C', h, w] feature maps, owned (prepare/release) */
    int32_t *loc;                      /* [C' h w] location of each feature element, owned */
    int32_t *loc_r;                    /* [C' h w] location + h w (retrieved players of v2), owned */
} vs_search_pair;
vs_status vs_search_pair_prepare(vs_search_pair *p, vs_error *err);
void vs_search_pair_release(vs_search_pair *p);
int64_t vs_search_locations(const vs_search_pair *p);    /* h w */

/* v1 / v2 on feature-map locations (fills mp; the game reads p). */
vs_game vs_search_game_v1(vs_search_pair *p, vs_masked_pair *mp);
vs_game vs_search_game_v2(vs_search_pair *p, vs_masked_pair *mp);

/* ---- feature-map explainers ---------------------------------------------------------------------- */

/* SAM (Prop. 4.1): phi[ij] = 1/(hw) sum_c GAP(f(x))_c (f(y)_cij - f(by)_cij); the exact Shapley
 * values of v1 when the head is a GAP and the similarity the dot product.  Under a cosine similarity
 * (and no head of the caller's) every term is divided by |GAP(f(x))| |GAP(f(y))|: the closed form of
 * the cosine linearised at the pair, so the sum is on the game's scale (not exactly efficient). */
vs_status vs_search_sam(const vs_search_pair *p, double *phi, vs_error *err);
/* Second-order SAM (Prop. 5.1): phi2 [2hw, 2hw], cross pairs 1/(hw)^2 sum_c (x_chw - a_chw)(y_cij - b_cij)
 * with x, y, a, b the feature maps of query, retrieved and their backgrounds, singletons their GAP
 * closed forms, same-side pairs 0: the exact Shapley-Taylor indices of v2 on GAP-dot models (under a
 * cosine similarity, normalised as vs_search_sam). */
vs_status vs_search_sam2(const vs_search_pair *p, double *phi2, vs_error *err);
/* Grad-CAM on the similarity: phi[ij] = sum_c f(y)_cij mean_kl dd/df(y)_ckl (zero background). */
vs_status vs_search_gradcam(const vs_search_pair *p, double *phi, vs_error *err);
/* VESM (Zheng et al. 2020, as read from their description): channel weights w_c = GAP(f(x))_c GAP(f(y))_c
 * (each channel's share of the embeddings' dot product), phi[ij] = relu(sum_c w_c f(y)_cij). */
vs_status vs_search_vesm(const vs_search_pair *p, double *phi, vs_error *err);
/* IG-SAM: integrated gradients of v1 on the soft location mask M in [0, 1]^(hw), y(M) = by + M (y - by);
 * `steps` Gauss-Legendre points.  Sum = v1(N) - v1(empty) up to quadrature. */
vs_status vs_search_igsam(const vs_search_pair *p, int steps, double *phi, vs_error *err);
/* Second-order IG-SAM: Integrated Hessians of v2 on the joint soft mask of both sides, phi2 [2hw, 2hw]. */
vs_status vs_search_igsam2(const vs_search_pair *p, int steps, double *phi2, vs_error *err);

/* ---- Partition SHAP and SBSM (pixels) ------------------------------------------------------------ */

/* Partition SHAP on hierarchical squares of the retrieved image (v1 on pixels): the image is halved
 * along its longer side down to cells of `min_cell` pixels; at each split the two halves take their
 * Shapley values of the two-player game inside the parent (outside the parent at the background)
 * and share the parent's remaining credit equally, so the pixels' values sum to v1(N) - v1(empty).
 * heat [H W] per pixel. */
vs_status vs_search_partition_shap(vs_masked_pair *pixels, int h, int w, int min_cell, float *heat, vs_error *err);
/* SBSM (Dong et al.): a window of side `window` slid with `stride` over the retrieved image (pixels
 * masked to the background); weight max(d(x, y) - d(x, masked y), 0) spread over the window, averaged
 * by coverage.  heat [H W]. */
vs_status vs_search_sbsm(vs_masked_pair *pixels, int h, int w, int window, int stride, float *heat, vs_error *err);
/* Second-order SBSM (A.11): `samples` random window pairs (one per side, on cells of the patch
 * player maps), weight max(d(x, y) - d(masked x, masked y), 0) added to every (query cell, retrieved
 * cell) pair the windows cover, averaged by coverage: corr [n_q, n_r].  Seeded. */
vs_status vs_search_sbsm2(vs_masked_pair *pixels, int h, int w, int window, const int32_t *qcells, int64_t nq,
                          const int32_t *rcells, int64_t nr, int64_t samples, uint64_t seed, double *corr, vs_error *err);

/* ---- pictures -------------------------------------------------------------------------------------- */

/* A map over an fh x fw grid of feature-map cells resized to H x W pixels bilinearly (half-pixel
 * centres, clamped at the border, as F.interpolate with align_corners=False; CAM's upsampling):
 * out[y, x] = sum of the 4 nearest cell values weighted by (1 - |dy|)(1 - |dx|). */
void vs_search_upsample(const float *cell, int64_t fh, int64_t fw, int64_t H, int64_t W, float *out);

/* Project the query region qmask [H W] (values in [0, 1]) onto the retrieved image through the
 * correspondence block of phi2 (players by the pixel maps qmap, rmap; nq query players first):
 * out[p] = sum_a qshare[a] corr[a, rmap[p]] with qshare the region's share of each query player. */
void vs_search_project(const double *phi2, int64_t nq, int64_t nr, const int32_t *qmap, const int32_t *rmap, int64_t pixels,
                       const float *qmask, float *out);

#ifdef __cplusplus
}
#endif
#endif
