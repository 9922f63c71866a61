/* versus/composite.h - models made of named sub-models and the wiring between them.
 *
 * A composite is a vs_module of kind VS_MODULE_COMPOSITE.  Its children are named sub-models (one
 * layer, a sequential, a Siamese model or again a composite) and its forward is a short program over
 * named values: each node reads values by name and writes one or more new values.  This is how a
 * StarGAN generator G(x, c), a two-headed critic, a VAE, DIP-VAE, SVAE or M2 is expressed, and how a
 * training run holds several models at once (a GAN is a composite whose children are "generator" and
 * "critic"; it may have no program at all).
 *
 * Names: parameters are "<child>.<name inside the child>", exactly as a torch.nn.Module with those
 * attribute names gives them in its state_dict ("main.3.main.0.weight" for the first conv of the
 * fourth entry of StarGAN's `main`, a residual block whose own body is called `main`).
 *
 * model.json:
 *   {"format": "versus-model/1",
 *    "composite": {
 *      "inputs":  {"x": [3, 28, 28], "c": [10]},      ordered; shape of one example (no batch dim)
 *      "models":  {"main": MODEL, "conv1": LAYER},     ordered; MODEL is {"sequential": [...]},
 *                                                      {"composite": {...}}, {"siamese": {...}}
 *                                                      or one LAYER {"op": ...}
 *      "graph":   [NODE, ...],                         run in order
 *      "outputs": ["y", ...],                          ordered
 *      "task":    "gan",                               optional: the training task (versus/train.h)
 *      "aliases": {"/conv1/Conv": "v3"}}}              optional: other names of values (below)
 * NODE reads "in" (a name or a list of names) and writes "out" (a name, or a list for split):
 *   {"call": "main", "in": "h", "out": "y"}           y = models.main(h)   (Siamese: two inputs -> similarity)
 *   {"op": "concat", "in": ["x", "cmap"], "axis": 1, "out": "h"}
 *   {"op": "broadcast_planes", "in": ["c", "x"], "out": "cmap"}   c [n,k] -> [n,k,H,W] of x [n,*,H,W]
 *   {"op": "split", "in": "h", "axis": 1, "sizes": [20, 20], "out": ["mu", "logvar"]}
 *   {"op": "reparameterize", "in": ["mu", "logvar"], "out": "z"}  z = mu + eps exp(logvar / 2)
 *   {"op": "add", "in": ["a", "b", ...], "out": "s"}          elementwise sum
 *   {"op": "mul", "in": ["a", "b"], "out": "p"}               elementwise product
 *   {"op": "reshape", "in": "h", "shape": [-1], "out": "v"}   per example (the batch dim is kept)
 *   {"op": "relu" | "sigmoid" | "tanh" | "leaky_relu" | "elu" | "softplus" | "flatten" | "dropout", ...}
 *                                                    any parameter-free layer op, with its fields
 * Math nodes (what imported ONNX graphs need; broadcasting as versus/ops.h):
 *   {"op": "sub" | "div" | "max" | "min" | "pow" | "matmul", "in": ["a", "b"], "out": "y"}
 *   {"op": "sqrt" | "hardswish", "in": "x", "out": "y"}      hardswish: x min(max(x/6 + 1/2, 0), 1)
 *   {"op": "clip", "min": 0, "max": 6, ...}                   either bound may be left out
 *   {"op": "hardsigmoid", "alpha": 0.2, "beta": 0.5, ...}     min(max(alpha x + beta, 0), 1)
 *   {"op": "softmax" | "log_softmax", "axis": -1, ...}
 *   {"op": "transpose", "perm": [0, 2, 3, 1], ...}            every dim; the batch stays first
 *   {"op": "reduce_mean" | "reduce_sum", "axes": [2, 3], "keepdims": true, ...}
 *   {"op": "pad", "pads": [0, 0, 1, 1, 1, 1], "value": 0, ...}   before/after per example dim
 *   {"op": "gather", "axis": 1, "index": 0, ...}              x.select(axis, index)
 *   {"op": "const", "shape": [3, 1, 1], "values": [...], "out": "k"}   no "in"; broadcasts
 * Every name (of a value or a model) is an identifier of at most 31 characters, written once; a node
 * reads only inputs and names written by earlier nodes.  "axis" counts the batch dim as 0 and may not
 * be 0 (default 1; negative counts from the end).  A call of a composite child names 1 to all of its
 * outputs (the first ones).  Unknown keys are errors; messages name the file, line, node
 * ("graph[2] (concat)") and field.
 *
 * Randomness: reparameterize draws eps from ctx->rng; without a generator (ctx NULL or ctx->rng
 * NULL) it returns mu, so a deterministic forward (predict, explainers) needs no generator.
 * Dropout nodes follow the composite's mode as dropout layers do.
 *
 * Ownership: the composite owns its children (vs_module_free on the root frees everything) and its
 * program.  Values computed by vs_composite_eval are owned by the caller's current scope.
 */
