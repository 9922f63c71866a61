/* autograd/conv_images.h - AVX-512F forward convolution with 16 images in the vector lanes, for
 * layers with few output channels (10, say): there the channel-blocked tiles of conv_avx512.c
 * leave most lanes empty and im2col + GEMM copies a column matrix as large as the work, while a
 * vector of 16 images is full at any channel count, image size and stride.  Private to ops_conv.c.
 *
 * Geometry: a conv2d as vs_conv_fast gives it (flip unset, y0 = x0 = 0), any stride, padding and
 * dilation.  Each group of 16 images is copied once, zero-bordered, with the image index last,
 *   X[c, y, x, l] = x[n0 + l, c, y - ph, x - pw]   (0 in the border and past the batch),
 * so that at every tap (c, ki, kj) the 16 images' input for one output pixel is one vector: an
 * implicit GEMM, o rows of broadcast weights by output pixels (each 16 images wide) by c kh kw.
 * Each output element is one sum over (c, ki, kj) in that order, border taps included (they add
 * 0 w), made by one thread: results do not depend on the thread count or the tiling. */
#ifndef VERSUS_AUTOGRAD_CONV_IMAGES_H
#define VERSUS_AUTOGRAD_CONV_IMAGES_H

#include "autograd/conv_avx512.h"

#include <stdbool.h>

/* Whether the kernel runs now (AVX-512 chosen) and suits g: fewer than 16 output channels, a
 * batch that fills the lanes and sums long enough (the rule and its measurements: conv_images.c). */
bool vs_conv_images_fits(const vs_conv_fast *g);
/* y = bias (or 0 without one) + conv2d(x, w), w [o, c, kh, kw]; false when out of memory. */
bool vs_conv_images_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, float *y);

/* dx = bias (or 0) + conv_transpose2d(gy, w) for the conv2d g (dx [n,c,h,w] overwritten, gy
 * [n,o,oh,ow], w [o,c,kh,kw]): the adjoint of the forward in x, the same rule; false when out of
 * memory. */
bool vs_conv_images_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx);

#endif
