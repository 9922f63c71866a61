/* baselines.c - reference inputs for path and difference methods (GANMEX section 2): constant
 * fills, Gaussian blur, uniform noise, the minimum-distance training sample of the target class
 * (MDTS), class-targeted baseline sets, and GANMEX baselines G(x, c) from a trained generator. */
#include "versus/explain.h"
#include "versus/json.h"
#include "versus/model.h"
#include "versus/task.h"

#include <stdio.h>
#include <sys/stat.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const baseline_names[] = {"zero", "max", "min", "mean", "blur", "uniform", "mdts"};

int vs_baseline_from_name(const char *name)
{
    for (int i = 0; i < (int)(sizeof baseline_names / sizeof *baseline_names); i++)
        if (strcmp(name, baseline_names[i]) == 0) return i;
    return -1;
}

const char *vs_baseline_name(vs_baseline_kind k)
{
    return (unsigned)k < sizeof baseline_names / sizeof *baseline_names ? baseline_names[k] : NULL;
}

/* Separable Gaussian blur of each [h,w] plane, edges clamped (scipy's 'nearest'), truncated at 4 sigma. */
static vs_status blur(const float *x, int64_t planes, int64_t h, int64_t w, float sigma, float *out, vs_error *err)
{
    if (!(sigma > 0)) return vs_error_set(err, VS_ERR_ARG, "blur baseline: sigma must be positive");
    int r = (int)ceil(4.0 * sigma);
    double *k = malloc((size_t)(2 * r + 1) * sizeof *k);
    float *tmp = malloc((size_t)(h * w) * sizeof *tmp);
    if (!k || !tmp) {
        free(k);
        free(tmp);
        return vs_error_set(err, VS_ERR_NOMEM, "blur baseline: out of memory");
    }
    double ks = 0;
    for (int i = -r; i <= r; i++) ks += k[i + r] = exp(-0.5 * i * i / ((double)sigma * sigma));
    for (int i = 0; i <= 2 * r; i++) k[i] /= ks;
    for (int64_t p = 0; p < planes; p++) {
        const float *src = x + p * h * w;
        float *dst = out + p * h * w;
        for (int64_t y = 0; y < h; y++)
            for (int64_t c = 0; c < w; c++) {
                double s = 0;
                for (int i = -r; i <= r; i++) {
                    int64_t cc = c + i < 0 ? 0 : c + i >= w ? w - 1 : c + i;
                    s += k[i + r] * src[y * w + cc];
                }
                tmp[y * w + c] = (float)s;
            }
        for (int64_t y = 0; y < h; y++)
            for (int64_t c = 0; c < w; c++) {
                double s = 0;
                for (int i = -r; i <= r; i++) {
                    int64_t yy = y + i < 0 ? 0 : y + i >= h ? h - 1 : y + i;
                    s += k[i + r] * tmp[yy * w + c];
                }
                dst[y * w + c] = (float)s;
            }
    }
    free(k);
    free(tmp);
    return VS_OK;
}

vs_status vs_make_baseline(vs_baseline_kind kind, const float *x, int ndim, const int64_t *shape, float sigma, vs_rng *r,
                           const vs_dataset *train, int64_t target, float *out, vs_error *err)
{
    int64_t dim = 1;
    for (int i = 0; i < ndim; i++) dim *= shape[i];
    float lo = dim ? x[0] : 0, hi = lo;
    double mean = 0;
    for (int64_t i = 0; i < dim; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
        mean += x[i];
    }
    mean = dim ? mean / dim : 0;
    switch (kind) {
    case VS_BASELINE_ZERO:
    case VS_BASELINE_MAX:
    case VS_BASELINE_MIN:
    case VS_BASELINE_MEAN: {
        float v = kind == VS_BASELINE_ZERO ? 0.0f : kind == VS_BASELINE_MAX ? hi : kind == VS_BASELINE_MIN ? lo : (float)mean;
        for (int64_t i = 0; i < dim; i++) out[i] = v;
        return VS_OK;
    }
    case VS_BASELINE_BLUR:
        if (ndim < 2) return vs_error_set(err, VS_ERR_ARG, "blur baseline: inputs must be images [C,H,W]");
        return blur(x, dim / (shape[ndim - 1] * shape[ndim - 2]), shape[ndim - 2], shape[ndim - 1], sigma, out, err);
    case VS_BASELINE_UNIFORM:
        if (!r) return vs_error_set(err, VS_ERR_ARG, "uniform baseline: needs a random generator");
        for (int64_t i = 0; i < dim; i++) out[i] = lo + (hi - lo) * vs_rng_uniformf(r);
        return VS_OK;
    case VS_BASELINE_MDTS: {
        if (!train || !train->X) return vs_error_set(err, VS_ERR_ARG, "mdts baseline: needs training data (--baseline-data SPEC)");
        if (train->dim != dim)
            return vs_error_set(err, VS_ERR_SHAPE, "mdts baseline: training examples have %lld elements, the input %lld",
                                (long long)train->dim, (long long)dim);
        int64_t best = -1;
        double bd = INFINITY;
        for (int64_t n = 0; n < train->n; n++) {
            if (train->y[n] != target) continue;
            const float *t = train->X + n * dim;
            double d = 0;
            for (int64_t i = 0; i < dim && d < bd; i++) d += ((double)t[i] - x[i]) * ((double)t[i] - x[i]);
            if (d < bd) {
                bd = d;
                best = n;
            }
        }
        if (best < 0) return vs_error_set(err, VS_ERR_ARG, "mdts baseline: no training example of class %lld", (long long)target);
        memcpy(out, train->X + best * dim, (size_t)dim * sizeof *out);
        return VS_OK;
    }
    }
    return vs_error_set(err, VS_ERR_ARG, "unknown baseline kind %d", (int)kind);
}

