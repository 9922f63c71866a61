/* test_optimize.c - the optimisation toolbox on problems whose answers are known in closed form:
 * lasso (soft threshold), box-constrained quadratics (clipping), a non-smooth objective for the
 * subgradient method, Adam descent of a quadratic, and the flat Adam step against its formula. */
#include "tests/vs_check.h"
#include "versus/ops.h"
#include "versus/optimize.h"

#include <math.h>

/* ---- problems --------------------------------------------------------------------------------------- */

/* Two blocks of 3 variables: g0_b = 1/2 sum_i d_i (theta_i - c_i)^2 with the block's d and c. */
typedef struct quad {
    float d[6], c[6];
} quad;

static vs_tensor *quad_objective(void *ctx, vs_tensor *th)
{
    quad *q = ctx;
    vs_tensor *r = vs_pow_scalar(vs_sub(th, vs_tensor_from(VS_SHAPE(6), q->c)), 2.0f);
    r = vs_mul(r, vs_tensor_from(VS_SHAPE(6), q->d));
    return vs_mul_scalar(vs_sum(vs_reshape(r, VS_SHAPE(2, 3)), VS_AXIS(1), false), 0.5f);
}

static float soft(float v, float t) { return v > t ? v - t : v < -t ? v + t : 0.0f; }
static float clipf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static const int64_t two_blocks[3] = {0, 3, 6};

START_TEST(test_lasso_ista_fista)
{
    /* min 1/2 sum d_i (x_i - c_i)^2 + lambda |x|_1: x_i = soft(c_i, lambda / d_i) */
    quad q = {{1, 2, 4, 1, 0.5f, 3}, {0.3f, -2, 1.5f, -0.05f, 1, -0.4f}};
    vs_gda_problem pb = {6, 2, two_blocks, NULL, quad_objective, NULL, &q};
    vs_prox_opts o;
    vs_prox_opts_init(&o);
    o.l1 = 0.5f;
    o.step = 0.25f; /* 1/L, L = max d */
    o.iters = 400;
    for (int acc = 0; acc < 2; acc++) {
        o.accelerate = acc;
        float th[6] = {0};
        int done = 0;
        ck_assert_int_eq(vs_prox_minimize(&pb, &o, th, &done, NULL, NULL), VS_OK);
        ck_assert_int_eq(done, 400);
        for (int i = 0; i < 6; i++) ck_assert_float_near(th[i], soft(q.c[i], o.l1 / q.d[i]), 1e-4);
    }
    /* FISTA is closer than ISTA after the same number of steps on an ill-conditioned coordinate */
    q.d[4] = 0.02f;
    o.l1 = 0.01f;
    o.iters = 300;
    float a[6] = {0}, b[6] = {0};
    o.accelerate = false;
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, a, NULL, NULL, NULL), VS_OK);
    o.accelerate = true;
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, b, NULL, NULL, NULL), VS_OK);
    double ea = fabs(a[4] - soft(q.c[4], o.l1 / q.d[4])), eb = fabs(b[4] - soft(q.c[4], o.l1 / q.d[4]));
    printf("error after 300 steps: ISTA %.3g, FISTA %.3g\n", ea, eb);
    ck_assert(eb < 0.1 * ea);
    /* tol stops early once the iterates stop moving */
    o.accelerate = false;
    o.tol = 1e-6f;
    o.iters = 100000;
    int done = 0;
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, a, &done, NULL, NULL), VS_OK);
    ck_assert_int_lt(done, 100000);
}
END_TEST

START_TEST(test_box_quadratic)
{
    /* projected gradient: min 1/2 sum d_i (x_i - c_i)^2 over [lo, hi]: x_i = clip(c_i, lo, hi);
     * with the L1 term as well: clip(soft(c_i, lambda / d_i), lo, hi) */
    quad q = {{1, 2, 4, 1, 0.5f, 3}, {0.3f, -2, 1.5f, 2.5f, 0.9f, -0.4f}};
    vs_gda_problem pb = {6, 2, two_blocks, NULL, quad_objective, NULL, &q};
    vs_prox_opts o;
    vs_prox_opts_init(&o);
    o.step = 0.25f;
    o.iters = 500;
    o.lo = -1;
    o.hi = 1;
    float th[6] = {5, -5, 0, 0, 0, 0}; /* the start is projected first */
    vs_opt_trace tr;
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, th, NULL, &tr, NULL), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_float_near(th[i], clipf(q.c[i], -1, 1), 1e-4);
    ck_assert_int_eq(tr.n_iters, 500);
    ck_assert(tr.objective[499] < tr.objective[0]);
    vs_opt_trace_clear(&tr);
    o.l1 = 0.2f;
    o.lo = 0;
    o.accelerate = true;
    float th2[6] = {0};
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, th2, NULL, NULL, NULL), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_float_near(th2[i], clipf(soft(q.c[i], o.l1 / q.d[i]), 0, 1), 1e-4);
    /* bad options are errors, not crashes */
    vs_error err;
    o.step = 0;
    ck_assert_int_eq(vs_prox_minimize(&pb, &o, th2, NULL, NULL, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "step") != NULL);
}
END_TEST

