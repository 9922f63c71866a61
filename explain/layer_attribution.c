/* layer_attribution.c - Captum's layer and neuron methods on a sequential classifier split at layer l
 * into a head x -> A (the activation after layer l) and a tail A -> outputs -> S.
 *   layer_activation:             A(x)
 *   layer_gradient_x_activation:  A(x) * dS/dA (x)
 *   layer_integrated_gradients:   (A(x) - A(x')) * sum_k w_k dS/dA at A(x') + a_k (A(x) - A(x')), the
 *                                 path taken in the layer's space (sums to S(x) - S(x'))
 *   layer_conductance:            sum_k dS/dA (x_k) (A(x_{k+1}) - A(x_k)), x_k = x' + a_k (x - x') for
 *                                 the n + 1 nodes a_k of the rule (Dhamdhere et al. 2018)
 * The explanation has the layer's shape.  --layer names the layer by its module path (layer_site.c):
 * "I" in a sequential, "encoder.I" in a Siamese model, "main.2" or "fc1" in a composite, or a composite's
 * value by name or alias (an ONNX node or tensor name); by default
 * the last conv2d, or the layer before the last in a model without one.  On a Siamese pair the
 * explained side runs through the encoder and the other side stays fixed: S = cos(e(x), e(r)) with
 * the layer inside e(x) only (the shared encoder's layer on the explained side). */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void vs_layer_acts_free(vs_layer_acts *a)
{
    free(a->data);
    a->data = NULL;
}

