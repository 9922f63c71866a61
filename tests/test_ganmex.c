/* test_ganmex.c - the GANMEX task and its baselines: the task trains a StarGAN against a frozen
 * classifier (S's weights stay bit for bit, every loss term of Eq. 9 is reported, the target-class
 * rate counts drawn targets: constant classifiers' rates add up to 1), it refuses a model without a classifier or with one of the wrong class count, the
 * stand-alone ablation (cls=critic) trains D_cls instead, warm_start trains G alone as an autoencoder
 * first, and vs_generator_baselines gives G(x_i, t_i)
 * row by row whatever the grouping of the targets (the generator with instance statistics, then back
 * in the mode it was in). */
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/explain.h"
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/synth.h"
#include "versus/train.h"
#include "versus/zoo.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static vs_dataset *shapes(int64_t n)
{
    vs_synth_shapes_opts o;
    vs_synth_shapes_defaults(&o);
    o.n = n, o.size = 12;
    vs_dataset *d;
    vs_error err;
    ck_assert_msg(vs_synth_shapes(&o, &d, &err) == VS_OK, "%s", err.msg);
    return d;
}

/* The GANMEX root for d with a freshly drawn classifier of n_classes outputs attached. */
static vs_module *ganmex_model(const vs_dataset *d, int64_t n_classes, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_zoo_build(vs_zoo_find("ganmex"), d, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_module *s = vs_arch_ganmex_mnist(d->shape[0], d->shape[1], n_classes, &r, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    ck_assert(vs_composite_add_model(m, "classifier", s) == VS_OK);
    return m;
}

static vs_train_opts opts_for(int64_t epochs, int64_t batch, const char *task_opts)
{
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = epochs, o.batch_size = batch, o.seed = 3, o.task_opts = task_opts;
    return o;
}

/* a copy of every parameter of m */
static float *snapshot(vs_module *m, int64_t *n)
{
    vs_named_tensors t = {0};
    ck_assert(vs_module_named_tensors(m, VS_STATE_ALL, &t) == VS_OK);
    int64_t size = 0;
    for (int64_t i = 0; i < t.n; i++) size += t.items[i].tensor->size;
    float *p = malloc((size_t)size * sizeof *p), *q = p;
    for (int64_t i = 0; i < t.n; i++, q += t.items[i - 1].tensor->size)
        memcpy(q, t.items[i].tensor->data, (size_t)t.items[i].tensor->size * sizeof *q);
    vs_named_tensors_clear(&t);
    *n = size;
    return p;
}

START_TEST(test_ganmex_trains_against_a_frozen_classifier)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = shapes(48);
    vs_module *m = ganmex_model(d, d->n_classes, 1);
    int64_t n0, n1;
    float *before = snapshot(vs_module_child(m, "classifier"), &n0);
    vs_train_opts o = opts_for(1, 8, "lambda_rec=1");
    vs_train_result r;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(r.task, "ganmex");
    ck_assert_int_eq(r.n_terms, 8);
    ck_assert_msg(isnan(r.loss_history[7]), "g_warm is reported only with warm_start");
    for (int k = 0; k < 7; k++)
        if (k != 3) ck_assert_msg(isfinite(r.loss_history[k]), "term %s", r.terms[k]);
    ck_assert_msg(isnan(r.loss_history[3]), "d_cls is trained only by the ablation");
    ck_assert_msg(vs_train_result_get(&r, "baseline_l2") > 0, "l2 %g", vs_train_result_get(&r, "baseline_l2"));
    ck_assert(isnan(vs_train_result_get(&r, "cls_accuracy_real")));
    float *after = snapshot(vs_module_child(m, "classifier"), &n1);
    ck_assert_int_eq(n0, n1);
    ck_assert_msg(memcmp(before, after, (size_t)n0 * sizeof *before) == 0, "the classifier changed");
    free(before);
    free(after);
    vs_train_result_clear(&r);
    vs_module_free(m);

    /* the stand-alone ablation: D_cls trained jointly */
    m = ganmex_model(d, d->n_classes, 1);
    o.task_opts = "cls=critic,lambda_sim=0";
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert(isfinite(r.loss_history[3]) && isfinite(r.loss_history[4]) && isnan(r.loss_history[6]));
    ck_assert(vs_train_result_get(&r, "cls_accuracy_real") >= 0);
    vs_train_result_clear(&r);
    vs_module_free(m);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

/* A classifier that answers class k whatever it sees (every weight 0, the last bias the unit vector
 * e_k): the target-class rate is then the share of test rows whose drawn target is k.  The targets are
 * drawn from the evaluation's own stream, whatever the classifier, so over k = 0..C-1 the rates are
 * counts over the test rows that add up to 1: a rate computed on the wrong rows, against the labels
 * instead of the targets, or scaled wrongly fails this. */
START_TEST(test_ganmex_target_rate_counts_targets)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = shapes(48);
    const int64_t C = d->n_classes;
    double sum = 0;
    int hit = 0;
    for (int64_t k = 0; k < C; k++) {
        vs_module *m = ganmex_model(d, C, 1);
        vs_named_tensors t = {0};
        ck_assert(vs_module_named_tensors(vs_module_child(m, "classifier"), VS_STATE_PARAMS, &t) == VS_OK);
        vs_tensor *bias = NULL;
        for (int64_t i = 0; i < t.n; i++) {
            memset(t.items[i].tensor->data, 0, (size_t)t.items[i].tensor->size * sizeof(float));
            if (strstr(t.items[i].name, "bias")) bias = t.items[i].tensor;
        }
        ck_assert(bias && bias->size == C);
        bias->data[k] = 1;
        vs_named_tensors_clear(&t);
        vs_train_opts o = opts_for(1, 8, "lambda_rec=1");
        vs_train_result r;
        vs_error err;
        ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
        double rate = vs_train_result_get(&r, "target_class_rate"), rows = rate * (double)r.n_test;
        ck_assert_msg(fabs(rows - nearbyint(rows)) < 1e-9, "class %d: rate %g is not a count over %d test rows", (int)k, rate,
                      (int)r.n_test);
        sum += rate, hit += rate > 0;
        vs_train_result_clear(&r);
        vs_module_free(m);
    }
    ck_assert_msg(fabs(sum - 1) < 1e-12, "the constant classifiers' rates add up to %.17g", sum);
    ck_assert_msg(hit >= 2, "every drawn target was one class (%d classes hit)", hit);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

/* warm_start: the first steps train G alone towards G(x, c) = x (the critic stays as it was drawn)
 * and the squared error falls from one epoch to the next; the GAN steps follow. */
START_TEST(test_ganmex_warm_start_trains_an_autoencoder)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = shapes(48);
    vs_module *m = ganmex_model(d, d->n_classes, 1);
    int64_t n0, n1;
    float *before = snapshot(vs_module_child(m, "critic"), &n0);
    vs_train_opts o = opts_for(3, 8, "warm_start=1000");
    vs_train_result r;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert_int_eq(r.n_terms, 8);
    for (int e = 0; e < 3; e++) {
        ck_assert_msg(isnan(r.loss_history[e * 8 + 0]), "epoch %d: a critic step during the warm start", e);
        ck_assert(isfinite(r.loss_history[e * 8 + 7]));
    }
    ck_assert_msg(r.loss_history[2 * 8 + 7] < r.loss_history[7], "g_warm %g -> %g", r.loss_history[7], r.loss_history[2 * 8 + 7]);
    float *after = snapshot(vs_module_child(m, "critic"), &n1);
    ck_assert_msg(n0 == n1 && memcmp(before, after, (size_t)n0 * sizeof *before) == 0, "the critic changed");
    free(before);
    free(after);
    vs_train_result_clear(&r);
    vs_module_free(m);

    /* past the warm start the GAN steps run */
    m = ganmex_model(d, d->n_classes, 1);
    o.epochs = 1, o.task_opts = "warm_start=2";
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert(isfinite(r.loss_history[0]) && isfinite(r.loss_history[6]) && isfinite(r.loss_history[7]));
    vs_train_result_clear(&r);
    vs_module_free(m);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

START_TEST(test_ganmex_checks_the_classifier)
{
    vs_dataset *d = shapes(16);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_error err;
    vs_train_result res;
    vs_module *m = vs_zoo_build(vs_zoo_find("ganmex"), d, &r, &err);
    vs_train_opts o = opts_for(1, 8, NULL);
    ck_assert(vs_train(m, d, &o, &res, &err) == VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "no \"classifier\"") != NULL, "%s", err.msg);
    vs_module_free(m);
    m = ganmex_model(d, d->n_classes + 2, 1);
    ck_assert(vs_train(m, d, &o, &res, &err) == VS_ERR_SHAPE);
    ck_assert_msg(strstr(err.msg, "outputs per image; the data has") != NULL, "%s", err.msg);
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_generator_baselines_row_by_row)
{
    vs_dataset *d = shapes(8);
    vs_module *m = ganmex_model(d, d->n_classes, 2);
    vs_module_train(m, false);
    const vs_task *task = vs_task_find("ganmex");
    double opt[VS_TASK_MAX_OPTS];
    vs_error err;
    ck_assert(vs_task_opts_parse(task, NULL, opt, &err) == VS_OK);
    vs_tensor *x = vs_tensor_from(VS_SHAPE(4, d->shape[0], d->shape[1], d->shape[2]), d->X);
    int64_t t[4] = {1, 0, 1, 2 % d->n_classes}, per = d->dim;
    vs_tensor *b;
    ck_assert_msg(vs_generator_baselines(m, opt, x, t, &b, &err) == VS_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        vs_scope_begin();
        vs_tensor *xi = vs_tensor_from(VS_SHAPE(1, d->shape[0], d->shape[1], d->shape[2]), d->X + i * per), *yi;
        ck_assert(task->predict(m, opt, xi, t[i], &yi, &err) == VS_OK);
        for (int64_t k = 0; k < per; k++)
            ck_assert_msg(fabsf(yi->data[k] - b->data[i * per + k]) < 1e-5f, "row %d element %lld", i, (long long)k);
        vs_scope_end();
    }
    ck_assert_msg(!vs_module_child(m, "generator")->training, "prediction leaves the generator in the mode it found");
    vs_tensor_free(b);
    /* a classifier is no generator */
    ck_assert(vs_generator_baselines(vs_module_child(m, "classifier"), opt, x, t, &b, &err) != VS_OK);
    vs_tensor_free(x);
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

static Suite *ganmex_suite(void)
{
    Suite *s = suite_create("ganmex");
    TCase *tc = vs_tcase(s, "task", 240);
    tcase_add_test(tc, test_ganmex_trains_against_a_frozen_classifier);
    tcase_add_test(tc, test_ganmex_target_rate_counts_targets);
    tcase_add_test(tc, test_ganmex_warm_start_trains_an_autoencoder);
    tcase_add_test(tc, test_ganmex_checks_the_classifier);
    tcase_add_test(tc, test_generator_baselines_row_by_row);
    return s;
}

VS_TEST_MAIN(ganmex_suite)
