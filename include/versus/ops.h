/* versus/ops.h - differentiable tensor ops.  One line of math each.
 *
 * Every op returns a new tensor owned by the current scope (see tensor.h), or NULL on a shape or
 * argument error with the message in vs_last_error(); a NULL input gives a NULL result.  Every
 * backward rule is written with these same ops, so every op can be differentiated twice.
 *
 * Broadcasting follows NumPy: shapes are aligned on the right, size-1 dims stretch.
 * Axes are chosen with a bit mask: VS_AXIS(1) | VS_AXIS(2), or VS_ALL_AXES.
 */
#ifndef VERSUS_OPS_H
#define VERSUS_OPS_H

#include <stdbool.h>

#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_AXIS(i) (1u << (i))
#define VS_ALL_AXES 0xffffffffu

/* ---- elementwise, broadcasting ---------------------------------------------------------------- */
vs_tensor *vs_add(vs_tensor *a, vs_tensor *b);      /* a + b */
vs_tensor *vs_sub(vs_tensor *a, vs_tensor *b);      /* a - b */
vs_tensor *vs_mul(vs_tensor *a, vs_tensor *b);      /* a * b */
vs_tensor *vs_div(vs_tensor *a, vs_tensor *b);      /* a / b */
vs_tensor *vs_pow(vs_tensor *a, vs_tensor *b);      /* a ^ b, a > 0 where b is not an integer */
vs_tensor *vs_minimum(vs_tensor *a, vs_tensor *b);  /* min(a, b); ties send the gradient to a */
vs_tensor *vs_maximum(vs_tensor *a, vs_tensor *b);  /* max(a, b); ties send the gradient to a */
vs_tensor *vs_where(const vs_tensor *cond, vs_tensor *a, vs_tensor *b); /* cond != 0 ? a : b; cond not differentiated */

vs_tensor *vs_add_scalar(vs_tensor *x, float c);    /* x + c */
vs_tensor *vs_mul_scalar(vs_tensor *x, float c);    /* c * x */
vs_tensor *vs_pow_scalar(vs_tensor *x, float p);    /* x ^ p */

/* ---- elementwise, unary ----------------------------------------------------------------------- */
vs_tensor *vs_neg(vs_tensor *x);                    /* -x */
vs_tensor *vs_exp(vs_tensor *x);                    /* e^x */
vs_tensor *vs_log(vs_tensor *x);                    /* ln x */
vs_tensor *vs_sqrt(vs_tensor *x);                   /* sqrt x */
vs_tensor *vs_abs(vs_tensor *x);                    /* |x|, d/dx = sign(x) (0 at 0) */
vs_tensor *vs_clamp(vs_tensor *x, float lo, float hi); /* min(max(x, lo), hi); gradient 1 inside [lo,hi] */
vs_tensor *vs_relu(vs_tensor *x);                   /* max(x, 0) */
vs_tensor *vs_leaky_relu(vs_tensor *x, float slope); /* x > 0 ? x : slope x */
vs_tensor *vs_elu(vs_tensor *x, float alpha);       /* x > 0 ? x : alpha (e^x - 1) */
vs_tensor *vs_sigmoid(vs_tensor *x);                /* 1 / (1 + e^-x) */
vs_tensor *vs_tanh(vs_tensor *x);                   /* tanh x */
vs_tensor *vs_softplus(vs_tensor *x);               /* ln(1 + e^x), stable */
vs_tensor *vs_log_sigmoid(vs_tensor *x);            /* -softplus(-x) */
vs_tensor *vs_sign(const vs_tensor *x);             /* sign(x), not differentiated (a constant) */
vs_tensor *vs_step(const vs_tensor *x);             /* x > 0 ? 1 : 0, a constant */

