/* test_metrics.c - every attribution metric on a hand-made case with a known value. */
#include "vs_check.h"
#include "explain_call.h"
#include "versus/metrics.h"
#include "versus/versus.h"

#include <math.h>

START_TEST(test_aopc_gini)
{
    double c[4] = {1, 0.5, 0.2, 0};
    ck_assert_float_near(vs_aopc(c, 4, 1), 0.25, 1e-12);
    ck_assert_float_near(vs_aopc(c, 4, -1), 0.575, 1e-12);
    ck_assert_float_near(vs_aopc(c, 4, 100), 0.575, 1e-12);
    float u[8] = {2, 2, 2, 2, -2, 2, 2, 2}, one[8] = {0, 0, 0, 5, 0, 0, 0, 0};
    ck_assert_float_near(vs_gini(u, 8), 0, 1e-9);
    ck_assert_float_near(vs_gini(one, 8), 1 - 1.0 / 8, 1e-9);
    float z[3] = {0, 0, 0};
    ck_assert_float_eq(vs_gini(z, 3), 0);
}
END_TEST

START_TEST(test_correlations_ssim_localization)
{
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 4, 6, 8, 10}, yr[5] = {5, 4, 3, 2, 1}, ym[5] = {1, 4, 9, 16, 100};
    ck_assert_float_near(vs_pearson(x, y, 5), 1, 1e-12);
    ck_assert_float_near(vs_pearson(x, yr, 5), -1, 1e-12);
    ck_assert_float_near(vs_spearman(x, ym, 5), 1, 1e-12); /* monotone, not linear */
    ck_assert(vs_pearson(x, ym, 5) < 0.99);
    double t[4] = {1, 1, 2, 3}, u[4] = {1, 2, 3, 4};
    /* ranks of t: 1.5 1.5 3 4 -> Pearson with 1..4 */
    ck_assert_float_near(vs_spearman(t, u, 4), 0.9486832980505138, 1e-12);
    float a[100], b[100];
    for (int i = 0; i < 100; i++) {
        a[i] = (float)((i * 37) % 11);
        b[i] = 2 * a[i];
    }
    ck_assert_float_near(vs_ssim(a, a, 10, 10), 1, 1e-9);
    ck_assert_float_near(vs_ssim(a, b, 10, 10), 1, 1e-9); /* scale-invariant after normalisation */
    for (int i = 0; i < 100; i++) b[i] = (float)((i * 53) % 7);
    ck_assert(vs_ssim(a, b, 10, 10) < 0.5);
    float m[2 * 3 * 6];
    for (int k = 0; k < 36; k++) {
        int col = k % 6;
        m[k] = (col == 0 || col == 5) ? 2.0f : -1.0f;
    }
    ck_assert_float_near(vs_inverse_localization(m, 2, 3, 6, 1), 2.0, 1e-12);
    ck_assert(isnan(vs_inverse_localization(m, 2, 3, 6, 3)));
}
END_TEST

typedef struct lin {
    vs_tensor *w;
} lin;

static vs_tensor *lin_forward(void *ctx, vs_tensor *x)
{
    lin *l = ctx;
    return vs_linear(vs_flatten(x), l->w, NULL);
}

START_TEST(test_model_metrics_linear)
{
    /* S(x) = w . x with w = (4, -1, 2, 0.5); flipping means x -> 1 - x. */
    lin l = {vs_tensor_from(VS_SHAPE(1, 4), (float[]){4, -1, 2, 0.5f})};
    vs_model_fn m = {.forward = lin_forward, .ctx = &l};
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 4), (float[]){1, 0, 1, 1});
    vs_tensor *attr = vs_tensor_from(VS_SHAPE(1, 4), (float[]){4, 1, 2, 0.5f}); /* order 0, 2, 1, 3 */
    vs_perturb_opts o;
    vs_perturb_opts_init(&o);
    double *curve;
    int64_t np;
    vs_error err;
    ck_assert_int_eq(vs_perturbation_curve(&m, x, attr, &o, &curve, &np, &err), VS_OK);
    ck_assert_int_eq(np, 5);
    double want[5] = {6.5, 2.5, 0.5, -0.5, -1.0};
    for (int k = 0; k < 5; k++) ck_assert_float_near(curve[k], want[k], 1e-6);
    free(curve);
    o.per_step = 3;
    ck_assert_int_eq(vs_perturbation_curve(&m, x, attr, &o, &curve, &np, &err), VS_OK);
    ck_assert_int_eq(np, 3);
    ck_assert_float_near(curve[1], -0.5, 1e-6);
    ck_assert_float_near(curve[2], -1.0, 1e-6);
    free(curve);
    /* faithfulness: single-feature effects e = w * (x - (1 - x)) = (4, 1, 2, 0.5) = attr exactly */
    double f, mono;
    o.per_step = 1;
    ck_assert_int_eq(vs_faithfulness_monotonicity(&m, x, attr, &o, &f, &mono, &err), VS_OK);
    ck_assert_float_near(f, 1, 1e-6);
    ck_assert_float_near(mono, 1, 1e-12);
    vs_tensor *bad = vs_tensor_zeros(VS_SHAPE(1, 3));
    ck_assert_int_eq(vs_perturbation_curve(&m, x, bad, &o, &curve, &np, &err), VS_ERR_SHAPE);
    vs_tensor_free(bad);
    vs_tensor_free(x);
    vs_tensor_free(attr);
    vs_tensor_free(l.w);
}
END_TEST

typedef struct casc {
    vs_model_fn m;
    vs_tensor *x;
} casc;

static vs_status casc_attr(void *ctx, vs_tensor **a)
{
    casc *c = ctx;
    vs_explain_request o = explain_req(0, -1);
    return explain_with(&c->m, c->x, "input_x_gradient", NULL, &o, a, NULL, NULL);
}

START_TEST(test_cascading_randomization)
{
    vs_rng r;
    vs_rng_seed(&r, 4);
    lin l = {vs_tensor_randn(VS_SHAPE(1, 64), &r, 0, 1)};
    casc c = {{.forward = lin_forward, .ctx = &l}, vs_tensor_rand(VS_SHAPE(1, 64), &r, 0.5f, 1)};
    float before = l.w->data[7];
    vs_tensor *const layer0[1] = {l.w};
    vs_tensor *const *layers[1] = {layer0};
    int np[1] = {1};
    double rank[1], ssim[1];
    vs_error err;
    ck_assert_int_eq(vs_cascading_randomization(layers, np, 1, casc_attr, &c, 8, 8, &r, rank, ssim, &err), VS_OK);
    ck_assert_float_eq(l.w->data[7], before); /* restored */
    ck_assert(fabs(rank[0]) < 0.5);           /* a fresh random weight vector decorrelates the map */
    ck_assert(ssim[0] < 0.9);
    vs_tensor_free(l.w);
    vs_tensor_free(c.x);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = vs_tcase(s, "metrics", 30);
    tcase_add_test(tc, test_aopc_gini);
    tcase_add_test(tc, test_correlations_ssim_localization);
    tcase_add_test(tc, test_model_metrics_linear);
    tcase_add_test(tc, test_cascading_randomization);
    return s;
}

VS_TEST_MAIN(metrics_suite)
