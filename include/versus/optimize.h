/* versus/optimize.h - the optimisation toolbox of the explainers: first-order methods over one flat
 * float vector theta whose objective is built on the autograd graph.
 *
 *   vs_flat_adam        Adam state and step on a flat array (Kingma & Ba, beta 0.9 / 0.999, eps 1e-8)
 *   vs_gda_minimize     gradient descent-ascent with constraint duals (SNX Algorithm 1)
 *   vs_adam_minimize    plain Adam descent of an objective (masks: GNNExplainer)
 *   vs_prox_minimize    projected gradient and ISTA/FISTA with box constraints and an L1 term
 *                       (CEM's pertinent positives)
 *   vs_subgrad_minimize subgradient descent with diminishing steps, best iterate kept (latent codes:
 *                       CEM's pertinent negatives)
 *
 * A problem is a callback objective(ctx, theta) -> per-block values [n_blocks] built from
 * differentiable ops of theta [n_vars]; the methods sum the blocks and differentiate with vs_grad, so
 * blocks must not interact (one problem per block: a batch of independent masks).  Every iteration
 * runs in its own tensor scope; callbacks may create tensors freely.  theta is the caller's: it holds
 * the start and receives the result.  Traces are new arrays owned by the trace (vs_opt_trace_clear).
 * Deterministic: no randomness inside. */
#ifndef VERSUS_OPTIMIZE_H
#define VERSUS_OPTIMIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Adam on a flat array ----------------------------------------------------------------------- */

typedef struct vs_flat_adam {
    int64_t n, t;
    float *m, *v;   /* owned moments [n] */
} vs_flat_adam;
vs_status vs_flat_adam_init(vs_flat_adam *a, int64_t n, vs_error *err);
/* t += 1; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; x -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps). */
void vs_flat_adam_step(vs_flat_adam *a, float *x, const float *g, float lr);
void vs_flat_adam_free(vs_flat_adam *a);

/* ---- problems and traces ------------------------------------------------------------------------- */

/* n_blocks independent problems over one flat variable vector theta; block b owns variables
 * [var_off[b], var_off[b+1]) and constraints [con_off[b], con_off[b+1]).  The objective returns the
 * per-block values g0_b [n_blocks] (they are summed for the step, so blocks must not interact);
 * constraints returns g(theta) [n_constraints], g <= 0 wanted (GDA only). */
typedef struct vs_gda_problem {
    int64_t n_vars, n_blocks;
    const int64_t *var_off;   /* [n_blocks + 1] */
    const int64_t *con_off;   /* [n_blocks + 1], or NULL when there are no constraints */
    vs_tensor *(*objective)(void *ctx, vs_tensor *theta);
    vs_tensor *(*constraints)(void *ctx, vs_tensor *theta); /* may be NULL */
    void *ctx;
} vs_gda_problem;

/* Per-iteration records, [n_blocks * n_iters] each, block-major (record of block b at iteration i is
 * [b * n_iters + i]): objective g0_b, |dL/d theta_b| (before the step), |dL/d lambda_b| = |g_b(theta)|
 * at the latest theta, and the fraction of block b's constraints violated (zeros without constraints). */
typedef struct vs_opt_trace {
    int64_t n_blocks, n_iters;
    float *objective, *grad_primal, *grad_dual, *violated;
} vs_opt_trace;
void vs_opt_trace_clear(vs_opt_trace *t);  /* free the arrays, zero the struct (NULL is fine) */

/* ---- gradient descent-ascent with constraint duals ---------------------------------------------- */

typedef enum vs_gda_step { VS_GDA_ADAM = 0, VS_GDA_SGD = 1 } vs_gda_step;

typedef enum vs_gda_dual {
    VS_GDA_DUAL_NONE = 0,  /* constraints ignored (evaluated for the trace only) */
    VS_GDA_DUAL_UNIT = 1,  /* lambda >= 0 rescaled to unit length per block after each ascent */
    VS_GDA_DUAL_BALL = 2   /* lambda >= 0 projected onto the ball |lambda| <= radius (Lin et al. 2020) */
} vs_gda_dual;

