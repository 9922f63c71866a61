/* attribute.c - what every method's job shares: the explained score of model outputs, scores and
 * gradients of batches of rows, the resolved target.  Methods are run by vs_explain (explain.c). */
#include "explain/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vs_tensor *score_error(const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_set_last_error(VS_ERR_SHAPE, "explained score: %s", msg);
    return NULL;
}

/* Outputs per row of out [n, ...]: C of logits [n, C], the elements of a row of any other output
 * (an image: --target indexes the flattened row), 1 for scores [n]. */
static int64_t out_width(const vs_tensor *out) { return out->ndim >= 2 && out->shape[0] > 0 ? out->size / out->shape[0] : 1; }

/* S of every row of the model outputs out ([n, C] logits, [n, ...] flattened, or [n] / [n, 1] scores): [n]. */
static vs_tensor *score_of_outputs(vs_tensor *out, int64_t n, int64_t target, int64_t contrast)
{
    if (!out) return NULL;
    int64_t c = out_width(out), flat[2] = {n, c};
    if (c == 1) return vs_reshape(out, 1, &n);
    if (out->ndim > 2) out = vs_reshape(out, 2, flat); /* any output: --target is an element of the flattened row */
    if (target < 0 || target >= c)
        return score_error("target %lld outside [0, %lld): the model has %lld outputs per row (an output [N, ...] is flattened)",
                           (long long)target, (long long)c, (long long)c);
    vs_tensor *s = vs_reshape(vs_index_select(out, 1, &target, 1), 1, &n);
    if (contrast >= 0) {
        if (contrast >= c) return score_error("contrast class %lld outside [0, %lld)", (long long)contrast, (long long)c);
        s = vs_sub(s, vs_reshape(vs_index_select(out, 1, &contrast, 1), 1, &n));
    }
    return s;
}

vs_tensor *vs_explained_score(const vs_model_fn *m, vs_tensor *x, int64_t target, int64_t contrast)
{
    vs_scope_begin();
    return vs_scope_return(score_of_outputs(m->forward(m->ctx, x), x->shape[0], target, contrast));
}

int64_t vs_job_chunk(const vs_attr_job *j) { return j->r->batch > 0 ? j->r->batch : 64; }

void vs_job_batch_shape(const vs_attr_job *j, int64_t n, int *ndim, int64_t *shape)
{
    *ndim = j->x->ndim;
    shape[0] = n;
    for (int i = 1; i < j->x->ndim; i++) shape[i] = j->x->shape[i];
}

vs_status vs_job_model_error(vs_attr_job *j)
{
    return vs_error_set(j->err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_STATE, "model evaluation failed: %s",
                        vs_last_error()->msg);
}

