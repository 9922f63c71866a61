/* test_train.c - the training loop: classifiers and Siamese models learn small planted problems,
 * checkpoint + resume ends with the bits of an uninterrupted run, the NaN guard names the epoch and
 * step, memory stays flat, the split follows the documented protocol, class subsets relabel. */
#include "versus/arch.h"
#include "versus/gnn.h"
#include "versus/nn.h"
#include "versus/pairs.h"
#include "versus/safetensors.h"
#include "versus/synth.h"
#include "versus/train.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

enum { BLOB_P = 4, BLOB_C = 3 };

/* n rows in BLOB_C classes: x = mu_y + N(0, 0.5^2) per feature, mu_y = 2 e_y (classes apart by 2.8 sd). */
static vs_dataset *blobs(int64_t n, uint64_t seed)
{
    vs_dataset *d = vs_dataset_new(VS_DATA_TABULAR, "blobs");
    ck_assert_ptr_nonnull(d);
    vs_rng r;
    vs_rng_seed(&r, seed);
    d->n = n, d->n_classes = BLOB_C, d->ndim = 1, d->shape[0] = BLOB_P, d->dim = BLOB_P;
    d->X = malloc((size_t)(n * BLOB_P) * sizeof *d->X);
    d->y = malloc((size_t)n * sizeof *d->y);
    ck_assert(d->X && d->y);
    for (int64_t i = 0; i < n; i++) {
        d->y[i] = i % BLOB_C;
        for (int j = 0; j < BLOB_P; j++) d->X[i * BLOB_P + j] = (float)(2.0 * (j == d->y[i]) + 0.5 * vs_rng_normal(&r));
    }
    return d;
}

