/* lrp.c - layer-wise relevance propagation (Bach et al. 2015), as Captum's LRP defines it for a
 * sequential classifier.  The relevance of the output layer is the explained score's part of the
 * outputs (R = f(x)[target], minus f(x)[contrast] for a contrast; the score itself for one-score
 * models).  Going down, a layer z = f(a) with a rule passes
 *     R_in = a * J_f'(a)^T (R / (z' + e sign z')),   z' = f'(a), sign 0 counted as +1,
 * where f' is f with modified weights:
 *     epsilon:    W, e = --lrp-epsilon (Captum's EpsilonRule, default 1e-9)
 *     gamma:      W + gamma max(W, 0), e = 1e-9 (GammaRule, gamma 0.25)
 *     alpha1beta0 (z+): max(W, 0), e = 1e-9 (Alpha1_Beta0_Rule)
 * --lrp-rule chooses the rule of linear and conv2d layers; pooling and batch norm take the epsilon
 * rule, as Captum's per-type defaults do; relu, tanh, dropout and flatten pass the relevance on
 * unchanged.  Biases stay.  Relevance is conserved (sum R_in = S(x)) for bias-free layers under the
 * epsilon rule with small e; the report's delta is sum(R) - S(x).
 * A Siamese pair (one side explained, the other fixed): the relevance of the explained side's
 * embedding q is R_i = q_i e_i / (|q| |e|) with e the other side's embedding, i.e. the cosine
 * S = <q, e> / (|q| |e|) with both norms held at their values, so S is linear in q and R its terms
 * (sum R = S); it then goes down the shared encoder's layers as above. */
#include "explain/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { LRP_EPSILON, LRP_GAMMA, LRP_ALPHA1BETA0 };

typedef struct lrp_opts {
    int rule;
    float epsilon, gamma;
} lrp_opts;

static void lrp_defaults(void *o) { *(lrp_opts *)o = (lrp_opts){LRP_EPSILON, 1e-9f, 0.25f}; }

/* W' of the rule (a new tensor without graph), or w itself under the epsilon rule. */
static vs_tensor *rule_weight(vs_tensor *w, const lrp_opts *o)
{
    if (o->rule == LRP_EPSILON) return w;
    vs_tensor *m = vs_copy(w);
    for (int64_t i = 0; m && i < m->size; i++) {
        float p = m->data[i] > 0 ? m->data[i] : 0;
        m->data[i] = o->rule == LRP_GAMMA ? m->data[i] + o->gamma * p : p;
    }
    return m;
}

/* z' = f'(a) of layer l (a requires grad); *eps receives the layer's stabiliser; NULL with a message
 * for layers without a rule. */
static vs_tensor *rule_forward(vs_module *seq, int64_t l, vs_tensor *a, const lrp_opts *o, float *eps)
{
    vs_module *m = seq->children[l];
    *eps = o->rule == LRP_EPSILON ? o->epsilon : 1e-9f;
    switch (m->kind) {
    case VS_MODULE_LINEAR:
        if (a->ndim != 2) break;
        return vs_linear(a, rule_weight(m->params[0], o), vs_module_param(m, "bias"));
    case VS_MODULE_CONV2D: {
        vs_conv_opts co = {{(int)m->spec.stride, (int)m->spec.stride}, {(int)m->spec.padding, (int)m->spec.padding}, {0, 0}, {0, 0}, 0};
        return vs_conv2d(a, rule_weight(m->params[0], o), vs_module_param(m, "bias"), &co);
    }
    case VS_MODULE_MAX_POOL2D: case VS_MODULE_AVG_POOL2D: case VS_MODULE_GLOBAL_AVG_POOL:
    case VS_MODULE_BATCH_NORM1D: case VS_MODULE_BATCH_NORM2D:
        *eps = o->epsilon;
        return vs_sequential_forward_range(seq, a, NULL, l, l + 1, NULL);
    default: break;
    }
    vs_set_last_error(VS_ERR_ARG, "layer %lld (%s) has no LRP rule (rules: linear, conv2d, pooling, batch norm; relu, tanh, dropout and "
                      "flatten pass relevance on)", (long long)l, vs_module_kind_name(m->kind));
    return NULL;
}

/* R (of layer l's output) becomes the relevance of its input a, in place of *R. */
static vs_status propagate(vs_attr_job *j, vs_module *seq, int64_t l, vs_tensor *a, vs_tensor **R, const lrp_opts *o)
{
    vs_module_kind k = seq->children[l]->kind;
    if (k == VS_MODULE_RELU || k == VS_MODULE_TANH || k == VS_MODULE_DROPOUT || k == VS_MODULE_FLATTEN) {
        *R = vs_reshape(*R, a->ndim, a->shape);
        return *R ? VS_OK : vs_job_model_error(j);
    }
    vs_tensor *at = vs_copy(a);
    vs_set_requires_grad(at, true);
    float eps;
    vs_tensor *z = at ? rule_forward(seq, l, at, o, &eps) : NULL, *g = NULL;
    if (!z) return vs_error_set(j->err, VS_ERR_ARG, "lrp: %s", vs_last_error()->msg);
    if (z->size != (*R)->size) return vs_error_set(j->err, VS_ERR_SHAPE, "lrp: layer %lld's output does not match the relevance", (long long)l);
    vs_tensor *s = vs_tensor_new(z->ndim, z->shape);
    if (!s) return vs_error_set(j->err, VS_ERR_NOMEM, "lrp: out of memory");
    for (int64_t i = 0; i < z->size; i++) {
        float zi = z->data[i];
        s->data[i] = (*R)->data[i] / (zi + (zi < 0 ? -eps : eps));
    }
    if (vs_grad(1, &z, &s, 1, &at, &g, false) != VS_OK) return vs_error_set(j->err, VS_ERR_STATE, "lrp: %s", vs_last_error()->msg);
    vs_tensor *r = vs_tensor_new(a->ndim, a->shape);
    if (!r) return vs_error_set(j->err, VS_ERR_NOMEM, "lrp: out of memory");
    for (int64_t i = 0; i < a->size; i++) r->data[i] = a->data[i] * g->data[i];
    *R = r;
    return VS_OK;
}

