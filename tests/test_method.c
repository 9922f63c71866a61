/* test_method.c - the method registry (enumeration, options), pairs explained row by row on one side
 * or both (completeness over both sides on a Siamese MLP), and Integrated Hessians ([F, F],
 * completeness, rows summing to IG, a product with a known answer), GradientSHAP against its
 * definition replayed by hand, and "did you mean" for misspelt method names. */
/* the shared Siamese helpers: this suite uses the MLP only, not the GCN or the training loops */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/snx_models.h"
#pragma GCC diagnostic pop
#include "tests/vs_check.h"
#include "versus/method.h"

#include <math.h>

/* ---- the registry --------------------------------------------------------------------------------- */

START_TEST(test_registry)
{
    ck_assert_int_ge(vs_method_count(), 13);
    for (int i = 0; i < vs_method_count(); i++) {
        const vs_method *m = vs_method_at(i);
        ck_assert(m && m->name && m->help && m->run && m->params);
        ck_assert_ptr_eq(vs_method_find(m->name), m);
        vs_method_opts *o = vs_method_opts_new(m);
        ck_assert_ptr_nonnull(o);
        for (const vs_method_param *p = m->params; p->name; p++) {
            char buf[64];
            vs_method_opts_format(o, p, buf, sizeof buf);
            ck_assert(buf[0] != '\0' && buf[0] != '?');
        }
        vs_method_opts_free(o);
    }
    ck_assert_ptr_null(vs_method_find("magic"));
    /* settings of a method in one string */
    vs_error perr;
    vs_method_opts *po = vs_method_opts_parse(vs_method_find("integrated_gradients"), " steps=7  ig-rule=middle ", &perr);
    ck_assert_msg(po != NULL, "%s", perr.msg);
    char pbuf[64];
    vs_method_opts_format(po, vs_method_param_find(vs_method_find("integrated_gradients"), "steps"), pbuf, sizeof pbuf);
    ck_assert_str_eq(pbuf, "7");
    vs_method_opts_format(po, vs_method_param_find(vs_method_find("integrated_gradients"), "ig-rule"), pbuf, sizeof pbuf);
    ck_assert_str_eq(pbuf, "middle");
    vs_method_opts_free(po);
    ck_assert_ptr_null(vs_method_opts_parse(vs_method_find("integrated_gradients"), "steps=7 rule=middle", &perr));
    ck_assert_msg(strstr(perr.msg, "--rule") != NULL, "%s", perr.msg);
    ck_assert_ptr_null(vs_method_opts_parse(vs_method_find("saliency"), "abs=maybe", &perr));
    ck_assert_ptr_null(vs_method_opts_parse(NULL, "", &perr));
    po = vs_method_opts_parse(vs_method_find("saliency"), "abs", &perr);
    ck_assert_ptr_nonnull(po);
    vs_method_opts_free(po);
    ck_assert_int_eq(vs_method_find("integrated_hessians")->output, VS_OUTPUT_INTERACTIONS);

    const vs_method *ig = vs_method_find("integrated_gradients");
    vs_method_opts *o = vs_method_opts_new(ig);
    char buf[64];
    vs_method_opts_format(o, vs_method_param_find(ig, "steps"), buf, sizeof buf);
    ck_assert_str_eq(buf, "50");
    vs_error err;
    ck_assert_int_eq(vs_method_opts_set(o, "steps", "12", &err), VS_OK);
    ck_assert_int_eq(vs_method_opts_set(o, "ig-rule", "trapezoid", &err), VS_OK);
    vs_method_opts_format(o, vs_method_param_find(ig, "ig-rule"), buf, sizeof buf);
    ck_assert_str_eq(buf, "trapezoid");
    ck_assert_int_eq(vs_method_opts_set(o, "steps", "0", &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "--steps") && strstr(err.msg, "integrated_gradients"));
    ck_assert_int_eq(vs_method_opts_set(o, "ig-rule", "simpson", &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "gauss-legendre"));
    ck_assert_int_eq(vs_method_opts_set(o, "window", "2", &err), VS_ERR_ARG);
    vs_method_opts_free(o);
    const vs_method *oc = vs_method_find("occlusion");
    o = vs_method_opts_new(oc);
    ck_assert_int_eq(vs_method_opts_set(o, "window", "1,2,3", &err), VS_OK);
    ck_assert_int_eq(vs_method_opts_set(o, "window", "1,,3", &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_method_opts_set(o, "window", "1,2,3,4", &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_method_opts_set(o, "window", "1,", &err), VS_ERR_ARG);
    vs_method_opts_free(o);
    ck_assert_int_eq(vs_side_from_name("both"), VS_SIDE_BOTH);
    ck_assert_int_eq(vs_side_from_name("left"), -1);
}
END_TEST

/* ---- a Siamese MLP on pairs ------------------------------------------------------------------------- */

typedef struct siamese {
    test_mlp mlp;
    vs_tensor *fixed;  /* [1, p] the reference of the one-input view */
} siamese;

static vs_tensor *siamese_pair(void *ctx, vs_tensor *x, vs_tensor *r)
{
    siamese *s = ctx;
    return vs_cosine_similarity(test_mlp_embed(&s->mlp, x), test_mlp_embed(&s->mlp, r), 1, 1e-8f);
}

static vs_tensor *siamese_fixed(void *ctx, vs_tensor *x)
{
    siamese *s = ctx;
    return siamese_pair(ctx, x, vs_expand(s->fixed, x->ndim, x->shape));
}

#define P 6

static void make_siamese(siamese *s, vs_tensor **x, vs_tensor **r)
{
    vs_rng g;
    vs_rng_seed(&g, 7);
    test_mlp_init(&s->mlp, P, 8, 4, &g);
    /* non-zero biases: the cosine of a zero embedding (the zero baseline) is undefined */
    vs_tensor_free(s->mlp.b2);
    s->mlp.b2 = vs_tensor_randn(VS_SHAPE(4), &g, 0, 1.0f);
    *x = vs_tensor_randn(VS_SHAPE(3, P), &g, 0.5f, 1.0f);
    *r = vs_tensor_randn(VS_SHAPE(3, P), &g, 0.5f, 1.0f);
    s->fixed = vs_tensor_from(VS_SHAPE(1, P), (*r)->data);
}

static void free_siamese(siamese *s, vs_tensor *x, vs_tensor *r)
{
    test_mlp_free(&s->mlp);
    vs_tensor_free(s->fixed);
    vs_tensor_free(x);
    vs_tensor_free(r);
}

START_TEST(test_pairs)
{
    siamese s;
    vs_tensor *x, *R;
    make_siamese(&s, &x, &R);
    vs_model_fn m = {.forward = siamese_fixed, .forward_pair = siamese_pair, .ctx = &s};
    const vs_method *ig = vs_method_find("integrated_gradients");
    vs_error err;
    vs_explain_request rq;
    vs_explain_request_init(&rq);

    /* one reference row applies to every query: the same numbers as the one-input model */
    vs_tensor *a_fixed = NULL, *a_pair = NULL, *a_rows = NULL, *a_one = NULL;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &a_fixed, NULL, &err), VS_OK);
    rq.reference = s.fixed;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &a_pair, NULL, &err), VS_OK);
    ck_assert_int_eq(memcmp(a_fixed->data, a_pair->data, (size_t)x->size * sizeof(float)), 0);

    /* N reference rows: row i explained against reference i */
    rq.reference = R;
    vs_attr_report rep;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &a_rows, &rep, &err), VS_OK);
    printf("IG over pairs, query side: largest completeness gap %.3g\n", rep.delta);
    ck_assert(fabs(rep.delta) < 1e-4);
    vs_tensor *x1 = vs_tensor_from(VS_SHAPE(1, P), x->data + P), *r1 = vs_tensor_from(VS_SHAPE(1, P), R->data + P);
    rq.reference = r1;
    ck_assert_int_eq(vs_explain(&m, x1, ig, NULL, &rq, &a_one, NULL, &err), VS_OK);
    ck_assert_int_eq(memcmp(a_one->data, a_rows->data + P, P * sizeof(float)), 0);

    /* both sides: one joint explanation [N, 2, p]; sum = f(x, r) - f(0, 0) per row */
    rq.reference = R;
    rq.side = VS_SIDE_BOTH;
    vs_tensor *a_both = NULL, *a_ref = NULL;
    vs_tensor *half = vs_tensor_full(VS_SHAPE(1, P), 0.1f);
    rq.baseline = half; /* a non-zero baseline on the query side, zeros on the reference side */
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &a_both, &rep, &err), VS_OK);
    ck_assert_int_eq(a_both->ndim, 3);
    ck_assert_int_eq(a_both->shape[1], 2);
    for (int64_t i = 0; i < 3; i++) {
        double sum = 0;
        for (int k = 0; k < 2 * P; k++) sum += a_both->data[i * 2 * P + k];
        vs_tensor *xi = vs_tensor_from(VS_SHAPE(1, P), x->data + i * P), *ri = vs_tensor_from(VS_SHAPE(1, P), R->data + i * P);
        vs_tensor *zero = vs_tensor_zeros(VS_SHAPE(1, P));
        vs_scope_begin(); /* owns the forward passes' tensors */
        double f = siamese_pair(&s, xi, ri)->data[0], f0 = siamese_pair(&s, half, zero)->data[0];
        vs_scope_end();
        ck_assert_float_near(sum, f - f0, 2e-4);
        vs_tensor_free(xi);
        vs_tensor_free(ri);
        vs_tensor_free(zero);
    }
    ck_assert(fabs(rep.delta) < 2e-4);
    /* the reference side alone: attributions of the reference rows, the query fixed */
    rq.side = VS_SIDE_REFERENCE;
    rq.baseline = NULL;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &a_ref, &rep, &err), VS_OK);
    ck_assert(fabs(rep.delta) < 2e-4);
    ck_assert_int_eq(a_ref->ndim, 2);

    /* what does not apply is an error, not a crash */
    vs_tensor *bad = NULL;
    rq.reference = NULL;
    rq.side = VS_SIDE_BOTH;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &bad, NULL, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "needs a reference"));
    rq.reference = R;
    ck_assert_int_eq(vs_explain(&m, x, vs_method_find("gradcam"), NULL, &rq, &bad, NULL, &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_explain(&m, x, vs_method_find("deepshap"), NULL, &rq, &bad, NULL, &err), VS_ERR_ARG);
    vs_tensor *R2 = vs_tensor_zeros(VS_SHAPE(2, P));
    rq.reference = R2;
    ck_assert_int_eq(vs_explain(&m, x, ig, NULL, &rq, &bad, NULL, &err), VS_ERR_SHAPE);
    vs_model_fn one = {.forward = siamese_fixed, .ctx = &s};
    rq.reference = R;
    ck_assert_int_eq(vs_explain(&one, x, ig, NULL, &rq, &bad, NULL, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "pairs"));

    vs_tensor *all[] = {a_fixed, a_pair, a_rows, a_one, a_both, a_ref, x1, r1, half, R2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) vs_tensor_free(all[k]);
    free_siamese(&s, x, R);
}
END_TEST

