/* train.c - the training loop shared by every task (versus/task.h): seeded epochs of shuffled
 * minibatches, one vs_scope per step, learning-rate schedules, checkpoints (periodic, at epoch
 * ends, on a stop request), sample grids and the final evaluation.  The update of one optimiser
 * with its NaN/Inf guard and clipping is vs_task_update (task_run.c); checkpoint files are
 * train_ckpt.c's, the progress bar train_progress.c's, options and results train_opts.c's. */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t vs_train_steps_per_epoch(const vs_trainer *t)
{
    return (t->n_items + t->o->batch_size - 1) / t->o->batch_size;
}

vs_status vs_train_diverged(const vs_trainer *t, vs_error *err, const char *why)
{
    return vs_error_set(err, VS_ERR_NUMERIC, "training diverged at epoch %lld/%lld, step %lld/%lld: %s (a smaller learning rate may help)",
                        (long long)t->epoch + 1, (long long)t->o->epochs, (long long)t->step + 1,
                        (long long)vs_train_steps_per_epoch(t), why);
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
    if (o->pairing != VS_PAIRING_FIXED && o->pairing != VS_PAIRING_RANDOM)
        return vs_error_set(err, VS_ERR_ARG, "train: unknown pairing %d", (int)o->pairing);
    if (o->checkpoint_every < 0) return vs_error_set(err, VS_ERR_ARG, "train: checkpoint interval below 0");
    if (o->sample_every < 0) return vs_error_set(err, VS_ERR_ARG, "train: sample interval below 0");
    if (o->sample_every > 0 && !o->sample_dir) return vs_error_set(err, VS_ERR_ARG, "train: samples need a directory");
    if (o->resume && !o->checkpoint) return vs_error_set(err, VS_ERR_ARG, "train: resuming needs a checkpoint file");
    if (o->n_per_optim < 0 || (o->n_per_optim > 0 && !o->per_optim)) return vs_error_set(err, VS_ERR_ARG, "train: bad optimiser overrides");
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

/* Draw this epoch's items and their order from t->order, remembering where the stream stood. */
static vs_status epoch_begin(vs_trainer *t, vs_error *err)
{
    t->order_at_epoch = t->order;
    t->run.epoch = t->epoch;
    t->n_items = t->split.n_train;
    if (t->task->epoch_items) {
        vs_status st = t->task->epoch_items(&t->run, &t->n_items, err);
        if (st != VS_OK) return st;
    }
    size_t *p = realloc(t->perm, (size_t)(t->n_items ? t->n_items : 1) * sizeof *p);
    if (!p) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    t->perm = p;
    for (int64_t i = 0; i < t->n_items; i++) p[i] = (size_t)i;
    vs_rng_shuffle(&t->order, p, (size_t)t->n_items);
    for (int k = 0; k < t->n_optims; k++) {
        vs_lr_schedule s = t->optcfg[k].schedule;
        s.base_lr = t->optcfg[k].optim.lr;
        if (s.kind == VS_LR_COSINE && s.t_max == 0) s.t_max = t->o->epochs;
        vs_optim_set_lr(t->opt[k], vs_lr_at(&s, t->epoch));
    }
    return VS_OK;
}

/* One step of the task on the items t->batch[0..nb) inside its own scope. */
static vs_status train_step(vs_trainer *t, int64_t nb, double *terms, vs_error *err)
{
    for (int k = 0; k < VS_TASK_MAX_TERMS; k++) terms[k] = NAN;
    t->run.global_step = t->global_step;
    vs_scope_begin();
    vs_status st = t->task->step(&t->run, t->batch, nb, terms, err);
    for (int k = 0; k < t->n_optims; k++) vs_optim_zero_grad(t->opt[k]);
    vs_scope_end();
    return st;
}

/* The rate is that of the last RATE_WINDOW steps, never counting the session's first step: the first
 * steps carry the warm-up (allocations, the thread pool, caches), which made early estimates of the
 * time left far too long.  ends[k % RATE_WINDOW]: the session's time at the end of its step k. */
#define RATE_WINDOW 64

static double recent_rate(const double *ends, int64_t session_steps)
{
    int64_t back = session_steps - 1 < RATE_WINDOW - 1 ? session_steps - 1 : RATE_WINDOW - 1;
    if (back < 1) return 0;
    double span = ends[session_steps % RATE_WINDOW] - ends[(session_steps - back) % RATE_WINDOW];
    return span > 0 ? (double)back / span : 0;
}

static void progress_of(const vs_trainer *t, double session_seconds, double rate, vs_train_progress *p)
{
    memset(p, 0, sizeof *p);
    p->epoch = t->epoch + 1;
    p->epochs = t->o->epochs;
    p->step = t->step;
    p->steps = vs_train_steps_per_epoch(t);
    p->global_step = t->global_step;
    p->n_terms = t->n_terms;
    p->terms = t->task->terms;
    for (int k = 0; k < t->n_terms; k++) p->term[k] = t->term_count[k] ? t->term_sum[k] / (double)t->term_count[k] : NAN;
    p->loss = p->term[0];
    for (int k = 0; k < t->n_optims; k++) p->lr[k] = vs_optim_lr(t->opt[k]);
    p->seconds = session_seconds;
    p->rate = rate;
}

static void trainer_clear(vs_trainer *t)
{
    if (t->task && t->task->clear) t->task->clear(&t->run);
    vs_train_split_clear(&t->split);
    for (int k = 0; k < VS_TASK_MAX_OPTIMS; k++) vs_optim_free(t->opt[k]);
    free(t->history);
    free(t->perm);
    free(t->batch);
}

static vs_status evaluate(vs_trainer *t, vs_train_result *res, bool quiet, vs_error *err)
{
    vs_progress_bar bar;
    vs_progress_bar_init(&bar, quiet ? NULL : t->o->progress);
    vs_progress_bar_line(&bar, "evaluating on the train and test portions");
    bool training = t->m->training, grad = vs_set_grad_enabled(false);
    vs_module_train(t->m, false);
    vs_status st = t->task->evaluate(&t->run, res, err);
    vs_module_train(t->m, training);
    vs_set_grad_enabled(grad);
    return st;
}

/* The epoch line: "epoch 2/10  loss 0.2345  3.1 s" or "epoch 1/1  d_loss -1.2  g_loss 0.8  gp 0.1  9.0 s". */
static void epoch_line(const vs_trainer *t, char *line, size_t n)
{
    size_t o = (size_t)snprintf(line, n, "epoch %lld/%lld", (long long)t->epoch + 1, (long long)t->o->epochs);
    for (int k = 0; k < t->n_terms && o < n; k++)
        o += (size_t)snprintf(line + o, n - o, "  %s %.4f", t->task->terms[k], t->history[t->epoch * t->n_terms + k]);
    if (o < n) snprintf(line + o, n - o, "  %.1f s", t->seconds);
}

/* The trained model's parameters and buffers, all finite: a model that turned NaN in its last steps
 * is not handed back to be saved. */
static vs_status check_finite(const vs_trainer *t, vs_error *err)
{
    vs_named_tensors all = {0};
    if (vs_module_named_tensors(t->m, VS_STATE_ALL, &all) != VS_OK) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    vs_status st = VS_OK;
    for (int64_t i = 0; i < all.n && st == VS_OK; i++) {
        const vs_tensor *x = all.items[i].tensor;
        if (vs_first_nonfinite(x->data, (size_t)x->size) != (size_t)x->size)
            st = vs_error_set(err, VS_ERR_NUMERIC, "training diverged: the model's \"%s\" is not finite after %lld steps (nothing saved%s%s; "
                                                   "a smaller learning rate may help)",
                              all.items[i].name, (long long)t->global_step, t->o->checkpoint ? ", the last finite checkpoint is " : "",
                              t->o->checkpoint ? t->o->checkpoint : "");
    }
    vs_named_tensors_clear(&all);
    return st;
}

static bool due(int64_t every, int64_t step) { return every > 0 && step % every == 0; }

/* The epochs; returns with t->epoch == epochs, or early on an error or a stop request. */
static vs_status run_epochs(vs_trainer *t, vs_train_result *res, vs_error *err)
{
    const vs_train_opts *o = t->o;
    vs_progress_bar bar;
    vs_progress_bar_init(&bar, o->progress);
    double t0 = vs_train_now(), before = t->seconds, ends[RATE_WINDOW] = {0};
    int64_t session_steps = 0;
    vs_status st = VS_OK;
    vs_module_train(t->m, true);
    while (st == VS_OK && t->epoch < o->epochs) {
        if ((st = epoch_begin(t, err)) != VS_OK) break;
        int64_t S = vs_train_steps_per_epoch(t);
        if (t->step > 0 && t->step >= S) { /* only a resumed checkpoint starts inside an epoch */
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: the checkpoint's step %lld lies past the epoch's %lld steps", o->checkpoint,
                              (long long)t->step, (long long)S);
            break;
        }
        while (st == VS_OK && t->step < S) {
            if (o->stop && *o->stop) {
                res->interrupted = true;
                break;
            }
            int64_t i0 = t->step * o->batch_size, nb = t->n_items - i0 < o->batch_size ? t->n_items - i0 : o->batch_size;
            for (int64_t k = 0; k < nb; k++) {
                size_t item = t->perm[i0 + k];
                t->batch[k] = t->task->epoch_items ? (int64_t)item : t->split.train[item];
            }
            double terms[VS_TASK_MAX_TERMS];
            if ((st = train_step(t, nb, terms, err)) != VS_OK) break;
            t->step++, t->global_step++, session_steps++;
            for (int k = 0; k < t->n_terms; k++)
                if (!isnan(terms[k])) t->term_sum[k] += terms[k], t->term_count[k]++;
            t->seconds = before + (vs_train_now() - t0);
            ends[session_steps % RATE_WINDOW] = t->seconds - before;
            vs_train_progress p;
            progress_of(t, t->seconds - before, recent_rate(ends, session_steps), &p);
            vs_progress_bar_update(&bar, &p, t->step == S);
            if (o->on_step) o->on_step(o->user, &p);
            if (t->task->sample && due(o->sample_every, t->global_step)) st = vs_train_write_samples(t, err);
            if (st == VS_OK && o->checkpoint && due(o->checkpoint_every, t->global_step) && t->step < S)
                st = vs_train_checkpoint_write(t, err);
        }
        if (st != VS_OK || res->interrupted) break;
        /* epoch done: the next epoch starts from the stream as it stands now */
        for (int k = 0; k < t->n_terms; k++)
            t->history[t->epoch * t->n_terms + k] = t->term_count[k] ? t->term_sum[k] / (double)t->term_count[k] : NAN;
        char line[512];
        epoch_line(t, line, sizeof line);
        t->epoch++, t->step = 0;
        /* the validation metrics of the epoch (the task's evaluation, test portion), when asked: after the
         * epoch counter moved, so tasks that count the train metric over the epoch's steps reuse it */
        if (due(o->eval_every, t->epoch) && t->epoch < o->epochs) {
            vs_train_result ev = {0};
            double e0 = vs_train_now();
            st = evaluate(t, &ev, true, err);
            t0 += vs_train_now() - e0; /* training time excludes evaluation */
            size_t n = strlen(line);
            for (int i = 0; st == VS_OK && i < ev.n_metrics && n < sizeof line; i++)
                if (strncmp(ev.metrics[i].name, "test_", 5) == 0)
                    n += (size_t)snprintf(line + n, sizeof line - n, "  %s %.4g", ev.metrics[i].name, ev.metrics[i].value);
            if (st != VS_OK) break;
        }
        vs_progress_bar_line(&bar, line);
        for (int k = 0; k < VS_TASK_MAX_TERMS; k++) t->term_sum[k] = 0, t->term_count[k] = 0;
        t->order_at_epoch = t->order;
        if (o->checkpoint) st = vs_train_checkpoint_write(t, err);
    }
    vs_progress_bar_done(&bar);
    if (st == VS_OK && res->interrupted && o->checkpoint) st = vs_train_checkpoint_write(t, err);
    if (st == VS_OK && !res->interrupted && t->task->sample && o->sample_every > 0 && !due(o->sample_every, t->global_step))
        st = vs_train_write_samples(t, err);
    return st;
}

