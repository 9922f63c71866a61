/* test_norm.c - the fused batch, instance and layer normalisation (autograd/ops_norm.c): values and
 * first and second derivatives against the same maths composed from primitive ops, finite-difference
 * checks up to third order, running statistics, thread-count independence and shape errors. */
#include "gradcheck.h"
#include "versus/threads.h"

#include <math.h>
#include <string.h>

static vs_rng R;

static vs_tensor *rnd(int ndim, const int64_t *shape, float lo, float hi) { return vs_tensor_rand(ndim, shape, &R, lo, hi); }

static void free_all(int n, vs_tensor **x)
{
    for (int i = 0; i < n; i++) vs_tensor_free(x[i]);
}

static void expect_error(const char *needle)
{
    const char *msg = vs_last_error()->msg;
    ck_assert_msg(strstr(msg, needle) != NULL, "error \"%s\" does not contain \"%s\"", msg, needle);
}

/* ---- the normalisations under test and their composed references ----------------------------------- */

typedef enum kind { BATCH, INSTANCE, LAYER1, LAYER2 } kind;

static vs_tensor *fused(kind k, vs_tensor *x, vs_tensor *gamma, vs_tensor *beta)
{
    switch (k) {
    case BATCH: return vs_batch_norm(x, gamma, beta, NULL, NULL, true, 0.1f, 1e-5f);
    case INSTANCE: return vs_instance_norm(x, gamma, beta, 1e-5f);
    case LAYER1: return vs_layer_norm(x, 1, gamma, beta, 1e-5f);
    default: return vs_layer_norm(x, 2, gamma, beta, 1e-5f);
    }
}

/* The pre-fusion implementation: mean, sub, mul, mean, add_scalar, sqrt, div, then the affine. */
static vs_tensor *reference(kind k, vs_tensor *x, vs_tensor *gamma, vs_tensor *beta)
{
    uint32_t axes = 0;
    int64_t ps[VS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) ps[i] = 1;
    if (k == BATCH) {
        axes = VS_AXIS(0);
        for (int i = 2; i < x->ndim; i++) axes |= VS_AXIS(i);
        ps[1] = x->shape[1];
    } else if (k == INSTANCE) {
        axes = VS_AXIS(2) | VS_AXIS(3);
        ps[1] = x->shape[1];
    } else {
        int nd = k == LAYER1 ? 1 : 2;
        for (int i = x->ndim - nd; i < x->ndim; i++) {
            axes |= VS_AXIS(i);
            ps[i] = x->shape[i];
        }
    }
    vs_tensor *xc = vs_sub(x, vs_mean(x, axes, true));
    vs_tensor *var = vs_mean(vs_mul(xc, xc), axes, true);
    vs_tensor *y = vs_div(xc, vs_sqrt(vs_add_scalar(var, 1e-5f)));
    if (gamma) y = vs_mul(y, vs_reshape(gamma, x->ndim, ps));
    if (beta) y = vs_add(y, vs_reshape(beta, x->ndim, ps));
    return y;
}

static void expect_near(const char *what, const vs_tensor *a, const vs_tensor *b, double rtol)
{
    ck_assert_msg(a && b, "%s: missing result (%s)", what, vs_last_error()->msg);
    ck_assert_int_eq(a->size, b->size);
    double scale = 0;
    for (int64_t i = 0; i < b->size; i++) scale = fmax(scale, fabs(b->data[i]));
    for (int64_t i = 0; i < a->size; i++)
        ck_assert_msg(fabs(a->data[i] - b->data[i]) <= rtol * (scale + 1e-3), "%s[%lld]: fused %.8g, reference %.8g", what,
                      (long long)i, (double)a->data[i], (double)b->data[i]);
}

typedef vs_tensor *(*norm_fn)(kind k, vs_tensor *x, vs_tensor *gamma, vs_tensor *beta);

/* y, the gradients of sum(w y) for x, gamma, beta (create_graph or not), and the Hessian-vector
 * product along v; everything returned in out[0..6], kept in the caller's scope. */