/* ---- Integrated Hessians -------------------------------------------------------------------------- */

/* f(x) = x0 x1 + x2: with a zero baseline every entry of the x0/x1 block is x0 x1 / 4, x2 only on
 * the diagonal (its own IG). */
static vs_tensor *product(void *ctx, vs_tensor *x)
{
    (void)ctx;
    vs_tensor *a = vs_slice(x, 1, 0, 1), *b = vs_slice(x, 1, 1, 2), *c = vs_slice(x, 1, 2, 3);
    return vs_reshape(vs_add(vs_mul(a, b), c), VS_SHAPE(x->shape[0]));
}

START_TEST(test_integrated_hessians)
{
    const vs_method *ih = vs_method_find("integrated_hessians");
    vs_model_fn m = {.forward = product};
    float xv[3] = {1.5f, -2.0f, 0.7f};
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 3), xv), *G = NULL;
    vs_error err;
    vs_attr_report rep;
    ck_assert_int_eq(vs_explain(&m, x, ih, NULL, NULL, &G, &rep, &err), VS_OK);
    ck_assert_int_eq(G->ndim, 3);
    ck_assert_int_eq(G->shape[1], 3);
    ck_assert_int_eq(G->shape[2], 3);
    double q = 1.5 * -2.0 / 4;
    ck_assert_float_near(G->data[0], q, 1e-5);
    ck_assert_float_near(G->data[1], q, 1e-5);
    ck_assert_float_near(G->data[3], q, 1e-5);
    ck_assert_float_near(G->data[4], q, 1e-5);
    ck_assert_float_near(G->data[8], 0.7, 1e-5);
    ck_assert_float_near(G->data[2], 0, 1e-6);
    ck_assert_float_near(G->data[5], 0, 1e-6);
    ck_assert(fabs(rep.delta) < 1e-5);
    vs_tensor_free(G);
    vs_tensor_free(x);

    /* on the Siamese MLP, both sides: [N, 2p, 2p], symmetric, rows summing to IG, total f(x,r) - f(0,0) */
    siamese s;
    vs_tensor *X, *R;
    make_siamese(&s, &X, &R);
    vs_model_fn sm = {.forward = siamese_fixed, .forward_pair = siamese_pair, .ctx = &s};
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.reference = R;
    rq.side = VS_SIDE_BOTH;
    vs_method_opts *o = vs_method_opts_new(ih);
    ck_assert_int_eq(vs_method_opts_set(o, "steps", "24", &err), VS_OK);
    ck_assert_int_eq(vs_explain(&sm, X, ih, o, &rq, &G, &rep, &err), VS_OK);
    ck_assert_int_eq(G->shape[0], 3);
    ck_assert_int_eq(G->shape[1], 2 * P);
    printf("integrated hessians, both sides: largest completeness gap %.3g\n", rep.delta);
    ck_assert(fabs(rep.delta) < 1e-3);
    const vs_method *ig = vs_method_find("integrated_gradients");
    vs_method_opts *io = vs_method_opts_new(ig);
    ck_assert_int_eq(vs_method_opts_set(io, "steps", "24", &err), VS_OK);
    vs_tensor *A = NULL;
    ck_assert_int_eq(vs_explain(&sm, X, ig, io, &rq, &A, NULL, &err), VS_OK);
    const int64_t F = 2 * P;
    double cross = 0;
    for (int64_t n = 0; n < 3; n++)
        for (int64_t i = 0; i < F; i++) {
            double row = 0;
            for (int64_t k = 0; k < F; k++) {
                float gik = G->data[(n * F + i) * F + k], gki = G->data[(n * F + k) * F + i];
                ck_assert(fabsf(gik - gki) <= 1e-5f * (1 + fabsf(gik)));
                row += gik;
                if (i < P && k >= P) cross += fabs(gik);
            }
            ck_assert_float_near(row, A->data[n * F + i], 2e-3);
        }
    ck_assert(cross > 1e-3); /* a similarity lives on query x reference interactions */
    vs_method_opts_free(o);
    vs_method_opts_free(io);
    vs_tensor_free(G);
    vs_tensor_free(A);
    free_siamese(&s, X, R);
}
END_TEST