vs_status vs_job_layer_acts(vs_attr_job *j, const vs_layer_site *s, const float *xb, int64_t n, int64_t neuron, vs_layer_acts *acts,
                            float *gx)
{
    int64_t chunk = vs_job_chunk(j);
    vs_status st = VS_OK;
    acts->data = NULL;
    bool prev = vs_set_grad_enabled(gx != NULL);
    for (int64_t r0 = 0; r0 < n && st == VS_OK; r0 += chunk) {
        int64_t m = n - r0 < chunk ? n - r0 : chunk;
        int nd;
        int64_t shape[VS_MAX_DIMS];
        vs_job_batch_shape(j, m, &nd, shape);
        vs_scope_begin();
        vs_tensor *xt = vs_tensor_from(nd, shape, xb + r0 * j->dim), *a = NULL, *g = NULL;
        if (xt && gx) vs_set_requires_grad(xt, true);
        if (xt) a = vs_layer_site_head(s, xt);
        int64_t adim = a ? a->size / m : 0;
        if (!a) {
            st = vs_job_model_error(j);
        } else if (gx && (neuron < 0 || neuron >= adim)) {
            st = vs_error_set(j->err, VS_ERR_ARG, "--neuron %lld outside the layer's %lld units", (long long)neuron, (long long)adim);
        } else if (gx) {
            vs_tensor *w = vs_tensor_zeros(a->ndim, a->shape); /* picks unit `neuron` of every row */
            for (int64_t r = 0; w && r < m; r++) w->data[r * adim + neuron] = 1.0f;
            if (!w || !a->requires_grad || vs_grad(1, &a, &w, 1, &xt, &g, false) != VS_OK)
                st = vs_error_set(j->err, VS_ERR_STATE, "the layer does not depend on the input%s%s", vs_last_error()->code ? ": " : "",
                                  vs_last_error()->code ? vs_last_error()->msg : "");
            else
                memcpy(gx + r0 * j->dim, g->data, (size_t)(m * j->dim) * sizeof *gx);
        }
        if (st == VS_OK && !acts->data) { /* the first chunk tells the layer's shape */
            acts->nd = a->ndim;
            memcpy(acts->shape, a->shape, (size_t)a->ndim * sizeof *acts->shape);
            acts->shape[0] = 1;
            acts->adim = adim;
            acts->data = malloc((size_t)(n * adim) * sizeof *acts->data);
            if (!acts->data) st = vs_error_set(j->err, VS_ERR_NOMEM, "layer %s: out of memory for its activations", s->path);
        }
        if (st == VS_OK) memcpy(acts->data + r0 * adim, a->data, (size_t)(m * adim) * sizeof *acts->data);
        j->evaluations += m;
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    return st;
}

vs_status vs_job_tail_grads(vs_attr_job *j, const vs_layer_site *s, int nd, const int64_t *ashape, const float *ab, const float *xb,
                            int64_t n, float *ga)
{
    int64_t chunk = vs_job_chunk(j), adim = 1;
    for (int d = 1; d < nd; d++) adim *= ashape[d];
    vs_status st = VS_OK;
    bool prev = vs_set_grad_enabled(true);
    for (int64_t r0 = 0; r0 < n && st == VS_OK; r0 += chunk) {
        int64_t m = n - r0 < chunk ? n - r0 : chunk, shape[VS_MAX_DIMS], xshape[VS_MAX_DIMS];
        int xnd;
        memcpy(shape, ashape, (size_t)nd * sizeof *shape);
        shape[0] = m;
        vs_job_batch_shape(j, m, &xnd, xshape);
        vs_scope_begin();
        vs_tensor *at = vs_tensor_from(nd, shape, ab + r0 * adim), *g = NULL;
        vs_tensor *xt = xb ? vs_tensor_from(xnd, xshape, xb + r0 * j->dim) : vs_expand(j->x, xnd, xshape);
        if (at) vs_set_requires_grad(at, true);
        vs_tensor *s_ = at && xt ? vs_job_score_of(j, vs_layer_site_tail(s, at, xt)) : NULL;
        vs_tensor *ones = s_ ? vs_ones_like(s_) : NULL;
        if (!s_ || !s_->requires_grad || vs_grad(1, &s_, &ones, 1, &at, &g, false) != VS_OK)
            st = s_ && !s_->requires_grad ? vs_error_set(j->err, VS_ERR_STATE, "the explained score does not depend on the layer") : vs_job_model_error(j);
        else
            memcpy(ga + r0 * adim, g->data, (size_t)(m * adim) * sizeof *ga);
        j->evaluations += m;
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    return st;
}

/* Options of every layer and neuron method (each lists the ones it reads). */
typedef struct layer_opts {
    char layer[VS_PARAM_PATH_MAX];
    int neuron, steps, rule;
} layer_opts;

static void layer_defaults(void *o) { *(layer_opts *)o = (layer_opts){"", -1, 50, VS_IG_GAUSS_LEGENDRE}; }

/* The output of a VS_OUTPUT_LAYER method: adim values of the layer's shape (a's), malloc'd and
 * handed to vs_explain through the job, which learns the shape from it (no forward pass is run only
 * to learn a shape). */
static float *layer_output(vs_attr_job *j, const vs_layer_acts *a, const char *who)
{
    free(j->layer_out);
    j->layer_out = malloc((size_t)a->adim * sizeof *j->layer_out);
    if (!j->layer_out) {
        vs_error_set(j->err, VS_ERR_NOMEM, "%s: out of memory", who);
        return NULL;
    }
    j->layer_nd = a->nd;
    memcpy(j->layer_shape, a->shape, (size_t)a->nd * sizeof *a->shape);
    return j->layer_out;
}

static vs_status activation_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)attr; /* the output goes to layer_output */
    const layer_opts *o = opts;
    vs_layer_site site;
    vs_layer_acts A = {0};
    vs_status st = vs_layer_site_find(j->model->module, o->layer, j->other, &site, j->err);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, j->x->data, 1, -1, &A, NULL);
    float *out = st == VS_OK ? layer_output(j, &A, "layer_activation") : NULL;
    if (out) memcpy(out, A.data, (size_t)A.adim * sizeof *out);
    vs_layer_acts_free(&A);
    return st == VS_OK && !out ? VS_ERR_NOMEM : st;
}

