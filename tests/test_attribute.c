/* test_attribute.c - attribution methods against their axioms and known answers. */
#include "vs_check.h"
#include "explain_call.h"
#include "versus/explain.h"
#include "versus/versus.h"

#include <math.h>
#include <string.h>

enum { D = 6, C = 3 };

/* ---- models ---------------------------------------------------------------------------------- */

typedef struct mlp {
    vs_tensor *w1, *b1, *w2, *b2; /* w2 NULL: a linear model x -> w1 x + b1 */
    int act;                      /* 0 relu, 1 softplus, 2 tanh */
} mlp;

static vs_tensor *mlp_forward(void *ctx, vs_tensor *x)
{
    mlp *m = ctx;
    vs_tensor *h = vs_linear(vs_flatten(x), m->w1, m->b1);
    if (!m->w2) return h;
    h = m->act == 0 ? vs_relu(h) : m->act == 1 ? vs_softplus(h) : vs_tanh(h);
    return vs_linear(h, m->w2, m->b2);
}

static mlp make_mlp(uint64_t seed, int64_t in, int64_t hid, int64_t out, int act)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    mlp m = {0};
    m.act = act;
    if (hid == 0) {
        m.w1 = vs_tensor_randn(VS_SHAPE(out, in), &r, 0, 1);
        m.b1 = vs_tensor_randn(VS_SHAPE(out), &r, 0, 1);
    } else {
        m.w1 = vs_tensor_randn(VS_SHAPE(hid, in), &r, 0, 1);
        m.b1 = vs_tensor_randn(VS_SHAPE(hid), &r, 0, 0.5f);
        m.w2 = vs_tensor_randn(VS_SHAPE(out, hid), &r, 0, 1);
        m.b2 = vs_tensor_randn(VS_SHAPE(out), &r, 0, 0.5f);
    }
    return m;
}

static void free_mlp(mlp *m)
{
    vs_tensor_free(m->w1);
    vs_tensor_free(m->b1);
    vs_tensor_free(m->w2);
    vs_tensor_free(m->b2);
}

static double rel_delta(const vs_attr_report *r)
{
    return fabs(r->delta) / fmax(1e-12, fabs(r->score - r->baseline_score));
}

/* ---- linear model: every additive method gives w (x - x') --------------------------------------- */

static void check_linear(const char *method, const char *settings, int64_t contrast, double tol)
{
    mlp lin = make_mlp(1, D, 0, C, 0);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &lin};
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(2, D), &r, 0, 1);
    vs_tensor *b = strcmp(method, "input_x_gradient") == 0 ? vs_tensor_zeros(VS_SHAPE(1, D)) : vs_tensor_randn(VS_SHAPE(1, D), &r, 0, 1);
    vs_explain_request o = explain_req(1, contrast);
    o.baseline = b;
    vs_tensor *a;
    vs_error err;
    vs_attr_report rep;
    ck_assert_msg(explain_with(&m, x, method, settings, &o, &a, &rep, &err) == VS_OK, "%s: %s", method, err.msg);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t i = 0; i < D; i++) {
            double w = lin.w1->data[1 * D + i] - (contrast >= 0 ? lin.w1->data[contrast * D + i] : 0);
            double want = w * (x->data[n * D + i] - b->data[i]);
            ck_assert_msg(fabs(a->data[n * D + i] - want) <= tol * (1 + fabs(want)), "%s row %lld feature %lld: %g, expected %g",
                          method, (long long)n, (long long)i, (double)a->data[n * D + i], want);
        }
    ck_assert_int_eq(rep.target, 1);
    vs_tensor_free(a);
    vs_tensor_free(x);
    vs_tensor_free(b);
    free_mlp(&lin);
}

START_TEST(test_linear_ig) { check_linear("integrated_gradients", "steps=7", -1, 1e-5); }
END_TEST
START_TEST(test_linear_deeplift) { check_linear("deeplift", NULL, -1, 1e-5); }
END_TEST
START_TEST(test_linear_ixg) { check_linear("input_x_gradient", NULL, -1, 1e-5); }
END_TEST
START_TEST(test_linear_shapley) { check_linear("shapley_exact", NULL, -1, 1e-4); }
END_TEST
START_TEST(test_linear_kernel_shap) { check_linear("kernel_shap", "samples=100", -1, 1e-4); } /* >= 2^6 - 2: exact enumeration */
END_TEST
START_TEST(test_linear_occlusion) { check_linear("occlusion", NULL, -1, 1e-4); }
END_TEST
START_TEST(test_linear_one_vs_one) { check_linear("integrated_gradients", "steps=7", 2, 1e-5); check_linear("deeplift", NULL, 0, 1e-5); }
END_TEST