static void evaluate(norm_fn f, kind k, vs_tensor **in, int n_in, vs_tensor *w, vs_tensor **v, bool create_graph, vs_tensor **out)
{
    vs_tensor *y = f(k, in[0], n_in > 1 ? in[1] : NULL, n_in > 2 ? in[2] : NULL);
    ck_assert_msg(y != NULL, "%s", vs_last_error()->msg);
    out[0] = vs_detach(y);
    vs_tensor *g[3] = {0};
    ck_assert_int_eq(vs_grad(1, &y, &w, n_in, in, g, create_graph), VS_OK);
    for (int i = 0; i < n_in; i++) out[1 + i] = vs_detach(g[i]);
    if (!create_graph) return;
    vs_tensor *s = NULL;
    for (int i = 0; i < n_in; i++) {
        vs_tensor *t = vs_sum(vs_mul(g[i], v[i]), VS_ALL_AXES, false);
        s = s ? vs_add(s, t) : t;
    }
    vs_tensor *hv[3] = {0};
    ck_assert_int_eq(vs_grad(1, &s, NULL, n_in, in, hv, false), VS_OK);
    for (int i = 0; i < n_in; i++) out[4 + i] = hv[i];
}

/* Fused against composed on a case big enough for several chunks, inputs off-centre (mean 2). */
static void compare_case(kind k, int ndim, const int64_t *shape, int n_params)
{
    int64_t pshape[2];
    int pnd = 1;
    if (k == BATCH || k == INSTANCE) {
        pshape[0] = shape[1];
    } else if (k == LAYER1) {
        pshape[0] = shape[ndim - 1];
    } else {
        pnd = 2;
        pshape[0] = shape[ndim - 2];
        pshape[1] = shape[ndim - 1];
    }
    vs_tensor *in[3] = {rnd(ndim, shape, 1, 3), n_params > 0 ? rnd(pnd, pshape, 0.5f, 1.5f) : NULL,
                        n_params > 1 ? rnd(pnd, pshape, -1, 1) : NULL};
    int n_in = 1 + n_params;
    vs_tensor *v[3];
    for (int i = 0; i < n_in; i++) {
        vs_set_requires_grad(in[i], true);
        v[i] = vs_tensor_rand(in[i]->ndim, in[i]->shape, &R, -1, 1);
    }
    vs_tensor *w = rnd(ndim, shape, -1, 1);
    vs_scope_begin();
    vs_tensor *a[7] = {0}, *b[7] = {0}, *c[7] = {0};
    evaluate(fused, k, in, n_in, w, v, false, a);
    evaluate(fused, k, in, n_in, w, v, true, b);
    evaluate(reference, k, in, n_in, w, v, true, c);
    static const char *names[7] = {"y", "dx", "dgamma", "dbeta", "Hv x", "Hv gamma", "Hv beta"};
    for (int i = 0; i < 1 + n_in; i++) {
        expect_near(names[i], a[i], c[i], 2e-5);
        expect_near(names[i], b[i], c[i], 2e-5);
    }
    for (int i = 4; i < 4 + n_in; i++) expect_near(names[i], b[i], c[i], 1e-4);
    if (n_params > 0) {
        /* only the parameters wanted: the kernel skips dx */
        vs_tensor *y = fused(k, in[0], in[1], in[2]), *gp[2];
        ck_assert_int_eq(vs_grad(1, &y, &w, n_params, in + 1, gp, false), VS_OK);
        for (int i = 0; i < n_params; i++) expect_near(names[2 + i], gp[i], c[2 + i], 2e-5);
    }
    vs_scope_end();
    for (int i = 0; i < n_in; i++) vs_tensor_free(v[i]);
    vs_tensor_free(w);
    free_all(n_in, in);
}

START_TEST(test_against_composed)
{
    compare_case(BATCH, VS_SHAPE(6, 4, 5, 7), 2); /* planes of 35 < 64: the short-segment kernels */
    compare_case(BATCH, VS_SHAPE(3, 4, 8, 9), 2); /* planes of 72: one call per plane */
    compare_case(BATCH, VS_SHAPE(9, 5), 0);
    compare_case(BATCH, VS_SHAPE(3, 2, 11), 1);
    compare_case(INSTANCE, VS_SHAPE(3, 4, 6, 5), 2);
    compare_case(INSTANCE, VS_SHAPE(2, 3, 4, 4), 0);
    compare_case(LAYER1, VS_SHAPE(7, 13), 2);
    compare_case(LAYER2, VS_SHAPE(2, 3, 4, 5), 2);
    compare_case(LAYER2, VS_SHAPE(5, 3, 4), 1);
}
END_TEST

