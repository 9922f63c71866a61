/* test_forward_boxes.c - vs_sequential_forward_boxes (incremental inference on boxed copies of one
 * input) against vs_module_forward on the materialised copies, over random conv/pool/norm stacks,
 * models whose middle layer needs the materialised fallback, the GANMEX MNIST classifier, thread
 * counts, bad input, and occlusion through vs_explain with and without the incremental path. */
#include "vs_check.h"
#include "versus/arch.h"
#include "explain_call.h"
#include "versus/explain.h"
#include "versus/threads.h"
#include "versus/versus.h"

#include <math.h>

/* ---- helpers -------------------------------------------------------------------------------------- */

/* Every parameter and buffer of m drawn from U(-a, a); running variances from U(0.5, 2). */
static void randomise(vs_module *m, vs_rng *r, float a)
{
    vs_named_tensors l = {0};
    ck_assert_int_eq(vs_module_named_tensors(m, VS_STATE_ALL, &l), VS_OK);
    for (int64_t i = 0; i < l.n; i++) {
        vs_tensor *t = l.items[i].tensor;
        bool var = strstr(l.items[i].name, "running_var") != NULL;
        for (int64_t k = 0; k < t->size; k++)
            t->data[k] = var ? 0.5f + 1.5f * vs_rng_uniformf(r) : a * (2 * vs_rng_uniformf(r) - 1);
    }
    vs_named_tensors_clear(&l);
}

/* The n copies of x with box i taken from fill: [n, C, H, W]. */
static vs_tensor *copies(const vs_tensor *x, const vs_tensor *fill, int64_t n, const int64_t *boxes)
{
    const int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3];
    vs_tensor *t = vs_tensor_new(VS_SHAPE(n, C, H, W));
    for (int64_t i = 0; i < n; i++) {
        const int64_t *b = boxes + 6 * i;
        float *row = t->data + i * x->size;
        memcpy(row, x->data, (size_t)x->size * sizeof(float));
        for (int64_t c = b[0]; c < b[0] + b[3]; c++)
            for (int64_t y = b[1]; y < b[1] + b[4]; y++)
                for (int64_t q = b[2]; q < b[2] + b[5]; q++) row[(c * H + y) * W + q] = fill->data[(c * H + y) * W + q];
    }
    return t;
}

/* Boxes of every kind on a [C, H, W] input: corners, edges, 1x1, the whole image, channel subsets,
 * then random ones up to n (n > 64 spans two chunks). */
static int64_t make_boxes(int64_t C, int64_t H, int64_t W, vs_rng *r, int64_t n, int64_t *b)
{
    const int64_t fixed[][6] = {
        {0, 0, 0, C, 1, 1},         {0, H - 1, W - 1, C, 1, 1}, {0, 0, W - 1, C, 1, 1},   {0, H - 1, 0, C, 1, 1},
        {0, 0, 0, C, H, W},         {0, H / 2, W / 2, C, 1, 1}, {0, 0, 0, C, 2, W},       {0, H - 3, 0, C, 3, 2},
        {C - 1, 0, 0, 1, H, W},     {0, 1, 1, 1, 3, 3},         {C / 2, 2, W - 4, 1, 4, 4}, {0, H - 2, W - 2, C, 2, 2},
    };
    int64_t k = 0;
    const int64_t dims[3] = {C, H, W};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && k < n; i++, k++) {
        int64_t *q = b + 6 * k;
        memcpy(q, fixed[i], sizeof fixed[i]);
        for (int d = 0; d < 3; d++) { /* small inputs: shrink, then move inside */
            q[3 + d] = q[3 + d] > dims[d] ? dims[d] : q[3 + d];
            q[d] = q[d] < 0 ? 0 : q[d] > dims[d] - q[3 + d] ? dims[d] - q[3 + d] : q[d];
        }
    }
    for (; k < n; k++) {
        int64_t *q = b + 6 * k;
        q[3] = 1 + (int64_t)vs_rng_below(r, (uint64_t)C);
        q[4] = 1 + (int64_t)vs_rng_below(r, (uint64_t)(H < 4 ? H : 4));
        q[5] = 1 + (int64_t)vs_rng_below(r, (uint64_t)(W < 4 ? W : 4));
        q[0] = (int64_t)vs_rng_below(r, (uint64_t)(C - q[3] + 1));
        q[1] = (int64_t)vs_rng_below(r, (uint64_t)(H - q[4] + 1));
        q[2] = (int64_t)vs_rng_below(r, (uint64_t)(W - q[5] + 1));
    }
    return k;
}

