/* versus/nn.h - layers as a module tree with PyTorch parameter names, forward passes, initialisers
 * and layer specs (the in-memory form of model.json's "sequential" list).
 *
 * A vs_module is one layer or a container of layers.  Its parameters are leaf tensors with
 * requires_grad set, its buffers (batch-norm running statistics) leaf tensors without; both are
 * created outside every scope and owned by the module, and children are owned by their parent:
 * vs_module_free() on the root frees the whole tree and every tensor in it.
 *
 * Names follow PyTorch's state_dict: a module lists its own parameters, then its own buffers, then
 * each child under "<child name>." ("0.weight", "0.bias", "encoder.3.running_mean").  Layouts are
 * PyTorch's too (Linear weight [out,in], Conv2d [out,in,k,k], ConvTranspose2d [in,out,k,k]), so a
 * torch.nn.Sequential state_dict loads unchanged.
 *
 * Mode: a module is in training mode when built (as in PyTorch); vs_module_train(m, false) switches
 * the whole subtree to evaluation (dropout off, batch norm on running statistics).
 *
 * Graph layers (GCN, GIN, readouts) live in versus/gnn.h; they are modules like the others and take
 * the structure of the node batch from the forward context.
 */
#ifndef VERSUS_NN_H
#define VERSUS_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/rng.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_graph_batch vs_graph_batch; /* versus/gnn.h */

/* ---- kinds and specs ------------------------------------------------------------------------------ */

typedef enum vs_module_kind {
    VS_MODULE_SEQUENTIAL = 0,   /* children "0", "1", ... applied in order */
    VS_MODULE_LINEAR,           /* y = x W^T + b over the last dim; weight [out,in], bias [out] */
    VS_MODULE_CONV2D,           /* y = conv2d(x, W) + b; weight [out,in,k,k], bias [out] */
    VS_MODULE_CONV_TRANSPOSE2D, /* y = conv_transpose2d(x, W) + b; weight [in,out,k,k], bias [out] */
    VS_MODULE_MAX_POOL2D,       /* max over k x k windows */
    VS_MODULE_AVG_POOL2D,       /* mean over k x k windows (padding counted) */
    VS_MODULE_GLOBAL_AVG_POOL,  /* [n,c,h,w] -> [n,c], mean over h,w */
    VS_MODULE_BATCH_NORM1D,     /* [n,c] or [n,c,l]; weight, bias, running_mean, running_var */
    VS_MODULE_BATCH_NORM2D,     /* [n,c,h,w]; same tensors */
    VS_MODULE_INSTANCE_NORM2D,  /* per sample and channel over h,w; weight, bias when affine; running
                                 * stats when track_running_stats (then used in evaluation mode) */
    VS_MODULE_LAYER_NORM,       /* over the last dim of size `features`; weight, bias */
    VS_MODULE_DROPOUT,          /* training: x * Bernoulli(1-p) / (1-p); eval: x */
    VS_MODULE_FLATTEN,          /* [n, ...] -> [n, prod(...)] */
    VS_MODULE_RELU,             /* max(x, 0) */
    VS_MODULE_LEAKY_RELU,       /* x > 0 ? x : slope x */
    VS_MODULE_ELU,              /* x > 0 ? x : alpha (e^x - 1) */
    VS_MODULE_TANH,             /* tanh x */
    VS_MODULE_SIGMOID,          /* 1 / (1 + e^-x) */
    VS_MODULE_SOFTPLUS,         /* ln(1 + e^x) */
    VS_MODULE_RESIDUAL,         /* x + block(x); child "block" (a sequential; spec.name renames it) */
    VS_MODULE_GCN_CONV,         /* versus/gnn.h; D^-1/2 (A+I) D^-1/2 X W^T + b; bias, child "lin" */
    VS_MODULE_GIN_CONV,         /* versus/gnn.h; nn((1+eps) x_i + sum_j w_ij x_j); eps, child "nn" */
    VS_MODULE_MEAN_READOUT,     /* versus/gnn.h; node rows -> one mean row per graph */
    VS_MODULE_SUM_READOUT,      /* versus/gnn.h; one sum row per graph */
    VS_MODULE_MAX_READOUT,      /* versus/gnn.h; one max row per graph */
    VS_MODULE_SIAMESE,          /* child "encoder"; similarity of two embeddings */
    VS_MODULE_COMPOSITE,        /* named sub-models and a program wiring them (versus/composite.h) */
    VS_MODULE_KIND_COUNT
} vs_module_kind;

