/* versus/optim.h - SGD, Adam and AdamW with PyTorch's exact update formulas, learning-rate
 * schedules and gradient clipping.
 *
 * An optimiser borrows its parameters (leaf tensors, usually a module's) and reads their ->grad
 * after vs_backward(); a parameter whose ->grad is NULL is skipped that step, as in PyTorch.  It
 * owns its state tensors (step counts and moments, created outside every scope), which
 * vs_optim_state() lists by name so a checkpoint can save and restore them:
 *   sgd.step.<param>, sgd.momentum.<param>            (momentum buffer, when momentum != 0)
 *   adam.step.<param>, adam.m.<param>, adam.v.<param>  (adamw.* for AdamW)
 * Each step is one flat loop over a parameter's floats.
 */
#ifndef VERSUS_OPTIM_H
#define VERSUS_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/nn.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_optim_kind { VS_OPTIM_SGD = 0, VS_OPTIM_ADAM = 1, VS_OPTIM_ADAMW = 2 } vs_optim_kind;

typedef struct vs_optim_opts {
    vs_optim_kind kind;
    float lr;
    float weight_decay; /* SGD, Adam: g += wd p; AdamW: p -= lr wd p (decoupled) */
    float momentum;     /* SGD */
    float dampening;    /* SGD */
    bool nesterov;      /* SGD (needs momentum > 0 and dampening 0) */
    float beta1, beta2; /* Adam, AdamW */
    float eps;          /* Adam, AdamW */
} vs_optim_opts;

/* PyTorch's defaults: SGD momentum 0; Adam betas (0.9, 0.999), eps 1e-8, wd 0; AdamW the same with wd 0.01. */
vs_optim_opts vs_sgd_opts(float lr);
vs_optim_opts vs_adam_opts(float lr);
vs_optim_opts vs_adamw_opts(float lr);

typedef struct vs_optim vs_optim;

/* An optimiser over params[0..n) called names[i] (names NULL: "0", "1", ...). */
vs_optim *vs_optim_new(const vs_optim_opts *o, int64_t n, vs_tensor *const *params, const char *const *names,
                       vs_error *err);
/* An optimiser over every parameter of m, under its state_dict names. */
vs_optim *vs_optim_new_module(const vs_optim_opts *o, vs_module *m, vs_error *err);
void vs_optim_free(vs_optim *o); /* frees the state; parameters untouched; NULL is fine */

/* One update of every parameter that has a gradient.
 * SGD:  g = grad + wd p; b = step ? momentum b + (1 - dampening) g : g;
 *       g = nesterov ? g + momentum b : b (momentum != 0); p -= lr g
 * Adam: g = grad + wd p; m = m + (1 - b1)(g - m); v = b2 v + (1 - b2) g^2; t += 1;
 *       p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * AdamW: p *= 1 - lr wd, then Adam without the wd term.
 * VS_ERR_NUMERIC when a gradient is not finite (nothing is changed then). */
vs_status vs_optim_step(vs_optim *o, vs_error *err);
void vs_optim_zero_grad(vs_optim *o);            /* drop ->grad of every parameter */
void vs_optim_set_lr(vs_optim *o, float lr);
float vs_optim_lr(const vs_optim *o);
/* Append the state tensors (owned by o; write into them to restore a checkpoint). */
vs_status vs_optim_state(const vs_optim *o, vs_named_tensors *out);

/* ---- learning-rate schedules (PyTorch's closed forms; epoch counts from 0) ------------------------ */
typedef enum vs_lr_kind { VS_LR_CONSTANT = 0, VS_LR_STEP = 1, VS_LR_COSINE = 2 } vs_lr_kind;
typedef struct vs_lr_schedule {
    vs_lr_kind kind;
    float base_lr;
    int64_t step_size; /* STEP: lr = base gamma^floor(epoch / step_size) */
    float gamma;
    int64_t t_max;     /* COSINE: lr = eta_min + (base - eta_min)(1 + cos(pi epoch / t_max)) / 2 */
    float eta_min;
} vs_lr_schedule;
float vs_lr_at(const vs_lr_schedule *s, int64_t epoch);

/* ---- gradient clipping ----------------------------------------------------------------------------- */
/* norm = sqrt(sum over params of |grad|^2); c = max_norm / (norm + 1e-6); when c < 1 every grad is
 * scaled by c (replaced by a new tensor: gradients may share storage).  Returns norm (NaN with
 * vs_last_error() set when out of memory; nothing changed then). */
float vs_clip_grad_norm(int64_t n, vs_tensor *const *params, float max_norm);
float vs_optim_clip_grad_norm(vs_optim *o, float max_norm); /* the same over o's parameters */

#ifdef __cplusplus
}
#endif
#endif