/* max |a - b| <= 1e-5 (1 + max |b|) and equal shapes. */
static void expect_close(const vs_tensor *a, const vs_tensor *b, const char *what)
{
    ck_assert_msg(vs_same_shape(a, b), "%s: shapes differ", what);
    double diff = 0, mag = 0;
    for (int64_t i = 0; i < a->size; i++) {
        diff = fmax(diff, fabs((double)a->data[i] - b->data[i]));
        mag = fmax(mag, fabs((double)b->data[i]));
    }
    ck_assert_msg(diff <= 1e-5 * (1 + mag), "%s: max |diff| %g for outputs up to %g", what, diff, mag);
}

/* The incremental outputs of m on n boxes of a random [C, H, W] input equal the materialised
 * forward, and are bit-identical at 1, 2 and 3 threads.  The fill is random everywhere, or (patch)
 * equal to x except on a 3x3 patch of channel 0, so that many boxes change nothing. */
static void check_fill(vs_module *m, int64_t C, int64_t H, int64_t W, int64_t n, uint64_t seed, bool patch, const char *what)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, C, H, W), &r, -1, 1), *fill = vs_tensor_rand(VS_SHAPE(1, C, H, W), &r, -2, 2);
    if (patch) {
        memcpy(fill->data, x->data, (size_t)x->size * sizeof(float));
        for (int64_t y = H / 2 - 1; y <= H / 2 + 1; y++)
            for (int64_t q = W / 3; q < W / 3 + 3; q++) fill->data[y * W + q] = 0.5f - fill->data[y * W + q];
    }
    int64_t *boxes = malloc((size_t)n * 6 * sizeof *boxes);
    n = make_boxes(C, H, W, &r, n, boxes);
    vs_tensor *ref = vs_module_forward(m, copies(x, fill, n, boxes), NULL);
    ck_assert_msg(ref != NULL, "%s: %s", what, vs_last_error()->msg);
    vs_tensor *first = NULL;
    for (int t = 1; t <= 3; t++) {
        vs_set_threads(t);
        vs_error err;
        vs_tensor *y = vs_sequential_forward_boxes(m, x, fill, n, boxes, &err);
        ck_assert_msg(y != NULL, "%s: %s", what, err.msg);
        ck_assert(!y->requires_grad);
        expect_close(y, ref, what);
        if (!first)
            first = y;
        else
            ck_assert_msg(memcmp(first->data, y->data, (size_t)y->size * sizeof(float)) == 0, "%s: %d threads differ", what, t);
    }
    vs_set_threads(0);
    free(boxes);
    vs_scope_end();
}

static void check_model(vs_module *m, int64_t C, int64_t H, int64_t W, int64_t n, uint64_t seed, const char *what)
{
    check_fill(m, C, H, W, n, seed, false, what);
    check_fill(m, C, H, W, n, seed, true, what);
}

static void add(vs_module *seq, vs_module *layer) { ck_assert_int_eq(vs_sequential_add(seq, layer), VS_OK); }

/* conv k, stride s, padding p, then the activation act (relu, leaky_relu or tanh). */
static void conv_act(vs_module *seq, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, vs_module_kind act, vs_rng *r)
{
    add(seq, vs_conv2d_new(in, out, k, s, p, true, r));
    add(seq, vs_activation_new(act, 0.1f));
}

/* Evaluation mode and random parameters, running statistics included. */
static vs_module *finish(vs_module *m, vs_rng *r)
{
    randomise(m, r, 0.5f);
    vs_module_train(m, false);
    return m;
}

/* ---- incremental layers ------------------------------------------------------------------------------ */

