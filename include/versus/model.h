/* versus/model.h - model directories: model.json (architecture) + model.safetensors (weights).
 *
 * model.json (see docs of the outside contract) for a plain stack, a Siamese model and a composite:
 *   {"format": "versus-model/1", "input": [1, 28, 28], "sequential": [LAYER, ...]}
 *   {"format": "versus-model/1", "input": [p],
 *    "siamese": {"encoder": {"sequential": [LAYER, ...]}, "similarity": "cosine"}}
 *   {"format": "versus-model/1", "composite": {"inputs": ..., "models": ..., "graph": ..., ...}}
 *                                                         versus/composite.h; no top-level "input"
 * LAYER is {"op": NAME, FIELD: number, ...} with the op names and fields of versus/nn.h
 * (vs_module_kind_name, vs_spec_field_name); "bias", "train_eps" and "ceil_mode" also take true/false.  Keys
 * this format adds beyond the basic ops:
 *   {"op": "residual", "sequential": [LAYER, ...]}        x + block(x), parameters "<i>.block.<j>.*"
 *   {"op": "residual", "name": "main", ...}               the block's name: "<i>.main.<j>.*" (StarGAN)
 *   {"op": "instance_norm2d", "features": C, "affine": true, "track_running_stats": false}
 *                                                         versus's defaults (PyTorch's affine is false)
 *   {"op": "gcn_conv", "in": F, "out": H}                 parameters "<i>.bias", "<i>.lin.weight"
 *   {"op": "gin_conv", "in": F, "out": H, "hidden": K, "eps": 0, "train_eps": false}
 *                                                         "<i>.eps", "<i>.nn.0.weight", ..., "<i>.nn.2.bias"
 *   {"op": "mean_readout"} / "sum_readout" / "max_readout"  node rows -> one row per graph
 * "input" is optional.  Other top-level keys are ignored; unknown keys inside a layer or a composite
 * are errors.  Messages name the file, line and column.
 *
 * model.safetensors holds every parameter and buffer under its PyTorch state_dict name (F32).
 */
#ifndef VERSUS_MODEL_H
#define VERSUS_MODEL_H

#include "versus/error.h"
#include "versus/json.h"
#include "versus/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_MODEL_FORMAT "versus-model/1"

/* A model.json document (parsed with vs_json_parse*) into a spec; out is cleared first and owned by
 * the caller afterwards (vs_model_spec_clear), also on failure. */
vs_status vs_model_spec_from_json(const vs_json *root, vs_model_spec *out, vs_error *err);
/* The model.json document of m (a sequential, a Siamese model of a sequential, or a composite): every
 * layer with all the fields that apply to it, defaults included.  input_ndim 0 leaves "input" out
 * (a composite never writes it: its inputs hold their shapes). */
vs_status vs_model_to_json(const vs_module *m, int input_ndim, const int64_t *input, vs_json **out, vs_error *err);

/* An ONNX file (versus/onnx.h) as a model directory's two parts: *doc the model.json document of a
 * composite (versus/composite.h) and weights its parameters and buffers by state_dict name (the
 * tensors belong to the caller: vs_tensor_free each, then vs_named_tensors_clear).  Opsets 11 to 18;
 * an op or attribute outside the supported set fails naming the file, the node, the op and the
 * opset, and listing the supported ops. */
vs_status vs_onnx_import(const char *path, vs_json **doc, vs_named_tensors *weights, vs_error *err);
/* Does path name an ONNX file (ends in ".onnx")?  vs_model_load takes one wherever a directory goes. */
bool vs_model_path_is_onnx(const char *path);

/* Read dir/model.json and dir/model.safetensors: a model in evaluation mode, every weight checked
 * against the architecture.  dir may be an ONNX file instead (vs_model_path_is_onnx), imported on the
 * way (vs_onnx_import): spec then holds the document it was built from.  spec (may be NULL) receives the parsed spec, which the caller clears. */
vs_module *vs_model_load(const char *dir, vs_model_spec *spec, vs_error *err);
/* Write dir/model.json and dir/model.safetensors (creating dir when missing), each atomically. */
vs_status vs_model_save(const vs_module *m, int input_ndim, const int64_t *input, const char *dir, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