/* The relevance of a Siamese query embedding q [1, d] against the fixed other side's embedding e:
 * R_i = q_i e_i / max(|q| |e|, 1e-8), the cosine's terms with both norms held at their values (a new
 * tensor; sum R = S). */
static vs_tensor *cosine_relevance(vs_module *encoder, vs_tensor *q, vs_tensor *other)
{
    vs_tensor *e = vs_module_forward(encoder, other, NULL), *R = e ? vs_copy(q) : NULL;
    if (!R) return NULL;
    if (q->ndim != 2 || e->size != q->size) {
        vs_set_last_error(VS_ERR_SHAPE, "lrp: the Siamese embeddings must be [1, dim]");
        return NULL;
    }
    double qq = 0, ee = 0;
    for (int64_t i = 0; i < q->size; i++) {
        qq += (double)q->data[i] * q->data[i];
        ee += (double)e->data[i] * e->data[i];
    }
    double norm = fmax(sqrt(qq) * sqrt(ee), 1e-8); /* PyTorch's cosine_similarity eps */
    for (int64_t i = 0; i < q->size; i++) R->data[i] = (float)(q->data[i] * (double)e->data[i] / norm);
    return R;
}

static vs_status lrp_run(vs_attr_job *j, const void *opts, float *attr)
{
    vs_module *seq = j->m->sequential, *root = j->model ? j->model->module : NULL;
    bool siamese = root && root->kind == VS_MODULE_SIAMESE && root->children[0]->kind == VS_MODULE_SEQUENTIAL;
    if (siamese && !j->other)
        return vs_error_set(j->err, VS_ERR_ARG, "lrp on a Siamese model explains one side of a pair: give --reference and --side query or reference");
    if (siamese) seq = root->children[0];
    if (!seq || seq->n_children < 1)
        return vs_error_set(j->err, VS_ERR_ARG, "lrp walks the layers of a sequential classifier or a Siamese model's sequential encoder: this model has none");
    int64_t L = seq->n_children;
    vs_tensor **a = calloc((size_t)L + 1, sizeof *a);
    if (!a) return vs_error_set(j->err, VS_ERR_NOMEM, "lrp: out of memory");
    vs_status st = VS_OK;
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    a[0] = j->x;
    for (int64_t l = 0; l < L && st == VS_OK; l++)
        if (!(a[l + 1] = vs_sequential_forward_range(seq, a[l], NULL, l, l + 1, NULL))) st = vs_job_model_error(j);
    j->evaluations++;
    vs_tensor *R = st != VS_OK ? NULL : siamese ? cosine_relevance(seq, a[L], j->other) : vs_copy(a[L]);
    if (st == VS_OK && !R) st = siamese ? vs_job_model_error(j) : vs_error_set(j->err, VS_ERR_NOMEM, "lrp: out of memory");
    if (st == VS_OK && !siamese && R->size > 1) { /* the score's part of the outputs: R = out * dS/dout */
        if (R->ndim != 2 || R->shape[0] != 1)
            st = vs_error_set(j->err, VS_ERR_SHAPE, "lrp: outputs must be [1, C] logits or one score");
        for (int64_t c = 0; c < R->size && st == VS_OK; c++)
            R->data[c] = c == j->target ? R->data[c] : c == j->contrast ? -R->data[c] : 0.0f;
    }
    vs_set_grad_enabled(true);
    for (int64_t l = L - 1; l >= 0 && st == VS_OK; l--) st = propagate(j, seq, l, a[l], &R, (const lrp_opts *)opts);
    if (st == VS_OK && R->size != j->dim) st = vs_error_set(j->err, VS_ERR_SHAPE, "lrp: the relevance does not have the input's shape");
    if (st == VS_OK) memcpy(attr, R->data, (size_t)j->dim * sizeof *attr);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    free(a);
    return st;
}

static const vs_method_param lrp_params[] = {
    {"lrp-rule", VS_PARAM_CHOICE, offsetof(lrp_opts, rule), 0, 0, "epsilon|gamma|alpha1beta0", "rule of the linear and conv2d layers"},
    {"lrp-epsilon", VS_PARAM_FLOAT, offsetof(lrp_opts, epsilon), 0, 1e6, NULL, "stabiliser e of the epsilon rule"},
    {"lrp-gamma", VS_PARAM_FLOAT, offsetof(lrp_opts, gamma), 0, 1e6, NULL, "gamma of the gamma rule"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_lrp = {
    "lrp", "layer-wise relevance propagation with the epsilon, gamma or z+ rule (Bach et al. 2015; Montavon et al. 2019)",
    VS_OUTPUT_FEATURES, VS_METHOD_CONSERVES, sizeof(lrp_opts), lrp_defaults, lrp_params, lrp_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