START_TEST(test_linear_lime)
{
    mlp lin = make_mlp(1, D, 0, C, 0);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &lin};
    vs_tensor *x = vs_tensor_full(VS_SHAPE(1, D), 1.0f);
    vs_explain_request o = explain_req(0, -1);
    vs_tensor *a;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "lime", "ridge=1e-6 samples=400", &o, &a, NULL, &err), VS_OK);
    /* the surrogate of a linear score over kept features is exact: coefficients w */
    for (int i = 0; i < D; i++) ck_assert_float_near(a->data[i], lin.w1->data[i], 1e-3);
    vs_tensor_free(a);
    vs_tensor_free(x);
    free_mlp(&lin);
}
END_TEST

/* ---- nonlinear models ------------------------------------------------------------------------------ */

static vs_attr_report run(mlp *net, const char *method, const char *settings, const vs_tensor *x, const vs_tensor *b, vs_tensor **out)
{
    vs_model_fn m = {.forward = mlp_forward, .ctx = net};
    vs_explain_request o = explain_req(2, -1);
    o.baseline = b;
    vs_tensor *a;
    vs_error err;
    vs_attr_report rep;
    ck_assert_msg(explain_with(&m, (vs_tensor *)x, method, settings, &o, &a, &rep, &err) == VS_OK, "%s", err.msg);
    if (out)
        *out = a;
    else
        vs_tensor_free(a);
    return rep;
}

START_TEST(test_ig_completeness_smooth)
{
    mlp net = make_mlp(3, 20, 16, C, 1);
    vs_rng r;
    vs_rng_seed(&r, 11);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(1, 20), &r, 0, 1);
    vs_attr_report r10 = run(&net, "integrated_gradients", "steps=4 ig-rule=gauss-legendre", x, NULL, NULL);
    vs_attr_report r200 = run(&net, "integrated_gradients", "steps=200 ig-rule=gauss-legendre", x, NULL, NULL);
    ck_assert_msg(rel_delta(&r200) < 1e-4, "relative completeness delta %g", rel_delta(&r200));
    ck_assert_msg(fabs(r200.delta) < fabs(r10.delta), "delta must fall with steps: %g vs %g", r200.delta, r10.delta);
    ck_assert_int_eq(r200.evaluations, 200);
    /* Riemann rules converge more slowly but converge */
    vs_attr_report left = run(&net, "integrated_gradients", "steps=50 ig-rule=left", x, NULL, NULL);
    vs_attr_report mid = run(&net, "integrated_gradients", "steps=50 ig-rule=middle", x, NULL, NULL);
    vs_attr_report trap = run(&net, "integrated_gradients", "steps=50 ig-rule=trapezoid", x, NULL, NULL);
    vs_attr_report right = run(&net, "integrated_gradients", "steps=50 ig-rule=right", x, NULL, NULL);
    ck_assert(rel_delta(&mid) < rel_delta(&left) && rel_delta(&trap) < rel_delta(&right));
    vs_tensor_free(x);
    free_mlp(&net);
}
END_TEST

