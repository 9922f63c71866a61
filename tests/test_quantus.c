/* test_quantus.c - the Quantus-family metrics (metrics_complexity.c, metrics_localisation.c,
 * metrics_robustness.c, metrics_axioms.c) on cases with known answers. */
#include "vs_check.h"
#include "versus/metrics.h"
#include "versus/method.h"
#include "versus/versus.h"

#include <math.h>
#include <string.h>

START_TEST(test_complexity)
{
    float u[8] = {1, -1, 1, -1, 1, -1, 1, -1}, one[8] = {0, 0, 5, 0, 0, 0, 0, 0};
    ck_assert_float_near(vs_complexity(u, 8), log(8.0), 1e-12);  /* uniform: the largest entropy */
    ck_assert_float_near(vs_complexity(one, 8), 0, 1e-12);       /* one feature: none */
    float half[4] = {1, 1, 0, 0};
    ck_assert_float_near(vs_complexity(half, 4), log(2.0), 1e-12);
    ck_assert(isnan(vs_complexity((const float[]){0, 0}, 2)));
    ck_assert_int_eq(vs_effective_complexity((const float[]){0, 1e-6f, 0.5f, -2}, 4, 1e-5), 2);
    ck_assert_float_near(vs_gini(one, 8), 1.0 - 1.0 / 8, 1e-6); /* sparseness = Gini: one of n holds everything */
}
END_TEST

START_TEST(test_localisation)
{
    const float a[4] = {1, 2, 3, 4}, d[4] = {4, 3, 2, 1};
    const uint8_t s[4] = {0, 1, 1, 0}, t[4] = {1, 0, 1, 0}, none[4] = {0}, in[4] = {0, 0, 1, 1};
    ck_assert_float_eq(vs_pointing_game(a, in, 4), 1);
    ck_assert_float_eq(vs_pointing_game(a, s, 4), 0);
    ck_assert(isnan(vs_pointing_game(a, none, 4)));
    ck_assert_float_near(vs_relevance_mass(a, s, 4), 0.5, 1e-12);          /* (2 + 3) / 10 */
    ck_assert_float_near(vs_relevance_rank(d, t, 4), 0.5, 1e-12);          /* top 2 = {0, 1}: one inside */
    ck_assert_float_near(vs_top_k_intersection(d, t, 4, 3), 2.0 / 3, 1e-12); /* top 3 = {0, 1, 2} */
    ck_assert_float_near(vs_top_k_intersection(d, t, 4, 99), 0.5, 1e-12);  /* k clipped to n */
    ck_assert_float_near(vs_localisation_auc(a, in, 4), 1, 1e-12);         /* inside outscores outside */
    ck_assert_float_near(vs_localisation_auc(d, in, 4), 0, 1e-12);
    ck_assert_float_near(vs_localisation_auc((const float[]){1, 1, 1, 1}, in, 4), 0.5, 1e-12);
    /* t = {0, 2} against d = {4, 3, 2, 1}: pairs (inside, outside) won 0>1, 0>3, 2>3; lost 2<1: 3/4 */
    ck_assert_float_near(vs_localisation_auc(d, t, 4), 0.75, 1e-12);
    ck_assert(isnan(vs_relevance_mass(a, none, 4)));
}
END_TEST

/* Explainers with known behaviour: A(x) = c x, or a map that marks the class. */
typedef struct scaled {
    double c;
    int calls;
    int64_t last_target;
} scaled;

static vs_status scaled_explain(void *ctx, vs_tensor *x, int64_t target, float *attr, vs_error *err)
{
    (void)err;
    scaled *s = ctx;
    s->calls++;
    s->last_target = target;
    for (int64_t i = 0; i < x->size; i++) attr[i] = (float)(s->c * x->data[i]);
    return VS_OK;
}

static vs_status class_explain(void *ctx, vs_tensor *x, int64_t target, float *attr, vs_error *err)
{
    (void)ctx;
    (void)err;
    for (int64_t i = 0; i < x->size; i++) attr[i] = i / 10 == target ? 1.0f : 0.0f;
    return VS_OK;
}

