/* test_path_grads.c - integrated gradients through vs_sequential_path_grads (the affine layers
 * along the path, the second weighted layer updated where the piecewise-linear block changes) against
 * the point-by-point gradients: conv and MLP stacks, ReLU, leaky ReLU and max pools in any order,
 * flatten, eval-mode dropout and batch norm, strides and paddings, baselines, quadrature rules, thread
 * counts, random models of each class, models the engine does not take, and bad input. */
#include "vs_check.h"
#include "versus/arch.h"
#include "explain_call.h"
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

/* IG of x against baseline with the engine (IG's accelerator) and with the point-by-point path (a
 * plain request); max |difference| relative to the largest attribution. */
static double ig_gap(vs_module *m, vs_tensor *x, vs_tensor *baseline, int steps, vs_ig_rule rule, int64_t target,
                     float *out_attr)
{
    vs_module_explainee e = {m, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    ck_assert(vs_sequential_has_path_grads(m));
    ck_assert(vs_sequential_path_grads_fits(m, x)); /* the engine runs, not the fallback */
    static const char *const rules[] = {"gauss-legendre", "left", "right", "middle", "trapezoid"}; /* vs_ig_rule's order */
    char settings[64];
    snprintf(settings, sizeof settings, "steps=%d ig-rule=%s", steps, rules[rule]);
    vs_explain_request o = explain_req(target, -1);
    o.batch = 7; /* several chunks with a remainder */
    o.baseline = baseline;
    vs_error err;
    vs_tensor *a = NULL, *b = NULL;
    vs_attr_report ra, rb;
    ck_assert_msg(explain_with(&fn, x, "integrated_gradients", settings, &o, &a, &ra, &err) == VS_OK, "%s", err.msg);
    o.plain = true;
    ck_assert_msg(explain_with(&fn, x, "integrated_gradients", settings, &o, &b, &rb, &err) == VS_OK, "%s", err.msg);
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
    /* Both algorithms: point by point, the second conv runs as Winograd over its stacked phases
     * (conv_phases.c) unless VS_CONV_DIRECT; the engine keeps the direct kernels for its own
     * products either way (through Winograd they moved the zero-baseline gap to 3e-4). */
    vs_conv_set_algorithm(VS_CONV_DIRECT);
    double g1 = ig_gap(m, x, zero, 200, VS_IG_MIDDLE, 3, NULL);
    double g2 = ig_gap(m, x, noise, 50, VS_IG_GAUSS_LEGENDRE, 7, NULL);
    ck_assert_msg(g1 < 1e-4 && g2 < 1e-4, "relative gaps %g %g", g1, g2);
    vs_conv_set_algorithm(VS_CONV_AUTO);
    g1 = ig_gap(m, x, zero, 200, VS_IG_MIDDLE, 3, NULL);
    g2 = ig_gap(m, x, noise, 50, VS_IG_GAUSS_LEGENDRE, 7, NULL);
    ck_assert_msg(g1 < 1e-4 && g2 < 1e-4, "relative gaps through Winograd %g %g", g1, g2);
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

/* Every parameter and buffer random, batch norm variances kept positive. */
static void randomise_all(vs_module *m, vs_rng *r, float a)
{
    randomise(m, r, a);
    vs_named_tensors l = {0};
    ck_assert_int_eq(vs_module_named_tensors(m, VS_STATE_ALL, &l), VS_OK);
    for (int64_t i = 0; i < l.n; i++)
        if (strstr(l.items[i].name, "running_var"))
            for (int64_t k = 0; k < l.items[i].tensor->size; k++) l.items[i].tensor->data[k] = 0.5f + fabsf(l.items[i].tensor->data[k]);
    vs_named_tensors_clear(&l);
}

/* Append a linear layer that takes what m gives for an input of shape `in`, then randomise and
 * switch m to evaluation. */
static void finish(vs_module *m, const int64_t *in, int nd, int64_t classes, vs_rng *r, float a)
{
    vs_scope_begin();
    vs_forward_ctx fc = {0};
    vs_module_train(m, false);
    vs_tensor *x = vs_tensor_zeros(nd, in);
    vs_tensor *y = vs_module_forward(m, x, &fc);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->ndim, 2);
    ck_assert_int_eq(vs_sequential_add(m, vs_linear_new(y->shape[1], classes, true, r)), VS_OK);
    vs_scope_end();
    randomise_all(m, r, a);
    vs_module_train(m, false);
}

/* The three architectures on 1 x 12 x 12 images: the MLP that flattens first, conv -> ReLU
 * -> flatten -> linear -> dropout -> linear, and conv -> ReLU -> max pool -> conv -> ReLU -> max
 * pool -> linear -> linear; random weights, several seeds and baselines. */
START_TEST(test_three_architectures)
{
    const int64_t in[4] = {1, 1, 12, 12};
    for (int seed = 0; seed < 3; seed++) {
        vs_rng r;
        vs_rng_seed(&r, 100 + (uint64_t)seed);
        vs_module *mlp[] = {vs_flatten_new(), vs_linear_new(144, 40, true, &r), vs_activation_new(VS_MODULE_RELU, 0),
                            vs_linear_new(40, 24, true, &r), vs_activation_new(VS_MODULE_RELU, 0)};
        vs_module *convflat[] = {vs_conv2d_new(1, 4, 3, 1, 0, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_flatten_new(),
                                 vs_linear_new(400, 16, true, &r), vs_dropout_new(0.5f)};
        vs_module *convpool[] = {vs_conv2d_new(1, 4, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_RELU, 0),
                                 vs_max_pool2d_new(2, 2, 0),           vs_conv2d_new(4, 6, 3, 1, 1, true, &r),
                                 vs_activation_new(VS_MODULE_RELU, 0), vs_max_pool2d_new(2, 2, 0),
                                 vs_flatten_new(),                     vs_linear_new(54, 12, true, &r),
                                 vs_activation_new(VS_MODULE_RELU, 0)};
        vs_module *ms[3] = {seq(5, mlp), seq(5, convflat), seq(9, convpool)};
        for (int k = 0; k < 3; k++) {
            finish(ms[k], in, 4, 5, &r, 0.5f);
            ck_assert(vs_sequential_has_path_grads(ms[k]));
            vs_scope_begin();
            vs_tensor *x = vs_tensor_rand(4, in, &r, 0, 1), *zero = vs_tensor_zeros(4, in);
            vs_tensor *bl = vs_tensor_rand(4, in, &r, 0, 0.5f);
            double g1 = ig_gap(ms[k], x, zero, 200, VS_IG_MIDDLE, seed, NULL);
            double g2 = ig_gap(ms[k], x, bl, 30, VS_IG_GAUSS_LEGENDRE, 4 - seed, NULL);
            ck_assert_msg(g1 < 1e-4 && g2 < 1e-4, "architecture %d seed %d: relative gaps %g %g", k, seed, g1, g2);
            vs_scope_end();
            vs_module_free(ms[k]);
        }
    }
}
END_TEST

/* Random models of the class: affine runs with batch norm, average pools, two weighted layers or
 * none; blocks with max pools before or after (leaky) ReLUs, paddings and strides, dropout inside;
 * smooth layers in the tail. */
START_TEST(test_random_models)
{
    const int64_t in[4] = {1, 2, 10, 9};
    for (int t = 0; t < 24; t++) {
        vs_rng r;
        vs_rng_seed(&r, 500 + (uint64_t)t);
        vs_module *m = vs_sequential_new();
        int64_t c = 2;
        /* the affine run */
        const int run = (int)(vs_rng_below(&r, 4));
        if (run >= 1) {
            ck_assert_int_eq(vs_sequential_add(m, vs_conv2d_new(c, 3, 3, 1, 1, true, &r)), VS_OK);
            c = 3;
        }
        if (run == 2) ck_assert_int_eq(vs_sequential_add(m, vs_batch_norm2d_new(c, 1e-5f, 0.1f)), VS_OK);
        if (run == 3) {
            ck_assert_int_eq(vs_sequential_add(m, vs_avg_pool2d_new(3, 1, 1)), VS_OK);
            ck_assert_int_eq(vs_sequential_add(m, vs_conv2d_new(c, 4, 2, 1, 0, true, &r)), VS_OK);
            c = 4;
        }
        /* the block */
        const bool leaky = vs_rng_below(&r, 2), pool_first = vs_rng_below(&r, 2), pool = vs_rng_below(&r, 3) != 0;
        vs_module *act = leaky ? vs_activation_new(VS_MODULE_LEAKY_RELU, 0.15f) : vs_activation_new(VS_MODULE_RELU, 0);
        vs_module *mp = pool ? vs_max_pool2d_new(3, 2, (int64_t)(vs_rng_below(&r, 2))) : NULL;
        if (mp && pool_first) ck_assert_int_eq(vs_sequential_add(m, mp), VS_OK);
        ck_assert_int_eq(vs_sequential_add(m, act), VS_OK);
        if (t % 5 == 0) ck_assert_int_eq(vs_sequential_add(m, vs_dropout_new(0.3f)), VS_OK);
        if (mp && !pool_first) ck_assert_int_eq(vs_sequential_add(m, mp), VS_OK);
        /* the second weighted layer, then a tail */
        if (t % 2) {
            ck_assert_int_eq(vs_sequential_add(m, vs_conv2d_new(c, 5, 3, 1 + t % 3 / 2, 1, true, &r)), VS_OK);
            ck_assert_int_eq(vs_sequential_add(m, vs_activation_new(t % 4 == 1 ? VS_MODULE_TANH : VS_MODULE_RELU, 0)), VS_OK);
            ck_assert_int_eq(vs_sequential_add(m, vs_flatten_new()), VS_OK);
        } else {
            ck_assert_int_eq(vs_sequential_add(m, vs_flatten_new()), VS_OK);
            vs_scope_begin();
            vs_module_train(m, false);
            vs_forward_ctx fc = {0};
            vs_tensor *y = vs_module_forward(m, vs_tensor_zeros(4, in), &fc);
            ck_assert_ptr_nonnull(y);
            ck_assert_int_eq(vs_sequential_add(m, vs_linear_new(y->shape[1], 7, true, &r)), VS_OK);
            vs_scope_end();
            ck_assert_int_eq(vs_sequential_add(m, vs_activation_new(t % 4 == 2 ? VS_MODULE_SIGMOID : VS_MODULE_LEAKY_RELU, 0.1f)),
                             VS_OK);
        }
        finish(m, in, 4, 3, &r, 0.6f);
        ck_assert_msg(vs_sequential_has_path_grads(m), "model %d", t);
        vs_scope_begin();
        vs_tensor *x = vs_tensor_rand(4, in, &r, -1, 1), *bl = vs_tensor_rand(4, in, &r, -1, 1);
        const double g = ig_gap(m, x, bl, 48, t % 3 ? VS_IG_MIDDLE : VS_IG_TRAPEZOID, t % 3, NULL);
        ck_assert_msg(g < 1e-4, "model %d (run %d leaky %d pool %d first %d): relative gap %g", t, run, leaky, pool, pool_first, g);
        vs_scope_end();
        vs_module_free(m);
    }
}
END_TEST

/* Tabular MLPs: two linear layers before the ReLU, a ReLU first, batch norm 1d. */
START_TEST(test_mlp_variants)
{
    vs_rng r;
    vs_rng_seed(&r, 77);
    const int64_t in[2] = {1, 10};
    vs_module *two[] = {vs_linear_new(10, 12, true, &r), vs_linear_new(12, 14, true, &r), vs_activation_new(VS_MODULE_RELU, 0),
                        vs_linear_new(14, 6, true, &r), vs_activation_new(VS_MODULE_SOFTPLUS, 0)};
    vs_module *relu_first[] = {vs_activation_new(VS_MODULE_RELU, 0), vs_linear_new(10, 9, true, &r)};
    vs_module *bn[] = {vs_linear_new(10, 11, true, &r), vs_batch_norm1d_new(11, 1e-5f, 0.1f),
                       vs_activation_new(VS_MODULE_LEAKY_RELU, 0.05f), vs_dropout_new(0.2f), vs_linear_new(11, 8, true, &r)};
    vs_module *ms[3] = {seq(5, two), seq(2, relu_first), seq(5, bn)};
    for (int k = 0; k < 3; k++) {
        finish(ms[k], in, 2, 4, &r, 0.7f);
        ck_assert(vs_sequential_has_path_grads(ms[k]));
        vs_scope_begin();
        vs_tensor *x = vs_tensor_rand(2, in, &r, -1, 1), *bl = vs_tensor_rand(2, in, &r, -1, 1);
        const double g = ig_gap(ms[k], x, bl, 64, VS_IG_MIDDLE, 1, NULL);
        ck_assert_msg(g < 1e-4, "mlp %d: relative gap %g", k, g);
        vs_scope_end();
        vs_module_free(ms[k]);
    }
}
END_TEST

/* The sums are bit-identical at 1, 2 and 3 threads: the GANMEX classifier, and a conv - ReLU - max
 * pool - conv - ... model (events of the pool's selection). */
START_TEST(test_threads)
{
    vs_rng r;
    vs_rng_seed(&r, 21);
    vs_error err;
    vs_module *pool[] = {vs_conv2d_new(1, 8, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_max_pool2d_new(2, 2, 0),
                         vs_conv2d_new(8, 16, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_flatten_new()};
    vs_module *ms[2] = {vs_arch_ganmex_mnist(1, 28, 10, &r, &err), seq(6, pool)};
    const int64_t in[4] = {1, 1, 28, 28};
    finish(ms[1], in, 4, 10, &r, 0.3f);
    for (int k = 0; k < 2; k++) {
        vs_module_train(ms[k], false);
        vs_scope_begin();
        vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 1), *zero = vs_tensor_zeros(VS_SHAPE(1, 1, 28, 28));
        float ref[784], got[784];
        for (int t = 1; t <= 3; t++) {
            vs_set_threads(t);
            ig_gap(ms[k], x, zero, 40, VS_IG_GAUSS_LEGENDRE, 4, t == 1 ? ref : got);
            if (t > 1) ck_assert_msg(memcmp(ref, got, sizeof ref) == 0, "model %d: %d threads differ", k, t);
        }
        vs_set_threads(0);
        vs_scope_end();
        vs_module_free(ms[k]);
    }
}
END_TEST

/* S = the sum of every output (a score for any output shape). */
static vs_tensor *sum_of_outputs(void *sctx, vs_tensor *out)
{
    (void)sctx;
    return vs_sum(vs_reshape(out, 2, (int64_t[]){out->shape[0], -1}), VS_AXIS(1), false);
}

/* Which models the engine takes; bad arguments are errors, not crashes. */
START_TEST(test_scope_and_errors)
{
    vs_rng r;
    vs_rng_seed(&r, 3);
    vs_module *no[] = {vs_conv2d_new(1, 2, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_TANH, 0), vs_conv2d_new(2, 2, 3, 1, 1, true, &r)};
    vs_module *m1 = seq(3, no);
    ck_assert(!vs_sequential_has_path_grads(m1));
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
    /* inputs the model does not take that way, and layers outside the class */
    ck_assert(!vs_sequential_path_grads_fits(m2, vs_tensor_zeros(VS_SHAPE(2, 1, 5, 5))));
    ck_assert(!vs_sequential_path_grads_fits(m2, vs_tensor_zeros(VS_SHAPE(1, 3, 5, 5))));
    ck_assert(vs_sequential_path_grads_fits(m2, x));
    vs_module *lin[] = {vs_linear_new(5, 4, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_linear_new(4, 2, true, &r)};
    vs_module *m3 = seq(3, lin);
    ck_assert(vs_sequential_has_path_grads(m3));
    ck_assert(!vs_sequential_path_grads_fits(m3, x)); /* rows of an image: the second layer would not see a vector */
    ck_assert(vs_sequential_path_grads_fits(m3, vs_tensor_zeros(VS_SHAPE(1, 5))));
    vs_module_train(m3, true);
    ck_assert(vs_sequential_has_path_grads(m3));
    vs_module *drop[] = {vs_linear_new(5, 4, true, &r), vs_activation_new(VS_MODULE_RELU, 0), vs_dropout_new(0.5f), vs_linear_new(4, 2, true, &r)};
    vs_module *m4 = seq(4, drop);
    ck_assert(vs_sequential_has_path_grads(m4));
    vs_module_train(m4, true); /* dropout draws masks in training: not piecewise linear along the path */
    ck_assert(!vs_sequential_has_path_grads(m4));
    vs_module *smooth[] = {vs_linear_new(5, 4, true, &r), vs_activation_new(VS_MODULE_ELU, 1), vs_linear_new(4, 2, true, &r)};
    vs_module *m5 = seq(3, smooth);
    ck_assert(!vs_sequential_has_path_grads(m5));
    ck_assert_int_eq(vs_sequential_path_grads(m2, x, x, 0, a, w, NULL, NULL, 8, g, &err), VS_ERR_ARG);
    /* the accelerator: the engine where the model fits x, else the point-by-point path, no error */
    vs_module_train(m3, false);
    vs_module_explainee e3 = {m3, NULL};
    vs_model_fn f3 = vs_model_fn_from_module(&e3);
    vs_tensor *zero = vs_tensor_zeros(VS_SHAPE(1, 1, 5, 5));
    ck_assert_int_eq(vs_sequential_path_grads(m2, x, zero, 2, a, w, sum_of_outputs, NULL, 8, g, &err), VS_OK);
    /* VS_ERR_ARG (m3 does not take the image): vs_job_path_grads falls back to the plain path */
    ck_assert_int_eq(vs_sequential_path_grads(m3, x, zero, 2, a, w, sum_of_outputs, NULL, 8, g, &err), VS_ERR_ARG);
    vs_explain_request rq = explain_req(0, -1);
    vs_tensor *x5 = vs_tensor_rand(VS_SHAPE(1, 5), &r, 0, 1), *fast = NULL, *plain = NULL;
    ck_assert_msg(explain_with(&f3, x5, "integrated_gradients", "steps=4", &rq, &fast, NULL, &err) == VS_OK, "%s", err.msg);
    rq.plain = true;
    ck_assert_msg(explain_with(&f3, x5, "integrated_gradients", "steps=4", &rq, &plain, NULL, &err) == VS_OK, "%s", err.msg);
    for (int i = 0; i < 5; i++) ck_assert_float_near(fast->data[i], plain->data[i], 1e-5 * (1 + fabs(plain->data[i])));
    vs_scope_end();
    vs_module_free(m1);
    vs_module_free(m2);
    vs_module_free(m3);
    vs_module_free(m4);
    vs_module_free(m5);
}
END_TEST

static Suite *path_grads_suite(void)
{
    Suite *s = suite_create("path_grads");
    TCase *tc = vs_tcase(s, "path_grads", 120);
    tcase_add_test(tc, test_ganmex_classifier);
    tcase_add_test(tc, test_conv_stacks);
    tcase_add_test(tc, test_mlp);
    tcase_add_test(tc, test_three_architectures);
    tcase_add_test(tc, test_random_models);
    tcase_add_test(tc, test_mlp_variants);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_scope_and_errors);
    return s;
}

VS_TEST_MAIN(path_grads_suite)
