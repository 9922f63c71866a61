/* svae.c - what the SVAE and M2 tasks, the invariance experiment and `versus explain svae` share
 * (versus/svae.h): per-row likelihood and divergence terms, one-hot labels, and the encode / decode /
 * classify / posterior views of a trained model through its value names. */
#include "versus/composite.h"
#include "versus/ops.h"
#include "versus/svae.h"
#include "versus/task.h"

#include <stdlib.h>
#include <string.h>

vs_tensor *vs_bernoulli_nll_rows(vs_tensor *logits, vs_tensor *x)
{
    if (!logits || !x) return NULL;
    int64_t n = logits->shape[0];
    vs_tensor *l = vs_reshape(logits, 2, (int64_t[]){n, -1}), *t = vs_reshape(x, 2, (int64_t[]){n, -1});
    return vs_sum(vs_sub(vs_softplus(l), vs_mul(t, l)), VS_AXIS(1), false);
}

vs_tensor *vs_kl_diag_gaussian_rows(vs_tensor *mu1, vs_tensor *lv1, vs_tensor *mu2, vs_tensor *lv2)
{
    if (!mu1 || !lv1) return NULL;
    /* 1/2 sum (lv2 - lv1 + (e^lv1 + (mu1 - mu2)^2) / e^lv2 - 1) */
    vs_tensor *d = mu2 ? vs_sub(mu1, mu2) : mu1;
    vs_tensor *num = vs_add(vs_exp(lv1), vs_mul(d, d));
    vs_tensor *t = lv2 ? vs_add(vs_sub(lv2, lv1), vs_mul(num, vs_exp(vs_neg(lv2)))) : vs_sub(num, lv1);
    int last = mu1->ndim - 1;
    return vs_mul_scalar(vs_sum(vs_add_scalar(t, -1), VS_AXIS(last), false), 0.5f);
}

vs_tensor *vs_one_hot(const int64_t *labels, int64_t n, int64_t c)
{
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= c) return NULL;
    vs_tensor *y = vs_tensor_zeros(VS_SHAPE(n, c));
    for (int64_t i = 0; y && i < n; i++) y->data[i * c + labels[i]] = 1;
    return y;
}

void vs_argmax_rows(const vs_tensor *t, int64_t *out)
{
    int64_t n = t->shape[0], c = t->size / (n ? n : 1);
    for (int64_t i = 0; i < n; i++) {
        const float *r = t->data + i * c;
        int64_t best = 0;
        for (int64_t j = 1; j < c; j++)
            if (r[j] > r[best]) best = j;
        out[i] = best;
    }
}

static const char *const x_name[] = {"x"};

static int64_t input_index(const vs_module *m, const char *name)
{
    for (int64_t i = 0; i < vs_composite_n_inputs(m); i++)
        if (strcmp(vs_composite_input_name(m, i), name) == 0) return i;
    return -1;
}

vs_status vs_svae_layout_of(vs_module *m, vs_svae_layout *l, vs_error *err)
{
    memset(l, 0, sizeof *l);
    const char *task = m->kind == VS_MODULE_COMPOSITE ? vs_composite_task(m) : NULL;
    if (!task || (strcmp(task, "svae") != 0 && strcmp(task, "m2") != 0))
        return vs_error_set(err, VS_ERR_ARG, "expected a model trained by the svae or m2 task (a composite with \"task\": \"svae\" or \"m2\")");
    l->kind = strcmp(task, "svae") == 0 ? VS_SVAE_SVAE : VS_SVAE_M2;
    int64_t ix = input_index(m, "x"), iy = input_index(m, "y"), ys[VS_MAX_DIMS], xs[VS_MAX_DIMS];
    if (ix < 0 || iy < 0 || vs_composite_input_shape(m, iy, ys) != 1 || ys[0] < 2)
        return vs_error_set(err, VS_ERR_ARG, "%s: the model needs inputs \"x\" and \"y\" (one-hot [C], C >= 2)", task);
    int nd = vs_composite_input_shape(m, ix, xs);
    if (nd < 1 || nd > 3) return vs_error_set(err, VS_ERR_ARG, "%s: input \"x\" needs a known shape of 1 to 3 dimensions", task);
    l->n_classes = ys[0], l->ndim = nd;
    memcpy(l->shape, xs, (size_t)nd * sizeof *xs);
    const char *want_svae[] = {"mu_x", "z1", "x_logits", "class_logits"}, *want_m2[] = {"mu", "x_logits", "class_logits"};
    const char *const *want = l->kind == VS_SVAE_SVAE ? want_svae : want_m2;
    int n_want = l->kind == VS_SVAE_SVAE ? 4 : 3;
    for (int i = 0; i < n_want; i++)
        if (!vs_composite_defines(m, want[i])) return vs_error_set(err, VS_ERR_ARG, "%s: the model does not compute \"%s\"", task, want[i]);
    vs_scope_begin();
    int64_t shape[4] = {1, xs[0], xs[1], xs[2]};
    vs_tensor *given[2] = {vs_tensor_zeros(1 + nd, shape), vs_tensor_zeros(VS_SHAPE(1, ys[0]))}, *outs[4];
    const char *names[] = {"x", "y"};
    vs_status st = vs_module_eval(m, 2, names, given, n_want, want, outs, NULL, err);
    if (st == VS_OK) {
        vs_tensor *mu = outs[0], *logits = outs[n_want - 1];
        l->k1 = l->kind == VS_SVAE_SVAE ? outs[1]->shape[outs[1]->ndim - 1] : l->n_classes;
        l->k2 = l->kind == VS_SVAE_SVAE ? mu->shape[mu->ndim - 1] - l->k1 : mu->shape[mu->ndim - 1];
        if (logits->size != l->n_classes || l->k2 < 1 || outs[n_want - 2]->size != given[0]->size)
            st = vs_error_set(err, VS_ERR_SHAPE, "%s: class_logits, the latent or x_logits do not fit %lld classes and x's shape", task,
                              (long long)l->n_classes);
    }
    vs_scope_end();
    return st;
}

