/* test_path_grads.c - integrated gradients through vs_sequential_path_grads (the first layer affine
 * along the path, the second layer updated at the flipped ReLUs) against the point-by-point
 * gradients: conv and MLP stacks, ReLU and leaky ReLU, strides and paddings, baselines, quadrature
 * rules, thread counts, models the engine does not take, and bad input. */
#include "vs_check.h"
#include "versus/arch.h"
#include "versus/explain.h"
#include "versus/threads.h"
#include "versus/versus.h"

#include <math.h>

/* Every parameter of m drawn from U(-a, a) (biases too, so many ReLUs cross 0 along the path). */
static void randomise(vs_module *m, vs_rng *r, float a)
{
    vs_named_tensors l = {0};
    ck_assert_int_eq(vs_module_named_tensors(m, VS_STATE_ALL, &l), VS_OK);
    for (int64_t i = 0; i < l.n; i++)
        for (int64_t k = 0; k < l.items[i].tensor->size; k++) l.items[i].tensor->data[k] = a * (2 * vs_rng_uniformf(r) - 1);
    vs_named_tensors_clear(&l);
}

static vs_module *seq(int n, vs_module **layers)
{
    vs_module *m = vs_sequential_new();
    for (int i = 0; i < n; i++) ck_assert_int_eq(vs_sequential_add(m, layers[i]), VS_OK);
    vs_module_train(m, false);
    return m;
}

/* IG of x against baseline with the engine and with the point-by-point path; max |difference|
 * relative to the largest attribution. */
static double ig_gap(vs_module *m, vs_tensor *x, vs_tensor *baseline, int steps, vs_ig_rule rule, int64_t target,
                     float *out_attr)
{
    vs_module_explainee e = {m, NULL};
    vs_model_fn fast = vs_model_fn_from_module(&e), slow = fast;
    ck_assert_ptr_nonnull(fast.path_grads);
    slow.path_grads = NULL;
    vs_attr_opts o;
    vs_attr_opts_init(&o, VS_ATTR_INTEGRATED_GRADIENTS);
    o.steps = steps;
    o.ig_rule = rule;
    o.target = target;
    o.batch = 7; /* several chunks with a remainder */
    o.baseline = baseline;
    vs_error err;
    vs_tensor *a = NULL, *b = NULL;
    vs_attr_report ra, rb;
    ck_assert_msg(vs_attribute(&fast, x, &o, &a, &ra, &err) == VS_OK, "%s", err.msg);
    ck_assert_msg(vs_attribute(&slow, x, &o, &b, &rb, &err) == VS_OK, "%s", err.msg);
    ck_assert_int_eq(a->size, b->size);
    ck_assert_int_eq(ra.evaluations, rb.evaluations);
    double gap = 0, top = 0;
    for (int64_t i = 0; i < a->size; i++) {
        gap = fmax(gap, fabs((double)a->data[i] - b->data[i]));
        top = fmax(top, fabs((double)b->data[i]));
    }
    if (out_attr) memcpy(out_attr, a->data, (size_t)a->size * sizeof(float));
    vs_tensor_free(a);
    vs_tensor_free(b);
    return gap / (top > 0 ? top : 1);
}

/* The GANMEX MNIST classifier (conv k6 s2 p2, ReLU, conv, ...), random weights and image, zero and
 * uniform baselines, 200 midpoint steps (the bench's IG) and 50 Gauss-Legendre ones. */
START_TEST(test_ganmex_classifier)
{
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    ck_assert_ptr_nonnull(m);
    vs_module_train(m, false);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 1), *zero = vs_tensor_zeros(VS_SHAPE(1, 1, 28, 28));
    vs_tensor *noise = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 0.3f);
    double g1 = ig_gap(m, x, zero, 200, VS_IG_MIDDLE, 3, NULL);
    double g2 = ig_gap(m, x, noise, 50, VS_IG_GAUSS_LEGENDRE, 7, NULL);
    ck_assert_msg(g1 < 1e-4 && g2 < 1e-4, "relative gaps %g %g", g1, g2);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* Conv stacks with other strides, paddings, leaky ReLU, pooling in the tail, and biases large enough
 * that many first-layer units flip along the path. */
START_TEST(test_conv_stacks)
{
    vs_rng r;
    vs_rng_seed(&r, 9);
    static const int cfg[][6] = {/* c1 k1 s1 p1 | k2 s2 p2 below */ {3, 3, 1, 1, 3, 1}, {4, 5, 2, 2, 3, 2}, {2, 1, 1, 0, 2, 2}};
    for (size_t t = 0; t < sizeof cfg / sizeof cfg[0]; t++)
        for (int leaky = 0; leaky < 2; leaky++) {
            const int c1 = cfg[t][0], k1 = cfg[t][1], s1 = cfg[t][2], p1 = cfg[t][3], k2 = cfg[t][4], s2 = cfg[t][5];
            vs_module *layers[] = {
                vs_conv2d_new(2, c1, k1, s1, p1, true, &r),
                leaky ? vs_activation_new(VS_MODULE_LEAKY_RELU, 0.1f) : vs_activation_new(VS_MODULE_RELU, 0),
                vs_conv2d_new(c1, 5, k2, s2, k2 / 2, true, &r),
                vs_activation_new(VS_MODULE_RELU, 0),
                vs_max_pool2d_new(2, 2, 0),
                vs_flatten_new(),
                vs_linear_new(1, 4, true, &r), /* resized below */
            };
            vs_module *m = seq(6, layers);
            vs_scope_begin();
            vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 2, 11, 9), &r, -1, 1);
            vs_forward_ctx fc = {0};
            vs_tensor *y = vs_module_forward(m, x, &fc);
            ck_assert_ptr_nonnull(y);
            vs_module_free(layers[6]);
            ck_assert_int_eq(vs_sequential_add(m, vs_linear_new(y->shape[1], 4, true, &r)), VS_OK);
            randomise(m, &r, 0.6f);
            vs_module_train(m, false);
            vs_tensor *bl = vs_tensor_rand(VS_SHAPE(1, 2, 11, 9), &r, -1, 1);
            double g = ig_gap(m, x, bl, 64, VS_IG_TRAPEZOID, 2, NULL);
            ck_assert_msg(g < 1e-4, "config %zu leaky %d: relative gap %g", t, leaky, g);
            vs_scope_end();
            vs_module_free(m);
        }
}
END_TEST

