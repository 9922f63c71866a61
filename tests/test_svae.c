/* test_svae.c - the supervised VAEs: per-row terms against the batch losses and by hand (first and
 * second derivatives), one-hot and argmax, the SVAE and M2 composites (values, layout, model.json
 * round trip, decoder alone), both tasks learning on synthetic shapes with their metrics and the
 * invariance grid, and the options. */
#include "gradcheck.h"
#include "versus/versus.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static vs_tensor *fn_nll_rows(vs_tensor **x, void *ctx)
{
    (void)ctx;
    return vs_bernoulli_nll_rows(x[0], x[1]);
}

static vs_tensor *fn_kl_rows(vs_tensor **x, void *ctx)
{
    (void)ctx;
    return vs_kl_diag_gaussian_rows(x[0], x[1], x[2], x[3]);
}

static vs_tensor *fn_kl_prior_rows(vs_tensor **x, void *ctx)
{
    (void)ctx;
    return vs_kl_diag_gaussian_rows(x[0], x[1], NULL, NULL);
}

START_TEST(rows_terms)
{
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_scope_begin();
    vs_tensor *l = vs_tensor_randn(VS_SHAPE(3, 2, 2, 2), &r, 0, 1), *t = vs_tensor_zeros(VS_SHAPE(3, 2, 2, 2));
    for (int64_t i = 0; i < t->size; i++) t->data[i] = vs_rng_uniformf(&r);
    vs_tensor *rows = vs_bernoulli_nll_rows(l, t);
    ck_assert_int_eq(rows->ndim, 1);
    ck_assert_int_eq(rows->shape[0], 3);
    /* mean over rows = the batch loss scaled to the sum over the 8 elements of a row */
    double batch = vs_item(vs_bce_with_logits(l, t)) * 8, mean = vs_item(vs_mean(rows, VS_ALL_AXES, false));
    ck_assert_double_eq_tol(batch, mean, 1e-5);
    /* by hand for row 1 */
    double h = 0;
    for (int j = 8; j < 16; j++) h += log1p(exp(l->data[j])) - t->data[j] * l->data[j];
    ck_assert_double_eq_tol(rows->data[1], h, 1e-5);

    vs_tensor *m1 = vs_tensor_randn(VS_SHAPE(4, 3), &r, 0, 1), *v1 = vs_tensor_randn(VS_SHAPE(4, 3), &r, 0, 0.5f);
    vs_tensor *m2 = vs_tensor_randn(VS_SHAPE(4, 3), &r, 0, 1), *v2 = vs_tensor_randn(VS_SHAPE(4, 3), &r, 0, 0.5f);
    vs_tensor *kl = vs_kl_diag_gaussian_rows(m1, v1, m2, v2), *kl0 = vs_kl_diag_gaussian_rows(m1, v1, NULL, NULL);
    ck_assert_double_eq_tol(vs_item(vs_mean(kl, VS_ALL_AXES, false)), vs_item(vs_kl_diag_gaussian(m1, v1, m2, v2)), 1e-5);
    ck_assert_double_eq_tol(vs_item(vs_mean(kl0, VS_ALL_AXES, false)), vs_item(vs_kl_diag_gaussian(m1, v1, NULL, NULL)), 1e-5);
    /* KL(p || p) = 0 */
    vs_tensor *self = vs_kl_diag_gaussian_rows(m1, v1, m1, v1);
    for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(self->data[i], 0, 1e-6);

    vs_tensor *a[2] = {l, t};
    gradcheck("bernoulli_nll_rows", fn_nll_rows, NULL, 2, a);
    vs_tensor *b[4] = {m1, v1, m2, v2};
    gradcheck("kl_diag_gaussian_rows", fn_kl_rows, NULL, 4, b);
    gradcheck("kl_diag_gaussian_rows prior", fn_kl_prior_rows, NULL, 2, b);
    vs_scope_end();
}
END_TEST

START_TEST(one_hot_argmax)
{
    int64_t labels[3] = {2, 0, 1}, bad[1] = {3}, got[3];
    vs_tensor *y = vs_one_hot(labels, 3, 3);
    ck_assert_ptr_nonnull(y);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) ck_assert_float_eq(y->data[i * 3 + j], labels[i] == j);
    vs_argmax_rows(y, got);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(got[i], labels[i]);
    ck_assert_ptr_null(vs_one_hot(bad, 1, 3));
    vs_tensor_free(y);
}
END_TEST