/* ---- reductions ------------------------------------------------------------------------------- */
vs_tensor *vs_sum(vs_tensor *x, uint32_t axes, bool keepdim);   /* sum over axes */
vs_tensor *vs_mean(vs_tensor *x, uint32_t axes, bool keepdim);  /* sum / count */
vs_tensor *vs_max(vs_tensor *x, uint32_t axes, bool keepdim);   /* max over axes; gradient to the first maximum */
vs_tensor *vs_min(vs_tensor *x, uint32_t axes, bool keepdim);   /* min over axes; gradient to the first minimum */
vs_tensor *vs_logsumexp(vs_tensor *x, int axis, bool keepdim);  /* ln sum_axis e^x, stable */
vs_tensor *vs_softmax(vs_tensor *x, int axis);                  /* e^x / sum_axis e^x */
vs_tensor *vs_log_softmax(vs_tensor *x, int axis);              /* x - logsumexp(x) */
/* Sum a broadcast result back to `shape` (the adjoint of broadcasting). */
vs_tensor *vs_sum_to(vs_tensor *x, int ndim, const int64_t *shape);
/* Broadcast x to `shape` (materialised). */
vs_tensor *vs_expand(vs_tensor *x, int ndim, const int64_t *shape);

/* ---- linear algebra --------------------------------------------------------------------------- */
/* c[..., i, j] = sum_k a[..., i, k] b[..., k, j]; leading (batch) dims broadcast; both >= 2-D. */
vs_tensor *vs_matmul(vs_tensor *a, vs_tensor *b);
/* Same with a or b transposed on the last two dims (no copy). */
vs_tensor *vs_matmul_t(vs_tensor *a, bool trans_a, vs_tensor *b, bool trans_b);
/* y = x @ w^T + b; x [n,in], w [out,in], b [out] or NULL (PyTorch Linear layout). */
vs_tensor *vs_linear(vs_tensor *x, vs_tensor *w, vs_tensor *b);

/* ---- shape ------------------------------------------------------------------------------------ */
vs_tensor *vs_reshape(vs_tensor *x, int ndim, const int64_t *shape); /* view; one dim may be -1 */
vs_tensor *vs_flatten(vs_tensor *x);                 /* [n, ...] -> [n, prod(...)] view */
vs_tensor *vs_permute(vs_tensor *x, const int *perm); /* y.shape[i] = x.shape[perm[i]] */
vs_tensor *vs_transpose(vs_tensor *x, int a, int b); /* swap dims a and b */
vs_tensor *vs_concat(int n, vs_tensor *const *xs, int axis); /* join along axis */
vs_tensor *vs_slice(vs_tensor *x, int axis, int64_t start, int64_t end); /* x[..., start:end, ...] */
/* Constant padding: pads[2*i], pads[2*i+1] elements before/after dim i (may be 0). */
vs_tensor *vs_pad(vs_tensor *x, const int64_t *pads, float value);
/* y = x.index_select(axis, idx): y[.., j, ..] = x[.., idx[j], ..]; idx copied; 0 <= idx < dim. */
vs_tensor *vs_index_select(vs_tensor *x, int axis, const int64_t *idx, int64_t n);
/* y[.., idx[j], ..] += x[.., j, ..] with y's dim `axis` = dim_size (graph message passing). */
vs_tensor *vs_scatter_add(vs_tensor *x, int axis, const int64_t *idx, int64_t dim_size);

/* ---- convolution and pooling (NCHW) ------------------------------------------------------------- */
typedef struct vs_conv_opts {
    int stride[2], padding[2], dilation[2], output_padding[2]; /* [h, w]; 0 stride/dilation mean 1 */
    int groups;                                                 /* 0 means 1; NULL opts: all defaults */
} vs_conv_opts;

/* y[n,o,i,j] = b[o] + sum_{c',ki,kj} w[o,c',ki,kj] x[n, c, i*sh-ph+ki*dh, j*sw-pw+kj*dw] (0 outside),
 * c the c'-th channel of o's group; x [n,c,h,w], w [o, c/groups, kh, kw], b [o] or NULL;
 * oh = (h + 2ph - dh(kh-1) - 1)/sh + 1.  output_padding is ignored. */