/* model.json name of a kind ("conv2d", "batch_norm1d", ...). */
const char *vs_module_kind_name(vs_module_kind kind);
/* Kind from its model.json name; false when unknown. */
bool vs_module_kind_from_name(const char *name, vs_module_kind *kind);

typedef enum vs_similarity { VS_SIMILARITY_COSINE = 0 } vs_similarity;
const char *vs_similarity_name(vs_similarity s);                 /* "cosine" */
bool vs_similarity_from_name(const char *name, vs_similarity *s); /* false when unknown */

/* One layer as model.json describes it.  vs_layer_spec_init() marks every field absent (integers
 * VS_SPEC_ABSENT, numbers NaN); building a layer fills absent fields with the defaults below and
 * rejects fields that do not apply to the op. */
#define VS_SPEC_ABSENT INT64_MIN /* no JSON integer is this (they are limited to 9e15), so -1 is an error, not "absent" */
#define VS_SPEC_NAME_MAX 32
typedef struct vs_layer_spec {
    vs_module_kind op;
    int64_t in, out;            /* linear, conv2d, conv_transpose2d, gcn_conv, gin_conv */
    int64_t hidden;             /* gin_conv: width of its MLP (default out) */
    int64_t features;           /* batch_norm1d/2d, instance_norm2d, layer_norm: channels */
    int64_t kernel;             /* conv and pooling */
    int64_t stride;             /* conv (default 1), pooling (default kernel) */
    int64_t padding;            /* conv and pooling (default 0) */
    int64_t output_padding;     /* conv_transpose2d (default 0; below the stride or the dilation) */
    int64_t dilation;           /* conv2d, conv_transpose2d, max_pool2d: tap spacing (default 1) */
    int64_t ceil_mode;          /* max/avg_pool2d: 1 = the output side rounds up (default 0) */
    int64_t groups;             /* conv2d, conv_transpose2d: channel groups, dividing in and out (default 1; in = depthwise) */
    int64_t bias;               /* linear, conv: 1 = with a bias (default), 0 = without */
    int64_t train_eps;          /* gin_conv: 1 = eps is a parameter, 0 = a buffer (default) */
    double p;                   /* dropout probability (default 0.5) */
    double slope;               /* leaky_relu negative slope (default 0.01) */
    double alpha;               /* elu (default 1) */
    double eps;                 /* norms: added to the variance (default 1e-5); gin_conv: initial eps (default 0) */
    double momentum;            /* batch/instance norm running-statistics momentum (default 0.1) */
    int64_t affine;             /* instance_norm2d: 1 = weight and bias (default; PyTorch's default is 0) */
    int64_t track_running_stats; /* instance_norm2d: 1 = running_mean/var buffers, used in evaluation (default 0) */
    struct vs_layer_spec *block; /* residual: the inner layers (owned by this spec, malloc'd) */
    int64_t n_block;
    char name[VS_SPEC_NAME_MAX]; /* residual: the block's child name ("" means "block"; StarGAN: "main") */
} vs_layer_spec;

void vs_layer_spec_init(vs_layer_spec *s, vs_module_kind op); /* op set, every field absent */
void vs_layer_spec_clear(vs_layer_spec *s);                   /* free the block list, recursively */

/* Field access by model.json name ("kernel", "momentum", ...), for JSON readers and writers.
 * set: the field must apply to s->op and integer fields need integer values. */
#define VS_SPEC_N_FIELDS 20
const char *vs_spec_field_name(int i);                          /* i in [0, VS_SPEC_N_FIELDS) */
bool vs_spec_field_applies(vs_module_kind op, const char *field); /* is it a key of this op? */
vs_status vs_layer_spec_set(vs_layer_spec *s, const char *field, double value, vs_error *err);
bool vs_layer_spec_get(const vs_layer_spec *s, const char *field, double *value); /* false when absent */
bool vs_spec_field_is_flag(const char *field); /* 0/1 fields model.json writes as true/false ("bias", ...) */

typedef struct vs_json vs_json; /* versus/json.h */

/* A whole model.json: a plain stack, a Siamese model whose encoder is the stack, or a composite. */
typedef struct vs_model_spec {
    int input_ndim;             /* 0 when "input" is absent (a composite: its first input's shape) */
    int64_t input[VS_MAX_DIMS]; /* shape of one example without the batch dim */
    bool siamese;
    vs_similarity similarity;   /* Siamese only */
    vs_layer_spec *layers;      /* [n_layers], owned (malloc'd); the encoder's layers when siamese */
    int64_t n_layers;
    vs_json *composite;         /* a composite's "composite" object (a copy owned by the spec), else NULL */
} vs_model_spec;

