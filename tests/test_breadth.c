/* test_breadth.c - the Captum-style methods against known answers: modified ReLU gradients worked by
 * hand, sampling methods converging to exact values (linear models, exact Shapley values), the noise
 * tunnel against SmoothGrad, LRP's conservation, the layer and neuron methods' completeness, and the
 * messages of misuse.  (tests/torch_captum.py compares them with Captum's definitions in PyTorch.) */
#include "vs_check.h"
#include "versus/method.h"
#include "versus/versus.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- models: sequentials of linear and relu layers ---------------------------------------------- */

static void set(vs_tensor *t, const float *v) { memcpy(t->data, v, (size_t)t->size * sizeof *v); }

/* linear(in -> hid) relu linear(hid -> out), random weights from seed; bias: with biases */
static vs_module *mlp(uint64_t seed, int64_t in, int64_t hid, int64_t out, bool bias)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_module *m = vs_sequential_new();
    vs_sequential_add(m, vs_linear_new(in, hid, bias, &r));
    vs_sequential_add(m, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(m, vs_linear_new(hid, out, bias, &r));
    vs_module_train(m, false);
    return m;
}

static vs_module *linear(uint64_t seed, int64_t in, int64_t out)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_module *m = vs_sequential_new();
    vs_sequential_add(m, vs_linear_new(in, out, true, &r));
    vs_module_train(m, false);
    return m;
}

typedef struct fixture {
    vs_module *m;
    vs_module_explainee e;
    vs_model_fn fn;
} fixture;

static void fixture_init(fixture *f, vs_module *m)
{
    f->m = m;
    f->e = (vs_module_explainee){m, NULL};
    f->fn = vs_model_fn_from_module(&f->e);
}

/* Explain x with method name and options "k=v" pairs (NULL-terminated); the map is copied to out. */
static vs_status run(fixture *f, vs_tensor *x, const char *name, const vs_explain_request *r, float *out, vs_attr_report *rep,
                     vs_error *err, ...)
{
    const vs_method *m = vs_method_find(name);
    ck_assert_ptr_nonnull(m);
    vs_method_opts *o = vs_method_opts_new(m);
    va_list ap;
    va_start(ap, err);
    for (const char *k; (k = va_arg(ap, const char *));) {
        const char *v = va_arg(ap, const char *);
        ck_assert_int_eq(vs_method_opts_set(o, k, v, err), VS_OK);
    }
    va_end(ap);
    vs_tensor *a = NULL;
    vs_status st = vs_explain(&f->fn, x, m, o, r, &a, rep, err);
    if (st == VS_OK) memcpy(out, a->data, (size_t)a->size * sizeof *out);
    vs_tensor_free(a);
    vs_method_opts_free(o);
    return st;
}

/* ---- modified ReLU gradients, by hand ------------------------------------------------------------ */

/* h = W1 x = [2, -0.5] (x = [1, 0.5], W1 = [[1, 2], [-1, 1]]), relu -> [2, 0], S = W2 relu(h) one score. */
START_TEST(test_modified_relu_by_hand)
{
    fixture f;
    fixture_init(&f, mlp(1, 2, 2, 1, false));
    set(f.m->children[0]->params[0], (const float[]){1, 2, -1, 1});
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 2), (const float[]){1, 0.5f});
    vs_error err;
    float a[2];
    /* W2 = [-1, 1]: dS/dh = [-1, 1]; saliency masks it to [-1, 0] -> W1^T [-1, 0] = [-1, -2]; guided
     * keeps max(., 0) of that: 0; deconvolution passes max(dS/dh, 0) = [0, 1] -> W1^T [0, 1] = [-1, 1] */
    set(f.m->children[2]->params[0], (const float[]){-1, 1});
    ck_assert_int_eq(run(&f, x, "saliency", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], -1, 1e-6);
    ck_assert_float_near(a[1], -2, 1e-6);
    ck_assert_int_eq(run(&f, x, "guided_backprop", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], 0, 1e-6);
    ck_assert_float_near(a[1], 0, 1e-6);
    ck_assert_int_eq(run(&f, x, "deconvolution", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], -1, 1e-6);
    ck_assert_float_near(a[1], 1, 1e-6);
    /* W2 = [1, 1]: guided = saliency = W1^T [1, 0] = [1, 2]; deconvolution W1^T [1, 1] = [0, 3] */
    set(f.m->children[2]->params[0], (const float[]){1, 1});
    ck_assert_int_eq(run(&f, x, "guided_backprop", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], 1, 1e-6);
    ck_assert_float_near(a[1], 2, 1e-6);
    ck_assert_int_eq(run(&f, x, "deconvolution", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], 0, 1e-6);
    ck_assert_float_near(a[1], 3, 1e-6);
    /* the rule ends with the call: an ordinary gradient afterwards */
    ck_assert_int_eq(run(&f, x, "saliency", NULL, a, NULL, &err, NULL), VS_OK);
    ck_assert_float_near(a[0], -1 + 2, 1e-6); /* W1^T [1, 0] */
    vs_tensor_free(x);
    vs_module_free(f.m);
}
END_TEST