START_TEST(test_robustness)
{
    enum { N = 400 };
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(1, N), &r, 0, 1);
    float a[N];
    scaled s = {3.0, 0, -1};
    scaled_explain(&s, x, 0, a, NULL);
    /* A = 3x: every perturbation d gives ||3d|| / ||d|| = 3 */
    double lle, mx, avg;
    ck_assert_int_eq(vs_local_lipschitz(scaled_explain, &s, x, a, 0, 0.1, 5, &r, &lle, NULL), VS_OK);
    ck_assert_float_near(lle, 3, 1e-4);
    /* sensitivity ||3d|| / ||3x|| = ||d|| / ||x||, d uniform in [-r, r]: about r sqrt(N / 3) / ||x|| */
    double nx = 0;
    for (int i = 0; i < N; i++) nx += (double)x->data[i] * x->data[i];
    nx = sqrt(nx);
    ck_assert_int_eq(vs_sensitivity(scaled_explain, &s, x, a, 0, 0.2, 20, &r, &mx, &avg, NULL), VS_OK);
    double want = 0.2 * sqrt(N / 3.0) / nx;
    ck_assert_float_near(avg, want, 0.05 * want);
    ck_assert(mx >= avg && mx <= 0.2 * sqrt((double)N) / nx);
    ck_assert_int_eq(s.calls, 1 + 5 + 20);
    /* a constant explainer (c = 0 past x's own map, i.e. the gradient of a linear model) is perfectly robust */
    scaled z = {0, 0, -1};
    float zero[N] = {0};
    ck_assert_int_eq(vs_local_lipschitz(scaled_explain, &z, x, zero, 0, 0.1, 3, &r, &lle, NULL), VS_OK);
    ck_assert_float_eq(lle, 0);
    vs_tensor_free(x);
}
END_TEST

START_TEST(test_random_logit)
{
    vs_rng r;
    vs_rng_seed(&r, 2);
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, 1, 10, 10));
    for (int i = 0; i < 100; i++) x->data[i] = (float)(i % 7);
    float a[100];
    /* a map that ignores the class: SSIM 1, and the other class is never the target */
    scaled s = {1, 0, -1};
    scaled_explain(&s, x, 3, a, NULL);
    double ssim;
    for (int k = 0; k < 20; k++) {
        ck_assert_int_eq(vs_random_logit(scaled_explain, &s, x, a, 3, 10, 10, 10, &r, &ssim, NULL), VS_OK);
        ck_assert_float_near(ssim, 1, 1e-9);
        ck_assert(s.last_target != 3 && s.last_target >= 0 && s.last_target < 10);
    }
    /* a map that marks the class's row: the other class's map shares nothing */
    class_explain(NULL, x, 3, a, NULL);
    ck_assert_int_eq(vs_random_logit(class_explain, NULL, x, a, 3, 10, 10, 10, &r, &ssim, NULL), VS_OK);
    ck_assert_double_lt(ssim, 0.5);
    vs_error err;
    ck_assert_int_eq(vs_random_logit(class_explain, NULL, x, a, 3, 1, 10, 10, &r, &ssim, &err), VS_ERR_ARG);
    vs_tensor_free(x);
}
END_TEST

/* S(x) = w . x with w = [1, 0, -2, 0, 3] */
/* The registered method grad_explain runs. */
static const char *explain_method = "saliency";

static vs_tensor *linear5(void *ctx, vs_tensor *x) { return vs_linear(x, ctx, NULL); }

START_TEST(test_axioms)
{
    vs_tensor *w = vs_tensor_from(VS_SHAPE(1, 5), (const float[]){1, 0, -2, 0, 3});
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 5), (const float[]){0.4f, 0.2f, 0.7f, 0.9f, 0.1f});
    vs_model_fn m = {.forward = linear5, .ctx = w};
    vs_perturb_opts o;
    vs_perturb_opts_init(&o);
    o.target = 0;
    vs_error err;
    int64_t v;
    /* w x (IG of the linear model) is zero exactly where S does not move: no violation */
    float ig[5];
    for (int i = 0; i < 5; i++) ig[i] = w->data[i] * x->data[i];
    ck_assert_int_eq(vs_non_sensitivity(&m, x, ig, &o, 1e-5, &v, &err), VS_OK);
    ck_assert_int_eq(v, 0);
    /* all zero: the three features S depends on are violations; all one: the two it ignores are */
    ck_assert_int_eq(vs_non_sensitivity(&m, x, (const float[]){0, 0, 0, 0, 0}, &o, 1e-5, &v, &err), VS_OK);
    ck_assert_int_eq(v, 3);
    ck_assert_int_eq(vs_non_sensitivity(&m, x, (const float[]){1, 1, 1, 1, 1}, &o, 1e-5, &v, &err), VS_OK);
    ck_assert_int_eq(v, 2);
    /* input invariance */
    ck_assert_float_eq(vs_input_invariance(ig, ig, 5, 1e-4), 1);
    float moved[5];
    memcpy(moved, ig, sizeof moved);
    moved[2] += 1e-3f;
    ck_assert_float_eq(vs_input_invariance(ig, moved, 5, 1e-4), 0);
    vs_tensor_free(w);
    vs_tensor_free(x);
}
END_TEST

