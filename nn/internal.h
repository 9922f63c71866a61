/* nn/internal.h - what the nn files share and users never see: module allocation, owned tensors,
 * per-kind forward and reset functions, spec defaults. */
#ifndef VERSUS_NN_INTERNAL_H
#define VERSUS_NN_INTERNAL_H

#include "versus/gnn.h"
#include "versus/nn.h"
#include "versus/ops.h"

/* Move t out of every open scope so the caller (a module, an optimiser) owns it; returns t. */
vs_tensor *vs_nn_owned(vs_tensor *t);

/* A module of the given kind with a copy of spec (block not copied); NULL (last error set) when out of memory. */
vs_module *vs_module_alloc(const vs_layer_spec *spec);
/* New zero parameter / buffer owned by m (requires_grad for parameters); NULL when out of memory. */
vs_tensor *vs_module_add_param(vs_module *m, const char *name, int ndim, const int64_t *shape);
vs_tensor *vs_module_add_buffer(vs_module *m, const char *name, int ndim, const int64_t *shape);
/* Attach child under name; m owns it from now on, even on failure (then it is freed). */
vs_status vs_module_add_child(vs_module *m, const char *name, vs_module *child);

/* A layer's module with zero tensors and its children (layers.c); s resolved, not residual. */
vs_module *vs_layer_alloc(const vs_layer_spec *s, vs_error *err);

/* A composite's program (composite.c): freed with its module; forward = first input to first output. */
void vs_program_free(struct vs_program *p);
vs_tensor *vs_composite_forward_first(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx);

/* Forward of the graph layers (gnn_layers.c). */
vs_tensor *vs_gnn_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx);
/* The vs_conv_opts of a conv2d / conv_transpose2d module (stride, padding, output padding). */
vs_conv_opts vs_module_conv_opts(const vs_module *m);
/* Reset of one layer's own tensors (init.c); children are reset by the caller. */
vs_status vs_layer_reset_own(vs_module *m, vs_rng *r);

/* Fill absent fields of s with the op's defaults and check every field (spec.c).  Messages name the
 * field and start with the op name; the caller adds the layer index. */
vs_status vs_layer_spec_resolve(const vs_layer_spec *s, vs_layer_spec *out, vs_error *err);

/* s is a name of ASCII letters, digits and _, not starting with a digit, shorter than VS_SPEC_NAME_MAX. */
bool vs_is_identifier(const char *s);

/* Shape of one example (no batch dim) during spec checking; -1 entries and ndim -1 are unknown. */
typedef struct vs_spec_shape {
    int ndim;
    int64_t d[VS_MAX_DIMS];
} vs_spec_shape;
/* Propagate sh through one resolved layer, checking it (spec_shape.c). */
vs_status vs_spec_shape_step(const vs_layer_spec *s, vs_spec_shape *sh, vs_error *err);

#endif