/* ---- sampling methods converge to exact values ---------------------------------------------------- */

enum { D = 6 };

static vs_tensor *row(uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    return vs_tensor_randn(VS_SHAPE(1, D), &r, 0, 1);
}

START_TEST(test_shapley_sampling)
{
    fixture lin, nl;
    fixture_init(&lin, linear(2, D, 3));
    fixture_init(&nl, mlp(3, D, 8, 3, true));
    vs_tensor *x = row(4);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 1;
    vs_error err;
    float a[D], exact[D];
    /* linear: every order gives w (x - 0) exactly, so any sample count does */
    ck_assert_int_eq(run(&lin, x, "shapley_value_sampling", &r, a, NULL, &err, "samples", "1", NULL), VS_OK);
    const float *w = lin.m->children[0]->params[0]->data + 1 * D;
    for (int i = 0; i < D; i++) ck_assert_float_near(a[i], w[i] * x->data[i], 1e-5);
    /* nonlinear: efficient at every count, and converging to the exact Shapley values */
    ck_assert_int_eq(run(&nl, x, "shapley_exact", &r, exact, NULL, &err, NULL), VS_OK);
    double prev = INFINITY, scale = 0;
    for (int i = 0; i < D; i++) scale = fmax(scale, fabs(exact[i]));
    const char *counts[] = {"2", "40", "2000"};
    for (int c = 0; c < 3; c++) {
        vs_attr_report rep;
        ck_assert_int_eq(run(&nl, x, "shapley_value_sampling", &r, a, &rep, &err, "samples", counts[c], NULL), VS_OK);
        double sum = 0, e = 0;
        for (int i = 0; i < D; i++) {
            sum += a[i];
            e = fmax(e, fabs(a[i] - exact[i]));
        }
        ck_assert_float_near(sum, rep.score - rep.baseline_score, 1e-4);
        ck_assert(e <= prev + 1e-9);
        prev = e;
    }
    ck_assert_double_le(prev / scale, 0.02);
    /* seeded: the same seed, the same estimate; another seed, another */
    float b[D];
    ck_assert_int_eq(run(&nl, x, "shapley_value_sampling", &r, a, NULL, &err, "samples", "3", NULL), VS_OK);
    ck_assert_int_eq(run(&nl, x, "shapley_value_sampling", &r, b, NULL, &err, "samples", "3", NULL), VS_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    r.seed = 9;
    ck_assert_int_eq(run(&nl, x, "shapley_value_sampling", &r, b, NULL, &err, "samples", "3", NULL), VS_OK);
    ck_assert(memcmp(a, b, sizeof a) != 0);
    vs_tensor_free(x);
    vs_module_free(lin.m);
    vs_module_free(nl.m);
}
END_TEST

START_TEST(test_feature_permutation)
{
    fixture lin;
    fixture_init(&lin, linear(5, D, 2));
    vs_tensor *x = row(6);
    vs_rng rg;
    vs_rng_seed(&rg, 7);
    vs_tensor *set_ = vs_tensor_randn(VS_SHAPE(3, D), &rg, 0, 1);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 0;
    r.baselines = set_;
    vs_error err;
    float a[D];
    /* E over the batch {x} + set of w_k (x_k - b_k) = w_k (x_k - mean of the batch's column k) */
    ck_assert_int_eq(run(&lin, x, "feature_permutation", &r, a, NULL, &err, "samples", "20000", NULL), VS_OK);
    const float *w = lin.m->children[0]->params[0]->data;
    for (int k = 0; k < D; k++) {
        double mean = x->data[k];
        for (int b = 0; b < 3; b++) mean += set_->data[b * D + k];
        mean /= 4;
        ck_assert_float_near(a[k], w[k] * (x->data[k] - mean), 0.03 * fabs(w[k]) * 3);
    }
    /* groups: a feature mask of two groups gives each element its group's drop */
    int32_t seg[D] = {0, 0, 0, 1, 1, 1};
    r.segments = seg;
    r.n_segments = 2;
    ck_assert_int_eq(run(&lin, x, "feature_ablation", &r, a, NULL, &err, NULL), VS_OK);
    double g0 = 0, g1 = 0;
    for (int k = 0; k < D; k++) *(k < 3 ? &g0 : &g1) += w[k] * x->data[k];
    for (int k = 0; k < D; k++) ck_assert_float_near(a[k], k < 3 ? g0 : g1, 1e-5);
    vs_tensor_free(set_);
    vs_tensor_free(x);
    vs_module_free(lin.m);
}
END_TEST

START_TEST(test_noise_tunnel)
{
    fixture nl, lin;
    fixture_init(&nl, mlp(8, D, 8, 3, true));
    fixture_init(&lin, linear(9, D, 3));
    vs_tensor *x = row(10);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 2;
    r.seed = 11;
    vs_error err;
    float a[D], b[D];
    /* over saliency it is SmoothGrad: the same noise, the same mean */
    ck_assert_int_eq(run(&nl, x, "smoothgrad", &r, a, NULL, &err, "samples", "7", "noise", "0.3", NULL), VS_OK);
    ck_assert_int_eq(run(&nl, x, "noise_tunnel", &r, b, NULL, &err, "nt-method", "saliency", "samples", "7", "noise", "0.3", NULL), VS_OK);
    for (int i = 0; i < D; i++) ck_assert_float_near(a[i], b[i], 1e-6);
    /* a linear model's gradient ignores the noise: smoothgrad_sq = w^2, vargrad = 0 */
    const float *w = lin.m->children[0]->params[0]->data + 2 * D;
    ck_assert_int_eq(run(&lin, x, "noise_tunnel", &r, a, NULL, &err, "nt-method", "saliency", "nt-type", "smoothgrad_sq", NULL), VS_OK);
    ck_assert_int_eq(run(&lin, x, "noise_tunnel", &r, b, NULL, &err, "nt-method", "saliency", "nt-type", "vargrad", NULL), VS_OK);
    for (int i = 0; i < D; i++) {
        ck_assert_float_near(a[i], w[i] * w[i], 1e-5);
        ck_assert_float_near(b[i], 0, 1e-5);
    }
    /* over integrated gradients of a linear model: the mean of w (x + e), e of mean ~0 */
    ck_assert_int_eq(run(&lin, x, "noise_tunnel", &r, a, NULL, &err, "nt-method", "integrated_gradients", "samples", "4000", "noise", "0.1",
                         NULL), VS_OK);
    for (int i = 0; i < D; i++) ck_assert_float_near(a[i], w[i] * x->data[i], 0.02);
    vs_tensor_free(x);
    vs_module_free(nl.m);
    vs_module_free(lin.m);
}
END_TEST

/* ---- LRP ---------------------------------------------------------------------------------------- */

START_TEST(test_lrp_conservation)
{
    fixture f;
    fixture_init(&f, mlp(12, D, 10, 3, false)); /* no biases: relevance is conserved */
    vs_tensor *x = row(13);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 0;
    vs_error err;
    vs_attr_report rep;
    float a[D], g[D];
    ck_assert_int_eq(run(&f, x, "lrp", &r, a, &rep, &err, NULL), VS_OK);
    double sum = 0;
    for (int i = 0; i < D; i++) sum += a[i];
    ck_assert_float_near(sum, rep.score, 1e-4 * fmax(1, fabs(rep.score)));
    ck_assert_double_le(fabs(rep.delta), 1e-4 * fmax(1, fabs(rep.score)));
    /* epsilon -> 0 on a bias-free ReLU network: LRP = input x gradient */
    ck_assert_int_eq(run(&f, x, "input_x_gradient", &r, g, NULL, &err, NULL), VS_OK);
    for (int i = 0; i < D; i++) ck_assert_float_near(a[i], g[i], 1e-4);
    /* z+ keeps relevance positive where inputs and relevance are positive: all of S(x) > 0 lands on x */
    ck_assert_int_eq(run(&f, x, "lrp", &r, a, &rep, &err, "lrp-rule", "alpha1beta0", NULL), VS_OK);
    vs_tensor_free(x);
    vs_module_free(f.m);
}
END_TEST

/* ---- layer and neuron methods ------------------------------------------------------------------- */

START_TEST(test_layer_methods)
{
    fixture f;
    fixture_init(&f, mlp(14, D, 8, 3, true));
    vs_tensor *x = row(15);
    vs_rng rg;
    vs_rng_seed(&rg, 16);
    vs_tensor *base = vs_tensor_randn(VS_SHAPE(1, D), &rg, 0, 0.3f);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 1;
    r.baseline = base;
    vs_error err;
    vs_attr_report rep;
    int nd;
    int64_t shape[VS_MAX_DIMS];
    const vs_method *lig = vs_method_find("layer_integrated_gradients");
    vs_method_opts *o = vs_method_opts_new(lig);
    ck_assert_int_eq(vs_method_opts_set(o, "layer", "1", &err), VS_OK);
    ck_assert_int_eq(vs_explain_layer_shape(&f.fn, lig, o, x, &nd, shape, &err), VS_OK);
    ck_assert_int_eq(nd, 2);
    ck_assert_int_eq(shape[1], 8);
    vs_method_opts_free(o);
    float a[8], act[8];
    /* layer IG after the relu sums to S(x) - S(x') */
    ck_assert_int_eq(run(&f, x, "layer_integrated_gradients", &r, a, &rep, &err, "layer", "1", NULL), VS_OK);
    ck_assert_double_le(fabs(rep.delta), 1e-4);
    /* the tail is linear after the relu: conductance = gradient x activation difference = layer IG */
    float c[8];
    ck_assert_int_eq(run(&f, x, "layer_conductance", &r, c, &rep, &err, "layer", "1", NULL), VS_OK);
    double sc = 0, sa = 0;
    for (int i = 0; i < 8; i++) {
        sc += c[i];
        sa += a[i];
    }
    ck_assert_float_near(sc, rep.score - rep.baseline_score, 1e-2 * fmax(1, fabs(sa)));
    /* activation, and gradient x activation = w2[target] * activation for a linear tail */
    ck_assert_int_eq(run(&f, x, "layer_activation", &r, act, NULL, &err, "layer", "1", NULL), VS_OK);
    ck_assert_int_eq(run(&f, x, "layer_gradient_x_activation", &r, a, NULL, &err, "layer", "1", NULL), VS_OK);
    const float *w2 = f.m->children[2]->params[0]->data + 1 * 8;
    for (int i = 0; i < 8; i++) {
        ck_assert_float_ge(act[i], 0);
        ck_assert_float_near(a[i], w2[i] * act[i], 1e-5);
    }
    /* neuron IG of a unit before the relu (linear in x): w1[J] (x - x') exactly */
    float n[D];
    ck_assert_int_eq(run(&f, x, "neuron_integrated_gradients", &r, n, NULL, &err, "layer", "0", "neuron", "3", NULL), VS_OK);
    const float *w1 = f.m->children[0]->params[0]->data + 3 * D;
    for (int i = 0; i < D; i++) ck_assert_float_near(n[i], w1[i] * (x->data[i] - base->data[i]), 1e-5);
    /* neuron conductance over every unit of the hidden layer adds up to integrated gradients */
    float ig[D], sum[D] = {0};
    ck_assert_int_eq(run(&f, x, "integrated_gradients", &r, ig, NULL, &err, NULL), VS_OK);
    for (int u = 0; u < 8; u++) {
        char buf[8];
        snprintf(buf, sizeof buf, "%d", u);
        ck_assert_int_eq(run(&f, x, "neuron_conductance", &r, n, NULL, &err, "layer", "1", "neuron", buf, NULL), VS_OK);
        for (int i = 0; i < D; i++) sum[i] += n[i];
    }
    for (int i = 0; i < D; i++) ck_assert_float_near(sum[i], ig[i], 1e-4);
    /* misuse */
    ck_assert_int_eq(run(&f, x, "layer_activation", &r, a, NULL, &err, "layer", "2", NULL), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "--layer 2"));
    ck_assert_int_eq(run(&f, x, "neuron_integrated_gradients", &r, n, NULL, &err, "layer", "0", "neuron", "8", NULL), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "--neuron 8"));
    ck_assert_int_eq(vs_explain_shape(lig, x, &r, &nd, shape, &err), VS_ERR_ARG);
    vs_tensor_free(base);
    vs_tensor_free(x);
    vs_module_free(f.m);
}
END_TEST