START_TEST(test_deeplift_summation_relu)
{
    mlp net = make_mlp(5, 12, 10, C, 0);
    vs_rng r;
    vs_rng_seed(&r, 13);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(3, 12), &r, 0, 1);
    vs_tensor *b = vs_tensor_randn(VS_SHAPE(1, 12), &r, 0, 0.3f);
    vs_attr_report rep = run(&net, "deeplift", NULL, x, b, NULL);
    ck_assert_msg(rel_delta(&rep) < 1e-5, "summation to delta off by %g", rel_delta(&rep));
    ck_assert_int_eq(rep.evaluations, 3 * 2);
    /* DeepSHAP over a set: efficiency against the mean baseline score holds on average */
    vs_model_fn m = {.forward = mlp_forward, .ctx = &net};
    vs_tensor *set = vs_tensor_randn(VS_SHAPE(5, 12), &r, 0, 0.3f);
    vs_explain_request o = explain_req(2, -1);
    o.baselines = set;
    vs_tensor *a;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "deepshap", NULL, &o, &a, NULL, &err), VS_OK);
    vs_tensor *sx = vs_explained_score(&m, x, 2, -1), *sb = vs_explained_score(&m, set, 2, -1);
    double mb = 0;
    for (int k = 0; k < 5; k++) mb += sb->data[k] / 5;
    for (int n = 0; n < 3; n++) {
        double s = 0;
        for (int i = 0; i < 12; i++) s += a->data[n * 12 + i];
        ck_assert_float_near(s, sx->data[n] - mb, 1e-4 * (1 + fabs(s)));
    }
    vs_tensor_free(sx);
    vs_tensor_free(sb);
    vs_tensor_free(a);
    vs_tensor_free(set);
    vs_tensor_free(x);
    vs_tensor_free(b);
    free_mlp(&net);
}
END_TEST

START_TEST(test_one_vs_one_is_difference)
{
    mlp net = make_mlp(8, 10, 8, C, 2);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &net};
    vs_rng r;
    vs_rng_seed(&r, 17);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(1, 10), &r, 0, 1);
    const char *methods[] = {"integrated_gradients", "saliency", "input_x_gradient", "occlusion"};
    for (int k = 0; k < 4; k++) {
        vs_tensor *a[3];
        int64_t targets[3][2] = {{0, 1}, {0, -1}, {1, -1}};
        for (int t = 0; t < 3; t++) {
            vs_explain_request o = explain_req(targets[t][0], targets[t][1]);
            vs_error err;
            ck_assert_int_eq(explain_with(&m, x, methods[k], NULL, &o, &a[t], NULL, &err), VS_OK);
        }
        for (int i = 0; i < 10; i++) ck_assert_float_near(a[0]->data[i], a[1]->data[i] - a[2]->data[i], 1e-5);
        for (int t = 0; t < 3; t++) vs_tensor_free(a[t]);
    }
    vs_tensor_free(x);
    free_mlp(&net);
}
END_TEST


/* ---- CNNs ------------------------------------------------------------------------------------------ */

typedef struct cnn {
    vs_tensor *c1, *c1b, *c2, *c2b, *fc, *fcb, *bn_mean, *bn_var, *bn_w, *bn_b;
    bool smooth; /* softplus/tanh + avg pool; else ReLU + batch norm + max pool (ReLU then max-pool adjacent) */
} cnn;

static vs_tensor *cnn_forward(void *ctx, vs_tensor *x)
{
    cnn *m = ctx;
    vs_conv_opts s1 = {.padding = {1, 1}}, s2 = {.stride = {2, 2}, .padding = {1, 1}};
    if (m->smooth) {
        vs_tensor *h = vs_softplus(vs_conv2d(x, m->c1, m->c1b, &s1));
        h = vs_tanh(vs_conv2d(h, m->c2, m->c2b, &s2));
        h = vs_avg_pool2d(h, 2, 2, 0);
        return vs_linear(vs_flatten(h), m->fc, m->fcb);
    }
    vs_tensor *h = vs_conv2d(x, m->c1, m->c1b, &s2); /* strided */
    h = vs_relu(vs_batch_norm(h, m->bn_w, m->bn_b, m->bn_mean, m->bn_var, false, 0.1f, 1e-5f));
    h = vs_max_pool2d(h, 2, 2, 0);
    h = vs_relu(vs_conv2d(h, m->c2, m->c2b, &s1));
    return vs_linear(vs_flatten(h), m->fc, m->fcb);
}