void vs_model_spec_clear(vs_model_spec *s); /* free the layer list; s can be reused after */

/* ---- the module tree ----------------------------------------------------------------------------- */

#define VS_MODULE_MAX_TENSORS 4

typedef struct vs_module vs_module;
/* Read the fields freely; change them only through the functions below. */
struct vs_module {
    vs_module_kind kind;
    bool training;                                   /* training (default) or evaluation mode */
    vs_layer_spec spec;                              /* hyper-parameters, defaults filled; block NULL */
    vs_similarity similarity;                        /* siamese only */
    int n_params, n_buffers;
    const char *param_names[VS_MODULE_MAX_TENSORS];  /* "weight", "bias", "eps" */
    vs_tensor *params[VS_MODULE_MAX_TENSORS];        /* leaves with requires_grad */
    const char *buffer_names[VS_MODULE_MAX_TENSORS]; /* "running_mean", "running_var", "eps" */
    vs_tensor *buffers[VS_MODULE_MAX_TENSORS];
    int64_t n_children, cap_children;
    vs_module **children;                            /* owned */
    char **child_names;                              /* "0", "1", "encoder", "block", "lin", "nn" */
    struct vs_program *program;                      /* composite only: its wiring (private to nn/) */
};

void vs_module_free(vs_module *m);                   /* frees the subtree and its tensors; NULL is fine */
void vs_module_train(vs_module *m, bool training);   /* set the mode of the whole subtree */
vs_tensor *vs_module_param(const vs_module *m, const char *name); /* own parameter or buffer by local name, or NULL */
vs_module *vs_module_child(const vs_module *m, const char *name); /* child by name, or NULL */
int64_t vs_module_param_count(const vs_module *m);   /* number of scalars in all parameters */
void vs_module_zero_grad(vs_module *m);              /* drop ->grad of every parameter */

/* Named tensors in state_dict order; names and list owned by the list, tensors by their module. */
typedef struct vs_named_tensor {
    char *name;        /* "0.weight" */
    vs_tensor *tensor; /* borrowed */
    bool is_buffer;
} vs_named_tensor;
typedef struct vs_named_tensors {
    int64_t n, cap;
    vs_named_tensor *items;
} vs_named_tensors;

#define VS_STATE_PARAMS 1u  /* parameters (named_parameters) */
#define VS_STATE_BUFFERS 2u /* buffers */
#define VS_STATE_ALL 3u     /* both, interleaved as in state_dict */
/* Append the tensors of the subtree selected by `what` to out (which may already hold entries). */
vs_status vs_module_named_tensors(const vs_module *m, unsigned what, vs_named_tensors *out);
/* Append one entry (name copied). */
vs_status vs_named_tensors_push(vs_named_tensors *l, const char *name, vs_tensor *t, bool is_buffer);
void vs_named_tensors_clear(vs_named_tensors *l);    /* free names and the array; tensors untouched */
/* The entry called name, or NULL. */
vs_tensor *vs_named_tensors_find(const vs_named_tensors *l, const char *name);

/* Copy values from src (e.g. a safetensors file's tensors) into every parameter and buffer of m.
 * Each must be present with m's shape; entries m does not have are an error except
 * "*.num_batches_tracked" (PyTorch's batch-norm counter, ignored).  Messages name the tensor. */
vs_status vs_module_load_state(vs_module *m, const vs_named_tensors *src, vs_error *err);

/* ---- building ------------------------------------------------------------------------------------ */

/* One layer from its spec with PyTorch's default initialisation drawn from r (r may be NULL for
 * layers without parameters).  NULL with err set (naming the field) when the spec is invalid. */
vs_module *vs_layer_new(const vs_layer_spec *s, vs_rng *r, vs_error *err);
/* A sequential of n layers.  With input_ndim > 0 the shape of one example (no batch dim) is
 * propagated and every layer's in/features checked against it; without it consecutive layers are
 * still checked against each other.  Messages read "layer 5 (linear): ...". */
vs_module *vs_sequential_from_spec(const vs_layer_spec *layers, int64_t n, int input_ndim, const int64_t *input,
                                   vs_rng *r, vs_error *err);
/* A whole model (plain stack or Siamese). */
vs_module *vs_model_from_spec(const vs_model_spec *s, vs_rng *r, vs_error *err);