/* ---- layer paths: composites and Siamese pairs ----------------------------------------------------- */

/* The model.json of a composite x -> fc1 (linear D->8) -> relu -> main (linear 8->5, relu, linear 5->3),
 * the same function as the sequential mlp5 below once the weights are copied over; its values also go
 * by ONNX-style aliases. */
static const char composite_json[] =
    "{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [6]},\n"
    " \"models\": {\"fc1\": {\"op\": \"linear\", \"in\": 6, \"out\": 8},\n"
    "            \"main\": {\"sequential\": [{\"op\": \"linear\", \"in\": 8, \"out\": 5}, {\"op\": \"relu\"},\n"
    "                                      {\"op\": \"linear\", \"in\": 5, \"out\": 3}]}},\n"
    " \"graph\": [{\"call\": \"fc1\", \"in\": \"x\", \"out\": \"h\"}, {\"op\": \"relu\", \"in\": \"h\", \"out\": \"r\"},\n"
    "           {\"call\": \"main\", \"in\": \"r\", \"out\": \"y\"}],\n"
    " \"outputs\": [\"y\"], \"aliases\": {\"/fc1/Gemm\": \"h\", \"/Relu\": \"r\", \"onnx::Relu_3\": \"r\"}}}";

static vs_module *module_from_text(const char *text)
{
    vs_json *doc = NULL;
    vs_model_spec s = {0};
    vs_module *m = NULL;
    vs_error err;
    vs_rng r;
    vs_rng_seed(&r, 3);
    if (vs_json_parse(text, strlen(text), "model.json", NULL, &doc, &err) == VS_OK && vs_model_spec_from_json(doc, &s, &err) == VS_OK)
        m = vs_model_from_spec(&s, &r, &err);
    vs_model_spec_clear(&s);
    vs_json_free(doc);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_module_train(m, false);
    return m;
}