static int count(const char *const *names)
{
    int n = 0;
    while (names && names[n]) n++;
    return n;
}

/* The task, its streams, options and optimisers. */
static vs_status setup(vs_trainer *t, vs_error *err)
{
    const vs_task *k = t->task;
    t->n_terms = count(k->terms), t->n_optims = count(k->optims), t->n_streams = count(k->streams);
    for (t->n_opts = 0; k->opts && k->opts[t->n_opts].name; t->n_opts++) {}
    assert(t->n_terms >= 1 && t->n_terms <= VS_TASK_MAX_TERMS && t->n_optims >= 1 && t->n_optims <= VS_TASK_MAX_OPTIMS);
    assert(t->n_streams <= VS_TASK_MAX_STREAMS && t->n_opts <= VS_TASK_MAX_OPTS);
    vs_status st = vs_task_opts_parse(k, t->o->task_opts, t->run.opt, err);
    for (int j = 0; st == VS_OK && j < t->o->n_per_optim; j++) { /* a misspelt name must not be dropped */
        const char *name = t->o->per_optim[j].name;
        int i = 0;
        while (i < t->n_optims && strcmp(k->optims[i], name) != 0) i++;
        if (i < t->n_optims) continue;
        char names[160] = "";
        for (int q = 0, at = 0; q < t->n_optims && at < (int)sizeof names; q++)
            at += snprintf(names + at, sizeof names - (size_t)at, "%s%s", q ? ", " : "", k->optims[q]);
        st = vs_error_set(err, VS_ERR_ARG, "--optimizers: the %s task has no optimizer '%s' (it has %s)", k->name, name, names);
    }
    for (int i = 0; st == VS_OK && i < t->n_optims; i++) {
        vs_module *sub = vs_task_model(&t->run, k->optims[i]);
        if (!sub)
            return vs_error_set(err, VS_ERR_ARG, "train: the %s task trains a model \"%s\"; this model has none (it is a %s)", k->name,
                                k->optims[i], vs_module_kind_name(t->m->kind));
        st = vs_train_optim_for(t->o, k->optims[i], &t->optcfg[i], err);
        if (st == VS_OK && !(t->opt[i] = vs_optim_new_module(&t->optcfg[i].optim, sub, err)))
            st = err && err->code != VS_OK ? err->code : VS_ERR_ARG;
    }
    return st;
}