static vs_status grad_x_act_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)attr;
    const layer_opts *o = opts;
    vs_layer_site site;
    vs_layer_acts A = {0};
    vs_status st = vs_layer_site_find(j->model->module, o->layer, j->other, &site, j->err);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, j->x->data, 1, -1, &A, NULL);
    float *out = st == VS_OK ? layer_output(j, &A, "layer_gradient_x_activation") : NULL;
    if (st == VS_OK && !out) st = VS_ERR_NOMEM;
    if (st == VS_OK) st = vs_job_tail_grads(j, &site, A.nd, A.shape, A.data, NULL, 1, out);
    for (int64_t i = 0; st == VS_OK && i < A.adim; i++) out[i] *= A.data[i];
    vs_layer_acts_free(&A);
    return st;
}

/* Nodes and weights of n points of rule (malloc'd pair), with the message of a bad count. */
static vs_status path_rule(vs_attr_job *j, const char *who, int n, int rule, double **a, double **w)
{
    *a = malloc((size_t)n * sizeof **a);
    *w = malloc((size_t)n * sizeof **w);
    if (!*a || !*w) return vs_error_set(j->err, VS_ERR_NOMEM, "%s: out of memory", who);
    if (vs_quadrature((vs_ig_rule)rule, n, *a, *w) != VS_OK) return vs_error_set(j->err, VS_ERR_ARG, "%s: %d points of the rule (trapezoid needs 2)", who, n);
    return VS_OK;
}

static vs_status layer_ig_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)attr;
    const layer_opts *o = opts;
    vs_layer_site site;
    vs_layer_acts Ax = {0}, Ab = {0};
    double *a = NULL, *w = NULL;
    float *pts = NULL, *g = NULL, *out = NULL;
    vs_status st = vs_layer_site_find(j->model->module, o->layer, j->other, &site, j->err);
    if (st == VS_OK) st = path_rule(j, "layer_integrated_gradients", o->steps, o->rule, &a, &w);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, j->x->data, 1, -1, &Ax, NULL);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, j->baseline->data, 1, -1, &Ab, NULL);
    const int64_t adim = Ax.adim;
    if (st == VS_OK) {
        pts = malloc((size_t)(o->steps * adim) * sizeof *pts);
        g = malloc((size_t)(o->steps * adim) * sizeof *g);
        out = layer_output(j, &Ax, "layer_integrated_gradients");
        if (!pts || !g || !out) st = vs_error_set(j->err, VS_ERR_NOMEM, "layer_integrated_gradients: out of memory");
    }
    for (int k = 0; st == VS_OK && k < o->steps; k++)
        for (int64_t i = 0; i < adim; i++) pts[k * adim + i] = Ab.data[i] + (float)a[k] * (Ax.data[i] - Ab.data[i]);
    if (st == VS_OK) st = vs_job_tail_grads(j, &site, Ax.nd, Ax.shape, pts, NULL, o->steps, g);
    for (int64_t i = 0; st == VS_OK && i < adim; i++) {
        double s = 0;
        for (int k = 0; k < o->steps; k++) s += w[k] * g[k * adim + i];
        out[i] = (float)((Ax.data[i] - Ab.data[i]) * s);
    }
    free(a);
    free(w);
    vs_layer_acts_free(&Ax);
    vs_layer_acts_free(&Ab);
    free(pts);
    free(g);
    return st;
}

/* pts[n, dim]: x' + a_k (x - x'). */
static void path_points(const vs_attr_job *j, int n, const double *a, float *pts)
{
    for (int k = 0; k < n; k++)
        for (int64_t i = 0; i < j->dim; i++) pts[k * j->dim + i] = j->baseline->data[i] + (float)a[k] * (j->x->data[i] - j->baseline->data[i]);
}