static cnn make_cnn(uint64_t seed, bool smooth)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    cnn m = {0};
    m.smooth = smooth;
    m.c1 = vs_tensor_randn(VS_SHAPE(4, 1, 3, 3), &r, 0, 0.6f);
    m.c1b = vs_tensor_randn(VS_SHAPE(4), &r, 0, 0.1f);
    m.c2 = vs_tensor_randn(VS_SHAPE(4, 4, 3, 3), &r, 0, 0.3f);
    m.c2b = vs_tensor_randn(VS_SHAPE(4), &r, 0, 0.1f);
    /* smooth: 8x8 -> conv s1 8x8 -> conv s2 4x4 -> avg 2x2; relu: 8x8 -> s2 4x4 -> pool 2x2 -> conv 2x2 */
    m.fc = vs_tensor_randn(VS_SHAPE(C, 16), &r, 0, 0.5f);
    m.fcb = vs_tensor_randn(VS_SHAPE(C), &r, 0, 0.1f);
    m.bn_mean = vs_tensor_randn(VS_SHAPE(4), &r, 0, 0.1f);
    m.bn_var = vs_tensor_rand(VS_SHAPE(4), &r, 0.5f, 1.5f);
    m.bn_w = vs_tensor_rand(VS_SHAPE(4), &r, 0.5f, 1.5f);
    m.bn_b = vs_tensor_randn(VS_SHAPE(4), &r, 0, 0.1f);
    return m;
}

static void free_cnn(cnn *m)
{
    vs_tensor *t[] = {m->c1, m->c1b, m->c2, m->c2b, m->fc, m->fcb, m->bn_mean, m->bn_var, m->bn_w, m->bn_b};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) vs_tensor_free(t[i]);
}

static vs_attr_report run_cnn(cnn *net, const char *method, const char *settings, const vs_tensor *x, const vs_tensor *b)
{
    vs_model_fn m = {.forward = cnn_forward, .ctx = net};
    vs_explain_request o = explain_req(1, -1);
    o.baseline = b;
    vs_tensor *a;
    vs_error err;
    vs_attr_report rep;
    ck_assert_msg(explain_with(&m, (vs_tensor *)x, method, settings, &o, &a, &rep, &err) == VS_OK, "%s", err.msg);
    vs_tensor_free(a);
    return rep;
}

START_TEST(test_ig_completeness_cnn)
{
    cnn net = make_cnn(41, true);
    vs_rng r;
    vs_rng_seed(&r, 43);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 8, 8), &r, 0, 1);
    vs_attr_report few = run_cnn(&net, "integrated_gradients", "steps=3", x, NULL);
    vs_attr_report many = run_cnn(&net, "integrated_gradients", "steps=200", x, NULL);
    ck_assert_msg(rel_delta(&many) < 1e-4, "relative completeness delta %g with 200 Gauss-Legendre steps", rel_delta(&many));
    ck_assert_msg(fabs(many.delta) < fabs(few.delta), "delta must fall with the step count (%g vs %g)", many.delta, few.delta);
    vs_tensor_free(x);
    free_cnn(&net);
}
END_TEST

START_TEST(test_deeplift_summation_cnn)
{
    /* strided conv, batch norm, ReLU then max pooling, conv, ReLU, linear */
    cnn net = make_cnn(47, false);
    vs_rng r;
    vs_rng_seed(&r, 53);
    for (int trial = 0; trial < 5; trial++) {
        vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 1, 8, 8), &r, 0, 1);
        vs_tensor *b = trial == 0 ? NULL : vs_tensor_rand(VS_SHAPE(1, 1, 8, 8), &r, 0, 0.5f);
        vs_attr_report rep = run_cnn(&net, "deeplift", NULL, x, b);
        ck_assert_msg(rel_delta(&rep) < 1e-5, "trial %d: summation to delta off by %g (relative)", trial, rel_delta(&rep));
        vs_tensor_free(x);
        vs_tensor_free(b);
    }
    free_cnn(&net);
}
END_TEST

/* ---- Shapley values ------------------------------------------------------------------------------- */

START_TEST(test_shapley_axioms)
{
    vs_rng r;
    vs_rng_seed(&r, 23);
    int n = 6;
    double v[64], phi[6];
    for (int S = 0; S < 64; S++) v[S] = vs_rng_normal(&r);
    /* player 5 is a dummy: v(S u 5) = v(S); players 0 and 1 are symmetric */
    for (int S = 0; S < 64; S++)
        if ((S & 1) && !(S & 2)) v[S] = v[(S & ~1) | 2];
    for (int S = 0; S < 64; S++)
        if (S & 32) v[S] = v[S & ~32];
    ck_assert_int_eq(vs_shapley_from_values(n, v, phi), VS_OK);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += phi[i];
    ck_assert_float_near(sum, v[63] - v[0], 1e-12);
    ck_assert_float_near(phi[5], 0, 1e-12);
    ck_assert_float_near(phi[0], phi[1], 1e-12);
    /* a unanimity game on {2,3}: each gets half */
    for (int S = 0; S < 64; S++) v[S] = (S & 12) == 12;
    vs_shapley_from_values(n, v, phi);
    ck_assert_float_near(phi[2], 0.5, 1e-12);
    ck_assert_float_near(phi[0], 0, 1e-12);
    ck_assert_int_eq(vs_shapley_from_values(30, v, phi), VS_ERR_ARG);
}
END_TEST

