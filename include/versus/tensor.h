/* versus/tensor.h - dense float32 tensors, ownership scopes and reverse-mode differentiation.
 *
 * A tensor is contiguous row-major float32 with up to VS_MAX_DIMS dimensions.  Reshapes are views
 * that share the data buffer (no copy); no op ever writes into an existing tensor, so sharing is safe.
 *
 * Ownership (one rule, everywhere):
 *   - A new tensor belongs to the innermost open scope (vs_scope_begin/vs_scope_end) of the calling
 *     thread; with no scope open it belongs to the caller, who frees it with vs_tensor_free().
 *   - vs_scope_end() releases every tensor the scope still owns.  vs_keep(t) moves t out to the
 *     enclosing scope (or to the caller when the scope is the outermost one).
 *   - Graph nodes hold their own references to their inputs, so a kept result keeps whatever its
 *     gradient needs alive; everything is reclaimed when the last reference goes.
 *   An optimisation loop therefore reads: begin scope; forward; backward; update; end scope -
 *   memory is steady without tracking intermediates.
 *
 * Recording: while grad mode is on (the default) an op whose input requires grad records a node.
 * vs_backward() accumulates into leaves' ->grad (like loss.backward()); vs_grad() returns the
 * gradients of given outputs w.r.t. given inputs (like torch.autograd.grad).  With create_graph the
 * gradients are recorded too, so they can be differentiated again (WGAN-GP, Hessian products).
 */
#ifndef VERSUS_TENSOR_H
#define VERSUS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_MAX_DIMS 8

typedef struct vs_tensor vs_tensor;
typedef struct vs_node vs_node;
typedef struct vs_buffer vs_buffer;

struct vs_tensor {
    float *data;                  /* size floats, row-major; read freely, never write into an op's output */
    int64_t shape[VS_MAX_DIMS];   /* shape[0..ndim) */
    int ndim;                     /* 0 for a scalar */
    int64_t size;                 /* product of shape */
    bool requires_grad;           /* leaf: gradients accumulate into ->grad; op output: depends on one */
    vs_tensor *grad;              /* leaf gradient from vs_backward(), owned by this tensor, or NULL */

    /* Private to the engine. */
    vs_buffer *buf;               /* shared storage (views share it) */
    vs_node *node;                /* op that produced this tensor, NULL for leaves */
    int32_t refs;                 /* owner (caller or scope) + nodes using it */
    int32_t scope_depth;          /* owning scope depth + 1, 0 when the caller owns it */
    int64_t scope_slot;           /* index in the owning scope's list */
    uint64_t visit;               /* traversal epoch (backward) */
    vs_tensor *acc;               /* gradient being accumulated during a traversal */
    int32_t topo_pending;         /* traversal bookkeeping */
};

/* ---- creation (result owned by the current scope, or the caller) ---------------------------- */
vs_tensor *vs_tensor_new(int ndim, const int64_t *shape);      /* uninitialised contents */
vs_tensor *vs_tensor_zeros(int ndim, const int64_t *shape);    /* t = 0 */
vs_tensor *vs_tensor_full(int ndim, const int64_t *shape, float v); /* t = v */
vs_tensor *vs_tensor_from(int ndim, const int64_t *shape, const float *data); /* copy of data */
vs_tensor *vs_scalar(float v);                                   /* 0-d tensor */
vs_tensor *vs_tensor_rand(int ndim, const int64_t *shape, vs_rng *r, float lo, float hi); /* U[lo,hi) */
vs_tensor *vs_tensor_randn(int ndim, const int64_t *shape, vs_rng *r, float mean, float std); /* N(mean,std^2) */
vs_tensor *vs_zeros_like(const vs_tensor *t);
vs_tensor *vs_ones_like(const vs_tensor *t);
vs_tensor *vs_copy(const vs_tensor *t);          /* detached deep copy: same values, no graph */
vs_tensor *vs_detach(vs_tensor *t);              /* view of the same data without graph or requires_grad */

/* Convenience shapes: VS_SHAPE(2, 3) expands to `2, (int64_t[]){2, 3}` for the functions above. */
#define VS_SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}

/* ---- ownership ------------------------------------------------------------------------------ */
void vs_tensor_free(vs_tensor *t);               /* release the owner's reference; NULL is fine */
/* Index of the first NaN or infinity of x[0..n), n when every value is finite: inputs, attributions
 * and trained weights read from files are checked with it before they are used. */
size_t vs_first_nonfinite(const float *x, size_t n);
void vs_scope_begin(void);                       /* open a scope on this thread */
void vs_scope_end(void);                         /* release every tensor the scope owns */
vs_tensor *vs_keep(vs_tensor *t);                /* move t to the enclosing owner; returns t */
/* vs_keep(t) then vs_scope_end(): how a function that builds its result from intermediates returns
 * it without leaving the intermediates to its caller.  NULL passes through. */
vs_tensor *vs_scope_return(vs_tensor *t);
int vs_scope_depth(void);                        /* number of open scopes on this thread */
int64_t vs_live_tensors(void);                   /* tensors alive process-wide (leak checks) */

/* ---- gradients -------------------------------------------------------------------------------- */
void vs_set_requires_grad(vs_tensor *t, bool on); /* mark a leaf as a variable */
bool vs_grad_enabled(void);                       /* is recording on for this thread? */
bool vs_set_grad_enabled(bool on);                /* set it; returns the previous value */
void vs_zero_grad(vs_tensor *t);                  /* drop t->grad */

/* d(sum(gout * out))/d(leaf) accumulated into every leaf's ->grad.  gout NULL means ones (out
 * must then be a scalar).  create_graph: the new ->grad is itself differentiable.  On failure (an
 * op of a backward rule ran out of memory: VS_ERR_NOMEM) no leaf's ->grad has changed. */
vs_status vs_backward(vs_tensor *out, vs_tensor *gout, bool create_graph);

/* grads[j] = d(sum_i sum(gouts[i] * outs[i])) / d ins[j]; gouts may be NULL (each out scalar,
 * weight 1) or hold NULL entries.  ins may be any tensors of the graph, not only leaves; an input
 * the outputs do not depend on gets zeros.  grads[] are new tensors owned like any op result;
 * on failure (VS_ERR_NOMEM when memory runs out) every grads[j] is NULL, never a partial sum. */
vs_status vs_grad(int n_out, vs_tensor *const *outs, vs_tensor *const *gouts,
                  int n_in, vs_tensor *const *ins, vs_tensor **grads, bool create_graph);

/* ---- small helpers ---------------------------------------------------------------------------- */
bool vs_same_shape(const vs_tensor *a, const vs_tensor *b);
int vs_shape_str(const vs_tensor *t, char *buf, int n); /* "[2,3,4]" */
float vs_item(const vs_tensor *t);                /* the value of a one-element tensor */

#ifdef __cplusplus
}
#endif
#endif
