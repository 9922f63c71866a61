/* nn/composite_internal.h - the program of a composite model (named values, nodes, inputs and
 * outputs), shared by composite.c (building, evaluation) and composite_json.c (model.json).
 * Users see it only through versus/composite.h. */
#ifndef VERSUS_NN_COMPOSITE_INTERNAL_H
#define VERSUS_NN_COMPOSITE_INTERNAL_H

#include "nn/internal.h"
#include "versus/composite.h"
#include "versus/json.h"

typedef enum vs_cnode_kind {
    VS_CNODE_CALL = 0,          /* outs = models[child](ins) */
    VS_CNODE_CONCAT,            /* out = cat(ins, axis) */
    VS_CNODE_BROADCAST_PLANES,  /* out = c [n,k] expanded to [n,k,H,W] of x [n,*,H,W] */
    VS_CNODE_SPLIT,             /* outs = consecutive slices of sizes[i] along axis */
    VS_CNODE_REPARAMETERIZE,    /* out = mu + eps exp(logvar / 2) */
    VS_CNODE_ADD,               /* out = sum of ins */
    VS_CNODE_MUL,               /* out = a * b */
    VS_CNODE_RESHAPE,           /* out = in reshaped to [n, shape...] */
    VS_CNODE_LAYER,             /* out = layer(in), a parameter-free layer */
    VS_CNODE_MATH               /* out = math(ins), composite_ops.c */
} vs_cnode_kind;

/* The math nodes (composite_ops.c). */
typedef enum vs_cmath {
    VS_CMATH_SUB, VS_CMATH_DIV, VS_CMATH_MAX, VS_CMATH_MIN, VS_CMATH_POW, VS_CMATH_MATMUL, VS_CMATH_SQRT, VS_CMATH_CLIP,
    VS_CMATH_HARDSIGMOID, VS_CMATH_HARDSWISH, VS_CMATH_SOFTMAX, VS_CMATH_LOG_SOFTMAX, VS_CMATH_TRANSPOSE,
    VS_CMATH_REDUCE_MEAN, VS_CMATH_REDUCE_SUM, VS_CMATH_PAD, VS_CMATH_GATHER, VS_CMATH_CONST
} vs_cmath;

/* At most this many inputs and outputs per node (model.json nodes are checked against it). */
#define VS_CNODE_MAX_ARGS 64

/* One node.  Value ids index vs_program.values. */
typedef struct vs_cnode {
    vs_cnode_kind kind;
    int n_in, n_out;
    int *in, *out;                       /* malloc'd value ids */
    int64_t child;                       /* call: index into the composite's children */
    int axis;                            /* concat, split (>= 1, or < 0 from the end) */
    int64_t *sizes;                      /* split: n_out sizes, malloc'd */
    int ndim;                            /* reshape: per-example shape (one entry may be -1) */
    int64_t shape[VS_MAX_DIMS];
    vs_module *layer;                    /* layer: owned; its mode follows the composite's */
    vs_cmath math;                       /* math: which; a, b its numbers (clip's bounds, ...) */
    float a, b;
    int64_t *ints;                       /* math: perm, axes or pads (n_ints, malloc'd) */
    int n_ints;
    float *data;                         /* const: n_data values of shape[0..ndim) (malloc'd) */
    int64_t n_data;
} vs_cnode;

typedef struct vs_cinput {
    int value;                           /* value id */
    int ndim;                            /* -1 when the shape is unknown */
    int64_t shape[VS_MAX_DIMS];
} vs_cinput;

/* Another name of a value: an ONNX graph's node or tensor name, so --layer takes the names the
 * exporter wrote. */
typedef struct vs_calias {
    char *name;                          /* owned */
    int value;                           /* value id */
} vs_calias;

struct vs_program {
    int n_values, cap_values;
    char **values;                       /* every name: inputs and node outputs, owned */
    int n_inputs, cap_inputs;
    vs_cinput *inputs;
    int n_nodes, cap_nodes;
    vs_cnode *nodes;
    int n_outputs, cap_outputs;
    int *outputs;                        /* value ids */
    char *task;                          /* owned, or NULL */
    int n_aliases, cap_aliases;
    vs_calias *aliases;                  /* other names of values (an imported graph's node and tensor names) */
};

/* Value id of name, or -1. */
int vs_program_find(const struct vs_program *p, const char *name);
/* "call main", "concat", ... for messages and model.json. */
const char *vs_cnode_op_name(const vs_module *m, const vs_cnode *n, char *buf, size_t len);
/* Append node n, its inputs checked by the caller; its n->n_out outputs are defined here from
 * out_names (checked: new, distinct names).  The program takes n's arrays and layer, also on failure. */
vs_status vs_program_push_node(vs_module *m, vs_cnode *n, const char *const *out_names);


/* composite_ops.c: is op a math node's name, its number of inputs (-1: not one), its name; fields
 * from a node's JSON (n's in/out set; label for messages), back to JSON, and evaluation. */
bool vs_cmath_known(const char *op);
int vs_cmath_arity(const char *op);
const char *vs_cmath_name(vs_cmath op);
vs_status vs_cmath_from_json(const vs_json *node, const char *label, const char *op, vs_cnode *n, vs_error *err);
vs_status vs_cmath_to_json(const vs_cnode *n, vs_json *o);
vs_tensor *vs_cmath_run(const vs_cnode *n, vs_tensor *const *in);

/* model.json: a composite module from its "composite" object (children built from r), and back. */
vs_module *vs_composite_from_json(const vs_json *obj, vs_rng *r, vs_error *err);
vs_json *vs_composite_to_json(const vs_module *m, vs_error *err);
/* A copy of a JSON subtree that keeps positions and the file name for messages (NULL when out of
 * memory); freed with vs_json_free. */
vs_json *vs_composite_json_copy(const vs_json *obj);

/* model_io.c: one LAYER object into s (keys in skip are left to the caller); a MODEL body
 * ({"sequential"}, {"siamese"} or {"composite"}; strict: no other key) into out (cleared by the
 * caller); the LAYER object of a layer; the body keys of a model added to obj. */
vs_status vs_layer_spec_from_json(const vs_json *o, vs_layer_spec *s, const char *const *skip, vs_error *err);
vs_status vs_model_body_from_json(const vs_json *obj, vs_model_spec *out, bool strict, vs_error *err);
vs_json *vs_layer_to_json(const vs_module *m, vs_error *err);
vs_status vs_model_body_to_json(const vs_module *m, vs_json *obj, vs_error *err);

#endif