START_TEST(test_kernel_shap_converges)
{
    mlp net = make_mlp(29, 8, 12, C, 2);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &net};
    vs_rng r;
    vs_rng_seed(&r, 31);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(1, 8), &r, 0, 1.5f);
    vs_explain_request o = explain_req(1, -1);
    vs_tensor *exact;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "shapley_exact", NULL, &o, &exact, NULL, &err), VS_OK);
    double errs[3];
    int budgets[3] = {40, 160, 254};
    for (int k = 0; k < 3; k++) {
        o.seed = 3;
        char samples[32];
        snprintf(samples, sizeof samples, "samples=%d", budgets[k]);
        vs_tensor *a;
        vs_attr_report rep;
        ck_assert_int_eq(explain_with(&m, x, "kernel_shap", samples, &o, &a, &rep, &err), VS_OK);
        ck_assert_msg(fabs(rep.delta) < 1e-4, "efficiency is a constraint: delta %g", rep.delta);
        double e = 0;
        for (int i = 0; i < 8; i++) e += pow(a->data[i] - exact->data[i], 2);
        errs[k] = sqrt(e);
        vs_tensor_free(a);
    }
    ck_assert_msg(errs[2] < 1e-4, "full enumeration must be exact (error %g)", errs[2]);
    ck_assert_msg(errs[1] < errs[0], "error must fall with the budget: %g, %g", errs[0], errs[1]);
    vs_tensor_free(exact);
    vs_tensor_free(x);
    free_mlp(&net);
}
END_TEST

START_TEST(test_kernel_shap_dummy_features)
{
    /* Features equal to the baseline do not change the masked input: the 62 + 2 enumerated
     * coalitions of 6 features compose only 2^3 distinct inputs, each evaluated once, and the
     * dummies get 0 (a linear model: the others get w (x - x')). */
    mlp lin = make_mlp(1, D, 0, C, 0);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &lin};
    const float xv[D] = {1.5f, 0, -2, 0, 0.5f, 0};
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, D));
    memcpy(x->data, xv, sizeof xv);
    vs_explain_request o = explain_req(2, -1);
    vs_tensor *a;
    vs_attr_report rep;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "kernel_shap", "samples=100", &o, &a, &rep, &err), VS_OK);
    ck_assert_int_eq(rep.evaluations, 8);
    for (int i = 0; i < D; i++) {
        double want = lin.w1->data[2 * D + i] * xv[i];
        ck_assert_msg(fabs(a->data[i] - want) < 1e-5, "feature %d: %g, expected %g", i, (double)a->data[i], want);
    }
    vs_tensor_free(a);
    /* sampled coalitions: the same answer (the linear game is exact for any sample) from fewer
     * evaluations than the budget */
    ck_assert_int_eq(explain_with(&m, x, "kernel_shap", "samples=40", &o, &a, &rep, &err), VS_OK);
    ck_assert_msg(rep.evaluations <= 8, "%lld evaluations for 8 distinct inputs", (long long)rep.evaluations);
    for (int i = 0; i < D; i++) ck_assert_float_near(a->data[i], lin.w1->data[2 * D + i] * xv[i], 1e-5);
    vs_tensor_free(a);
    vs_tensor_free(x);
    free_mlp(&lin);
}
END_TEST