/* ---- GradientSHAP ---------------------------------------------------------------------------------- */

/* Captum's definition replayed by hand on f(x) = x0 x1 + x2 (gradient (x1, x0, 1)): the same draws in
 * the same order (per sample: the baseline's index, the noise of each element, the path position). */
START_TEST(test_gradient_shap)
{
    const vs_method *gs = vs_method_find("gradient_shap");
    ck_assert_ptr_nonnull(gs);
    ck_assert_ptr_eq(vs_method_nearest("GradientShap"), gs);
    ck_assert_ptr_eq(vs_method_nearest("gradient-shap"), gs);
    ck_assert_ptr_eq(vs_method_nearest("integrated_gradient"), vs_method_find("integrated_gradients"));
    ck_assert_ptr_null(vs_method_nearest("magic"));
    vs_model_fn m = {.forward = product};
    float xv[6] = {1.5f, -2.0f, 0.7f, -0.3f, 0.8f, 2.0f}, bv[9] = {0, 0, 0, 0.5f, -1, 0.25f, -0.5f, 0.2f, 1};
    vs_tensor *X = vs_tensor_from(VS_SHAPE(2, 3), xv), *B = vs_tensor_from(VS_SHAPE(3, 3), bv), *A = NULL;
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.baselines = B;
    rq.seed = 11;
    vs_method_opts *o = vs_method_opts_new(gs);
    vs_error err;
    ck_assert_int_eq(vs_method_opts_set(o, "samples", "7", &err), VS_OK);
    ck_assert_int_eq(vs_method_opts_set(o, "stdevs", "0.3", &err), VS_OK);
    ck_assert_int_eq(vs_explain(&m, X, gs, o, &rq, &A, NULL, &err), VS_OK);
    for (int row = 0; row < 2; row++) {
        const float *x = xv + 3 * row;
        vs_rng r;
        vs_rng_seed(&r, 11); /* every row starts from the request's seed */
        double want[3] = {0, 0, 0};
        for (int k = 0; k < 7; k++) {
            const float *b = bv + 3 * vs_rng_below(&r, 3);
            float d[3], p[3];
            for (int i = 0; i < 3; i++) d[i] = x[i] + (float)(0.3f * vs_rng_normal(&r)) - b[i];
            float a = vs_rng_uniformf(&r);
            for (int i = 0; i < 3; i++) p[i] = b[i] + a * d[i];
            double g[3] = {p[1], p[0], 1};
            for (int i = 0; i < 3; i++) want[i] += d[i] * g[i] / 7;
        }
        for (int i = 0; i < 3; i++) ck_assert_float_near(A->data[3 * row + i], want[i], 1e-5);
    }
    vs_tensor_free(A);
    /* no noise and one baseline on a function linear in each element: exactly (x - b) dS/dx, any draws */
    vs_tensor *one = vs_tensor_from(VS_SHAPE(1, 3), bv + 3);
    rq.baselines = one;
    ck_assert_int_eq(vs_method_opts_set(o, "stdevs", "0", &err), VS_OK);
    ck_assert_int_eq(vs_method_opts_set(o, "samples", "400", &err), VS_OK);
    ck_assert_int_eq(vs_explain(&m, X, gs, o, &rq, &A, NULL, &err), VS_OK);
    ck_assert_float_near(A->data[2], 0.7 - 0.25, 1e-6);
    /* the x0 x1 block is IG's (x_i - b_i) times the mean of the other coordinate along the path */
    double ig0 = (1.5 - 0.5) * (-1 + 0.5 * (-2.0 + 1)), ig1 = (-2.0 + 1) * (0.5 + 0.5 * (1.5 - 0.5));
    ck_assert_float_near(A->data[0], ig0, 0.05);
    ck_assert_float_near(A->data[1], ig1, 0.05);
    vs_tensor_free(A);
    vs_method_opts_free(o);
    vs_tensor_free(one);
    vs_tensor_free(B);
    vs_tensor_free(X);
}
END_TEST

static Suite *method_suite(void)
{
    Suite *s = suite_create("method");
    TCase *tc = vs_tcase(s, "registry", 120);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_pairs);
    tcase_add_test(tc, test_integrated_hessians);
    tcase_add_test(tc, test_gradient_shap);
    return s;
}

VS_TEST_MAIN(method_suite)