static void copy_params(vs_module *to, const vs_module *from)
{
    for (int i = 0; i < from->n_params; i++) set(to->params[i], from->params[i]->data);
}

/* Sums of layer IG and conductance (the latter a Riemann sum, first order), both against S(x) - S(x'). */
static void check_layer_sums(fixture *f, vs_tensor *x, const vs_explain_request *r, const char *layer, int units)
{
    float a[16], c[16];
    vs_error err;
    vs_attr_report rep;
    ck_assert_int_eq(run(f, x, "layer_conductance", r, c, &rep, &err, "layer", layer, "steps", "200", NULL), VS_OK);
    ck_assert_int_eq(run(f, x, "layer_integrated_gradients", r, a, &rep, &err, "layer", layer, "steps", "400", NULL), VS_OK);
    double gap = rep.score - rep.baseline_score, sa = 0, sc = 0;
    for (int i = 0; i < units; i++) {
        sa += a[i];
        sc += c[i];
    }
    /* relu kinks along the path: the quadrature converges, it is not exact */
    ck_assert_double_le(fabs(rep.delta), 1e-3 * fmax(1, fabs(gap)));
    ck_assert_double_le(fabs(sa - gap), 1e-3 * fmax(1, fabs(gap)));
    ck_assert_double_le(fabs(sc - gap), 1e-2 * fmax(1, fabs(gap)));
}