typedef struct vs_gda_opts {
    int pre_iters;          /* unconstrained steps first */
    int iters;              /* GDA steps after that */
    float eta1, eta2;       /* primal / dual step sizes */
    vs_gda_step step;
    vs_gda_dual dual;
    float radius;           /* VS_GDA_DUAL_BALL */
    float violation_tol;    /* g_i > tol counts as violated in the trace */
} vs_gda_opts;

void vs_gda_opts_init(vs_gda_opts *o);  /* eta1 0.1, eta2 1e-3, Adam, unit lambda, 100 iters */
/* Minimise sum_b g0_b(theta) s.t. g(theta) <= 0: lambda_b = 1/c_b, then per iteration
 *   theta <- step(theta, dL/dtheta),  L = g0 + lambda . g   (lambda = 0 during pre_iters)
 *   lambda <- proj(lambda + eta2 g(theta_new)).
 * trace may be NULL; else it is filled with new arrays. */
vs_status vs_gda_minimize(const vs_gda_problem *pb, const vs_gda_opts *o, float *theta, vs_opt_trace *trace, vs_error *err);

/* Adam descent of sum_b g0_b(theta) for iters steps of size lr (constraints of pb are not used):
 * vs_gda_minimize with no dual, the mask optimiser of GNNExplainer. */
vs_status vs_adam_minimize(const vs_gda_problem *pb, int iters, float lr, float *theta, vs_opt_trace *trace, vs_error *err);

/* ---- proximal gradient: projected gradient, ISTA, FISTA ------------------------------------------ */

typedef struct vs_prox_opts {
    int iters;              /* 100 */
    float step;             /* fixed step size eta (1/L for an L-smooth objective): 0.1 */
    float l1;               /* lambda of lambda |theta|_1 (0: projected gradient) */
    float lo, hi;           /* box lo <= theta_i <= hi (-inf / +inf: none) */
    bool accelerate;        /* FISTA momentum (Beck & Teboulle 2009); false: ISTA */
    float tol;              /* stop when max |theta_k+1 - theta_k| <= tol (0: run every iteration) */
} vs_prox_opts;
void vs_prox_opts_init(vs_prox_opts *o);
/* Minimise F(theta) = sum_b g0_b(theta) + l1 |theta|_1 over lo <= theta <= hi:
 *   ISTA:  theta <- P(y - eta grad(y)),  y = theta
 *   FISTA: y = theta_k + (t_k - 1)/t_{k+1} (theta_k - theta_k-1),  t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2
 * with P(v) = clip(sign(v) max(|v| - eta l1, 0), lo, hi), the prox of l1 |.| plus the box (exact:
 * both are separable and one-dimensional convex).  *iters_done (may be NULL) receives the
 * iterations run; trace (may be NULL): objective per block (without the L1 term) and |grad|. */
vs_status vs_prox_minimize(const vs_gda_problem *pb, const vs_prox_opts *o, float *theta, int *iters_done, vs_opt_trace *trace,
                           vs_error *err);

/* ---- subgradient descent ----------------------------------------------------------------------- */

typedef struct vs_subgrad_opts {
    int iters;              /* 200 */
    float step;             /* eta_0; step k is eta_0 / sqrt(k + 1): 0.1 */
    float lo, hi;           /* optional box (-inf / +inf: none), e.g. a latent code's range */
} vs_subgrad_opts;
void vs_subgrad_opts_init(vs_subgrad_opts *o);
/* Minimise a possibly non-smooth sum_b g0_b(theta) (ReLU, |.|, max: autograd gives a subgradient)
 * by theta <- clip(theta - eta_k s, lo, hi), s a subgradient, eta_k = eta_0 / sqrt(k + 1).  The
 * objective is not monotone along the way, so each block keeps its best iterate: theta receives, per
 * block, the iterate of lowest g0_b seen (the final iterate is evaluated too). */
vs_status vs_subgrad_minimize(const vs_gda_problem *pb, const vs_subgrad_opts *o, float *theta, vs_opt_trace *trace,
                              vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
