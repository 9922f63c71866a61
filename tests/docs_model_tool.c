/* tests/docs_model_tool.c - the versus side of tests/docs_formats.sh: a model directory from a
 * model.json example of docs/formats/model.md, for `versus predict` to load.
 *   docs_model_tool EXAMPLE.json DIR
 * builds the model the example describes with random weights (seed 1), saves it to DIR, puts the
 * example's own text in DIR/model.json (so the file versus loads is the page's, byte for byte),
 * writes DIR/x.npy (and, for a Siamese model, DIR/r.npy): two random examples of the model's input,
 * and prints how to call predict: "npy", "siamese", "graph" or "graph-siamese". */
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "docs_model_tool: %s: %s\n", what, msg);
    return 1;
}

static bool graph_layers(const vs_model_spec *s)
{
    for (int64_t i = 0; i < s->n_layers; i++)
        switch (s->layers[i].op) {
        case VS_MODULE_GCN_CONV: case VS_MODULE_GIN_CONV: case VS_MODULE_MEAN_READOUT: case VS_MODULE_SUM_READOUT:
        case VS_MODULE_MAX_READOUT:
            return true;
        default:
            break;
        }
    return false;
}

/* The shape of one example the model takes: model.json's "input", or a GAN root's noise (its
 * generator's first input).  0 when unknown. */
static int example_shape(vs_module *m, const vs_model_spec *spec, int64_t *shape)
{
    if (spec->input_ndim > 0) {
        memcpy(shape, spec->input, (size_t)spec->input_ndim * sizeof *shape);
        return spec->input_ndim;
    }
    vs_module *g = m->kind == VS_MODULE_COMPOSITE ? vs_module_child(m, "generator") : NULL;
    if (g && g->kind == VS_MODULE_COMPOSITE) return vs_composite_input_shape(g, 0, shape) < 0 ? 0 : vs_composite_input_shape(g, 0, shape);
    return 0;
}

static int write_examples(const char *dir, const char *name, int nd, const int64_t *shape, vs_rng *r)
{
    int64_t full[VS_MAX_DIMS] = {2};
    memcpy(full + 1, shape, (size_t)nd * sizeof *shape);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    vs_tensor *x = vs_tensor_rand(nd + 1, full, r, 0.0f, 1.0f);
    vs_error err;
    vs_error_clear(&err);
    int rc = x && vs_npy_write(path, x, &err) == VS_OK ? 0 : fail(path, x ? err.msg : vs_last_error()->msg);
    vs_tensor_free(x);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) return fail("usage", "docs_model_tool EXAMPLE.json DIR");
    const char *src = argv[1], *dir = argv[2];
    vs_error err;
    vs_error_clear(&err);
    vs_json *doc = NULL;
    vs_model_spec spec = {0};
    if (vs_json_parse_file(src, NULL, &doc, &err) != VS_OK || vs_model_spec_from_json(doc, &spec, &err) != VS_OK) {
        vs_json_free(doc);
        return fail(src, err.msg);
    }
    vs_json_free(doc);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_module *m = vs_model_from_spec(&spec, &r, &err);
    int rc = m ? 0 : fail(src, err.msg);
    if (!rc && vs_model_save(m, spec.input_ndim, spec.input, dir, &err) != VS_OK) rc = fail(dir, err.msg);
    /* the page's text replaces the one vs_model_save wrote */
    char path[4096];
    snprintf(path, sizeof path, "%s/model.json", dir);
    uint8_t *text = NULL;
    size_t n = 0;
    if (!rc && vs_read_file(src, &text, &n, &err) != VS_OK) rc = fail(src, err.msg);
    FILE *f = rc ? NULL : fopen(path, "wb");
    if (!rc && (!f || fwrite(text, 1, n, f) != n)) rc = fail(path, "cannot write");
    if (f && fclose(f) != 0 && !rc) rc = fail(path, "cannot write");
    free(text);
    int64_t shape[VS_MAX_DIMS];
    int nd = rc ? 0 : example_shape(m, &spec, shape);
    bool graph = graph_layers(&spec);
    if (!rc && !graph && nd == 0) rc = fail(src, "no input shape to make examples of (give \"input\" or composite inputs)");
    if (!rc && !graph) rc = write_examples(dir, "x.npy", nd, shape, &r);
    if (!rc && !graph && spec.siamese) rc = write_examples(dir, "r.npy", nd, shape, &r);
    if (!rc) printf("%s%s\n", graph ? "graph" : "", spec.siamese ? (graph ? "-siamese" : "siamese") : graph ? "" : "npy");
    vs_module_free(m);
    vs_model_spec_clear(&spec);
    return rc;
}