START_TEST(test_layer_paths_composite)
{
    vs_rng rg;
    vs_rng_seed(&rg, 41);
    vs_module *seq = vs_sequential_new(); /* linear relu linear relu linear: the composite flattened */
    vs_sequential_add(seq, vs_linear_new(D, 8, true, &rg));
    vs_sequential_add(seq, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(seq, vs_linear_new(8, 5, true, &rg));
    vs_sequential_add(seq, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(seq, vs_linear_new(5, 3, true, &rg));
    vs_module_train(seq, false);
    vs_module *comp = module_from_text(composite_json), *main = vs_module_child(comp, "main");
    copy_params(vs_module_child(comp, "fc1"), seq->children[0]);
    copy_params(main->children[0], seq->children[2]);
    copy_params(main->children[2], seq->children[4]);
    fixture fs, fc;
    fixture_init(&fs, seq);
    fixture_init(&fc, comp);
    vs_tensor *x = row(42), *base = vs_tensor_randn(VS_SHAPE(1, D), &rg, 0, 0.3f);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 2;
    r.baseline = base;
    vs_error err;
    /* a composite's layer by path, by value name or by alias = the flattened sequential's layer by index,
     * for every method */
    static const char *const methods[] = {"layer_activation", "layer_gradient_x_activation", "layer_integrated_gradients",
                                          "layer_conductance", "neuron_integrated_gradients", "neuron_conductance"};
    static const char *const paths[][2] = {{"main.0", "2"}, {"main.1", "3"}, {"fc1", "0"},     {"h", "0"},
                                           {"/fc1/Gemm", "0"}, {"r", "1"}, {"/Relu", "1"}, {"onnx::Relu_3", "1"}};
    for (int k = 0; k < 6; k++)
        for (int p = 0; p < 8; p++) {
            float a[16], b[16];
            bool neuron = k >= 4;
            ck_assert_int_eq(run(&fc, x, methods[k], &r, a, NULL, &err, "layer", paths[p][0], neuron ? "neuron" : NULL, "1", NULL), VS_OK);
            ck_assert_int_eq(run(&fs, x, methods[k], &r, b, NULL, &err, "layer", paths[p][1], neuron ? "neuron" : NULL, "1", NULL), VS_OK);
            for (int i = 0; i < (neuron ? D : p < 2 ? 5 : 8); i++) ck_assert_float_near(a[i], b[i], 1e-5 * fmax(1, fabs(b[i])));
        }
    check_layer_sums(&fc, x, &r, "fc1", 8);
    check_layer_sums(&fc, x, &r, "main.1", 5);
    check_layer_sums(&fc, x, &r, "/Relu", 8);
    /* paths that do not resolve name what exists */
    float a[16];
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, "layer", "/Relu_9", NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "--layer /Relu_9") && strstr(err.msg, "node and tensor names: /fc1/Gemm, /Relu, onnx::Relu_3"), "%s", err.msg);
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, "layer", "x", NULL), VS_ERR_ARG); /* an input is no layer */
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, "layer", "fc2", NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "--layer fc2") && strstr(err.msg, "fc1, main"), "%s", err.msg);
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, "layer", "main.7", NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "'main'") && strstr(err.msg, "0..2"), "%s", err.msg);
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, "layer", "fc1.0", NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "linear layer has no sub-modules"), "%s", err.msg);
    ck_assert_int_eq(run(&fc, x, "layer_activation", &r, a, NULL, &err, NULL), VS_ERR_ARG); /* a composite has no default */
    ck_assert_msg(strstr(err.msg, "--layer PATH"), "%s", err.msg);
    const vs_method *la = vs_method_find("layer_activation");
    vs_method_opts *o = vs_method_opts_new(la);
    ck_assert_int_eq(vs_method_opts_set(o, "layer", "main..1", &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_method_opts_set(o, "layer", "auto", &err), VS_OK);
    vs_method_opts_free(o);
    vs_tensor_free(x);
    vs_tensor_free(base);
    vs_module_free(seq);
    vs_module_free(comp);
}
END_TEST