static vs_status conductance_run(vs_attr_job *j, const void *opts, float *attr)
{
    (void)attr;
    const layer_opts *o = opts;
    int n = o->steps + 1;
    vs_layer_site site;
    vs_layer_acts A = {0};
    double *a = NULL, *w = NULL;
    float *pts = NULL, *g = NULL, *out = NULL;
    vs_status st = vs_layer_site_find(j->model->module, o->layer, j->other, &site, j->err);
    if (st == VS_OK) st = path_rule(j, "layer_conductance", n, o->rule, &a, &w);
    if (st == VS_OK && !(pts = malloc((size_t)(n * j->dim) * sizeof *pts))) st = vs_error_set(j->err, VS_ERR_NOMEM, "layer_conductance: out of memory");
    if (st == VS_OK) path_points(j, n, a, pts);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, pts, n, -1, &A, NULL);
    const int64_t adim = A.adim;
    if (st == VS_OK) {
        g = malloc((size_t)(n * adim) * sizeof *g);
        out = layer_output(j, &A, "layer_conductance");
        if (!g || !out) st = vs_error_set(j->err, VS_ERR_NOMEM, "layer_conductance: out of memory");
    }
    if (st == VS_OK) st = vs_job_tail_grads(j, &site, A.nd, A.shape, A.data, pts, n, g);
    for (int64_t i = 0; st == VS_OK && i < adim; i++) {
        double s = 0;
        for (int k = 0; k + 1 < n; k++) s += (double)g[k * adim + i] * (A.data[(k + 1) * adim + i] - A.data[k * adim + i]);
        out[i] = (float)s;
    }
    free(a);
    free(w);
    free(pts);
    vs_layer_acts_free(&A);
    free(g);
    return st;
}

/* The neuron methods along the path x_k = x' + a_k (x - x'):
 *   neuron_integrated_gradients: (x - x') * sum_k w_k dA_J/dx (x_k)               (IG of the unit A_J)
 *   neuron_conductance:          (x - x') * sum_k w_k dS/dA_J (x_k) dA_J/dx (x_k)  (Dhamdhere et al. 2018)
 * J = --neuron, by default the unit of the layer with the largest activation at x. */
static vs_status neuron_path(vs_attr_job *j, const layer_opts *o, bool conductance, float *attr)
{
    const char *who = conductance ? "neuron_conductance" : "neuron_integrated_gradients";
    vs_layer_site site;
    vs_layer_acts A = {0};
    double *a = NULL, *w = NULL;
    float *pts = NULL, *gx = NULL, *gs = NULL;
    vs_status st = vs_layer_site_find(j->model->module, o->layer, j->other, &site, j->err);
    if (st == VS_OK) st = path_rule(j, who, o->steps, o->rule, &a, &w);
    int64_t n = o->steps, J = o->neuron;
    if (st == VS_OK) {
        pts = malloc((size_t)(n * j->dim) * sizeof *pts);
        gx = malloc((size_t)(n * j->dim) * sizeof *gx);
        if (!pts || !gx) st = vs_error_set(j->err, VS_ERR_NOMEM, "%s: out of memory", who);
    }
    if (st == VS_OK && J < 0) { /* the most active unit at x */
        st = vs_job_layer_acts(j, &site, j->x->data, 1, -1, &A, NULL);
        J = 0;
        for (int64_t i = 1; st == VS_OK && i < A.adim; i++) J = A.data[i] > A.data[J] ? i : J;
        vs_layer_acts_free(&A);
    }
    if (st == VS_OK) path_points(j, (int)n, a, pts);
    if (st == VS_OK) st = vs_job_layer_acts(j, &site, pts, n, J, &A, gx);
    if (st == VS_OK && conductance && !(gs = malloc((size_t)(n * A.adim) * sizeof *gs))) st = vs_error_set(j->err, VS_ERR_NOMEM, "%s: out of memory", who);
    if (st == VS_OK && conductance) st = vs_job_tail_grads(j, &site, A.nd, A.shape, A.data, pts, n, gs);
    for (int64_t i = 0; st == VS_OK && i < j->dim; i++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += w[k] * (conductance ? gs[k * A.adim + J] : 1.0) * gx[k * j->dim + i];
        attr[i] = (float)((j->x->data[i] - j->baseline->data[i]) * s);
    }
    free(a);
    free(w);
    free(pts);
    vs_layer_acts_free(&A);
    free(gx);
    free(gs);
    return st;
}