vs_tensor *vs_conv2d(vs_tensor *x, vs_tensor *w, vs_tensor *b, const vs_conv_opts *o);
/* y = conv_transpose2d(x, w) + b, the adjoint of conv2d in its input: <conv2d(z, w), x> = <z, y - b>.
 * x [n,c,h,w], w [c, o/groups, kh, kw] (PyTorch ConvTranspose2d layout), b [o] or NULL;
 * oh = (h-1) sh - 2ph + dh(kh-1) + output_padding_h + 1, output_padding < max(stride, dilation). */
vs_tensor *vs_conv_transpose2d(vs_tensor *x, vs_tensor *w, vs_tensor *b, const vs_conv_opts *o);
/* dw = d<conv2d(x, w), g>/dw, i.e. <dw, v> = <conv2d(x, v), g>: the weight gradient as an op of its
 * own.  x [n,c,h,w], g [n,o,oh,ow] (conv2d's output shape) -> [o, c/groups, kh, kw]. */
vs_tensor *vs_conv2d_weight_grad(vs_tensor *x, vs_tensor *g, int kh, int kw, const vs_conv_opts *o);
/* Algorithm of stride-1 2x2, 3x3, 4x4 and 5x5 convolutions with 16 or more channels (dilated ones per
 * dilation phase), stride-1 7x7 forwards, and stride-2 4x4, 5x5, 6x6 and 7x7 ones (over their four input
 * phases, kernels padded with zero taps to a multiple of 2), forward, transpose and weight gradient: AUTO takes Winograd
 * F(m x m, r x r) where it is faster (fewer multiply-adds; outputs differ from the direct sums by a
 * few ulps of sum |w x|), DIRECT keeps the direct kernels' bits.  The default is AUTO, or DIRECT
 * when the environment has VERSUS_CONV=direct (read once); vs_conv_set_algorithm(VS_CONV_AUTO) goes
 * back to that default.  Returns the one in use. */
typedef enum vs_conv_algorithm { VS_CONV_AUTO = 0, VS_CONV_DIRECT } vs_conv_algorithm;
vs_conv_algorithm vs_conv_set_algorithm(vs_conv_algorithm a);
/* max over each kernel window; padding counts as -inf; gradient to the first maximum of a window.
 * stride 0 means kernel; padding <= kernel/2; oh = (h + 2 padding - kernel)/stride + 1. */
vs_tensor *vs_max_pool2d(vs_tensor *x, int kernel, int stride, int padding);
/* sum over each kernel window / kernel^2 (padding counts, PyTorch default); stride/padding as max_pool2d. */
vs_tensor *vs_avg_pool2d(vs_tensor *x, int kernel, int stride, int padding);
/* PyTorch's full pooling window: taps x[i s - p + a d] for a < kernel (dilation d: max pooling only);
 * stride 0 means kernel, dilation 0 means 1; padding <= kernel/2.  ceil_mode: oh = ceil((h + 2p -
 * d(k-1) - 1)/s) + 1, less one when the last window would start in the right padding. */
typedef struct vs_pool_opts {
    int kernel, stride, padding, dilation;
    bool ceil_mode;
} vs_pool_opts;
/* y = max over each window of x (as vs_max_pool2d). */
vs_tensor *vs_max_pool2d_ex(vs_tensor *x, const vs_pool_opts *o);
/* y = sum over each window / its size counting padding, cut where a ceil_mode window hangs past it. */
vs_tensor *vs_avg_pool2d_ex(vs_tensor *x, const vs_pool_opts *o);
/* y[n,c,i,j] = x[n,c,i/s,j/s]; scale >= 1 */
vs_tensor *vs_upsample_nearest2d(vs_tensor *x, int scale);

/* ---- normalisation ---------------------------------------------------------------------------- */
/* y = (x - mean) / sqrt(var + eps) * gamma + beta over all dims but 1 (channels).  training:
 * batch statistics, running stats updated in place (running = (1-m) running + m batch, unbiased
 * var); eval: running stats.  gamma/beta may be NULL; running stats may be NULL in training. */
