/* versus/superpixel.h - SLIC superpixels (Achanta et al., "SLIC Superpixels Compared to
 * State-of-the-Art Superpixel Methods", TPAMI 2012), for LIME/KernelSHAP feature groups and pictures.
 *
 * Images are [C,H,W] floats in [0,1] with C = 1 (gray) or 3 (sRGB).  Both are clustered in CIELAB:
 * RGB is converted, a gray value g is treated as the colour (g,g,g), so compactness means the same
 * for both (this differs from skimage, which clusters raw gray values).  The caller owns every
 * array.  Deterministic: no randomness is involved. */
#ifndef VERSUS_SUPERPIXEL_H
#define VERSUS_SUPERPIXEL_H

#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_slic_options {
    int n_segments;          /* wanted number of superpixels (approximate); default 100 */
    float compactness;       /* m: weight of space against colour, D^2 = d_lab^2 + (d_xy / S)^2 m^2; default 10 */
    float sigma;             /* std of the Gaussian pre-smoothing in pixels, 0 = none; default 0 */
    int max_iter;            /* local k-means iterations, >= 1 (stops early when no label changes); default 10 */
    int enforce_connectivity;/* relabel connected components, merge small ones; default 1 */
    float min_size_factor;   /* components smaller than this x (H*W / n_segments) are merged; default 0.5 */
} vs_slic_options;

/* The defaults listed above. */
vs_slic_options vs_slic_defaults(void);

/* sRGB in [0,1] -> CIELAB (D65 white): L in [0,100]; white -> (100,0,0), black -> (0,0,0). */
void vs_srgb_to_lab(const float rgb[3], float lab[3]);

/* SLIC of image [c,h,w]: grid seeds S = sqrt(H*W / n_segments) apart, each moved to the lowest
 * gradient position of its 3x3 neighbourhood; max_iter rounds of k-means restricted to a 2S x 2S
 * window around each centre with D^2 = |lab - lab_k|^2 + m^2 |xy - xy_k|^2 / S^2; then (optionally)
 * 4-connected components are relabelled and those below the minimum size merged into a neighbour.
 * labels [h*w] (caller-allocated) receive 0..k-1 in raster order of first appearance; *n_labels = k.
 * With connectivity enforced every label is one 4-connected region. */
vs_status vs_slic(const float *image, int c, int h, int w, const vs_slic_options *opt, int32_t *labels,
                  int *n_labels, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