START_TEST(test_layer_paths_siamese)
{
    vs_rng rg;
    vs_rng_seed(&rg, 43);
    vs_module *enc = vs_sequential_new();
    vs_sequential_add(enc, vs_linear_new(D, 7, true, &rg));
    vs_sequential_add(enc, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(enc, vs_linear_new(7, 4, true, &rg));
    vs_module *sm = vs_siamese_new(enc, VS_SIMILARITY_COSINE);
    vs_module_train(sm, false);
    fixture f;
    fixture_init(&f, sm);
    vs_tensor *x = row(44), *ref = row(45), *base = vs_tensor_randn(VS_SHAPE(1, D), &rg, 0, 0.3f);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.reference = ref;
    r.baseline = base;
    r.reference_baseline = base;
    vs_error err;
    float a[16], n[D], ig[D];
    /* the activation of the query's encoder layer */
    ck_assert_int_eq(run(&f, x, "layer_activation", &r, a, NULL, &err, "layer", "encoder.0", NULL), VS_OK);
    const float *w = enc->children[0]->params[0]->data, *b = enc->children[0]->params[1]->data;
    for (int u = 0; u < 7; u++) {
        double h = b[u];
        for (int i = 0; i < D; i++) h += w[u * D + i] * x->data[i];
        ck_assert_float_near(a[u], h, 1e-5);
    }
    /* completeness over the layer, both sides; the default layer is encoder.1 */
    for (int side = VS_SIDE_QUERY; side <= VS_SIDE_REFERENCE; side++) {
        r.side = (vs_side)side;
        check_layer_sums(&f, x, &r, "encoder.1", 7);
        check_layer_sums(&f, x, &r, "encoder.2", 4); /* the embedding itself: the cosine is the tail */
        check_layer_sums(&f, x, &r, "auto", 7);
    }
    /* neuron conductance over every unit of the layer adds up to the query's integrated gradients */
    r.side = VS_SIDE_QUERY;
    ck_assert_int_eq(run(&f, x, "integrated_gradients", &r, ig, NULL, &err, "steps", "64", NULL), VS_OK);
    double sum[D] = {0};
    for (int u = 0; u < 7; u++) {
        char buf[8];
        snprintf(buf, sizeof buf, "%d", u);
        ck_assert_int_eq(run(&f, x, "neuron_conductance", &r, n, NULL, &err, "layer", "encoder.1", "neuron", buf, "steps", "64", NULL), VS_OK);
        for (int i = 0; i < D; i++) sum[i] += n[i];
    }
    for (int i = 0; i < D; i++) ck_assert_float_near(sum[i], ig[i], 1e-4);
    /* misuse: no reference, both sides, a wrong child */
    r.side = VS_SIDE_BOTH;
    ck_assert_int_eq(run(&f, x, "layer_conductance", &r, a, NULL, &err, NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "one side at a time"), "%s", err.msg);
    r.side = VS_SIDE_QUERY;
    ck_assert_int_eq(run(&f, x, "layer_activation", &r, a, NULL, &err, "layer", "tower.1", NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "'encoder'"), "%s", err.msg);
    ck_assert_int_eq(run(&f, x, "layer_conductance", NULL, a, NULL, &err, NULL), VS_ERR_ARG);
    vs_tensor_free(x);
    vs_tensor_free(ref);
    vs_tensor_free(base);
    vs_module_free(sm);
}
END_TEST

/* LRP on a Siamese pair: with one bias-free linear encoder, R_i = x_i (W^T e)_i / (|W x| |e|), e the
 * reference's embedding; through linear-relu-linear without biases, sum R = cos. */
START_TEST(test_lrp_siamese)
{
    vs_rng rg;
    vs_rng_seed(&rg, 47);
    vs_module *enc = vs_sequential_new();
    vs_sequential_add(enc, vs_linear_new(D, 4, false, &rg));
    vs_module *sm = vs_siamese_new(enc, VS_SIMILARITY_COSINE);
    vs_module_train(sm, false);
    fixture f;
    fixture_init(&f, sm);
    vs_tensor *x = row(48), *ref = row(49);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.reference = ref;
    vs_error err;
    vs_attr_report rep;
    float a[D];
    ck_assert_int_eq(run(&f, x, "lrp", &r, a, &rep, &err, NULL), VS_OK);
    const float *w = enc->children[0]->params[0]->data;
    double q[4], e[4], qq = 0, ee = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = e[k] = 0;
        for (int i = 0; i < D; i++) {
            q[k] += w[k * D + i] * x->data[i];
            e[k] += w[k * D + i] * ref->data[i];
        }
        qq += q[k] * q[k];
        ee += e[k] * e[k];
    }
    for (int i = 0; i < D; i++) {
        double wte = 0;
        for (int k = 0; k < 4; k++) wte += w[k * D + i] * e[k];
        ck_assert_float_near(a[i], x->data[i] * wte / sqrt(qq * ee), 1e-5);
    }
    ck_assert_double_le(fabs(rep.delta), 1e-5);
    vs_module_free(sm);
    enc = vs_sequential_new();
    vs_sequential_add(enc, vs_linear_new(D, 7, false, &rg));
    vs_sequential_add(enc, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(enc, vs_linear_new(7, 4, false, &rg));
    sm = vs_siamese_new(enc, VS_SIMILARITY_COSINE);
    vs_module_train(sm, false);
    fixture_init(&f, sm);
    for (int side = VS_SIDE_QUERY; side <= VS_SIDE_REFERENCE; side++) {
        r.side = (vs_side)side;
        ck_assert_int_eq(run(&f, x, "lrp", &r, a, &rep, &err, NULL), VS_OK);
        ck_assert_double_le(fabs(rep.delta), 1e-5);
    }
    r.side = VS_SIDE_BOTH;
    ck_assert_int_eq(run(&f, x, "lrp", &r, a, &rep, &err, NULL), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "one side of a pair"), "%s", err.msg);
    vs_tensor_free(x);
    vs_tensor_free(ref);
    vs_module_free(sm);
}
END_TEST