vs_tensor *vs_batch_norm(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, vs_tensor *running_mean,
                         vs_tensor *running_var, bool training, float momentum, float eps);
/* per-sample, per-channel normalisation over H,W; x [n,c,h,w]; gamma/beta [c] or NULL. */
vs_tensor *vs_instance_norm(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, float eps);
/* normalisation over the last n_dims dims; gamma/beta of those dims' shape or NULL. */
vs_tensor *vs_layer_norm(vs_tensor *x, int n_dims, vs_tensor *gamma, vs_tensor *beta, float eps);
/* training: x * mask / (1-p), mask ~ Bernoulli(1-p) from r; eval: x. */
vs_tensor *vs_dropout(vs_tensor *x, float p, bool training, vs_rng *r);

/* ---- losses (mean over elements or batch unless said otherwise) -------------------------------- */
vs_tensor *vs_mse_loss(vs_tensor *a, vs_tensor *b);              /* mean (a - b)^2 */
vs_tensor *vs_l1_loss(vs_tensor *a, vs_tensor *b);               /* mean |a - b| */
vs_tensor *vs_smooth_l1_loss(vs_tensor *a, vs_tensor *b, float beta); /* mean(|d|<beta ? d^2/2beta : |d|-beta/2) */
vs_tensor *vs_bce_with_logits(vs_tensor *logits, vs_tensor *targets); /* mean softplus(z) - t z */
/* mean_i -log_softmax(logits)[i, labels[i]]; logits [n,c], labels in [0,c). */
vs_tensor *vs_cross_entropy(vs_tensor *logits, const int64_t *labels);
/* mean_i -sum_c p[i,c] log_softmax(logits)[i,c]; soft targets p [n,c]. */
vs_tensor *vs_cross_entropy_soft(vs_tensor *logits, vs_tensor *p);
/* mean_i -logp[i, labels[i]]. */
vs_tensor *vs_nll_loss(vs_tensor *logp, const int64_t *labels);
/* KL(N(mu1, e^lv1) || N(mu2, e^lv2)) summed over the last dim, mean over rows; mu2/lv2 NULL = N(0,1). */
vs_tensor *vs_kl_diag_gaussian(vs_tensor *mu1, vs_tensor *lv1, vs_tensor *mu2, vs_tensor *lv2);
/* <a,b> / max(|a| |b|, eps) along axis (PyTorch's cosine_similarity). */
vs_tensor *vs_cosine_similarity(vs_tensor *a, vs_tensor *b, int axis, float eps);

/* ---- modified backward rules (attribution methods) --------------------------------------------- */
typedef enum vs_backward_rule {
    VS_RULE_GRADIENT = 0, /* ordinary derivatives */
    /* DeepLIFT rescale: the batch holds inputs then references ([x; x_ref], 2N rows).  A
     * nonlinearity recorded under this rule backpropagates the multiplier
     * (f(x) - f(x_ref)) / (x - x_ref) (the derivative where |x - x_ref| < 1e-6) to both halves;
     * max_pool2d sends g (y - y_ref) / (x - x_ref) to the input's first maximum of each window (the
     * gradient where that delta is < 1e-6), which gives exact summation-to-delta for the layer. */
    VS_RULE_RESCALE = 1,
    /* Guided backpropagation (Springenberg et al.): relu passes max(g * [x > 0], 0) back, only positive
     * gradients through active units (Captum's GuidedBackprop hook on ReLU). */
    VS_RULE_GUIDED = 2,
    /* Deconvolution (Zeiler & Fergus): relu passes max(g, 0) back, ignoring its input's sign. */
    VS_RULE_DECONV = 3
} vs_backward_rule;

/* Rule for nodes recorded from now on, on this thread; returns the previous rule. */
vs_backward_rule vs_set_backward_rule(vs_backward_rule rule);

#ifdef __cplusplus
}
#endif
#endif
