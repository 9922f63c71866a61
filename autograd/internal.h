/* autograd/internal.h - what the engine's files share and users never see: graph nodes, the
 * recording helper, storage, and the kernel entry points ops call. */
#ifndef VERSUS_AUTOGRAD_INTERNAL_H
#define VERSUS_AUTOGRAD_INTERNAL_H

#include "versus/ops.h"
#include "versus/tensor.h"

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
    vs_backward_rule rule;        /* rule in force when recorded */
    uint32_t needs;               /* bit i: gradient of input i is wanted (set before backward) */
    float f[8];                   /* op parameters */
    int64_t i[16];
    void *extra;                  /* op data freed with the node (index arrays) */
};

/* Inputs past the 31st share the last bit (concat of many tensors). */
static inline bool vs_node_needs(const vs_node *n, int i) { return (n->needs >> (i < 31 ? i : 31)) & 1u; }

/* Allocate a tensor of the given shape with fresh storage (contents uninitialised); validates the
 * shape and records an error naming `op` on failure. */
vs_tensor *vs_alloc(const char *op, int ndim, const int64_t *shape);
/* A tensor viewing src's storage with another shape of the same size. */
vs_tensor *vs_view(vs_tensor *src, int ndim, const int64_t *shape);

/* When recording is on and an input requires grad, attach a node to out and return it so the op can
 * store its parameters; otherwise return NULL.  `in` may contain NULLs (optional inputs). */
vs_node *vs_record(vs_tensor *out, const char *name, vs_backward_fn bw, int n_in, vs_tensor *const *in);
/* Keep an extra tensor alive with the node. */
void vs_node_save(vs_node *n, vs_tensor *t);

void vs_retain(vs_tensor *t);
void vs_release(vs_tensor *t);

/* Any NULL among n tensors?  (ops return NULL at once when so.) */
bool vs_any_null(int n, ...);

/* Error helpers for ops: record the message and return NULL. */
vs_tensor *vs_op_error(const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Broadcast shape of a and b into out (returns false and records an error when incompatible). */
bool vs_broadcast_shape(const char *op, const vs_tensor *a, const vs_tensor *b, int *ndim, int64_t *shape);

/* Normalise a possibly negative axis for a tensor of ndim dims; -1 and an error when out of range. */
int vs_norm_axis(const char *op, int axis, int ndim);

#include "autograd/kernels.h" /* vs_sgemm, vs_parallel_for */

/* Current thread's rule for newly recorded nodes. */
vs_backward_rule vs_current_rule(void);

#endif
