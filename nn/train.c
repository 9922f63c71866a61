/* train.c - the training loop: seeded epochs of shuffled minibatches, one vs_scope per step, the
 * NaN/Inf guard, checkpoints (periodic, at epoch ends, on a stop request) and the final evaluation.
 * Checkpoint files are train_ckpt.c's, the progress bar train_progress.c's. */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_train_opts_init(vs_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 10;
    o->batch_size = 64;
    o->optim = vs_adam_opts(1e-3f);
    o->seed = 1;
    o->train_frac = 0.7;
    o->pairing = VS_PAIRING_SNX;
    o->siamese_scale = VS_TRAIN_SIAMESE_SCALE;
}

void vs_train_result_clear(vs_train_result *r)
{
    if (!r) return;
    free(r->loss_history);
    r->loss_history = NULL;
}

static vs_status check_opts(const vs_dataset *d, const vs_train_opts *o, vs_error *err)
{
    if (o->epochs < 0) return vs_error_set(err, VS_ERR_ARG, "train: %lld epochs, expected >= 0", (long long)o->epochs);
    if (o->batch_size < 1 || o->batch_size > ((int64_t)1 << 24))
        return vs_error_set(err, VS_ERR_ARG, "train: batch size %lld, expected 1 to 2^24", (long long)o->batch_size);
    if (!o->test && !(o->train_frac > 0 && o->train_frac < 1))
        return vs_error_set(err, VS_ERR_ARG, "train: train fraction %g, expected in (0, 1)", o->train_frac);
    if (!(o->siamese_scale > 0 && isfinite(o->siamese_scale)))
        return vs_error_set(err, VS_ERR_ARG, "train: Siamese scale %g, expected > 0", (double)o->siamese_scale);
    if (o->pairing != VS_PAIRING_SNX && o->pairing != VS_PAIRING_RANDOM)
        return vs_error_set(err, VS_ERR_ARG, "train: unknown pairing %d", (int)o->pairing);
    if (o->checkpoint_every < 0) return vs_error_set(err, VS_ERR_ARG, "train: checkpoint interval below 0");
    if (o->resume && !o->checkpoint) return vs_error_set(err, VS_ERR_ARG, "train: resuming needs a checkpoint file");
    if (d->n < 1 || !d->y) return vs_error_set(err, VS_ERR_ARG, "train: %s has no labelled rows", d->name ? d->name : "the data");
    if (d->kind != VS_DATA_GRAPHS && !d->X) return vs_error_set(err, VS_ERR_ARG, "train: %s has no feature rows", d->name ? d->name : "the data");
    if (d->kind == VS_DATA_GRAPHS && !d->graphs) return vs_error_set(err, VS_ERR_ARG, "train: %s has no graphs", d->name ? d->name : "the data");
    const vs_dataset *t = o->test;
    if (t && (t->kind != d->kind || t->dim != d->dim || memcmp(t->shape, d->shape, sizeof d->shape) != 0 ||
              t->n_node_features != d->n_node_features || t->n_classes != d->n_classes))
        return vs_error_set(err, VS_ERR_ARG, "train: the test set %s does not have the kind, shape and classes of %s",
                            t->name ? t->name : "", d->name ? d->name : "the training data");
    if (t && (t->n < 1 || !t->y)) return vs_error_set(err, VS_ERR_ARG, "train: the test set has no labelled rows");
    return VS_OK;
}

static int64_t steps_per_epoch(const vs_trainer *t)
{
    return (t->n_items + t->o->batch_size - 1) / t->o->batch_size;
}

/* Draw this epoch's order (and random pairs) from t->order, remembering where the stream stood. */
static vs_status epoch_begin(vs_trainer *t, vs_error *err)
{
    t->order_at_epoch = t->order;
    if (t->siamese && t->o->pairing == VS_PAIRING_RANDOM) {
        vs_pairs_free(t->random_pairs);
        t->random_pairs = NULL;
        vs_status st = vs_pairs_random(t->d->y, t->d->n, t->d->n_classes, t->split.train, t->split.n_train,
                                       VS_TRAIN_PAIRS_PER_ROW * t->split.n_train, &t->order, &t->random_pairs, err);
        if (st != VS_OK) return st;
        t->pairs = t->random_pairs;
    }
    t->n_items = t->siamese ? t->pairs->n : t->split.n_train;
    size_t *p = realloc(t->perm, (size_t)(t->n_items ? t->n_items : 1) * sizeof *p);
    if (!p) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    t->perm = p;
    for (int64_t i = 0; i < t->n_items; i++) p[i] = (size_t)i;
    vs_rng_shuffle(&t->order, p, (size_t)t->n_items);
    return VS_OK;
}

