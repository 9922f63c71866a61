/* build.c - modules from specs: one layer, a checked sequential (the "sequential" list of
 * model.json) and whole models (plain or Siamese).  Every error names the layer index and field. */
#include "nn/composite_internal.h"

#include <stdio.h>
#include <string.h>

static vs_module *build_seq(const vs_layer_spec *layers, int64_t n, vs_spec_shape *sh, vs_rng *r, vs_error *err);

static bool same_known_shape(const vs_spec_shape *a, const vs_spec_shape *b)
{
    if (a->ndim < 0 || b->ndim < 0) return true;
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i]) return false;
    return true;
}

/* One resolved layer applied to shape sh (updated), parameters initialised from r. */
static vs_module *build_layer(const vs_layer_spec *s, vs_spec_shape *sh, vs_rng *r, vs_error *err)
{
    if (s->op == VS_MODULE_RESIDUAL) {
        vs_spec_shape out = *sh;
        vs_module *block = build_seq(s->block, s->n_block, &out, r, err);
        if (!block) return NULL;
        if (!same_known_shape(sh, &out)) {
            vs_module_free(block);
            vs_error_set(err, VS_ERR_SHAPE, "the block changes the shape of its input, so x + block(x) is undefined");
            return NULL;
        }
        vs_module *m = vs_residual_named_new(block, s->name[0] ? s->name : NULL);
        if (!m) vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
        return m;
    }
    if (vs_spec_shape_step(s, sh, err) != VS_OK) return NULL;
    vs_module *m = vs_layer_alloc(s, err);
    if (m && vs_module_reset_parameters(m, r) != VS_OK) {
        vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
        vs_module_free(m);
        return NULL;
    }
    return m;
}

static vs_module *build_seq(const vs_layer_spec *layers, int64_t n, vs_spec_shape *sh, vs_rng *r, vs_error *err)
{
    if (n < 1 || !layers) {
        vs_error_set(err, VS_ERR_FORMAT, "a sequential needs at least one layer");
        return NULL;
    }
    vs_module *seq = vs_sequential_new();
    if (!seq) {
        vs_error_set(err, VS_ERR_NOMEM, "sequential: out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        vs_error e;
        vs_error_clear(&e);
        vs_layer_spec rs;
        vs_module *m = NULL;
        if (vs_layer_spec_resolve(&layers[i], &rs, &e) == VS_OK) m = build_layer(&rs, sh, r, &e);
        if (!m || vs_sequential_add(seq, m) != VS_OK) {
            if (m) vs_error_set(&e, vs_last_error()->code, "%s", vs_last_error()->msg);
            vs_error_set(err, e.code, "layer %lld (%s): %s", (long long)i, vs_module_kind_name(layers[i].op), e.msg);
            vs_module_free(seq);
            return NULL;
        }
    }
    return seq;
}

vs_module *vs_layer_new(const vs_layer_spec *s, vs_rng *r, vs_error *err)
{
    vs_layer_spec rs;
    vs_error e;
    vs_error_clear(&e);
    vs_spec_shape sh = {.ndim = -1};
    vs_module *m = vs_layer_spec_resolve(s, &rs, &e) == VS_OK ? build_layer(&rs, &sh, r, &e) : NULL;
    if (!m) vs_error_set(err, e.code, "%s: %s", vs_module_kind_name(s->op), e.msg);
    return m;
}

static vs_status input_shape(int ndim, const int64_t *input, vs_spec_shape *sh, vs_error *err)
{
    *sh = (vs_spec_shape){.ndim = -1};
    if (ndim <= 0) return VS_OK;
    if (ndim > VS_MAX_DIMS - 1) return vs_error_set(err, VS_ERR_FORMAT, "input: at most %d dimensions", VS_MAX_DIMS - 1);
    sh->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        if (input[i] < 1 || input[i] > ((int64_t)1 << 31))
            return vs_error_set(err, VS_ERR_FORMAT, "input: dimension %d is %lld, expected a positive size", i, (long long)input[i]);
        sh->d[i] = input[i];
    }
    return VS_OK;
}

vs_module *vs_sequential_from_spec(const vs_layer_spec *layers, int64_t n, int input_ndim, const int64_t *input,
                                   vs_rng *r, vs_error *err)
{
    vs_spec_shape sh;
    if (input_shape(input_ndim, input, &sh, err) != VS_OK) return NULL;
    return build_seq(layers, n, &sh, r, err);
}

vs_module *vs_model_from_spec(const vs_model_spec *s, vs_rng *r, vs_error *err)
{
    if (s->composite) return vs_composite_from_json(s->composite, r, err);
    vs_module *seq = vs_sequential_from_spec(s->layers, s->n_layers, s->input_ndim, s->input, r, err);
    if (!seq || !s->siamese) return seq;
    vs_module *m = vs_siamese_new(seq, s->similarity);
    if (!m) vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
    return m;
}
