/* output_score.c - a scalar of a model's outputs as the explained model (versus/explain.h,
 * vs_output_score): the sum, the L2 norm, the reconstruction error against the input, or a masked
 * sum of the flattened output row - how an autoencoder or any output that is not logits is explained
 * (Captum's answer is a wrapper forward; this is that wrapper, written in differentiable ops). */
#include "explain/output_choice.h"
#include "versus/error.h"
#include "versus/npy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int vs_output_reduce_from_name(const char *name)
{
    static const char *const names[] = {"sum", "norm", "reconstruction"};
    for (int k = 0; name && k < 3; k++)
        if (strcmp(name, names[k]) == 0) return VS_REDUCE_SUM + k;
    return -1;
}

/* S of every row of out [n, ...] (x [n, ...] the input, for the reconstruction error): [n]. */
static vs_tensor *reduce(const vs_output_score *s, vs_tensor *out, vs_tensor *x)
{
    if (!out) return NULL;
    int64_t n = out->shape[0], flat[2] = {n, -1};
    vs_tensor *f = vs_reshape(out, 2, flat);
    if (!f) return NULL;
    int64_t d = f->shape[1];
    switch (s->reduce) {
    case VS_REDUCE_SUM: return vs_sum(f, VS_AXIS(1), false);
    case VS_REDUCE_NORM: return vs_sqrt(vs_sum(vs_mul(f, f), VS_AXIS(1), false));
    case VS_REDUCE_RECONSTRUCTION: {
        if (x->size != f->size) {
            vs_set_last_error(VS_ERR_SHAPE, "the reconstruction error needs outputs of the input's size: %lld output elements per row, "
                                            "%lld input elements",
                              (long long)d, (long long)(n ? x->size / n : 0));
            return NULL;
        }
        vs_tensor *e = vs_sub(f, vs_reshape(x, 2, flat));
        return vs_sum(vs_mul(e, e), VS_AXIS(1), false);
    }
    case VS_REDUCE_MASK: {
        if (d != s->mask_size) {
            vs_set_last_error(VS_ERR_SHAPE, "the target mask has %lld elements; the model's output row has %lld", (long long)s->mask_size,
                              (long long)d);
            return NULL;
        }
        int64_t ms[2] = {1, d};
        return vs_sum(vs_mul(f, vs_tensor_from(2, ms, s->mask)), VS_AXIS(1), false);
    }
    }
    vs_set_last_error(VS_ERR_ARG, "unknown output reduction %d", (int)s->reduce);
    return NULL;
}

static vs_tensor *scored_forward(void *ctx, vs_tensor *x)
{
    vs_output_score *s = ctx;
    vs_scope_begin();
    return vs_scope_return(reduce(s, s->inner.forward(s->inner.ctx, x), x));
}

static vs_tensor *scored_forward_pair(void *ctx, vs_tensor *x, vs_tensor *r)
{
    vs_output_score *s = ctx;
    vs_scope_begin();
    return vs_scope_return(reduce(s, s->inner.forward_pair(s->inner.ctx, x, r), x));
}

vs_model_fn vs_model_fn_scored(vs_output_score *s)
{
    return (vs_model_fn){.forward = scored_forward, .ctx = s, .forward_pair = s->inner.forward_pair ? scored_forward_pair : NULL};
}

/* ---- the verbs' choice (explain/output_choice.h) ------------------------------------------------ */

static vs_status read_targets(const char *path, int64_t n, vs_output_choice *c, vs_error *err)
{
    vs_tensor *t = NULL;
    if (vs_npy_read_finite(path, &t, err) != VS_OK) return vs_error_as_file(err);
    vs_status st = t->size == n ? VS_OK
                                : vs_error_set(err, VS_ERR_SHAPE, "%s: per-row targets must hold one integer per input row (%lld), not %lld", path,
                                               (long long)n, (long long)t->size);
    if (st == VS_OK && !(c->targets = malloc((size_t)(n ? n : 1) * sizeof *c->targets))) st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; st == VS_OK && i < n; i++) {
        float v = t->data[i];
        if (!(v >= 0 && v <= 1e9f && v == floorf(v)))
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: element %lld is %g; a target is an output index, an integer >= 0", path, (long long)i, (double)v);
        else c->targets[i] = (int64_t)v;
    }
    vs_tensor_free(t);
    return st;
}

vs_status vs_output_choice_load(const char *targets, const char *mask, const char *score, bool given_target, bool given_contrast, int64_t n,
                                vs_model_fn *fn, vs_output_choice *c, vs_error *err)
{
    memset(c, 0, sizeof *c);
    int reduce = score ? vs_output_reduce_from_name(score) : 0;
    if (reduce < 0) return vs_error_set(err, VS_ERR_ARG, "--score expects sum, norm or reconstruction, got '%s'", score);
    if (score && mask) return vs_error_set(err, VS_ERR_ARG, "--score and --target-mask both choose the explained scalar: give one");
    if ((score || mask) && (given_target || targets))
        return vs_error_set(err, VS_ERR_ARG, "--target picks one output; --score and --target-mask explain a scalar of the whole output: give one");
    if ((score || mask) && given_contrast) return vs_error_set(err, VS_ERR_ARG, "--contrast compares two outputs; it does not go with --score or --target-mask");
    if (targets && given_target) return vs_error_set(err, VS_ERR_ARG, "give --target C or --target T.npy, not both");
    if (targets && read_targets(targets, n, c, err) != VS_OK) return err->code;
    if (mask) {
        if (vs_npy_read_finite(mask, &c->mask, err) != VS_OK) return vs_error_as_file(err);
        if (c->mask->ndim < 2 || (c->mask->shape[0] != 1 && c->mask->shape[0] != n))
            return vs_error_set(err, VS_ERR_SHAPE, "%s: the target mask must be one output row [1, ...] or one per input row [%lld, ...]", mask,
                                (long long)n);
        reduce = VS_REDUCE_MASK;
        c->score.mask = c->mask->data;
        c->score.mask_size = c->mask->size / c->mask->shape[0];
    }
    if (reduce) {
        c->score.inner = *fn;
        c->score.reduce = (vs_output_reduce)reduce;
        *fn = vs_model_fn_scored(&c->score);
        c->scored = true;
    }
    return VS_OK;
}

int64_t vs_output_choice_row(vs_output_choice *c, int64_t i, int64_t dflt)
{
    if (c->mask && c->mask->shape[0] > 1) c->score.mask = c->mask->data + i * c->score.mask_size;
    return c->targets ? c->targets[i] : dflt;
}

void vs_output_choice_free(vs_output_choice *c)
{
    free(c->targets);
    vs_tensor_free(c->mask);
    memset(c, 0, sizeof *c);
}