START_TEST(test_segments_and_smoothgrad)
{
    mlp lin = make_mlp(1, D, 0, C, 0);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &lin};
    vs_tensor *x = vs_tensor_full(VS_SHAPE(1, D), 2.0f);
    int32_t seg[D] = {0, 0, 1, 1, 2, 2};
    vs_explain_request o = explain_req(0, -1);
    o.segments = seg;
    o.n_segments = 3;
    vs_tensor *a;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "shapley_exact", NULL, &o, &a, NULL, &err), VS_OK);
    /* a segment's Shapley value is shared by its elements */
    double want = (lin.w1->data[0] + lin.w1->data[1]) * 2.0 / 2;
    ck_assert_float_near(a->data[0], want, 1e-4);
    ck_assert_float_near(a->data[1], want, 1e-4);
    vs_tensor_free(a);
    o = explain_req(0, -1);
    ck_assert_int_eq(explain_with(&m, x, "smoothgrad", "samples=5", &o, &a, NULL, &err), VS_OK);
    for (int i = 0; i < D; i++) ck_assert_float_near(a->data[i], lin.w1->data[i], 1e-5);
    vs_tensor_free(a);
    vs_tensor_free(x);
    free_mlp(&lin);
}
END_TEST

START_TEST(test_bad_input)
{
    mlp lin = make_mlp(1, D, 0, C, 0);
    vs_model_fn m = {.forward = mlp_forward, .ctx = &lin};
    vs_tensor *x = vs_tensor_full(VS_SHAPE(1, D), 2.0f);
    vs_tensor *bad = vs_tensor_zeros(VS_SHAPE(1, D + 1));
    vs_explain_request o = explain_req(7, -1);
    vs_tensor *a;
    vs_error err;
    ck_assert_int_eq(explain_with(&m, x, "integrated_gradients", NULL, &o, &a, NULL, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "target 7 outside [0, 3)") != NULL);
    o.target = 0;
    o.baseline = bad;
    ck_assert_int_eq(explain_with(&m, x, "integrated_gradients", NULL, &o, &a, NULL, &err), VS_ERR_SHAPE);
    o.baseline = NULL;
    ck_assert_int_eq(explain_with(&m, x, "integrated_gradients", "steps=0", &o, &a, NULL, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "--steps") != NULL, "%s", err.msg);
    ck_assert_int_eq(explain_with(&m, x, "gradcam", NULL, &o, &a, NULL, &err), VS_ERR_ARG);
    ck_assert_int_eq(explain_with(&m, x, "deepshap", NULL, &o, &a, NULL, &err), VS_ERR_ARG);
    ck_assert_int_eq(explain_with(&m, x, "nope", NULL, &o, &a, NULL, &err), VS_ERR_ARG);
    vs_tensor_free(bad);
    vs_tensor_free(x);
    free_mlp(&lin);
}
END_TEST

START_TEST(test_quadrature)
{
    double a[10], w[10];
    ck_assert_int_eq(vs_quadrature(VS_IG_GAUSS_LEGENDRE, 5, a, w), VS_OK);
    /* exact for degree <= 9: int_0^1 t^9 = 0.1 */
    double s = 0, s0 = 0;
    for (int i = 0; i < 5; i++) {
        s += w[i] * pow(a[i], 9);
        s0 += w[i];
    }
    ck_assert_float_near(s, 0.1, 1e-14);
    ck_assert_float_near(s0, 1, 1e-14);
    ck_assert_int_eq(vs_quadrature(VS_IG_TRAPEZOID, 1, a, w), VS_ERR_ARG);
}
END_TEST

/* vs_explain takes the targets and scores of all rows of a call from batched forwards: the
 * attributions, the last row's score, target and baseline score, and the worst completeness gap
 * must be those of the rows explained one call each, bit for bit (a conv-pool model with a 4-row
 * batch over 6 rows, and an MLP; IG through the path engine, saliency through autograd). */
