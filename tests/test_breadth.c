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
    tcase_add_test(tc, test_refusals);
    return s;
}

VS_TEST_MAIN(breadth_suite)