/* g0_b = sum_i |z_i - a_i| + 1/2 z_i^2 over blocks of 3: z_i = clip(a_i, -1, 1) */
static vs_tensor *kink_objective(void *ctx, vs_tensor *z)
{
    const float *a = ctx;
    vs_tensor *t = vs_add(vs_abs(vs_sub(z, vs_tensor_from(VS_SHAPE(6), a))), vs_mul_scalar(vs_pow_scalar(z, 2.0f), 0.5f));
    return vs_sum(vs_reshape(t, VS_SHAPE(2, 3)), VS_AXIS(1), false);
}

START_TEST(test_subgradient)
{
    float a[6] = {0.4f, 2.0f, -3.0f, -0.7f, 0.0f, 1.5f};
    vs_gda_problem pb = {6, 2, two_blocks, NULL, kink_objective, NULL, a};
    vs_subgrad_opts o;
    vs_subgrad_opts_init(&o);
    o.iters = 4000;
    o.step = 0.5f;
    float z[6] = {3, -3, 3, -3, 3, -3};
    ck_assert_int_eq(vs_subgrad_minimize(&pb, &o, z, NULL, NULL), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_float_near(z[i], clipf(a[i], -1, 1), 2e-2);
    /* with a box on the latent code the answer is clipped to the box as well */
    o.lo = -0.5f;
    o.hi = 0.5f;
    float z2[6] = {0};
    ck_assert_int_eq(vs_subgrad_minimize(&pb, &o, z2, NULL, NULL), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_float_near(z2[i], clipf(a[i], -0.5f, 0.5f), 2e-2);
}
END_TEST

START_TEST(test_adam)
{
    /* Adam descent of a quadratic reaches its minimiser c */
    quad q = {{1, 2, 4, 1, 0.5f, 3}, {0.3f, -2, 1.5f, 2.5f, 0.9f, -0.4f}};
    vs_gda_problem pb = {6, 2, two_blocks, NULL, quad_objective, NULL, &q};
    float th[6] = {0};
    vs_opt_trace tr;
    ck_assert_int_eq(vs_adam_minimize(&pb, 3000, 0.05f, th, &tr, NULL), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_float_near(th[i], q.c[i], 1e-3);
    ck_assert_int_eq(tr.n_iters, 3000);
    ck_assert(tr.violated[0] == 0.0f && tr.grad_dual[0] == 0.0f);
    vs_opt_trace_clear(&tr);

    /* one flat Adam step from zero moments moves every coordinate by -lr sign(g) (bias-corrected) */
    vs_flat_adam ad;
    ck_assert_int_eq(vs_flat_adam_init(&ad, 3, NULL), VS_OK);
    float x[3] = {1, 1, 1}, g[3] = {0.5f, -2, 1e-3f};
    vs_flat_adam_step(&ad, x, g, 0.1f);
    ck_assert_float_near(x[0], 0.9, 1e-6);
    ck_assert_float_near(x[1], 1.1, 1e-6);
    ck_assert_float_near(x[2], 0.9, 1e-4);
    ck_assert_int_eq(ad.t, 1);
    vs_flat_adam_free(&ad);
}
END_TEST

static Suite *optimize_suite(void)
{
    Suite *s = suite_create("optimize");
    TCase *tc = vs_tcase(s, "toolbox", 60);
    tcase_add_test(tc, test_lasso_ista_fista);
    tcase_add_test(tc, test_box_quadratic);
    tcase_add_test(tc, test_subgradient);
    tcase_add_test(tc, test_adam);
    return s;
}

VS_TEST_MAIN(optimize_suite)