static vs_status diverged(const vs_trainer *t, vs_error *err, const char *why)
{
    return vs_error_set(err, VS_ERR_NUMERIC, "training diverged at epoch %lld/%lld, step %lld/%lld: %s (a smaller learning rate may help)",
                        (long long)t->epoch + 1, (long long)t->o->epochs, (long long)t->step + 1, (long long)steps_per_epoch(t), why);
}

/* Forward, backward and update on the items t->batch[0..nb); *loss receives the batch loss. */
static vs_status train_step(vs_trainer *t, int64_t nb, double *loss, vs_error *err)
{
    vs_status st = VS_OK;
    vs_tensor *l = NULL;
    vs_scope_begin();
    if (t->siamese) {
        vs_tensor *s = vs_train_similarity(t->m, t->d, t->pairs, t->batch, nb, &t->dropout, err);
        vs_tensor *target = s ? vs_tensor_new(VS_SHAPE(nb)) : NULL;
        for (int64_t k = 0; target && k < nb; k++) target->data[k] = t->pairs->label[t->batch[k]] ? 1.0f : 0.0f;
        if (s) l = vs_bce_with_logits(vs_mul_scalar(s, t->o->siamese_scale), target);
        if (!s) st = err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
    } else {
        vs_graph_batch g = {0};
        vs_tensor *y = vs_train_logits(t->m, t->d, t->batch, nb, &t->dropout, &g, err);
        for (int64_t k = 0; y && k < nb; k++) t->labels[k] = t->d->y[t->batch[k]];
        if (y) l = vs_cross_entropy(y, t->labels);
        if (!y) st = err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
        vs_graph_batch_clear(&g);
    }
    if (st == VS_OK && !l) st = vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_NOMEM, "train: loss: %s", vs_last_error()->msg);
    if (st == VS_OK) {
        *loss = vs_item(l);
        if (!isfinite(*loss)) {
            char why[64];
            snprintf(why, sizeof why, "the loss is %s", isnan(*loss) ? "nan" : "inf");
            st = diverged(t, err, why);
        }
    }
    if (st == VS_OK && vs_backward(l, NULL, false) != VS_OK)
        st = vs_error_set(err, vs_last_error()->code, "train: backward: %s", vs_last_error()->msg);
    if (st == VS_OK) {
        vs_error e;
        vs_error_clear(&e);
        st = vs_optim_step(t->opt, &e);
        if (st == VS_ERR_NUMERIC) st = diverged(t, err, e.msg);
        else if (st != VS_OK) vs_error_set(err, st, "train: %s", e.msg);
    }
    vs_optim_zero_grad(t->opt);
    vs_scope_end();
    return st;
}

static void progress_of(const vs_trainer *t, double session_seconds, int64_t session_steps, vs_train_progress *p)
{
    p->epoch = t->epoch + 1;
    p->epochs = t->o->epochs;
    p->step = t->step;
    p->steps = steps_per_epoch(t);
    p->global_step = t->global_step;
    p->loss = t->loss_count ? t->loss_sum / (double)t->loss_count : NAN;
    p->seconds = session_seconds;
    p->rate = session_seconds > 0 ? (double)session_steps / session_seconds : 0;
}

static void trainer_clear(vs_trainer *t)
{
    vs_train_split_clear(&t->split);
    vs_optim_free(t->opt);
    vs_pairs_free(t->random_pairs);
    free(t->history);
    free(t->perm);
    free(t->batch);
    free(t->labels);
}

static vs_status evaluate(vs_trainer *t, vs_train_result *res, vs_error *err)
{
    vs_progress_bar bar;
    vs_progress_bar_init(&bar, t->o->progress);
    char line[128];
    snprintf(line, sizeof line, "evaluating on the train and test %s", t->siamese ? "pairs" : "rows");
    vs_progress_bar_line(&bar, line);
    vs_status st;
    if (t->siamese) {
        res->n_train = t->split.train_pairs ? t->split.train_pairs->n : 0;
        res->n_test = t->split.test_pairs ? t->split.test_pairs->n : 0;
        st = vs_train_pair_accuracy(t->m, t->d, t->split.train_pairs, &res->train_accuracy, err);
        if (st == VS_OK) st = vs_train_pair_accuracy(t->m, t->td, t->split.test_pairs, &res->test_accuracy, err);
    } else {
        res->n_train = t->split.n_train;
        res->n_test = t->split.n_test;
        st = vs_train_accuracy(t->m, t->d, t->split.train, t->split.n_train, &res->train_accuracy, err);
        if (st == VS_OK) st = vs_train_accuracy(t->m, t->td, t->split.test, t->split.n_test, &res->test_accuracy, err);
    }
    return st;
}