START_TEST(test_conv_geometries)
{
    vs_rng r;
    vs_rng_seed(&r, 11);
    /* k6 s2 p2 (GANMEX), k3 s1 p1, k5 s1 p2, k1, stride 3 (k1 s3 skips pixels: boxes between them
     * change nothing); odd sizes so that windows clip unevenly */
    const int64_t geo[][3] = {{6, 2, 2}, {3, 1, 1}, {5, 1, 2}, {1, 1, 0}, {3, 3, 0}, {4, 3, 1}, {2, 2, 0}, {1, 3, 0}};
    for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++) {
        vs_module *m = vs_sequential_new();
        conv_act(m, 3, 4, geo[g][0], geo[g][1], geo[g][2], VS_MODULE_RELU, &r);
        conv_act(m, 4, 5, 3, 1, 1, VS_MODULE_TANH, &r);
        add(m, vs_flatten_new());
        finish(m, &r);
        char what[64];
        snprintf(what, sizeof what, "conv k%lld s%lld p%lld", (long long)geo[g][0], (long long)geo[g][1], (long long)geo[g][2]);
        check_model(m, 3, 13, 11, 40, 100 + g, what);
        vs_module_free(m);
    }
}
END_TEST

START_TEST(test_pools_norms_dropout)
{
    vs_rng r;
    vs_rng_seed(&r, 12);
    vs_module *m = vs_sequential_new();
    conv_act(m, 3, 6, 3, 1, 1, VS_MODULE_LEAKY_RELU, &r);
    add(m, vs_batch_norm2d_new(6, 1e-5f, 0.1f));
    add(m, vs_max_pool2d_new(3, 2, 1));
    add(m, vs_dropout_new(0.5f));
    conv_act(m, 6, 5, 5, 1, 2, VS_MODULE_TANH, &r);
    add(m, vs_avg_pool2d_new(3, 2, 1));
    add(m, vs_activation_new(VS_MODULE_ELU, 1.0f));
    add(m, vs_max_pool2d_new(2, 0, 0));
    add(m, vs_flatten_new());
    add(m, vs_linear_new(5 * 2 * 2, 7, true, &r));
    add(m, vs_activation_new(VS_MODULE_RELU, 0));
    add(m, vs_linear_new(7, 3, true, &r));
    check_model(finish(m, &r), 3, 16, 15, 70, 21, "pools, batch norm, dropout");
    vs_module_free(m);

    /* a stack that stays incremental to its end: the output is the last activation */
    m = vs_sequential_new();
    conv_act(m, 3, 4, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_avg_pool2d_new(2, 2, 0));
    add(m, vs_activation_new(VS_MODULE_SIGMOID, 0));
    add(m, vs_max_pool2d_new(3, 1, 1));
    add(m, vs_activation_new(VS_MODULE_SOFTPLUS, 0));
    check_model(finish(m, &r), 3, 10, 12, 30, 22, "incremental to the end");
    vs_module_free(m);
}
END_TEST

START_TEST(test_fallbacks)
{
    vs_rng r;
    vs_rng_seed(&r, 13);
    /* instance norm in the middle: the copies are materialised there */
    vs_module *m = vs_sequential_new();
    conv_act(m, 3, 4, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_instance_norm2d_new(4, 1e-5f));
    conv_act(m, 4, 4, 3, 2, 1, VS_MODULE_RELU, &r);
    add(m, vs_flatten_new());
    add(m, vs_linear_new(4 * 6 * 6, 5, true, &r));
    check_model(finish(m, &r), 3, 12, 12, 25, 31, "instance norm");
    vs_module_free(m);

    /* conv transpose and a residual block */
    m = vs_sequential_new();
    conv_act(m, 3, 4, 4, 2, 1, VS_MODULE_RELU, &r);
    add(m, vs_conv_transpose2d_new(4, 3, 4, 2, 1, 0, true, &r));
    vs_module *block = vs_sequential_new();
    conv_act(block, 3, 3, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_residual_new(block));
    add(m, vs_global_avg_pool_new());
    check_model(finish(m, &r), 3, 8, 10, 25, 32, "conv transpose, residual");
    vs_module_free(m);

    /* nothing incremental: an MLP on images */
    m = vs_sequential_new();
    add(m, vs_flatten_new());
    add(m, vs_linear_new(2 * 5 * 5, 4, true, &r));
    check_model(finish(m, &r), 2, 5, 5, 15, 33, "MLP");
    vs_module_free(m);

    /* training mode is accepted where the mode changes nothing (conv, relu, linear) */
    m = vs_sequential_new();
    conv_act(m, 1, 2, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_flatten_new());
    add(m, vs_linear_new(2 * 6 * 6, 3, true, &r));
    randomise(m, &r, 0.5f);
    check_model(m, 1, 6, 6, 20, 34, "training mode without dropout");
    vs_module_free(m);
}
END_TEST

