/* cmd_import.c - `versus import FILE.onnx --out DIR`: an ONNX model as a model directory (model.json +
 * model.safetensors) that loads to the same model, bit for bit.  The import itself is the library's
 * (vs_onnx_import, reached through vs_model_load). */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>

static const vs_cli_opt import_opts[] = {
    {"out", 1, "directory to write model.json and model.safetensors into (created when missing)"},
    {NULL, 0, NULL},
};

static int run_import(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("import", import_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos != 1) return vs_usage_error("import", "expected one ONNX file (versus import FILE.onnx --out DIR)");
    const char *out = vs_args_get(&a, "out");
    if (!out) return vs_usage_error("import", "--out DIR is required");
    if (!vs_model_path_is_onnx(a.pos[0])) return vs_usage_error("import", "'%s' is not an .onnx file", a.pos[0]);
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = vs_model_load(a.pos[0], NULL, &err);
    if (!m) return vs_fail("%s", err.msg);
    rc = vs_model_save(m, 0, NULL, out, &err) == VS_OK ? 0 : vs_fail("%s", err.msg);
    if (!rc) printf("wrote %s/model.json and %s/model.safetensors (%lld parameters)\n", out, out, (long long)vs_module_param_count(m));
    vs_module_free(m);
    return rc;
}

const vs_verb vs_verb_import = {
    "import",
    "turn an ONNX model into a model directory",
    "usage: versus import FILE.onnx --out DIR\n\n"
    "Reads an ONNX model (opsets 11 to 18; e.g. torch.onnx.export(model, x, \"model.onnx\", opset_version=13)\n"
    "in eval mode) and writes DIR/model.json (a composite: layers with weights as named models, the\n"
    "rest as program nodes) and DIR/model.safetensors.  The directory loads to the same model, bit for\n"
    "bit.  Every verb that takes --model DIR also takes --model FILE.onnx directly.\n\n"
    "Supported ops: Conv (groups, dilation, pads, auto_pad), ConvTranspose, Gemm, MatMul,\n"
    "BatchNormalization, InstanceNormalization, Add, Sub, Mul, Div, Max, Min, Pow (broadcasting), Sqrt,\n"
    "Relu, LeakyRelu, Sigmoid, Tanh, Softmax, LogSoftmax, Clip, HardSigmoid, HardSwish, MaxPool,\n"
    "AveragePool, GlobalAveragePool, Flatten, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Gather\n"
    "(constant index), Pad (constant), Dropout, Identity, Constant, Shape, Cast, ReduceMean, ReduceSum,\n"
    "ConstantOfShape, Expand, Tile (of dims of size 1: x.view(n, k, 1, 1).repeat(1, 1, h, w)).\n"
    "Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains are folded.  Anything else exits 1 naming\n"
    "the file, the node, the op and the opset.  The first dim of every graph input is the batch.\n"
    "A graph with two inputs is a two-input model: predict takes the second as --reference (a Siamese\n"
    "pair's reference, or a generator's label [k] beside its image); attribute and evaluate explain\n"
    "two-input models whose inputs have one shape (query and reference).",
    import_opts,
    run_import,
    NULL,
};