/* ---- finite differences -------------------------------------------------------------------------- */

#define CHECK(fname, n, expr, ...)                                       \
    static vs_tensor *fn_##fname(vs_tensor **x, void *c)                  \
    {                                                                     \
        (void)c;                                                          \
        return expr;                                                      \
    }                                                                     \
    START_TEST(test_##fname)                                              \
    {                                                                     \
        vs_tensor *x[n] = {__VA_ARGS__};                                  \
        gradcheck(#fname, fn_##fname, NULL, n, x);                        \
        free_all(n, x);                                                   \
    }                                                                     \
    END_TEST

CHECK(bn_affine, 3, vs_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(3, 2, 2, 3), -1, 1),
      rnd(VS_SHAPE(2), 0.5f, 1.5f), rnd(VS_SHAPE(2), -1, 1))
CHECK(bn_plain, 1, vs_batch_norm(x[0], NULL, NULL, NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(4, 3, 2, 2), -1, 1))
CHECK(bn1d_plain, 1, vs_batch_norm(x[0], NULL, NULL, NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(5, 3), -1, 1))
CHECK(bn_gamma_only, 2, vs_batch_norm(x[0], x[1], NULL, NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(4, 2, 3), -1, 1),
      rnd(VS_SHAPE(2), 0.5f, 1.5f))
/* evaluation: running statistics are constants, the op is one affine map per channel */
static vs_tensor *fn_bn_eval_impl(vs_tensor **x, void *c)
{
    (void)c;
    vs_tensor *rm = vs_tensor_from(VS_SHAPE(3), (float[]){0.5f, -1, 2}), *rv = vs_tensor_from(VS_SHAPE(3), (float[]){0.5f, 2, 1});
    vs_tensor *y = vs_batch_norm(x[0], x[1], x[2], rm, rv, false, 0.1f, 1e-5f);
    return vs_mul(y, y);
}
START_TEST(test_bn_eval)
{
    vs_tensor *x[3] = {rnd(VS_SHAPE(2, 3, 2, 2), -1, 1), rnd(VS_SHAPE(3), 0.5f, 1.5f), rnd(VS_SHAPE(3), -1, 1)};
    gradcheck("bn_eval", fn_bn_eval_impl, NULL, 3, x);
    free_all(3, x);
}
END_TEST
CHECK(in_affine, 3, vs_instance_norm(x[0], x[1], x[2], 1e-5f), rnd(VS_SHAPE(2, 2, 3, 3), -1, 1), rnd(VS_SHAPE(2), 0.5f, 1.5f),
      rnd(VS_SHAPE(2), -1, 1))
CHECK(in_plain, 1, vs_instance_norm(x[0], NULL, NULL, 1e-5f), rnd(VS_SHAPE(2, 3, 2, 3), -1, 1))
CHECK(ln_affine2, 3, vs_layer_norm(x[0], 2, x[1], x[2], 1e-5f), rnd(VS_SHAPE(3, 2, 3), -1, 1), rnd(VS_SHAPE(2, 3), 0.5f, 1.5f),
      rnd(VS_SHAPE(2, 3), -1, 1))
CHECK(ln_plain, 1, vs_layer_norm(x[0], 1, NULL, NULL, 1e-5f), rnd(VS_SHAPE(4, 5), -1, 1))
CHECK(ln_beta_only, 2, vs_layer_norm(x[0], 1, NULL, x[1], 1e-5f), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(4), -1, 1))

/* Third order: the gradient of sum(w * norm(x, gamma, beta)) for x, as a function of x and gamma.
 * Its gradcheck differentiates the norm's backward rule once (first order) and twice (second),
 * i.e. the rule of the vjp op and that rule's own derivatives. */
typedef struct grad_ctx {
    kind k;
    vs_tensor *w, *beta;
} grad_ctx;