/* The epochs; returns with t->epoch == epochs, or early on an error or a stop request. */
static vs_status run_epochs(vs_trainer *t, vs_train_result *res, vs_error *err)
{
    const vs_train_opts *o = t->o;
    vs_progress_bar bar;
    vs_progress_bar_init(&bar, o->progress);
    double t0 = vs_train_now(), before = t->seconds;
    int64_t session_steps = 0;
    vs_status st = VS_OK;
    vs_module_train(t->m, true);
    while (st == VS_OK && t->epoch < o->epochs) {
        if ((st = epoch_begin(t, err)) != VS_OK) break;
        int64_t S = steps_per_epoch(t);
        while (st == VS_OK && t->step < S) {
            if (o->stop && *o->stop) {
                res->interrupted = true;
                break;
            }
            int64_t i0 = t->step * o->batch_size, nb = t->n_items - i0 < o->batch_size ? t->n_items - i0 : o->batch_size;
            for (int64_t k = 0; k < nb; k++) {
                size_t item = t->perm[i0 + k];
                t->batch[k] = t->siamese ? (int64_t)item : t->split.train[item];
            }
            double loss;
            if ((st = train_step(t, nb, &loss, err)) != VS_OK) break;
            t->step++, t->global_step++, session_steps++;
            t->loss_sum += loss, t->loss_count++;
            t->seconds = before + (vs_train_now() - t0);
            vs_train_progress p;
            progress_of(t, t->seconds - before, session_steps, &p);
            vs_progress_bar_update(&bar, &p, t->step == S);
            if (o->on_step) o->on_step(o->user, &p);
            if (o->checkpoint && o->checkpoint_every && t->global_step % o->checkpoint_every == 0 && t->step < S)
                st = vs_train_checkpoint_write(t, err);
        }
        if (st != VS_OK || res->interrupted) break;
        /* epoch done: the next epoch starts from the stream as it stands now */
        t->history[t->epoch] = t->loss_count ? t->loss_sum / (double)t->loss_count : NAN;
        char line[128];
        snprintf(line, sizeof line, "epoch %lld/%lld  loss %.4f  %.1f s", (long long)t->epoch + 1, (long long)o->epochs,
                 t->history[t->epoch], t->seconds);
        vs_progress_bar_line(&bar, line);
        t->epoch++, t->step = 0, t->loss_sum = 0, t->loss_count = 0;
        t->order_at_epoch = t->order;
        if (o->checkpoint) st = vs_train_checkpoint_write(t, err);
    }
    vs_progress_bar_done(&bar);
    if (st == VS_OK && res->interrupted && o->checkpoint) st = vs_train_checkpoint_write(t, err);
    return st;
}

vs_status vs_train(vs_module *m, const vs_dataset *d, const vs_train_opts *o, vs_train_result *res, vs_error *err)
{
    memset(res, 0, sizeof *res);
    res->final_loss = res->train_accuracy = res->test_accuracy = NAN;
    vs_status st = check_opts(d, o, err);
    if (st != VS_OK) return st;
    vs_trainer t = {.m = m, .d = d, .td = o->test ? o->test : d, .o = o, .siamese = m->kind == VS_MODULE_SIAMESE};
    res->siamese = t.siamese;
    st = vs_train_split_make(d, o->test, o->seed, o->train_frac, t.siamese, &t.split, err);
    if (st == VS_OK) {
        t.pairs = t.split.train_pairs;
        t.opt = vs_optim_new_module(&o->optim, m, err);
        t.history = calloc((size_t)(o->epochs > 0 ? o->epochs : 1), sizeof *t.history);
        t.batch = malloc((size_t)o->batch_size * sizeof *t.batch);
        t.labels = malloc((size_t)o->batch_size * sizeof *t.labels);
        if (!t.opt) st = err && err->code != VS_OK ? err->code : VS_ERR_ARG;
        else if (!t.history || !t.batch || !t.labels) st = vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    }
    if (st == VS_OK && t.split.n_train < 1) st = vs_error_set(err, VS_ERR_ARG, "train: the split left no training rows");
    if (st == VS_OK) {
        vs_rng root;
        vs_rng_seed(&root, o->seed ^ VS_TRAIN_STREAM);
        t.order = vs_rng_split(&root);
        t.dropout = vs_rng_split(&root);
        if (o->resume) st = vs_train_checkpoint_read(&t, err);
    }
    if (st == VS_OK) st = run_epochs(&t, res, err);
    res->epochs = t.epoch;
    res->global_step = t.global_step;
    res->seconds = t.seconds;
    if (t.epoch > 0 && t.history) res->final_loss = t.history[t.epoch - 1];
    if (st == VS_OK && !res->interrupted) st = evaluate(&t, res, err);
    if (st == VS_OK) {
        res->loss_history = t.history;
        t.history = NULL;
    }
    trainer_clear(&t);
    return st;
}