/* linear, ReLU, linear, ... on row vectors (tabular MLPs). */
START_TEST(test_mlp)
{
    vs_rng r;
    vs_rng_seed(&r, 13);
    vs_module *layers[] = {vs_linear_new(12, 20, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_linear_new(20, 9, true, &r),
                           vs_activation_new(VS_MODULE_TANH, 0), vs_linear_new(9, 3, true, &r)};
    vs_module *m = seq(5, layers);
    randomise(m, &r, 0.8f);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 12), &r, -1, 1), *zero = vs_tensor_zeros(VS_SHAPE(1, 12));
    double g = ig_gap(m, x, zero, 101, VS_IG_LEFT, 1, NULL);
    ck_assert_msg(g < 1e-4, "relative gap %g", g);
    vs_scope_end();
    vs_module_free(m);
    /* nothing after the second layer, and a single point */
    vs_module *short_layers[] = {vs_linear_new(6, 8, true, &r), vs_activation_new(VS_MODULE_LEAKY_RELU, 0.2f), vs_linear_new(8, 3, false, &r)};
    m = seq(3, short_layers);
    randomise(m, &r, 1.0f);
    vs_scope_begin();
    x = vs_tensor_rand(VS_SHAPE(1, 6), &r, -1, 1);
    vs_tensor *bl = vs_tensor_rand(VS_SHAPE(1, 6), &r, -1, 1);
    g = ig_gap(m, x, bl, 33, VS_IG_GAUSS_LEGENDRE, 0, NULL);
    ck_assert_msg(g < 1e-4, "short model: relative gap %g", g);
    g = ig_gap(m, x, bl, 1, VS_IG_MIDDLE, 2, NULL);
    ck_assert_msg(g < 1e-4, "one point: relative gap %g", g);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* The sums are bit-identical at 1, 2 and 3 threads. */
START_TEST(test_threads)
{
    vs_rng r;
    vs_rng_seed(&r, 21);
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    vs_module_train(m, false);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 1), *zero = vs_tensor_zeros(VS_SHAPE(1, 1, 28, 28));
    float ref[784], got[784];
    for (int t = 1; t <= 3; t++) {
        vs_set_threads(t);
        ig_gap(m, x, zero, 40, VS_IG_GAUSS_LEGENDRE, 4, t == 1 ? ref : got);
        if (t > 1) ck_assert_msg(memcmp(ref, got, sizeof ref) == 0, "%d threads differ", t);
    }
    vs_set_threads(0);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* Which models the engine takes; bad arguments are errors, not crashes. */
START_TEST(test_scope_and_errors)
{
    vs_rng r;
    vs_rng_seed(&r, 3);
    vs_module *no[] = {vs_conv2d_new(1, 2, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_TANH, 0), vs_conv2d_new(2, 2, 3, 1, 1, true, &r)};
    vs_module *m1 = seq(3, no);
    ck_assert(!vs_sequential_has_path_grads(m1));
    vs_module_explainee e = {m1, NULL};
    ck_assert_ptr_null(vs_model_fn_from_module(&e).path_grads);
    vs_module *yes[] = {vs_conv2d_new(1, 2, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_conv2d_new(2, 2, 3, 1, 1, true, &r)};
    vs_module *m2 = seq(3, yes);
    ck_assert(vs_sequential_has_path_grads(m2));
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 5, 5), &r, 0, 1), *other = vs_tensor_zeros(VS_SHAPE(1, 1, 4, 5));
    const double a[2] = {0.25, 0.75}, w[2] = {0.5, 0.5};
    float g[25];
    vs_error err;
    ck_assert_int_eq(vs_sequential_path_grads(m2, x, other, 2, a, w, NULL, NULL, 8, g, &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_sequential_path_grads(m1, x, x, 2, a, w, NULL, NULL, 8, g, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "does not start") != NULL);
    ck_assert_int_eq(vs_sequential_path_grads(m2, x, x, 0, a, w, NULL, NULL, 8, g, &err), VS_ERR_ARG);
    vs_scope_end();
    vs_module_free(m1);
    vs_module_free(m2);
}
END_TEST

static Suite *path_grads_suite(void)
{
    Suite *s = suite_create("path_grads");
    TCase *tc = vs_tcase(s, "path_grads", 120);
    tcase_add_test(tc, test_ganmex_classifier);
    tcase_add_test(tc, test_conv_stacks);
    tcase_add_test(tc, test_mlp);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_scope_and_errors);
    return s;
}

VS_TEST_MAIN(path_grads_suite)