/* Typed constructors (NULL with vs_last_error() set on a bad argument). */
vs_module *vs_sequential_new(void);
/* Append layer as child str(n_children); seq takes ownership of layer even on failure; a NULL layer
 * (a failed constructor) is reported with VS_ERR_ARG. */
vs_status vs_sequential_add(vs_module *seq, vs_module *layer);
vs_module *vs_linear_new(int64_t in, int64_t out, bool bias, vs_rng *r);
vs_module *vs_conv2d_new(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, bool bias, vs_rng *r);
vs_module *vs_conv_transpose2d_new(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                                   int64_t output_padding, bool bias, vs_rng *r);
vs_module *vs_max_pool2d_new(int64_t kernel, int64_t stride, int64_t padding); /* stride 0: the kernel */
vs_module *vs_avg_pool2d_new(int64_t kernel, int64_t stride, int64_t padding);
vs_module *vs_global_avg_pool_new(void);
vs_module *vs_batch_norm1d_new(int64_t features, float eps, float momentum);
vs_module *vs_batch_norm2d_new(int64_t features, float eps, float momentum);
vs_module *vs_instance_norm2d_new(int64_t features, float eps);
vs_module *vs_layer_norm_new(int64_t features, float eps);
vs_module *vs_dropout_new(float p);
vs_module *vs_flatten_new(void);
/* relu, tanh, sigmoid, softplus (no parameter), leaky_relu (param = slope), elu (param = alpha). */
vs_module *vs_activation_new(vs_module_kind kind, float param);
vs_module *vs_residual_new(vs_module *block);        /* takes ownership of block (a sequential) */
/* The same with the block's child called name (PyTorch attribute, e.g. "main"); NULL name: "block". */
vs_module *vs_residual_named_new(vs_module *block, const char *name);
vs_module *vs_siamese_new(vs_module *encoder, vs_similarity sim); /* takes ownership of encoder */

/* ---- forward ------------------------------------------------------------------------------------- */

/* What a forward pass needs besides the input.  A NULL context means all fields NULL.  Training or
 * evaluation behaviour comes from each module's mode (vs_module_train), as in PyTorch. */
typedef struct vs_forward_ctx {
    vs_rng *rng;                 /* dropout masks in training mode */
    const vs_graph_batch *graph; /* graph layers: structure of the node rows of x */
    vs_tensor *edge_weight;      /* graph layers: [graph->n_edges] weights (differentiable), NULL = all 1 */
} vs_forward_ctx;

/* y = m(x).  Result owned by the current scope (intermediates are released inside); NULL with
 * vs_last_error() naming the failing layer ("layer 3 (linear): ...").  A Siamese module returns the
 * encoder's embedding. */
vs_tensor *vs_module_forward(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx);
/* Layers [begin, end) of a sequential applied to x; when outs is not NULL, outs[i - begin] receives
 * the output of layer i (Grad-CAM takes the activation of one layer and differentiates the rest). */
vs_tensor *vs_sequential_forward_range(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx, int64_t begin,
                                       int64_t end, vs_tensor **outs);
/* Outputs of the sequential m for n copies of one input x [1, C, H, W]: copy i equals x except that
 * the box boxes[6i..6i+5] = {c0, y0, x0, channels, height, width} takes fill's values (fill
 * [1, C, H, W]).  Equal to vs_module_forward on the n materialised copies up to float rounding,
 * but each leading conv2d, pooling, activation, dropout and batch-norm layer computes only the
 * region of its activation that the box changes (occlusion's incremental inference); the first
 * other layer gets the materialised copies (flatten + linear: y_base + W (a - B) over the boxes when
 * they are small), and a copy the box leaves unchanged gets x's output.
 * Dropout and batch norm must be in evaluation mode (rows must not mix).  No gradient is recorded.
 * Result [n, ...] owned by the current scope; NULL with err set. */
vs_tensor *vs_sequential_forward_boxes(vs_module *m, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes,
                                       vs_error *err);
/* The explained score of a batch of outputs (a callback of the caller's): [N]. */
typedef vs_tensor *(*vs_path_score)(void *sctx, vs_tensor *out);
/* Whether vs_sequential_path_grads takes m: a sequential that starts affine layers (linear, conv2d,
 * average pools, flatten, eval-mode dropout and batch norm; maybe none), then
 * piecewise-linear ones (ReLU, leaky ReLU, max pool, eval-mode dropout; at least one kink), then
 * flatten / eval-mode dropout, then a conv2d or linear layer. */