/* The map of explain_method on model_fn ctx at its defaults (vs_explain). */
static vs_status grad_explain(void *ctx, vs_tensor *x, int64_t target, float *attr, vs_error *err)
{
    const vs_model_fn *m = ctx;
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = target;
    vs_tensor *a = NULL;
    vs_status st = vs_explain(m, x, vs_method_find(explain_method), NULL, &r, &a, NULL, err);
    if (st == VS_OK) memcpy(attr, a->data, (size_t)a->size * sizeof *attr);
    vs_tensor_free(a);
    return st;
}

/* Input invariance on a model whose first layer's bias absorbs the shift: saliency (a gradient) is
 * invariant, input x gradient is not; the bias comes back unchanged; a model starting without a
 * biased layer gives NAN. */
START_TEST(test_input_invariance_shift)
{
    vs_rng r;
    vs_rng_seed(&r, 3);
    vs_module *net = vs_sequential_new();
    ck_assert_int_eq(vs_sequential_add(net, vs_linear_new(6, 8, true, &r)), VS_OK);
    ck_assert_int_eq(vs_sequential_add(net, vs_activation_new(VS_MODULE_TANH, 0)), VS_OK);
    ck_assert_int_eq(vs_sequential_add(net, vs_linear_new(8, 3, true, &r)), VS_OK);
    vs_module_train(net, false);
    vs_module_explainee e = {net, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(1, 6), &r, 0, 1), *bias = vs_module_param(net->children[0], "bias");
    float a[6], b0[8];
    memcpy(b0, bias->data, sizeof b0);
    vs_error err;
    const char *methods[2] = {"saliency", "input_x_gradient"};
    for (int k = 0; k < 2; k++) {
        explain_method = methods[k];
        ck_assert_int_eq(grad_explain(&fn, x, 1, a, &err), VS_OK);
        double inv = vs_input_invariance_shift(&fn, net, grad_explain, &fn, x, a, 1, -1, 0.5, &err);
        ck_assert_msg(inv == (k == 0 ? 1 : 0), "%s: input invariance %g", methods[k], inv);
        ck_assert_int_eq(memcmp(b0, bias->data, sizeof b0), 0);
    }
    vs_module *flat = vs_sequential_new();
    ck_assert_int_eq(vs_sequential_add(flat, vs_flatten_new()), VS_OK);
    ck_assert_int_eq(vs_sequential_add(flat, vs_linear_new(6, 3, true, &r)), VS_OK);
    vs_module_explainee ef = {flat, NULL};
    vs_model_fn ff = vs_model_fn_from_module(&ef);
    ck_assert(isnan(vs_input_invariance_shift(&ff, flat, grad_explain, &ff, x, a, 1, -1, 0.5, &err)));
    vs_tensor_free(x);
    vs_module_free(net);
    vs_module_free(flat);
}
END_TEST

static Suite *quantus_suite(void)
{
    Suite *s = suite_create("quantus");
    TCase *tc = vs_tcase(s, "metrics", 60);
    tcase_add_test(tc, test_complexity);
    tcase_add_test(tc, test_localisation);
    tcase_add_test(tc, test_robustness);
    tcase_add_test(tc, test_random_logit);
    tcase_add_test(tc, test_axioms);
    tcase_add_test(tc, test_input_invariance_shift);
    return s;
}

VS_TEST_MAIN(quantus_suite)