/* linear 4 -> 16 [, batch_norm1d, relu, dropout 0.2] -> 3: every kind of state a checkpoint holds. */
static vs_module *small_net(bool stateful, uint64_t seed)
{
    vs_layer_spec l[5];
    int n = 0;
    vs_layer_spec_init(&l[n], VS_MODULE_LINEAR), l[n].in = BLOB_P, l[n++].out = 16;
    if (stateful) vs_layer_spec_init(&l[n], VS_MODULE_BATCH_NORM1D), l[n++].features = 16;
    vs_layer_spec_init(&l[n++], VS_MODULE_RELU);
    if (stateful) vs_layer_spec_init(&l[n], VS_MODULE_DROPOUT), l[n++].p = 0.2;
    vs_layer_spec_init(&l[n], VS_MODULE_LINEAR), l[n].in = 16, l[n++].out = BLOB_C;
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_sequential_from_spec(l, n, 0, NULL, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

static vs_module *siamese_net(uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_arch_siamese_mlp(BLOB_P, 16, 8, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

static vs_train_opts opts_for(int64_t epochs, int64_t batch, float lr)
{
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = epochs, o.batch_size = batch, o.optim = vs_adam_opts(lr), o.seed = 7;
    return o;
}

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/vs_test_train_%ld_%s", vs_test_tmpdir(), (long)getpid(), name);
}

START_TEST(test_classifier_learns)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = blobs(300, 1);
    vs_module *m = small_net(false, 3);
    vs_train_opts o = opts_for(15, 32, 0.01f);
    vs_train_result res;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    ck_assert(strcmp(res.task, "classifier") == 0 && !res.interrupted);
    ck_assert_int_eq(res.epochs, 15);
    ck_assert_int_eq(res.global_step, 15 * 7); /* 210 train rows in batches of 32 */
    ck_assert_int_eq(res.n_train, 210);
    ck_assert_int_eq(res.n_test, 90);
    ck_assert_msg(vs_train_result_get(&res, "train_accuracy") >= 0.95 && vs_train_result_get(&res, "test_accuracy") >= 0.95, "accuracy %g / %g", vs_train_result_get(&res, "train_accuracy"), vs_train_result_get(&res, "test_accuracy"));
    ck_assert(res.loss_history[14] < 0.5 * res.loss_history[0]);
    ck_assert(res.final_loss == res.loss_history[14]);
    vs_train_result_clear(&res);
    vs_module_free(m);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

/* The train accuracy is counted on the last epoch's steps: with a learning rate of 0 (weights fixed)
 * and no dropout it is the accuracy of the model on the train rows (pairs), evaluated after training
 * (here: the same run with 0 epochs, where the loop has no steps to count and evaluates). */
static void accuracy_from_steps(bool siamese)
{
    vs_dataset *d = blobs(200, 3);
    vs_module *m = siamese ? siamese_net(5) : small_net(false, 5), *m0 = siamese ? siamese_net(5) : small_net(false, 5);
    vs_train_opts o = opts_for(2, 24, 0.0f);
    vs_train_result res, res0;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    o.epochs = 0;
    ck_assert_msg(vs_train(m0, d, &o, &res0, &err) == VS_OK, "%s", err.msg);
    const double a = vs_train_result_get(&res, "train_accuracy"), a0 = vs_train_result_get(&res0, "train_accuracy");
    ck_assert_msg(a == a0 && a > 0.1 && a < 0.95, "%s train accuracy from the steps %g, evaluated %g", siamese ? "pair" : "", a, a0);
    ck_assert(vs_train_result_get(&res, "test_accuracy") == vs_train_result_get(&res0, "test_accuracy"));
    vs_train_result_clear(&res);
    vs_train_result_clear(&res0);
    vs_module_free(m);
    vs_module_free(m0);
    vs_dataset_free(d);
}

START_TEST(test_train_accuracy_from_steps)
{
    accuracy_from_steps(false);
    accuracy_from_steps(true);
}
END_TEST

static void siamese_learns(vs_pairing pairing)
{
    vs_dataset *d = blobs(240, 2);
    vs_module *m = siamese_net(5);
    vs_train_opts o = opts_for(10, 32, 0.01f);
    o.pairing = pairing;
    vs_train_result res;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(res.task, "siamese");
    ck_assert_int_eq(res.n_train, 168 * 4); /* SNX: 2 same + 2 different partners per train row */
    ck_assert_int_eq(res.n_test, 72 * 4);
    ck_assert_msg(vs_train_result_get(&res, "train_accuracy") >= 0.9 && vs_train_result_get(&res, "test_accuracy") >= 0.9, "pair accuracy %g / %g", vs_train_result_get(&res, "train_accuracy"),
                  vs_train_result_get(&res, "test_accuracy"));
    vs_train_result_clear(&res);
    vs_module_free(m);
    vs_dataset_free(d);
}

START_TEST(test_siamese_snx_learns) { siamese_learns(VS_PAIRING_FIXED); }
END_TEST

START_TEST(test_siamese_random_learns) { siamese_learns(VS_PAIRING_RANDOM); }
END_TEST

/* ---- checkpoint and resume ---------------------------------------------------------------------------- */

typedef struct stopper {
    volatile sig_atomic_t flag;
    int64_t at;           /* set the flag after this global step */
    int64_t live_first;   /* live tensors after the first step */
    int64_t live_changes; /* steps whose live count differed */
} stopper;

static void on_step(void *user, const vs_train_progress *p)
{
    stopper *s = user;
    if (p->global_step == s->at) s->flag = 1;
    if (p->global_step == 1)
        s->live_first = vs_live_tensors();
    else if (vs_live_tensors() != s->live_first)
        s->live_changes++;
}

static void assert_same_bits(vs_module *a, vs_module *b)
{
    vs_named_tensors la = {0}, lb = {0};
    ck_assert_int_eq(vs_module_named_tensors(a, VS_STATE_ALL, &la), VS_OK);
    ck_assert_int_eq(vs_module_named_tensors(b, VS_STATE_ALL, &lb), VS_OK);
    ck_assert_int_eq(la.n, lb.n);
    for (int64_t i = 0; i < la.n; i++) {
        ck_assert_str_eq(la.items[i].name, lb.items[i].name);
        ck_assert_int_eq(la.items[i].tensor->size, lb.items[i].tensor->size);
        ck_assert_msg(memcmp(la.items[i].tensor->data, lb.items[i].tensor->data, (size_t)la.items[i].tensor->size * sizeof(float)) == 0,
                      "%s differs", la.items[i].name);
    }
    vs_named_tensors_clear(&la);
    vs_named_tensors_clear(&lb);
}

/* Uninterrupted run vs. a run stopped after `stop_at` steps and resumed (from a model built with
 * other initial weights, so everything must come from the checkpoint). */
static void resume_matches(bool siamese, vs_pairing pairing, int64_t stop_at)
{
    vs_dataset *d = blobs(150, 4);
    char path_a[512], path_b[512];
    tmp_path(path_a, sizeof path_a, "a.safetensors");
    tmp_path(path_b, sizeof path_b, "b.safetensors");
    vs_train_opts o = opts_for(3, 16, 0.01f);
    o.pairing = pairing;
    vs_error err;
    vs_train_result ra, rb, rc;

    vs_module *a = siamese ? siamese_net(11) : small_net(true, 11);
    o.checkpoint = path_a;
    ck_assert_msg(vs_train(a, d, &o, &ra, &err) == VS_OK, "%s", err.msg);

    stopper s = {.at = stop_at};
    vs_module *b = siamese ? siamese_net(11) : small_net(true, 11);
    o.checkpoint = path_b, o.stop = &s.flag, o.on_step = on_step, o.user = &s;
    ck_assert_msg(vs_train(b, d, &o, &rb, &err) == VS_OK, "%s", err.msg);
    ck_assert(rb.interrupted);
    ck_assert_int_eq(rb.global_step, stop_at);
    ck_assert(isnan(vs_train_result_get(&rb, "test_accuracy")));
    ck_assert_int_eq(s.live_changes, 0); /* memory flat from step to step */

    vs_module *c = siamese ? siamese_net(99) : small_net(true, 99);
    o.stop = NULL, o.on_step = NULL, o.resume = true;
    ck_assert_msg(vs_train(c, d, &o, &rc, &err) == VS_OK, "%s", err.msg);
    ck_assert(!rc.interrupted);
    ck_assert_int_eq(rc.global_step, ra.global_step);
    assert_same_bits(a, c);
    ck_assert(memcmp(ra.loss_history, rc.loss_history, 3 * sizeof(double)) == 0);
    ck_assert(vs_train_result_get(&ra, "test_accuracy") == vs_train_result_get(&rc, "test_accuracy"));
    /* the last epoch ran whole after the resume, with the same dropout masks: the same count */
    ck_assert(vs_train_result_get(&ra, "train_accuracy") == vs_train_result_get(&rc, "train_accuracy"));

    vs_train_result_clear(&ra);
    vs_train_result_clear(&rb);
    vs_train_result_clear(&rc);
    vs_module_free(a);
    vs_module_free(b);
    vs_module_free(c);
    vs_dataset_free(d);
    unlink(path_a);
    unlink(path_b);
}

/* 105 train rows in batches of 16: 7 steps per epoch; 10 stops inside epoch 2, 7 at its start. */
START_TEST(test_resume_classifier_mid_epoch) { resume_matches(false, VS_PAIRING_FIXED, 10); }
END_TEST

START_TEST(test_resume_classifier_epoch_end) { resume_matches(false, VS_PAIRING_FIXED, 7); }
END_TEST

START_TEST(test_resume_siamese_random_pairs) { resume_matches(true, VS_PAIRING_RANDOM, 33); }
END_TEST

START_TEST(test_checkpoint_file_and_option_checks)
{
    vs_dataset *d = blobs(90, 5);
    char path[512];
    tmp_path(path, sizeof path, "c.safetensors");
    vs_module *m = small_net(true, 1);
    vs_train_opts o = opts_for(1, 16, 0.01f);
    o.checkpoint = path, o.checkpoint_every = 2;
    vs_train_result res;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    vs_train_result_clear(&res);

    /* a plain safetensors file: model and Adam state (optimiser "model") under their prefixes, the loop state as metadata */
    vs_safetensors *f;
    ck_assert_msg(vs_safetensors_read(path, &f, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(vs_safetensors_meta_get(f, "format"), VS_TRAIN_CHECKPOINT_FORMAT);
    ck_assert_ptr_nonnull(strstr(vs_safetensors_meta_get(f, "state"), "\"epoch\":1,\"step\":0"));
    ck_assert_ptr_nonnull(vs_safetensors_get(f, "model.0.weight"));
    ck_assert_ptr_nonnull(vs_safetensors_get(f, "model.1.running_var"));
    const vs_tensor *steps = vs_safetensors_get(f, "optim.model.adam.step.0.weight");
    ck_assert_ptr_nonnull(steps);
    ck_assert_float_eq(steps->data[0], 4.0f); /* 63 train rows in batches of 16: 4 steps */
    vs_safetensors_free(f);

    /* resuming with another batch size is refused, naming the option */
    o.resume = true, o.batch_size = 8, o.epochs = 2;
    ck_assert_int_eq(vs_train(m, d, &o, &res, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "batch_size 16, this run has 8"));
    /* more epochs than asked for */
    o.batch_size = 16, o.epochs = 0;
    ck_assert_int_eq(vs_train(m, d, &o, &res, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "1 epochs done"));
    /* no checkpoint */
    unlink(path);
    o.epochs = 2;
    ck_assert_int_eq(vs_train(m, d, &o, &res, &err), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

/* ---- guards ------------------------------------------------------------------------------------------ */

START_TEST(test_nan_guard)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = blobs(90, 6);
    vs_module *m = small_net(false, 2);
    vs_train_opts o = opts_for(5, 16, 0);
    o.optim = vs_sgd_opts(1e30f);
    vs_train_result res;
    vs_error err;
    ck_assert_int_eq(vs_train(m, d, &o, &res, &err), VS_ERR_NUMERIC);
    ck_assert_msg(strstr(err.msg, "training diverged at epoch 1/5, step 2/4") != NULL, "%s", err.msg);
    ck_assert_int_eq(res.global_step, 1);
    vs_module_free(m);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

START_TEST(test_model_must_fit_data)
{
    vs_dataset *d = blobs(60, 7);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_error err;
    vs_train_opts o = opts_for(1, 16, 0.01f);
    vs_train_result res;
    vs_module *wide = vs_arch_siamese_mlp(5, 8, 4, &r, &err); /* expects 5 features */
    ck_assert_int_eq(vs_train(wide, d, &o, &res, &err), VS_ERR_SHAPE);
    ck_assert_msg(strstr(err.msg, "the model does not fit blobs (rows [4])") != NULL, "%s", err.msg);
    vs_module_free(wide);
    vs_module *two = vs_sequential_new();
    vs_sequential_add(two, vs_linear_new(BLOB_P, 2, true, &r)); /* 2 scores for 3 classes */
    ck_assert_int_eq(vs_train(two, d, &o, &res, &err), VS_ERR_SHAPE);
    ck_assert_msg(strstr(err.msg, "expected [16,3]") != NULL, "%s", err.msg);
    vs_module_free(two);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_progress_format_and_silence)
{
    char line[256];
    vs_train_progress p = {.epoch = 2, .epochs = 10, .step = 57, .steps = 110, .loss = 0.23449, .rate = 61.3};
    vs_train_progress_format(&p, line, sizeof line);
    /* 8 * 110 + 53 = 933 steps left at 61.3 steps/s: 15 s */
    ck_assert_str_eq(line, "epoch 2/10 [##########..........] step 57/110  loss 0.2345  61.3 steps/s  ETA 0:15");
    p.rate = 0.1;
    vs_train_progress_format(&p, line, sizeof line);
    ck_assert_ptr_nonnull(strstr(line, "ETA 2:35:30"));
    /* every term computed so far, those not yet computed left out */
    static const char *const terms[] = {"d_loss", "g_loss", "gp", NULL};
    p = (vs_train_progress){.epoch = 1, .epochs = 1, .step = 1, .steps = 2, .n_terms = 3, .terms = terms, .term = {-1.20345, NAN, 0.1}};
    vs_train_progress_format(&p, line, sizeof line);
    ck_assert_str_eq(line, "epoch 1/1 [##########..........] step 1/2  d_loss -1.203  gp 0.1  0.0 steps/s  ETA ?");

    /* not a terminal: no bar is drawn (no carriage returns), each epoch ends with a plain line that a log
     * under nohup or Slurm keeps */
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    vs_dataset *d = blobs(60, 8);
    vs_module *m = small_net(false, 2);
    vs_train_opts o = opts_for(2, 16, 0.01f);
    o.progress = f;
    vs_train_result res;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    long len = ftell(f);
    ck_assert(len > 0 && len < 4096);
    char log[4096];
    rewind(f);
    ck_assert_int_eq((long)fread(log, 1, sizeof log - 1, f), len);
    log[len] = 0;
    ck_assert_msg(!strchr(log, '\r') && !strstr(log, "[#"), "a bar was drawn off a terminal: %s", log);
    ck_assert_msg(strstr(log, "epoch 1/2") && strstr(log, "epoch 2/2") && log[len - 1] == '\n', "epoch lines: %s", log);
    fclose(f);
    vs_train_result_clear(&res);
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

/* ---- graphs: a nitro ring (N and O nodes) planted in the positives -------------------------------------------------------------------------------------------- */

static vs_dataset *house_graphs(int64_t n)
{
    vs_synth_graph_opts g;
    vs_synth_graph_defaults(&g);
    g.n = n, g.min_nodes = 8, g.max_nodes = 14, g.seed = 3, g.motif = VS_MOTIF_NITRO_RING;
    vs_dataset *d;
    vs_error err;
    ck_assert_msg(vs_synth_graphs(&g, &d, &err) == VS_OK, "%s", err.msg);
    return d;
}

START_TEST(test_graph_siamese_and_classifier)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = house_graphs(80);
    vs_rng r;
    vs_rng_seed(&r, 4);
    vs_error err;
    vs_train_result res;
    vs_train_opts o = opts_for(15, 16, 0.003f);

    vs_module *s = vs_arch_siamese_gnn(VS_MODULE_GIN_CONV, d->n_node_features, 16, 3, 16, &r, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    ck_assert_msg(vs_train(s, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(res.task, "siamese");
    ck_assert_msg(vs_train_result_get(&res, "train_accuracy") >= 0.85 && vs_train_result_get(&res, "test_accuracy") >= 0.85, "GIN pair accuracy %g / %g", vs_train_result_get(&res, "train_accuracy"),
                  vs_train_result_get(&res, "test_accuracy"));
    vs_train_result_clear(&res);
    vs_module_free(s);

    /* a graph classifier: GIN layers, mean readout, linear */
    vs_module *c = vs_sequential_new();
    vs_sequential_add(c, vs_gin_conv_new(d->n_node_features, 16, 16, 0, false, &r));
    vs_sequential_add(c, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(c, vs_gin_conv_new(16, 16, 16, 0, false, &r));
    vs_sequential_add(c, vs_readout_new(VS_MODULE_MEAN_READOUT));
    vs_sequential_add(c, vs_linear_new(16, 2, true, &r));
    o.optim = vs_adam_opts(0.01f);
    ck_assert_msg(vs_train(c, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    ck_assert_msg(vs_train_result_get(&res, "train_accuracy") >= 0.85 && vs_train_result_get(&res, "test_accuracy") >= 0.85, "GIN classifier accuracy %g / %g", vs_train_result_get(&res, "train_accuracy"),
                  vs_train_result_get(&res, "test_accuracy"));
    vs_train_result_clear(&res);
    vs_module_free(c);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

/* ---- split and subsets ------------------------------------------------------------------------------ */

START_TEST(test_split_protocol)
{
    vs_dataset *d = blobs(120, 9);
    vs_train_split s;
    vs_error err;
    ck_assert_int_eq(vs_train_split_make(d, NULL, 42, 0.7, true, &s, &err), VS_OK);
    /* the documented recipe, by hand */
    vs_rng r;
    vs_rng_seed(&r, 42);
    int64_t *tr, *te, ntr, nte;
    vs_pairs *ptr, *pte;
    ck_assert_int_eq(vs_split_stratified(d->y, d->n, d->n_classes, 0.7, &r, &tr, &ntr, &te, &nte, &err), VS_OK);
    ck_assert_int_eq(vs_pairs_snx(d->y, d->n, d->n_classes, tr, ntr, 2, 2, &r, &ptr, &err), VS_OK);
    ck_assert_int_eq(vs_pairs_snx(d->y, d->n, d->n_classes, te, nte, 2, 2, &r, &pte, &err), VS_OK);
    ck_assert_int_eq(s.n_train, ntr);
    ck_assert_int_eq(s.n_test, nte);
    ck_assert(memcmp(s.train, tr, (size_t)ntr * sizeof *tr) == 0 && memcmp(s.test, te, (size_t)nte * sizeof *te) == 0);
    ck_assert_int_eq(s.test_pairs->n, pte->n);
    ck_assert(memcmp(s.test_pairs->idx, pte->idx, (size_t)(2 * pte->n) * sizeof *pte->idx) == 0);
    ck_assert(memcmp(s.train_pairs->label, ptr->label, (size_t)ptr->n * sizeof *ptr->label) == 0);
    free(tr);
    free(te);
    vs_pairs_free(ptr);
    vs_pairs_free(pte);
    vs_train_split_clear(&s);

    /* a separate test set: all rows train, all of the other set's rows test */
    vs_dataset *t = blobs(30, 10);
    ck_assert_int_eq(vs_train_split_make(d, t, 42, 0.7, false, &s, &err), VS_OK);
    ck_assert_int_eq(s.n_train, 120);
    ck_assert_int_eq(s.n_test, 30);
    ck_assert_int_eq(s.test[29], 29);
    ck_assert_ptr_null(s.train_pairs);
    vs_train_split_clear(&s);
    vs_dataset_free(t);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_select_classes)
{
    vs_dataset *d = vs_dataset_new(VS_DATA_TABULAR, "ten");
    d->n = 20, d->n_classes = 10, d->ndim = 1, d->shape[0] = 1, d->dim = 1;
    d->X = malloc(20 * sizeof *d->X);
    d->y = malloc(20 * sizeof *d->y);
    d->class_names = calloc(10, sizeof *d->class_names);
    for (int i = 0; i < 20; i++) d->X[i] = (float)i, d->y[i] = i % 10;
    for (int c = 0; c < 10; c++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", c);
        d->class_names[c] = strdup(name);
    }
    vs_dataset *s;
    vs_error err;
    ck_assert_int_eq(vs_dataset_select_classes(d, (const int64_t[]){9, 5, 7}, 3, &s, &err), VS_OK);
    ck_assert_int_eq(s->n, 6);
    ck_assert_int_eq(s->n_classes, 3);
    ck_assert_str_eq(s->class_names[0], "c9");
    ck_assert_str_eq(s->class_names[2], "c7");
    const float want_x[6] = {5, 7, 9, 15, 17, 19};
    const int64_t want_y[6] = {1, 2, 0, 1, 2, 0};
    for (int i = 0; i < 6; i++) {
        ck_assert_float_eq(s->X[i], want_x[i]);
        ck_assert_int_eq(s->y[i], want_y[i]);
    }
    vs_dataset_free(s);
    ck_assert_int_eq(vs_dataset_select_classes(d, (const int64_t[]){5, 5}, 2, &s, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "class 5 is listed twice"));
    ck_assert_int_eq(vs_dataset_select_classes(d, (const int64_t[]){10}, 1, &s, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "class 10 is not one of the 10 classes of ten"));
    vs_dataset_free(d);
}
END_TEST

static Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = vs_tcase(s, "learning", 60);
    tcase_add_test(tc, test_classifier_learns);
    tcase_add_test(tc, test_siamese_snx_learns);
    tcase_add_test(tc, test_siamese_random_learns);
    tcase_add_test(tc, test_graph_siamese_and_classifier);
    tc = vs_tcase(s, "checkpoints", 60);
    tcase_add_test(tc, test_train_accuracy_from_steps);
    tcase_add_test(tc, test_resume_classifier_mid_epoch);
    tcase_add_test(tc, test_resume_classifier_epoch_end);
    tcase_add_test(tc, test_resume_siamese_random_pairs);
    tcase_add_test(tc, test_checkpoint_file_and_option_checks);
    tc = vs_tcase(s, "guards and pieces", 30);
    tcase_add_test(tc, test_nan_guard);
    tcase_add_test(tc, test_model_must_fit_data);
    tcase_add_test(tc, test_progress_format_and_silence);
    tcase_add_test(tc, test_split_protocol);
    tcase_add_test(tc, test_select_classes);
    return s;
}

VS_TEST_MAIN(train_suite)