/* The GANMEX classifier: small boxes take the sparse flatten + linear path, whole-image boxes the
 * materialised one; both match the plain forward. */
START_TEST(test_ganmex_mnist)
{
    vs_rng r;
    vs_rng_seed(&r, 14);
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_module_train(m, false);
    check_model(m, 1, 28, 28, 24, 41, "GANMEX MNIST");
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 1), *fill = vs_tensor_zeros(VS_SHAPE(1, 1, 28, 28));
    const int64_t big[12] = {0, 0, 0, 1, 28, 28, 0, 2, 1, 1, 26, 25};
    vs_tensor *ref = vs_module_forward(m, copies(x, fill, 2, big), NULL);
    vs_tensor *y = vs_sequential_forward_boxes(m, x, fill, 2, big, &err);
    ck_assert_msg(y != NULL, "%s", err.msg);
    expect_close(y, ref, "GANMEX MNIST, large boxes");
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* Zero copies: an empty batch of the output's shape. */
START_TEST(test_no_boxes)
{
    vs_rng r;
    vs_rng_seed(&r, 15);
    vs_module *m = vs_sequential_new();
    conv_act(m, 1, 2, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_flatten_new());
    add(m, vs_linear_new(2 * 4 * 4, 3, true, &r));
    finish(m, &r);
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, 1, 4, 4));
    vs_error err;
    vs_tensor *y = vs_sequential_forward_boxes(m, x, x, 0, NULL, &err);
    ck_assert_msg(y != NULL, "%s", err.msg);
    ck_assert_int_eq(y->ndim, 2);
    ck_assert_int_eq(y->shape[0], 0);
    ck_assert_int_eq(y->shape[1], 3);
    vs_tensor_free(y);
    vs_tensor_free(x);
    vs_module_free(m);
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------------------- */

static void expect_error(vs_module *m, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes, vs_status code,
                         const char *word)
{
    vs_error err;
    vs_error_clear(&err);
    vs_tensor *y = vs_sequential_forward_boxes(m, x, fill, n, boxes, &err);
    ck_assert_ptr_null(y);
    ck_assert_int_eq(err.code, code);
    ck_assert_msg(strstr(err.msg, word) != NULL, "message '%s' lacks '%s'", err.msg, word);
}

START_TEST(test_bad_input)
{
    vs_rng r;
    vs_rng_seed(&r, 16);
    vs_module *m = vs_sequential_new();
    conv_act(m, 2, 3, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_dropout_new(0.3f));
    add(m, vs_flatten_new());
    add(m, vs_linear_new(3 * 5 * 5, 2, true, &r));
    finish(m, &r);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 2, 5, 5), &r, 0, 1), *fill = vs_tensor_zeros(VS_SHAPE(1, 2, 5, 5));
    vs_tensor *x3 = vs_tensor_rand(VS_SHAPE(2, 5, 5), &r, 0, 1), *x2 = vs_tensor_rand(VS_SHAPE(2, 2, 5, 5), &r, 0, 1);
    vs_tensor *xc = vs_tensor_rand(VS_SHAPE(1, 3, 5, 5), &r, 0, 1), *f4 = vs_tensor_zeros(VS_SHAPE(1, 2, 5, 4));
    const int64_t ok[6] = {0, 1, 1, 2, 2, 2};
    expect_error(m, x3, fill, 1, ok, VS_ERR_SHAPE, "[1, C, H, W]");
    expect_error(m, x2, x2, 1, ok, VS_ERR_SHAPE, "[1, C, H, W]");
    expect_error(m, x, f4, 1, ok, VS_ERR_SHAPE, "fill");
    expect_error(m, x, NULL, 1, ok, VS_ERR_SHAPE, "fill");
    expect_error(m, x, fill, -1, ok, VS_ERR_ARG, "boxes");
    expect_error(m, x, fill, 1, NULL, VS_ERR_ARG, "boxes");
    const int64_t outside[][6] = {{0, 4, 0, 1, 2, 1}, {0, 0, 5, 1, 1, 1}, {1, 0, 0, 2, 1, 1}, {0, 0, 0, 1, 0, 1},
                                  {-1, 0, 0, 1, 1, 1}, {0, 0, -1, 1, 1, 2}, {0, 0, 0, 0, 1, 1}};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        int64_t two[12];
        memcpy(two, ok, sizeof ok);
        memcpy(two + 6, outside[i], sizeof outside[i]);
        expect_error(m, x, fill, 2, two, VS_ERR_ARG, "box 1");
    }
    /* a model the input does not fit: the failing layer is named */
    expect_error(m, xc, vs_zeros_like(xc), 1, ok, VS_ERR_SHAPE, "layer 0 (conv2d)");
    /* not a sequential */
    vs_module *lin = vs_linear_new(3, 2, true, &r);
    expect_error(lin, x, fill, 1, ok, VS_ERR_ARG, "sequential");
    vs_module_free(lin);
    /* dropout in training mode: refused */
    vs_module_train(m, true);
    expect_error(m, x, fill, 1, ok, VS_ERR_STATE, "layer 2 holds a dropout in training mode");
    vs_module_free(m);
    /* batch norm inside a residual block in training mode: refused too */
    m = vs_sequential_new();
    vs_module *block = vs_sequential_new();
    add(block, vs_batch_norm2d_new(2, 1e-5f, 0.1f));
    add(m, vs_residual_new(block));
    expect_error(m, x, fill, 1, ok, VS_ERR_STATE, "batch_norm2d");
    vs_module_free(m);
    vs_scope_end();
}
END_TEST

