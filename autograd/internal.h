/* autograd/internal.h - what the engine's files share and users never see: graph nodes, the
 * recording helper, storage, and the kernel entry points ops call. */
#ifndef VERSUS_AUTOGRAD_INTERNAL_H
#define VERSUS_AUTOGRAD_INTERNAL_H

#include "versus/ops.h"
#include "versus/tensor.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vs_buffer {
    int32_t refs;
    float *data;
};

/* Backward rule of a node: given the node's output `out` and the gradient `gout` flowing into it,
 * set gin[i] (left NULL = zero) for every input i with vs_node_needs(n, i).  Written with public ops
 * only, so it is recorded when create_graph is on and can itself be differentiated. */
typedef void (*vs_backward_fn)(vs_node *n, vs_tensor *out, vs_tensor *gout, vs_tensor **gin);

#define VS_NODE_INLINE_IN 3

struct vs_node {
    const char *name;             /* op name, for messages */
    vs_backward_fn backward;
    int n_in;
    vs_tensor **in;               /* inputs, each holding a reference */
    vs_tensor *inline_in[VS_NODE_INLINE_IN];
    vs_tensor *saved;             /* an extra tensor the rule needs (a mask, an index map), referenced */
    void *extra;                  /* op data of run-time size freed with the node (index arrays, statistics) */
    vs_backward_rule rule;        /* rule in force when recorded */
    uint32_t needs;               /* bit i: gradient of input i is wanted (set before backward) */
    size_t params_size;           /* sizeof the op's parameter struct, 0 when it has none */
    _Alignas(max_align_t) unsigned char params[]; /* that struct, copied in by vs_record */
};

/* Inputs past the 31st share the last bit (concat of many tensors). */
static inline bool vs_node_needs(const vs_node *n, int i) { return (n->needs >> (i < 31 ? i : 31)) & 1u; }

/* The parameter struct n's op recorded, read back by its rule: VS_PARAMS(n, conv_node_params)->kh.
 * The size check catches a rule reading another op's struct. */
static inline const void *vs_node_params(const vs_node *n, size_t size)
{
    assert(n->params_size == size);
    return n->params;
}
#define VS_PARAMS(n, type) ((const type *)vs_node_params((n), sizeof(type)))

/* The element count of a shape, checked: every size >= 0 (a size of -1 counts as 1 when
 * allow_infer, for reshape's inferred dimension), the product without overflow and below 2^61.
 * On failure records an error naming `op` and returns false.  Every shape product goes through it. */
bool vs_shape_count(const char *op, int ndim, const int64_t *shape, bool allow_infer, int64_t *count);

/* Allocate a tensor of the given shape with fresh storage (contents uninitialised); validates the
 * shape and records an error naming `op` on failure. */
vs_tensor *vs_alloc(const char *op, int ndim, const int64_t *shape);
/* A tensor viewing src's storage with another shape of the same size. */
vs_tensor *vs_view(vs_tensor *src, int ndim, const int64_t *shape);

/* When recording is on and an input requires grad, attach a node to out (out->node) holding the
 * inputs and a copy of the op's parameter struct (`size` bytes at `params`; NULL and 0 for none).
 * Returns out, recorded or not - or NULL when the node cannot be allocated: then out is freed and
 * VS_ERR_NOMEM recorded, so the op fails rather than return a result whose gradients would silently
 * be zero.  NULL out passes through.  `in` may contain NULLs (optional inputs). */
vs_tensor *vs_record(vs_tensor *out, const char *name, vs_backward_fn bw, int n_in, vs_tensor *const *in, const void *params,
                     size_t size);
/* Keep tensor t alive with out's node (nothing when out has none). */
void vs_node_save(vs_tensor *out, vs_tensor *t);
/* Give extra (from vs_malloc) to out's node, which frees it; freed at once when out is NULL or
 * has no node. */
void vs_node_adopt(vs_tensor *out, void *extra);

void vs_retain(vs_tensor *t);
void vs_release(vs_tensor *t);

/* Error helpers for ops: record the message (a shape error) and return NULL. */
vs_tensor *vs_op_error(const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Record "op: out of memory for what" as VS_ERR_NOMEM and return NULL. */
vs_tensor *vs_op_nomem(const char *op, const char *what);

/* Broadcast shape of a and b into out (returns false and records an error when incompatible). */
bool vs_broadcast_shape(const char *op, const vs_tensor *a, const vs_tensor *b, int *ndim, int64_t *shape);

/* Normalise a possibly negative axis for a tensor of ndim dims; -1 and an error when out of range. */
int vs_norm_axis(const char *op, int axis, int ndim);

/* Sum of p[0, n) in double the way vs_sum adds a row (ops_reduce.c): lane k of 8 sums the elements
 * = k mod 8 in order, the lanes pairwise, then the tail.  For ops that must give vs_sum's bits. */
double vs_row_sum(const float *p, int64_t n);

/* acc += g element by element, acc and g the same shape and not overlapping: the values vs_add(acc, g)
 * would give, written over acc (ops_elementwise.c).  Only for a tensor nobody else can see (the
 * backward walk's running sums, graph.c). */
void vs_add_into(vs_tensor *acc, const vs_tensor *g);

/* vs_instance_norm that also hands out each plane's statistics (ops_norm.c): mean[i c + j] and the
 * biased variance var[i c + j] of x[i, j] (either may be NULL), the very numbers it normalised with,
 * so that a layer tracking running statistics need not compute them again. */
vs_tensor *vs_instance_norm_stats(vs_tensor *x, vs_tensor *gamma, vs_tensor *beta, float eps, float *mean, float *var);

#include "autograd/alloc.h"   /* vs_malloc and friends */
#include "autograd/kernels.h" /* vs_sgemm, vs_parallel_for */

/* vs_softplusf and vs_sigmoidf of one float: the values of vs_softplus / vs_sigmoid and of the fused
 * loss rules that must match them, in arithmetic the vectoriser keeps vectorised. */
#include "autograd/vmath.h"

#endif