vs_status vs_svae_classify(vs_module *m, vs_tensor *x, vs_tensor **logits, vs_error *err)
{
    const char *want = "class_logits";
    return vs_module_eval(m, 1, x_name, &x, 1, &want, logits, NULL, err);
}

static vs_status failed(vs_error *err, const char *what)
{
    return vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_NOMEM, "%s: %s", what, vs_last_error()->msg);
}

vs_status vs_svae_encode(vs_module *m, const vs_svae_layout *l, vs_tensor *x, vs_tensor **z1, vs_tensor **z2, vs_error *err)
{
    vs_tensor *out;
    if (l->kind == VS_SVAE_SVAE) {
        const char *want = "mu_x";
        vs_status st = vs_module_eval(m, 1, x_name, &x, 1, &want, &out, NULL, err);
        if (st != VS_OK) return st;
        *z1 = vs_slice(out, 1, 0, l->k1), *z2 = vs_slice(out, 1, l->k1, l->k1 + l->k2);
        return *z1 && *z2 ? VS_OK : failed(err, "svae encode");
    }
    vs_tensor *logits;
    vs_status st = vs_svae_classify(m, x, &logits, err);
    if (st != VS_OK) return st;
    int64_t n = logits->shape[0], *cls = malloc((size_t)n * sizeof *cls);
    if (cls) vs_argmax_rows(logits, cls);
    vs_tensor *y = cls ? vs_one_hot(cls, n, l->n_classes) : NULL;
    free(cls);
    if (!y) return failed(err, "m2 encode");
    const char *names[] = {"x", "y"}, *want = "mu";
    vs_tensor *given[] = {x, y};
    if ((st = vs_module_eval(m, 2, names, given, 1, &want, &out, NULL, err)) != VS_OK) return st;
    *z1 = y, *z2 = out;
    return VS_OK;
}

vs_status vs_svae_decode(vs_module *m, const vs_svae_layout *l, vs_tensor *z1, vs_tensor *z2, vs_tensor **x, vs_error *err)
{
    bool svae = l->kind == VS_SVAE_SVAE;
    vs_tensor *parts[2] = {svae ? z1 : z2, svae ? z2 : z1}, *z = vs_concat(2, parts, 1), *logits;
    if (!z) return failed(err, "decode");
    const char *given = svae ? "z" : "zy", *want = "x_logits";
    vs_status st = vs_module_eval(m, 1, &given, &z, 1, &want, &logits, NULL, err);
    if (st != VS_OK) return st;
    *x = vs_sigmoid(logits);
    return *x ? VS_OK : failed(err, "decode");
}

vs_status vs_svae_posterior(vs_module *m, const vs_svae_layout *l, vs_tensor *x, int part, vs_tensor **mu, vs_tensor **logvar,
                            vs_error *err)
{
    if (l->kind != VS_SVAE_SVAE) return vs_error_set(err, VS_ERR_ARG, "the latent divergence of Eq. 9 needs an SVAE (M2's z1 is a label)");
    if (part != 1 && part != 2) return vs_error_set(err, VS_ERR_ARG, "latent part %d: expected 1 (z1) or 2 (z2)", part);
    const char *want[] = {"mu_x", "logvar_x"};
    vs_tensor *outs[2];
    vs_status st = vs_module_eval(m, 1, x_name, &x, 2, want, outs, NULL, err);
    if (st != VS_OK) return st;
    int64_t a = part == 1 ? 0 : l->k1, b = part == 1 ? l->k1 : l->k1 + l->k2;
    *mu = vs_slice(outs[0], 1, a, b), *logvar = vs_slice(outs[1], 1, a, b);
    return *mu && *logvar ? VS_OK : failed(err, "posterior");
}