vs_status vs_class_baselines(const vs_dataset *train, int64_t target, int64_t k, vs_rng *r, vs_tensor **out, vs_error *err)
{
    *out = NULL;
    if (!train || !train->X) return vs_error_set(err, VS_ERR_ARG, "class baselines: needs training data");
    int64_t *idx = malloc((size_t)(train->n ? train->n : 1) * sizeof *idx), m = 0;
    if (!idx) return vs_error_set(err, VS_ERR_NOMEM, "class baselines: out of memory");
    for (int64_t n = 0; n < train->n; n++)
        if (train->y[n] == target) idx[m++] = n;
    if (m == 0) {
        free(idx);
        return vs_error_set(err, VS_ERR_ARG, "class baselines: no training example of class %lld", (long long)target);
    }
    int64_t take = k > 0 && k < m ? k : m;
    for (int64_t i = 0; i < take; i++) { /* partial Fisher-Yates: the first `take` are a uniform sample */
        int64_t j = i + (int64_t)vs_rng_below(r, (uint64_t)(m - i)), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    int64_t shape[4] = {take, train->shape[0], train->shape[1], train->shape[2]};
    vs_tensor *b = vs_tensor_new(1 + train->ndim, shape);
    if (b)
        for (int64_t i = 0; i < take; i++) memcpy(b->data + i * train->dim, train->X + idx[i] * train->dim, (size_t)train->dim * sizeof(float));
    free(idx);
    if (!b) return vs_error_set(err, VS_ERR_NOMEM, "class baselines: out of memory");
    *out = b;
    return VS_OK;
}

vs_status vs_generator_baselines(vs_module *gan, const double *opt, const vs_tensor *x, const int64_t *targets, vs_tensor **out,
                                 vs_error *err)
{
    *out = NULL;
    const vs_task *task = vs_task_for_model(gan, err);
    if (!task) return err->code;
    if (!task->predict || !vs_module_child(gan, "generator"))
        return vs_error_set(err, VS_ERR_ARG, "generator baselines: the model is a %s model, not a GAN with a \"generator\"", task->name);
    if (!x || x->ndim < 2) return vs_error_set(err, VS_ERR_SHAPE, "generator baselines: inputs must be a batch [N, ...]");
    int64_t n = x->shape[0], per = n ? x->size / n : 0;
    vs_tensor *b = vs_tensor_new(x->ndim, x->shape);
    int64_t *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
    bool *done = calloc((size_t)(n ? n : 1), sizeof *done);
    vs_status st = b && rows && done ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "generator baselines: out of memory");
    /* one call of G per target class, on the rows that want it */
    for (int64_t i = 0; i < n && st == VS_OK; i++) {
        if (done[i]) continue;
        int64_t m = 0;
        for (int64_t k = i; k < n; k++)
            if (!done[k] && targets[k] == targets[i]) rows[m++] = k, done[k] = true;
        vs_scope_begin();
        int64_t shape[VS_MAX_DIMS];
        memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
        shape[0] = m;
        vs_tensor *xs = vs_tensor_new(x->ndim, shape), *y = NULL;
        for (int64_t r = 0; xs && r < m; r++) memcpy(xs->data + r * per, x->data + rows[r] * per, (size_t)per * sizeof(float));
        bool grad = vs_set_grad_enabled(false);
        st = xs ? task->predict(gan, opt, xs, targets[i], &y, err) : vs_error_set(err, VS_ERR_NOMEM, "generator baselines: out of memory");
        vs_set_grad_enabled(grad);
        if (st == VS_OK && y->size != xs->size)
            st = vs_error_set(err, VS_ERR_SHAPE, "generator baselines: the generator gives %lld values per batch, the inputs have %lld",
                              (long long)y->size, (long long)xs->size);
        for (int64_t r = 0; st == VS_OK && r < m; r++) memcpy(b->data + rows[r] * per, y->data + r * per, (size_t)per * sizeof(float));
        vs_scope_end();
    }
    free(rows);
    free(done);
    if (st != VS_OK) {
        vs_tensor_free(b);
        return st;
    }
    *out = b;
    return VS_OK;
}

vs_status vs_generator_load(const char *dir, vs_module **gan, double *opt, vs_error *err)
{
    *gan = NULL;
    vs_module *m = vs_model_load(dir, NULL, err);
    if (!m) return err->code;
    const vs_task *task = vs_task_for_model(m, err);
    vs_status st = task ? VS_OK : err->code;
    if (st == VS_OK && (!task->predict || !vs_module_child(m, "generator")))
        st = vs_error_set(err, VS_ERR_ARG, "%s holds a %s model, not a GAN with a \"generator\"", dir, task->name);
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    vs_json *doc = NULL;
    const char *s = NULL;
    struct stat sb;
    if (st == VS_OK && stat(path, &sb) == 0 && vs_json_parse_file(path, NULL, &doc, err) != VS_OK) st = err->code;
    if (st == VS_OK && doc && vs_json_opt_str(doc, "task_opts", NULL, &s, err) != VS_OK) st = err->code;
    if (st == VS_OK && vs_task_opts_parse(task, s, opt, err) != VS_OK) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        st = vs_error_set(err, VS_ERR_ARG, "%s: %.400s", path, why);
    }
    vs_json_free(doc);
    if (st != VS_OK) {
        vs_module_free(m);
        return st;
    }
    *gan = m;
    return VS_OK;
}