bool vs_sequential_has_path_grads(const vs_module *m);
/* Whether it takes m on x [1, ...]: the layers fit x, the second weighted layer gets images
 * [1, c, h, w] (conv2d, a dense kernel) or vectors [1, features] (linear), and the engine's reading of
 * the piecewise-linear block agrees with the block's forward on x (one forward of those layers). */
bool vs_sequential_path_grads_fits(vs_module *m, vs_tensor *x);
/* Integrated gradients' gradient sum: grad_sum[x->size] = sum_k w[k] dS/dx at x' + a[k] (x - x'),
 * S = score(sctx, outputs of m), for n points, the points run in chunks of `chunk` through the layers
 * after the second weighted one.  The affine layers cost one batch of two rows for all points; each
 * output of the piecewise-linear block is one of their units times a slope, which changes at few
 * points, so the second weighted layer costs two products plus one column of its weight per change
 * (nn/path_grads.c).  Equal to the point-by-point gradients up to float rounding.  x and baseline
 * [1, ...], one shape.  VS_ERR_ARG when m or x does not fit (as vs_sequential_path_grads_fits says,
 * checked on the engine's own forward at x). */
vs_status vs_sequential_path_grads(vs_module *m, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a,
                                   const double *w, vs_path_score score, void *sctx, int64_t chunk, float *grad_sum,
                                   vs_error *err);
/* s[i] = similarity(encoder(a)[i], encoder(b)[i]): [N].  ctx_b NULL means ctx_a (graph pairs use
 * one context per side). */
vs_tensor *vs_siamese_forward(vs_module *m, vs_tensor *a, const vs_forward_ctx *ctx_a, vs_tensor *b,
                              const vs_forward_ctx *ctx_b);
/* Whether m compares pairs: a Siamese module, or a composite with two inputs (query, reference) and
 * an output, whatever its head computes (cosine of two embeddings, concat -> linear, ...), unless it
 * names a training task of its own (a generator G(x, c) with "task": "gan" is no pair model). */
bool vs_module_compares_pairs(const vs_module *m);
/* y = m(a, b) for the pairs (a[i], b[i]): a Siamese module's similarity [N], a two-input composite's
 * first output (a and b given as its first and second input).  Owned by the current scope; NULL with
 * vs_last_error() when m compares no pairs or the forward fails. */
vs_tensor *vs_pair_forward(vs_module *m, vs_tensor *a, vs_tensor *b, const vs_forward_ctx *ctx);

/* ---- initialisers (PyTorch's torch.nn.init formulas; draws from r in element order) --------------- */

typedef enum vs_fan_mode { VS_FAN_IN = 0, VS_FAN_OUT = 1 } vs_fan_mode;

/* fan_in = shape[1] * receptive, fan_out = shape[0] * receptive, receptive = prod(shape[2..]). */
void vs_fan_in_out(const vs_tensor *t, int64_t *fan_in, int64_t *fan_out);
void vs_init_constant(vs_tensor *t, float v);                          /* t = v */
void vs_init_uniform(vs_tensor *t, vs_rng *r, float lo, float hi);     /* t ~ U(lo, hi) */
void vs_init_normal(vs_tensor *t, vs_rng *r, float mean, float std);   /* t ~ N(mean, std^2) */
void vs_init_xavier_uniform(vs_tensor *t, vs_rng *r, float gain);      /* U(-b, b), b = gain sqrt(6 / (fan_in + fan_out)) */
void vs_init_xavier_normal(vs_tensor *t, vs_rng *r, float gain);       /* N(0, gain^2 2 / (fan_in + fan_out)) */
/* U(-b, b), b = sqrt(2 / (1 + a^2)) sqrt(3 / fan)  (leaky_relu gain; a = 0 for relu) */
void vs_init_kaiming_uniform(vs_tensor *t, vs_rng *r, float a, vs_fan_mode mode);
/* N(0, s^2), s = sqrt(2 / (1 + a^2)) / sqrt(fan) */
void vs_init_kaiming_normal(vs_tensor *t, vs_rng *r, float a, vs_fan_mode mode);
/* PyTorch's reset_parameters() for every layer of the subtree: Linear/Conv weights kaiming_uniform
 * with a = sqrt(5), biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); norms weight 1, bias 0, running mean
 * 0, var 1; GCN weight Glorot uniform, bias 0; GIN eps its initial value. */
vs_status vs_module_reset_parameters(vs_module *m, vs_rng *r);

#ifdef __cplusplus
}
#endif
#endif