static vs_status neuron_ig_run(vs_attr_job *j, const void *opts, float *attr) { return neuron_path(j, opts, false, attr); }

static vs_status neuron_conductance_run(vs_attr_job *j, const void *opts, float *attr) { return neuron_path(j, opts, true, attr); }

#define LAYER_PARAM {"layer", VS_PARAM_PATH, offsetof(layer_opts, layer), 0, 0, NULL, \
    "module path of the layer: its index in a sequential (3), or names joined by dots in a Siamese model (encoder.3) or a composite " \
    "(main.2, fc1), or a value of a composite's program by its name or alias (a model from ONNX: a node or tensor name, " \
    "/layer4/layer4.1/relu_1/Relu); default: the last conv2d of the sequential or Siamese encoder, else its layer before the last"}
#define STEPS_PARAM {"steps", VS_PARAM_INT, offsetof(layer_opts, steps), 1, 100000, NULL, "gradient evaluations along the path"}
#define RULE_PARAM {"ig-rule", VS_PARAM_CHOICE, offsetof(layer_opts, rule), 0, 0, VS_IG_RULE_CHOICES, "quadrature rule of the path integral"}
#define END_PARAM {NULL, 0, 0, 0, 0, NULL, NULL}

static const vs_method_param layer_params[] = {LAYER_PARAM, END_PARAM};
static const vs_method_param layer_path_params[] = {LAYER_PARAM, STEPS_PARAM, RULE_PARAM, END_PARAM};
static const vs_method_param neuron_path_params[] = {
    LAYER_PARAM,
    {"neuron", VS_PARAM_INT, offsetof(layer_opts, neuron), 0, 1e9, NULL, "unit of the layer (flat index in one row's activation; default: its largest)"},
    STEPS_PARAM, RULE_PARAM, END_PARAM,
};

const vs_method vs_method_layer_activation = {
    "layer_activation", "a layer's activation (Captum's LayerActivation)", VS_OUTPUT_LAYER, VS_METHOD_LAYERS, sizeof(layer_opts),
    layer_defaults, layer_params, activation_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_layer_gradient_x_activation = {
    "layer_gradient_x_activation", "a layer's activation times the gradient of the score in it (Captum's LayerGradientXActivation)",
    VS_OUTPUT_LAYER, VS_METHOD_LAYERS, sizeof(layer_opts), layer_defaults, layer_params, grad_x_act_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_layer_integrated_gradients = {
    "layer_integrated_gradients", "integrated gradients of a layer's units, the path in the layer's space (Captum's LayerIntegratedGradients)",
    VS_OUTPUT_LAYER, VS_METHOD_LAYERS | VS_METHOD_COMPLETE, sizeof(layer_opts), layer_defaults, layer_path_params, layer_ig_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_layer_conductance = {
    "layer_conductance", "the flow of integrated gradients through each unit of a layer (Dhamdhere et al. 2018)", VS_OUTPUT_LAYER,
    VS_METHOD_LAYERS, sizeof(layer_opts), layer_defaults, layer_path_params, conductance_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_neuron_integrated_gradients = {
    "neuron_integrated_gradients", "integrated gradients of one unit of a layer with respect to the input (Captum's NeuronIntegratedGradients)",
    VS_OUTPUT_FEATURES, VS_METHOD_LAYERS, sizeof(layer_opts), layer_defaults, neuron_path_params, neuron_ig_run,
    VS_METHOD_ATTRIBUTION, NULL,
};

const vs_method vs_method_neuron_conductance = {
    "neuron_conductance", "the part of each input's integrated gradient that flows through one unit of a layer (Dhamdhere et al. 2018)",
    VS_OUTPUT_FEATURES, VS_METHOD_LAYERS, sizeof(layer_opts), layer_defaults, neuron_path_params, neuron_conductance_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
