/* autograd/conv_winograd.h - Winograd (Cook-Toom) convolution F(m x m, r x r) for square 2x2, 3x3,
 * 5x5 and 7x7 kernels (dilated ones per dilation phase of the output; 7x7 forward only): fewer
 * multiply-adds than the direct kernels (F(4x4, 3x3): 36 per 16 outputs and channel pair instead of 144;
 * F(4x4, 2x2): 25 instead of 64; F(2x2, 7x7): 64 instead of 196), the products run as one matrix product per transformed point through vs_sgemm.  Private to the
 * conv ops (ops_conv.c) and the phase split (conv_phases.c), whose strided convs (kernel s r, stride s)
 * it runs over the input phases read in place.
 *
 * Geometry as vs_conv_avx512_forward (conv_avx512.h), restricted to dh = dw, kh = kw and sh = sw = 1,
 * or with dh = dw = 1 for the forward and weight gradient sh = sw = s, y0 = x0 = 0 and flip unset, r =
 * kh / s rounded up (a kernel s does not divide is read padded with zero taps to s r), where
 * vs_conv_winograd_fits judges the stride-1 or stacked conv (conv_phases.c asks it); flip, y0 and x0 as
 * there.  Every output element is computed by the same operations for any thread
 * count (blocks of a fixed number of tiles); the rounding differs from the direct kernels' (the
 * transforms add a few ulps: see conv_winograd.c for the measured error), which is why
 * vs_conv_set_algorithm(VS_CONV_DIRECT) / VERSUS_CONV=direct switch it off. */
#ifndef VERSUS_AUTOGRAD_CONV_WINOGRAD_H
#define VERSUS_AUTOGRAD_CONV_WINOGRAD_H

#include "autograd/conv_avx512.h"

#include <stdbool.h>

/* Whether g is the kind of shape the Winograd kernels take (stride 1, a square dilation, a 2x2, 3x3,
 * 5x5 or 7x7 kernel, enough channels) and they beat the direct ones there, and the algorithm is not forced to
 * direct (vs_conv_set_algorithm, VERSUS_CONV). */
bool vs_conv_winograd_fits(const vs_conv_fast *g);
/* Whether its weight gradient takes g: where it fits, but 7x7 kernels by their own rule (F(7x7, 2x2)'s
 * error, 1.1e-5 of sum |w x|, misses the bar of 1e-5: they run as four 4x4 parts). */
bool vs_conv_winograd_weight_grad_fits(const vs_conv_fast *g);
/* y = (accumulate ? y : bias, or 0 without one) + conv(x, W), the contract of vs_conv_avx512_forward
 * (strided: over the phases); false when out of memory. */
bool vs_conv_winograd_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                              float *y);
/* dx = bias (or 0) + conv_transpose2d(gy, w) of the strided conv g (flip unset, y0 = x0 = 0, sh = sw = s,
 * kh = kw, r = kh / s rounded up a kernel size Winograd takes): the flipped stride-1 conv of gy
 * onto the s x s phases of dx; false when out of memory. */
bool vs_conv_winograd_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx);
/* dw[o,c,ki,kj] (overwritten) = sum_{n,i,j} gy[n,o,i,j] x[n, c, i s + ki - ph, j s + kj - pw] (flip unset,
 * y0 = x0 = 0), by F(r x r, m x m) summed over every tile of the batch; false when out of memory. */
bool vs_conv_winograd_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw);

/* While held (calls nest; hold(false) ends one), the convolutions this thread dispatches keep the
 * direct kernels: for callers whose sums must follow the inputs term by term, e.g. the IG path
 * engine, which later adds and removes single columns exactly (nn/path_grads.c). */
void vs_conv_winograd_hold(bool hold);

/* The tile size m of F(m x m, r x r) used for a kernel of size r on oh x ow outputs (0: none): 4 for 2
 * and 3 (3 for 3 where F(3x3, 3x3) wastes less), 3 for 4, 2 for 5 and 7. */
int vs_conv_winograd_tile(int r, int64_t oh, int64_t ow);
/* The matrices of F(m x m, r x r), for the tests: which 0 B^T (alpha x alpha, alpha = m + r - 1), 1 A^T (m
 * x alpha), 2 G (alpha x r), 3 G' (alpha x m), 4 A'^T (r x alpha), row-major; NULL for other m, r or which. */
const float *vs_conv_winograd_matrix(int m, int r, int which);
/* Z = P X P^T on 16 lanes for P = vs_conv_winograd_matrix(m, r, which) (an F the kernels run, which 0-4; X
 * [p][p][16], Z [a][a][16]) by the kernels' unrolled code, or by the portable reference loops: the same
 * bits. */
void vs_conv_winograd_transform(int m, int r, int which, bool reference, const float *X, float *Z);

#endif