vs_status vs_train(vs_module *m, const vs_dataset *d, const vs_train_opts *o, vs_train_result *res, vs_error *err)
{
    memset(res, 0, sizeof *res);
    res->final_loss = NAN;
    vs_error scratch;
    if (!err) err = &scratch; /* tasks may read err->code */
    vs_error_clear(err);
    vs_status st = check_opts(d, o, err);
    if (st != VS_OK) return st;
    const vs_task *task = vs_task_for_model(m, err);
    if (!task) return err && err->code != VS_OK ? err->code : VS_ERR_ARG;
    vs_trainer t = {.m = m, .d = d, .td = o->test ? o->test : d, .o = o, .task = task};
    t.run = (vs_task_run){.model = m, .data = d, .test = t.td, .split = &t.split, .opts = o, .order = &t.order,
                          .forward = &t.forward, .loop = &t};
    res->task = task->name;
    st = vs_train_split_make(d, o->test, o->seed, o->train_frac, task->pairs, &t.split, err);
    if (st == VS_OK) st = setup(&t, err);
    res->n_terms = t.n_terms;
    res->terms = task->terms;
    if (st == VS_OK) {
        t.history = calloc((size_t)(o->epochs > 0 ? o->epochs : 1) * (size_t)t.n_terms, sizeof *t.history);
        t.batch = malloc((size_t)o->batch_size * sizeof *t.batch);
        if (!t.history || !t.batch) st = vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    }
    if (st == VS_OK && t.split.n_train < 1) st = vs_error_set(err, VS_ERR_ARG, "train: the split left no training rows");
    if (st == VS_OK && t.split.n_test < 1) /* every metric would be NaN */
        st = vs_error_set(err, VS_ERR_ARG, "train: the split left no test rows (%lld rows in %s; more rows are needed)", (long long)d->n, d->name);
    if (st == VS_OK && (task->pairs || strcmp(task->name, "classifier") == 0) && d->n_classes < 2)
        st = vs_error_set(err, VS_ERR_ARG, "train: %s has %lld class%s; the %s task needs at least two", d->name, (long long)d->n_classes,
                          d->n_classes == 1 ? "" : "es", task->name);
    if (st == VS_OK && task->init) st = task->init(&t.run, err);
    if (st == VS_OK) {
        /* the order and forward streams first (every task), then the task's own */
        vs_rng root;
        vs_rng_seed(&root, o->seed ^ VS_TRAIN_STREAM);
        t.order = vs_rng_split(&root);
        t.forward = vs_rng_split(&root);
        for (int i = 0; i < t.n_streams; i++) t.run.streams[i] = vs_rng_split(&root);
        if (o->resume) st = vs_train_checkpoint_read(&t, err);
    }
    if (st == VS_OK) st = run_epochs(&t, res, err);
    if (st == VS_OK) st = check_finite(&t, err);
    res->epochs = t.epoch;
    res->global_step = t.global_step;
    res->seconds = t.seconds;
    if (t.epoch > 0 && t.history) res->final_loss = t.history[(t.epoch - 1) * t.n_terms];
    if (st == VS_OK && !res->interrupted) st = evaluate(&t, res, false, err);
    if (st == VS_OK) {
        res->loss_history = t.history;
        t.history = NULL;
    }
    trainer_clear(&t);
    return st;
}