static vs_tensor *fn_grad(vs_tensor **x, void *c)
{
    const grad_ctx *g = c;
    bool record = vs_grad_enabled();
    vs_set_grad_enabled(true);
    vs_tensor *y = fused(g->k, x[0], x[1], g->beta), *d[2] = {0};
    vs_status st = vs_grad(1, &y, (vs_tensor *[]){g->w}, 2, x, d, record);
    vs_set_grad_enabled(record);
    if (st != VS_OK) return NULL;
    return vs_add(vs_mul(d[0], d[0]), vs_sum(vs_mul(d[1], d[1]), VS_ALL_AXES, false));
}

static void third_order(const char *name, kind k, int ndim, const int64_t *shape, int pnd, const int64_t *pshape)
{
    vs_tensor *x[2] = {rnd(ndim, shape, -1, 1), rnd(pnd, pshape, 0.5f, 1.5f)};
    grad_ctx c = {k, rnd(ndim, shape, -1, 1), rnd(pnd, pshape, -1, 1)};
    gradcheck(name, fn_grad, &c, 2, x);
    vs_tensor_free(c.w);
    vs_tensor_free(c.beta);
    free_all(2, x);
}

START_TEST(test_third_order)
{
    third_order("bn grad", BATCH, VS_SHAPE(3, 2, 4), VS_SHAPE(2));
    third_order("in grad", INSTANCE, VS_SHAPE(2, 2, 2, 3), VS_SHAPE(2));
    third_order("ln grad", LAYER1, VS_SHAPE(3, 5), VS_SHAPE(5));
}
END_TEST

/* ---- statistics, threads, errors ------------------------------------------------------------------- */

START_TEST(test_running_statistics)
{
    /* x [6, 3, 5]: running = (1 - m) running + m batch with the unbiased variance, m = 0.3 */
    vs_tensor *x = rnd(VS_SHAPE(6, 3, 5), -2, 4);
    vs_tensor *rm = vs_tensor_from(VS_SHAPE(3), (float[]){0.5f, -1, 0}), *rv = vs_tensor_from(VS_SHAPE(3), (float[]){1, 2, 0.5f});
    double want_m[3], want_v[3];
    for (int c = 0; c < 3; c++) {
        double s = 0, q = 0;
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 5; k++) s += x->data[(i * 3 + c) * 5 + k];
        double mean = s / 30;
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 5; k++) q += pow(x->data[(i * 3 + c) * 5 + k] - mean, 2);
        want_m[c] = 0.7 * rm->data[c] + 0.3 * mean;
        want_v[c] = 0.7 * rv->data[c] + 0.3 * q / 29;
    }
    vs_scope_begin();
    ck_assert_ptr_nonnull(vs_batch_norm(x, NULL, NULL, rm, rv, true, 0.3f, 1e-5f));
    vs_scope_end();
    for (int c = 0; c < 3; c++) {
        ck_assert_float_near(rm->data[c], want_m[c], 1e-5);
        ck_assert_float_near(rv->data[c], want_v[c], 1e-5);
    }
    /* evaluation reads them: y = (x - rm) / sqrt(rv + eps) gamma + beta */
    vs_tensor *gamma = vs_tensor_from(VS_SHAPE(3), (float[]){2, 0.5f, -1}), *beta = vs_tensor_from(VS_SHAPE(3), (float[]){0, 1, 3});
    vs_scope_begin();
    vs_tensor *y = vs_batch_norm(x, gamma, beta, rm, rv, false, 0.3f, 1e-5f);
    for (int64_t i = 0; i < x->size; i++) {
        int c = (int)(i / 5 % 3);
        double want = (x->data[i] - rm->data[c]) / sqrt(rv->data[c] + 1e-5) * gamma->data[c] + beta->data[c];
        ck_assert_float_near(y->data[i], want, 1e-5);
    }
    vs_scope_end();
    free_all(5, (vs_tensor *[]){x, rm, rv, gamma, beta});
}
END_TEST