#ifndef VERSUS_COMPOSITE_H
#define VERSUS_COMPOSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/error.h"
#include "versus/nn.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- building ------------------------------------------------------------------------------------ */

/* An empty composite (no inputs, models, nodes or outputs), in training mode. */
vs_module *vs_composite_new(void);
/* Declare input `name` with the shape of one example (ndim may be 0: a scalar per example, or an
 * unknown shape when shape is NULL).  Inputs are positional in declaration order. */
vs_status vs_composite_add_input(vs_module *m, const char *name, int ndim, const int64_t *shape);
/* Add a named sub-model; m takes ownership of child even on failure. */
vs_status vs_composite_add_model(vs_module *m, const char *name, vs_module *child);
/* Append a program node from its model.json object (the NODE forms above); checked against the names
 * defined so far.  Errors name the node and the field. */
vs_status vs_composite_add_node_json(vs_module *m, const vs_json *node, vs_error *err);
/* Declare a value as output (positional in declaration order). */
vs_status vs_composite_add_output(vs_module *m, const char *name);
/* The training task this composite asks for ("gan", "vae", ...), or NULL. */
const char *vs_composite_task(const vs_module *m);
vs_status vs_composite_set_task(vs_module *m, const char *task);

/* Aliases: other names of values, as an imported ONNX graph's node and tensor names ("/layer4/layer4.1/
 * relu_1/Relu", "input.188") name the values versus computes for them, so --layer takes what the exporter
 * wrote.  An alias is 1 to VS_COMPOSITE_ALIAS_MAX - 1 letters, digits and _ . / : -, given once, naming
 * an input or a node's output.  model.json: "aliases": {"/conv1/Conv": "v3", ...}. */
#define VS_COMPOSITE_ALIAS_MAX 128
bool vs_composite_alias_ok(const char *alias);
vs_status vs_composite_add_alias(vs_module *m, const char *alias, const char *value);
/* The value alias names (borrowed from m), or NULL. */
const char *vs_composite_alias_value(const vs_module *m, const char *alias);
int64_t vs_composite_n_aliases(const vs_module *m);
/* Alias i (and *value the value it names, when value is not NULL), or NULL. */
const char *vs_composite_alias(const vs_module *m, int64_t i, const char **value);

/* ---- running ------------------------------------------------------------------------------------- */

/* Compute the values want[0..n_want) (outs[i] owned by the current scope).  `given` names values
 * known in advance: usually the inputs, but any intermediate name may be given, and then the nodes
 * that would produce it are not run ("z" given, "x_logits" wanted: the decoder alone).  Only the
 * nodes the wanted values depend on run.  NULL outs with vs_last_error() naming the missing value or
 * the failing node ("graph[3] (call main): layer 2 (conv2d): ..."). */
vs_status vs_composite_eval(vs_module *m, const vs_named_tensors *given, int n_want, const char *const *want,
                            vs_tensor **outs, const vs_forward_ctx *ctx);

/* Outputs want[0..n_want) of m given named inputs (a composite: vs_composite_eval; any other module:
 * its forward of the single given value, for a single wanted value); rng: dropout's and
 * reparameterisation's draws (NULL: evaluation). */
vs_status vs_module_eval(vs_module *m, int n_given, const char *const *given_names, vs_tensor *const *given, int n_want,
                         const char *const *want, vs_tensor **outs, vs_rng *rng, vs_error *err);

/* vs_module_forward on a composite gives x as its first input and returns its first output, so a
 * one-input composite classifier works wherever a sequential does. */

/* ---- introspection (for tasks, writers and the CLI) ---------------------------------------------- */
int64_t vs_composite_n_inputs(const vs_module *m);
const char *vs_composite_input_name(const vs_module *m, int64_t i);
/* Shape of one example of input i (ndim -1 when unknown). */
int vs_composite_input_shape(const vs_module *m, int64_t i, int64_t *shape);
int64_t vs_composite_n_outputs(const vs_module *m);
const char *vs_composite_output_name(const vs_module *m, int64_t i);
bool vs_composite_defines(const vs_module *m, const char *value); /* an input or a node's output */
/* How often the program calls child `child` (-1: m is no composite); for the first call, its number
 * of inputs, its first input's and first output's value names (borrowed from m). */
int vs_composite_calls(const vs_module *m, const char *child, int *n_in, const char **in, const char **out);

#ifdef __cplusplus
}
#endif
#endif