static vs_dataset *shapes(int64_t n, uint64_t seed)
{
    vs_synth_shapes_opts o;
    vs_synth_shapes_defaults(&o);
    o.n = n, o.size = 12, o.seed = seed;
    vs_dataset *d;
    vs_error err;
    ck_assert_msg(vs_synth_shapes(&o, &d, &err) == VS_OK, "%s", err.msg);
    return d;
}

static vs_module *small(bool svae, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    int64_t in[3] = {1, 12, 12};
    vs_module *m = svae ? vs_arch_svae_mlp(3, in, 2, 64, 3, 2, &r, &err) : vs_arch_m2_mlp(3, in, 2, 64, 2, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

START_TEST(models)
{
    vs_error err;
    for (int s = 0; s < 2; s++) {
        vs_module *m = small(s == 0, 1);
        ck_assert_str_eq(vs_composite_task(m), s == 0 ? "svae" : "m2");
        vs_svae_layout l;
        ck_assert_msg(vs_svae_layout_of(m, &l, &err) == VS_OK, "%s", err.msg);
        ck_assert_int_eq(l.kind, s == 0 ? VS_SVAE_SVAE : VS_SVAE_M2);
        ck_assert_int_eq(l.k1, s == 0 ? 3 : 2);
        ck_assert_int_eq(l.k2, 2);
        ck_assert_int_eq(l.n_classes, 2);
        vs_scope_begin();
        vs_rng r;
        vs_rng_seed(&r, 2);
        vs_tensor *x = vs_tensor_randn(VS_SHAPE(4, 1, 12, 12), &r, 0.5f, 0.2f), *logits, *z1, *z2, *dec;
        /* the plain forward is the classifier f(x) */
        vs_tensor *f = vs_module_forward(m, x, NULL);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->shape[1], 2);
        ck_assert(vs_svae_classify(m, x, &logits, &err) == VS_OK);
        for (int64_t i = 0; i < f->size; i++) ck_assert_float_eq(f->data[i], logits->data[i]);
        ck_assert_msg(vs_svae_encode(m, &l, x, &z1, &z2, &err) == VS_OK, "%s", err.msg);
        ck_assert_int_eq(z1->shape[1], l.k1);
        ck_assert_int_eq(z2->shape[1], 2);
        ck_assert_msg(vs_svae_decode(m, &l, z1, z2, &dec, &err) == VS_OK, "%s", err.msg);
        ck_assert_int_eq(dec->size, x->size);
        for (int64_t i = 0; i < dec->size; i++) ck_assert(dec->data[i] > 0 && dec->data[i] < 1);
        vs_tensor *mu, *lv;
        if (s == 0) {
            ck_assert(vs_svae_posterior(m, &l, x, 2, &mu, &lv, &err) == VS_OK);
            ck_assert_int_eq(mu->shape[1], 2);
            ck_assert(vs_svae_posterior(m, &l, x, 1, &mu, &lv, &err) == VS_OK);
            ck_assert_int_eq(lv->shape[1], 3);
            /* the classifier reads z1 only: f(x) = cls(mean of q(z1|x)) */
            vs_tensor *again = vs_module_forward(vs_module_child(m, "cls"), mu, NULL);
            for (int64_t i = 0; i < f->size; i++) ck_assert_float_eq_tol(f->data[i], again->data[i], 1e-6);
            ck_assert(vs_svae_posterior(m, &l, x, 3, &mu, &lv, &err) == VS_ERR_ARG);
        } else {
            ck_assert(vs_svae_posterior(m, &l, x, 1, &mu, &lv, &err) == VS_ERR_ARG);
        }
        vs_scope_end();
        /* model.json round trip keeps the architecture */
        char dir[512];
        snprintf(dir, sizeof dir, "%s/vs_test_svae_%ld_%d", vs_test_tmpdir(), (long)getpid(), s);
        ck_assert_msg(vs_model_save(m, 0, NULL, dir, &err) == VS_OK, "%s", err.msg);
        vs_module *back = vs_model_load(dir, NULL, &err);
        ck_assert_msg(back != NULL, "%s", err.msg);
        vs_svae_layout l2;
        ck_assert(vs_svae_layout_of(back, &l2, &err) == VS_OK);
        ck_assert_int_eq(l2.k1, l.k1);
        ck_assert_int_eq(vs_module_param_count(back), vs_module_param_count(m));
        vs_module_free(back);
        vs_module_free(m);
    }
    vs_module *plain = vs_arch_vae_mlp(3, (int64_t[]){1, 12, 12}, 8, 2, NULL, &err);
    if (plain) {
        vs_svae_layout l;
        ck_assert(vs_svae_layout_of(plain, &l, &err) == VS_ERR_ARG);
        vs_module_free(plain);
    }
    int64_t in[3] = {1, 12, 12};
    ck_assert_ptr_null(vs_arch_svae_mlp(3, in, 1, 8, 2, 2, NULL, &err));
    ck_assert_ptr_null(vs_arch_m2_mlp(3, in, 2, 0, 2, NULL, &err));
}
END_TEST

/* Train on 300 synthetic shapes (two classes): the test accuracy of f(x) beats chance clearly, the
 * reconstruction term improves on the untrained model's, and the invariance grid has its shape. */
static void learns(bool svae, const char *task_opts)
{
    vs_dataset *d = shapes(300, 7);
    vs_module *m = small(svae, 3);
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = 1, o.batch_size = 32, o.seed = 3, o.task_opts = task_opts, o.optim.lr = 3e-3f;
    vs_train_result r0 = {0}, r1 = {0};
    vs_error err;
    o.epochs = 0;
    ck_assert_msg(vs_train(m, d, &o, &r0, &err) == VS_OK, "%s", err.msg);
    o.epochs = 30;
    ck_assert_msg(vs_train(m, d, &o, &r1, &err) == VS_OK, "%s", err.msg);
    double acc = vs_train_result_get(&r1, "test_accuracy"), R0 = vs_train_result_get(&r0, "test_R"), R1 = vs_train_result_get(&r1, "test_R");
    ck_assert_msg(acc > 0.8, "%s: test accuracy %g", svae ? "svae" : "m2", acc);
    ck_assert_msg(R1 > R0 + 10, "%s: R %g -> %g", svae ? "svae" : "m2", R0, R1);
    ck_assert(isfinite(vs_train_result_get(&r1, "test_kl")));
    for (int k = 0; k < r1.n_terms; k++) ck_assert(isfinite(r1.loss_history[(r1.epochs - 1) * r1.n_terms + k]));
    vs_train_result_clear(&r0);
    vs_train_result_clear(&r1);
    vs_module_free(m);
    vs_dataset_free(d);
}

START_TEST(svae_learns) { learns(true, "alpha=10,beta=0.9"); }
END_TEST

START_TEST(m2_learns) { learns(false, "alpha=10"); }
END_TEST

START_TEST(m2_labelled_only) { learns(false, "alpha=10,unlabelled=0"); }
END_TEST

START_TEST(options)
{
    const vs_task *t = vs_task_find("svae"), *t2 = vs_task_find("m2");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(t2);
    double opt[VS_TASK_MAX_OPTS];
    vs_error err;
    ck_assert(vs_task_opts_parse(t, "alpha=6000,beta=0.01", opt, &err) == VS_OK);
    ck_assert_double_eq(opt[0], 6000);
    ck_assert_double_eq(opt[1], 0.01);
    ck_assert(vs_task_opts_parse(t, "beta=1.5", opt, &err) == VS_ERR_ARG);
    ck_assert(vs_task_opts_parse(t2, "beta=0.5", opt, &err) == VS_ERR_ARG);
    ck_assert(vs_task_opts_parse(t2, "unlabelled=0", opt, &err) == VS_OK);
    /* a model whose classes do not match the data's */
    vs_dataset *d = shapes(40, 2);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_module *m = vs_arch_svae_mlp(3, (int64_t[]){1, 12, 12}, 3, 8, 2, 2, &r, &err);
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = 1;
    vs_train_result res = {0};
    ck_assert(vs_train(m, d, &o, &res, &err) == VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "classes") != NULL, "%s", err.msg);
    vs_train_result_clear(&res);
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

static Suite *svae_suite(void)
{
    Suite *s = suite_create("svae");
    TCase *tc = vs_tcase(s, "svae", 120);
    tcase_add_test(tc, rows_terms);
    tcase_add_test(tc, one_hot_argmax);
    tcase_add_test(tc, models);
    tcase_add_test(tc, svae_learns);
    tcase_add_test(tc, m2_learns);
    tcase_add_test(tc, m2_labelled_only);
    tcase_add_test(tc, options);
    return s;
}

VS_TEST_MAIN(svae_suite)