START_TEST(test_large_mean)
{
    /* values 1000 +- 1: the two-pass variance keeps the output at mean 0, variance 1 */
    vs_tensor *x = rnd(VS_SHAPE(1, 2, 32, 32), 999, 1001);
    vs_scope_begin();
    vs_tensor *y = vs_instance_norm(x, NULL, NULL, 0);
    for (int c = 0; c < 2; c++) {
        double s = 0, q = 0;
        for (int k = 0; k < 1024; k++) s += y->data[c * 1024 + k];
        for (int k = 0; k < 1024; k++) q += pow(y->data[c * 1024 + k] - s / 1024, 2);
        ck_assert_float_near(s / 1024, 0, 1e-4);
        ck_assert_float_near(q / 1024, 1, 1e-4);
    }
    vs_scope_end();
    vs_tensor_free(x);
}
END_TEST

/* Forward, first-order (fused kernel), create_graph gradients and a Hessian-vector product for one
 * kind at `threads` threads, flattened into one array. */
static float *run_at(int threads, kind k, vs_tensor **in, vs_tensor *w, vs_tensor **v, int64_t *n_out)
{
    vs_set_threads(threads);
    vs_scope_begin();
    vs_tensor *a[7] = {0}, *b[7] = {0};
    evaluate(fused, k, in, 3, w, v, false, a);
    evaluate(fused, k, in, 3, w, v, true, b);
    vs_tensor *all[11] = {a[0], a[1], a[2], a[3], b[1], b[2], b[3], b[4], b[5], b[6], NULL};
    if (k == BATCH) {
        vs_tensor *rm = vs_zeros_like(in[1]), *rv = vs_ones_like(in[1]);
        all[10] = vs_batch_norm(in[0], in[1], in[2], rm, rv, false, 0.1f, 1e-5f);
    }
    int64_t n = 0;
    for (int i = 0; i < 11; i++) n += all[i] ? all[i]->size : 0;
    float *flat = malloc((size_t)n * sizeof *flat), *p = flat;
    for (int i = 0; i < 11; i++)
        if (all[i]) {
            memcpy(p, all[i]->data, (size_t)all[i]->size * sizeof *p);
            p += all[i]->size;
        }
    vs_scope_end();
    *n_out = n;
    return flat;
}

static void threads_case(kind k, int ndim, const int64_t *shape, int pnd, const int64_t *pshape)
{
    vs_tensor *in[3] = {rnd(ndim, shape, -1, 3), rnd(pnd, pshape, 0.5f, 1.5f), rnd(pnd, pshape, -1, 1)}, *v[3];
    for (int i = 0; i < 3; i++) {
        vs_set_requires_grad(in[i], true);
        v[i] = vs_tensor_rand(in[i]->ndim, in[i]->shape, &R, -1, 1);
    }
    vs_tensor *w = rnd(ndim, shape, -1, 1);
    int64_t n1, n;
    float *one = run_at(1, k, in, w, v, &n1);
    for (int t = 2; t <= 3; t++) {
        float *other = run_at(t, k, in, w, v, &n);
        ck_assert_int_eq(n, n1);
        ck_assert_msg(memcmp(one, other, (size_t)n * sizeof *one) == 0, "kind %d: %d threads differ from 1", (int)k, t);
        free(other);
    }
    free(one);
    vs_set_threads(0);
    for (int i = 0; i < 3; i++) vs_tensor_free(v[i]);
    vs_tensor_free(w);
    free_all(3, in);
}

START_TEST(test_thread_count_independent)
{
    /* sizes that split into several chunks of groups (and of layer norm's columns) */
    threads_case(BATCH, VS_SHAPE(8, 6, 48, 48), VS_SHAPE(6));
    threads_case(BATCH, VS_SHAPE(4096, 64), VS_SHAPE(64));
    threads_case(INSTANCE, VS_SHAPE(4, 32, 32, 32), VS_SHAPE(32));
    threads_case(LAYER1, VS_SHAPE(600, 256), VS_SHAPE(256));
}
END_TEST