/* A model of one input that is no sequential: LRP and the layer methods refuse it by name. */
static vs_tensor *plain_forward(void *ctx, vs_tensor *x)
{
    return vs_linear(x, ctx, NULL);
}

START_TEST(test_refusals)
{
    vs_rng rg;
    vs_rng_seed(&rg, 17);
    vs_tensor *w = vs_tensor_randn(VS_SHAPE(2, D), &rg, 0, 1), *x = row(18);
    fixture f = {0};
    f.fn = (vs_model_fn){.forward = plain_forward, .ctx = w};
    vs_error err;
    float a[D];
    ck_assert_int_eq(run(&f, x, "lrp", NULL, a, NULL, &err, NULL), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "sequential"));
    ck_assert_int_eq(run(&f, x, "layer_conductance", NULL, a, NULL, &err, NULL), VS_ERR_ARG);
    /* a layer without an LRP rule is named */
    vs_module *m = vs_sequential_new();
    vs_sequential_add(m, vs_linear_new(D, 4, true, &rg));
    vs_sequential_add(m, vs_activation_new(VS_MODULE_SIGMOID, 0));
    vs_sequential_add(m, vs_linear_new(4, 2, true, &rg));
    vs_module_train(m, false);
    fixture_init(&f, m);
    ck_assert_int_eq(run(&f, x, "lrp", NULL, a, NULL, &err, NULL), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "layer 1 (sigmoid)"));
    vs_module_free(m);
    vs_tensor_free(w);
    vs_tensor_free(x);
}
END_TEST

static Suite *breadth_suite(void)
{
    Suite *s = suite_create("breadth");
    TCase *tc = vs_tcase(s, "methods", 120);
    tcase_add_test(tc, test_modified_relu_by_hand);
    tcase_add_test(tc, test_shapley_sampling);
    tcase_add_test(tc, test_feature_permutation);
    tcase_add_test(tc, test_noise_tunnel);
    tcase_add_test(tc, test_lrp_conservation);
    tcase_add_test(tc, test_layer_methods);
    tcase_add_test(tc, test_layer_paths_composite);
    tcase_add_test(tc, test_layer_paths_siamese);
    tcase_add_test(tc, test_lrp_siamese);
    tcase_add_test(tc, test_refusals);
    return s;
}

VS_TEST_MAIN(breadth_suite)