vs_status vs_job_scores(vs_attr_job *j, const float *xb, int64_t rows, double *scores)
{
    int64_t chunk = vs_job_chunk(j);
    bool prev = vs_set_grad_enabled(false);
    vs_status st = VS_OK;
    for (int64_t r0 = 0; r0 < rows && st == VS_OK; r0 += chunk) {
        int64_t n = rows - r0 < chunk ? rows - r0 : chunk;
        int nd;
        int64_t shape[VS_MAX_DIMS];
        vs_job_batch_shape(j, n, &nd, shape);
        vs_scope_begin();
        vs_tensor *xt = vs_tensor_from(nd, shape, xb + r0 * j->dim);
        vs_tensor *s = xt ? vs_explained_score(j->m, xt, j->target, j->contrast) : NULL;
        if (!s)
            st = vs_job_model_error(j);
        else
            for (int64_t i = 0; i < n; i++) scores[r0 + i] = s->data[i];
        j->evaluations += n;
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    return st;
}

const vs_accel *vs_job_accel(const vs_attr_job *j, const vs_accel *accels, int n, vs_module **m)
{
    vs_module *root = j->model->module;
    *m = NULL;
    if (j->r->plain || j->m != j->model || !root) return NULL; /* pairs: the model is seen through a wrapper */
    for (int i = 0; i < n; i++)
        if (accels[i].kind == root->kind && (!accels[i].holds || accels[i].holds(root))) {
            *m = root;
            return &accels[i];
        }
    return NULL;
}

vs_status vs_job_box_scores(vs_attr_job *j, const vs_accel *a, vs_module *m, int64_t n, const int64_t *boxes, double *scores)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_error e;
    vs_tensor *out = a->box_outputs(m, j->x, j->baseline, n, boxes, &e);
    if (!out) vs_set_last_error(e.code, "%s", e.msg);
    vs_tensor *s = score_of_outputs(out, n, j->target, j->contrast);
    vs_status st = s ? VS_OK : vs_job_model_error(j);
    for (int64_t i = 0; s && i < n; i++) scores[i] = s->data[i];
    j->evaluations += n;
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

vs_tensor *vs_job_score_of(const vs_attr_job *j, vs_tensor *out)
{
    return out ? score_of_outputs(out, out->shape[0], j->target, j->contrast) : NULL;
}

static vs_tensor *job_score(void *sctx, vs_tensor *out) { return vs_job_score_of(sctx, out); }

vs_status vs_job_path_grads(vs_attr_job *j, const vs_accel *accels, int n_accels, int64_t n, const double *a, const double *w,
                            float *grad_sum, bool *used)
{
    vs_module *m;
    const vs_accel *acc = vs_job_accel(j, accels, n_accels, &m);
    *used = false;
    if (!acc) return VS_OK;
    vs_error e;
    vs_status st = acc->path_grads(m, j->x, j->baseline, n, a, w, job_score, j, vs_job_chunk(j), grad_sum, &e);
    /* VS_ERR_ARG: the model does not take x this way (checked on the engine's own forward at x, not
     * on one more): the caller evaluates point by point, and reports any real error */
    if (st == VS_ERR_ARG) return VS_OK;
    if (st != VS_OK) return vs_error_set(j->err, e.code, "model evaluation failed: %s", e.msg);
    *used = true;
    j->evaluations += n;
    return VS_OK;
}

vs_status vs_job_grads(vs_attr_job *j, const float *xb, int64_t rows, float *grads, double *scores)
{
    int64_t chunk = vs_job_chunk(j);
    bool prev = vs_set_grad_enabled(true);
    vs_status st = VS_OK;
    for (int64_t r0 = 0; r0 < rows && st == VS_OK; r0 += chunk) {
        int64_t n = rows - r0 < chunk ? rows - r0 : chunk;
        int nd;
        int64_t shape[VS_MAX_DIMS];
        vs_job_batch_shape(j, n, &nd, shape);
        vs_scope_begin();
        vs_tensor *xt = vs_tensor_from(nd, shape, xb + r0 * j->dim);
        if (xt) vs_set_requires_grad(xt, true);
        vs_tensor *s = xt ? vs_explained_score(j->m, xt, j->target, j->contrast) : NULL;
        vs_tensor *ones = s ? vs_ones_like(s) : NULL, *g = NULL;
        if (!s || !s->requires_grad) {
            st = s ? vs_error_set(j->err, VS_ERR_STATE, "the explained score does not depend on the input") : vs_job_model_error(j);
        } else if (vs_grad(1, &s, &ones, 1, &xt, &g, false) != VS_OK) {
            st = vs_job_model_error(j);
        } else {
            memcpy(grads + r0 * j->dim, g->data, (size_t)(n * j->dim) * sizeof(float));
            if (scores)
                for (int64_t i = 0; i < n; i++) scores[r0 + i] = s->data[i];
        }
        j->evaluations += n;
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    return st;
}

int64_t vs_predicted_class(const vs_model_fn *m, vs_tensor *x)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *out = m->forward(m->ctx, x);
    int64_t best = -1;
    if (out && out_width(out) > 1) {
        best = 0;
        for (int64_t k = 1; k < out_width(out); k++)
            if (out->data[k] > out->data[best]) best = k;
    }
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return best;
}

vs_status vs_job_resolve_target_from(vs_attr_job *j, int64_t want, const vs_tensor *out)
{
    vs_status st = VS_OK;
    if (!out) {
        st = vs_job_model_error(j);
    } else if (out_width(out) > 1) {
        int64_t c = out_width(out);
        if (want >= c)
            st = vs_error_set(j->err, VS_ERR_ARG, "target %lld outside [0, %lld): the model has %lld outputs per row (an output [N, ...] is flattened)",
                              (long long)want, (long long)c, (long long)c);
        else if (j->contrast >= c)
            st = vs_error_set(j->err, VS_ERR_ARG, "contrast class %lld outside [0, %lld)", (long long)j->contrast, (long long)c);
        int64_t best = 0;
        for (int64_t k = 1; k < c; k++)
            if (out->data[k] > out->data[best]) best = k;
        j->target = want >= 0 ? want : best;
    } else {
        j->target = 0;
        if (j->contrast >= 0) st = vs_error_set(j->err, VS_ERR_ARG, "a contrast class needs a classifier with several outputs");
    }
    return st;
}

vs_status vs_job_resolve_target(vs_attr_job *j, int64_t want)
{
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *out = j->m->forward(j->m->ctx, j->x);
    j->evaluations++;
    vs_status st = vs_job_resolve_target_from(j, want, out);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}