START_TEST(test_shape_errors)
{
    vs_scope_begin();
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(2, 3, 2, 2)), *p3 = vs_tensor_zeros(VS_SHAPE(3)), *p4 = vs_tensor_zeros(VS_SHAPE(4));
    ck_assert_ptr_null(vs_batch_norm(vs_tensor_zeros(VS_SHAPE(5)), NULL, NULL, NULL, NULL, true, 0.1f, 1e-5f));
    expect_error("batch_norm: input must be [n,c,...], got 1 dims");
    ck_assert_ptr_null(vs_batch_norm(x, p4, NULL, NULL, NULL, true, 0.1f, 1e-5f));
    expect_error("weight must be [3]");
    ck_assert_ptr_null(vs_batch_norm(x, p3, p4, NULL, NULL, true, 0.1f, 1e-5f));
    expect_error("bias must be [3]");
    ck_assert_ptr_null(vs_batch_norm(x, NULL, NULL, p4, p3, true, 0.1f, 1e-5f));
    expect_error("running_mean must be [3]");
    ck_assert_ptr_null(vs_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1f, 1e-5f));
    expect_error("evaluation needs running statistics");
    ck_assert_ptr_null(vs_batch_norm(vs_tensor_zeros(VS_SHAPE(1, 3)), NULL, NULL, NULL, NULL, true, 0.1f, 1e-5f));
    expect_error("more than one value per channel");
    ck_assert_ptr_null(vs_instance_norm(vs_tensor_zeros(VS_SHAPE(2, 3, 4)), NULL, NULL, 1e-5f));
    expect_error("instance_norm: input must be [n,c,h,w], got 3 dims");
    ck_assert_ptr_null(vs_instance_norm(x, NULL, p4, 1e-5f));
    expect_error("instance_norm: bias must be [3]");
    ck_assert_ptr_null(vs_layer_norm(x, 5, NULL, NULL, 1e-5f));
    expect_error("layer_norm: cannot normalise 5 of 4 dims");
    ck_assert_ptr_null(vs_layer_norm(x, 2, p3, NULL, 1e-5f));
    expect_error("layer_norm: weight and bias must have 4 elements");
    /* a constant group normalises to zeros (then beta), not NaN */
    vs_tensor *y = vs_instance_norm(vs_tensor_full(VS_SHAPE(1, 1, 2, 2), 7), NULL, vs_tensor_full(VS_SHAPE(1), 0.5f), 1e-5f);
    for (int i = 0; i < 4; i++) ck_assert_float_eq(y->data[i], 0.5f);
    /* empty planes and an empty batch: empty outputs, and their gradients */
    vs_tensor *e = vs_tensor_zeros(VS_SHAPE(2, 3, 0, 4)), *ge;
    vs_set_requires_grad(e, true);
    y = vs_instance_norm(e, p3, NULL, 1e-5f);
    ck_assert_int_eq(y->size, 0);
    ck_assert_int_eq(vs_grad(1, &y, (vs_tensor *[]){vs_zeros_like(y)}, 1, &e, &ge, false), VS_OK);
    ck_assert_int_eq(ge->size, 0);
    y = vs_layer_norm(vs_tensor_zeros(VS_SHAPE(0, 4)), 1, NULL, NULL, 1e-5f);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->size, 0);
    vs_scope_end();
}
END_TEST

static Suite *norm_suite(void)
{
    vs_rng_seed(&R, 2024);
    Suite *s = suite_create("norm");
    TCase *tc = vs_tcase(s, "fused", 120);
    tcase_add_test(tc, test_against_composed);
    tcase_add_test(tc, test_running_statistics);
    tcase_add_test(tc, test_large_mean);
    tcase_add_test(tc, test_thread_count_independent);
    tcase_add_test(tc, test_shape_errors);
    tc = vs_tcase(s, "gradcheck", 120);
    tcase_add_test(tc, test_bn_affine);
    tcase_add_test(tc, test_bn_plain);
    tcase_add_test(tc, test_bn1d_plain);
    tcase_add_test(tc, test_bn_gamma_only);
    tcase_add_test(tc, test_bn_eval);
    tcase_add_test(tc, test_in_affine);
    tcase_add_test(tc, test_in_plain);
    tcase_add_test(tc, test_ln_affine2);
    tcase_add_test(tc, test_ln_plain);
    tcase_add_test(tc, test_ln_beta_only);
    tcase_add_test(tc, test_third_order);
    return s;
}

VS_TEST_MAIN(norm_suite)