/* ---- occlusion through vs_explain --------------------------------------------------------------------- */

static void check_occlusion(vs_model_fn *fn, vs_tensor *x, const int *window, const int *stride, int64_t contrast)
{
    vs_explain_request o = explain_req(2, contrast);
    o.batch = 16;
    char settings[96];
    snprintf(settings, sizeof settings, "window=%d,%d,%d stride=%d,%d,%d", window[0], window[1], window[2], stride[0], stride[1], stride[2]);
    vs_tensor *a, *b;
    vs_attr_report ra, rb;
    vs_error err;
    ck_assert_msg(explain_with(fn, x, "occlusion", settings, &o, &a, &ra, &err) == VS_OK, "%s", err.msg);
    o.plain = true; /* the accelerator's reference */
    ck_assert_msg(explain_with(fn, x, "occlusion", settings, &o, &b, &rb, &err) == VS_OK, "%s", err.msg);
    expect_close(a, b, "occlusion");
    double mag = 0;
    for (int64_t i = 0; i < b->size; i++) mag = fmax(mag, fabs(b->data[i]));
    ck_assert_msg(mag > 1e-3, "occlusion attributions are all near zero");
    ck_assert_int_eq(ra.evaluations, rb.evaluations);
    ck_assert_float_near(ra.score, rb.score, 1e-6);
    vs_tensor_free(a);
    vs_tensor_free(b);
}

START_TEST(test_occlusion_hook)
{
    vs_rng r;
    vs_rng_seed(&r, 17);
    vs_module *m = vs_sequential_new();
    conv_act(m, 3, 6, 6, 2, 2, VS_MODULE_RELU, &r);
    conv_act(m, 6, 8, 3, 1, 1, VS_MODULE_RELU, &r);
    add(m, vs_max_pool2d_new(2, 0, 0));
    add(m, vs_flatten_new());
    add(m, vs_linear_new(8 * 3 * 3, 4, true, &r));
    finish(m, &r);
    vs_module_explainee e = {m, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    ck_assert_ptr_nonnull(fn.module);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 3, 12, 12), &r, 0, 1);
    const int one[3] = {1, 1, 1}, win[3] = {3, 3, 3}, str[3] = {1, 2, 2}, chan[3] = {1, 3, 3};
    check_occlusion(&fn, x, one, one, -1);
    check_occlusion(&fn, x, win, str, -1);
    check_occlusion(&fn, x, chan, str, 0);
    vs_tensor_free(x);
    vs_module_free(m);
}
END_TEST

static Suite *forward_boxes_suite(void)
{
    Suite *s = suite_create("forward_boxes");
    TCase *tc = vs_tcase(s, "forward_boxes", 60);
    tcase_add_test(tc, test_conv_geometries);
    tcase_add_test(tc, test_pools_norms_dropout);
    tcase_add_test(tc, test_fallbacks);
    tcase_add_test(tc, test_ganmex_mnist);
    tcase_add_test(tc, test_no_boxes);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_occlusion_hook);
    return s;
}

VS_TEST_MAIN(forward_boxes_suite)