static void check_rows_batched(vs_module *net, const char *method, int64_t rows)
{
    vs_module_explainee e = {net, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_rng r;
    vs_rng_seed(&r, 47);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(rows, 1, 8, 8), &r, 0, 1);
    vs_explain_request o = explain_req(-1, -1);
    o.batch = 4;
    const char *settings = strcmp(method, "integrated_gradients") == 0 ? "steps=16" : NULL;
    vs_tensor *all = NULL, *one = NULL;
    vs_attr_report rep_all, rep_one;
    vs_error err;
    ck_assert_msg(explain_with(&fn, x, method, settings, &o, &all, &rep_all, &err) == VS_OK, "%s", err.msg);
    double worst = NAN;
    for (int64_t i = 0; i < rows; i++) {
        vs_tensor *xi = vs_tensor_from(VS_SHAPE(1, 1, 8, 8), x->data + i * 64);
        ck_assert_msg(explain_with(&fn, xi, method, settings, &o, &one, &rep_one, &err) == VS_OK, "%s", err.msg);
        ck_assert_int_eq(memcmp(one->data, all->data + i * 64, 64 * sizeof(float)), 0);
        if (isnan(worst) || fabs(rep_one.delta) > fabs(worst)) worst = rep_one.delta;
        vs_tensor_free(one);
        vs_tensor_free(xi);
    }
    ck_assert_int_eq(rep_all.target, rep_one.target);
    ck_assert_msg(rep_all.score == rep_one.score, "score %a one by one %a", rep_all.score, rep_one.score);
    ck_assert_msg(memcmp(&rep_all.baseline_score, &rep_one.baseline_score, sizeof(double)) == 0, "baseline score %a, %a",
                  rep_all.baseline_score, rep_one.baseline_score);
    ck_assert_msg(memcmp(&rep_all.delta, &worst, sizeof(double)) == 0, "worst gap %a, one by one %a", rep_all.delta, worst);
    vs_tensor_free(all);
    vs_tensor_free(x);
}

START_TEST(test_rows_batched)
{
    vs_rng r;
    vs_rng_seed(&r, 53);
    vs_module *conv_pool[] = {vs_conv2d_new(1, 4, 3, 1, 1, true, &r), vs_activation_new(VS_MODULE_RELU, 0),
                              vs_max_pool2d_new(2, 2, 0), vs_conv2d_new(4, 6, 3, 1, 1, true, &r),
                              vs_activation_new(VS_MODULE_RELU, 0), vs_flatten_new(), vs_linear_new(6 * 16, 5, true, &r)};
    vs_module *dense[] = {vs_flatten_new(), vs_linear_new(64, 32, true, &r), vs_activation_new(VS_MODULE_RELU, 0),
                          vs_linear_new(32, 16, true, &r), vs_activation_new(VS_MODULE_TANH, 0), vs_linear_new(16, 4, true, &r)};
    vs_module *nets[2] = {vs_sequential_new(), vs_sequential_new()};
    for (size_t i = 0; i < sizeof conv_pool / sizeof *conv_pool; i++) ck_assert_int_eq(vs_sequential_add(nets[0], conv_pool[i]), VS_OK);
    for (size_t i = 0; i < sizeof dense / sizeof *dense; i++) ck_assert_int_eq(vs_sequential_add(nets[1], dense[i]), VS_OK);
    for (int k = 0; k < 2; k++) {
        vs_module_train(nets[k], false);
        check_rows_batched(nets[k], "integrated_gradients", 6);
        check_rows_batched(nets[k], "saliency", 6);
        vs_module_free(nets[k]);
    }
}
END_TEST

static Suite *attribute_suite(void)
{
    Suite *s = suite_create("attribute");
    TCase *tc = vs_tcase(s, "linear", 60);
    tcase_add_test(tc, test_linear_ig);
    tcase_add_test(tc, test_linear_deeplift);
    tcase_add_test(tc, test_linear_ixg);
    tcase_add_test(tc, test_linear_shapley);
    tcase_add_test(tc, test_linear_kernel_shap);
    tcase_add_test(tc, test_linear_occlusion);
    tcase_add_test(tc, test_linear_one_vs_one);
    tcase_add_test(tc, test_linear_lime);
    tc = vs_tcase(s, "axioms", 120);
    tcase_add_test(tc, test_ig_completeness_smooth);
    tcase_add_test(tc, test_deeplift_summation_relu);
    tcase_add_test(tc, test_ig_completeness_cnn);
    tcase_add_test(tc, test_deeplift_summation_cnn);
    tcase_add_test(tc, test_one_vs_one_is_difference);
    tcase_add_test(tc, test_shapley_axioms);
    tcase_add_test(tc, test_kernel_shap_converges);
    tcase_add_test(tc, test_kernel_shap_dummy_features);
    tcase_add_test(tc, test_segments_and_smoothgrad);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_quadrature);
    tcase_add_test(tc, test_rows_batched);
    return s;
}

VS_TEST_MAIN(attribute_suite)
