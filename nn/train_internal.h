/* nn/train_internal.h - what the training files share (not installed): the forward passes of one
 * batch with their checks, the trainer's state, checkpoint I/O and the progress bar. */
#ifndef VERSUS_NN_TRAIN_INTERNAL_H
#define VERSUS_NN_TRAIN_INTERNAL_H

#include "versus/gnn.h"
#include "versus/train.h"

#define VS_TRAIN_EVAL_BATCH 256 /* rows per forward pass when evaluating */

/* Classifier scores m(x) for rows[0..n) of d: [n, d->n_classes] checked, owned by the current scope;
 * NULL with err set ("the model does not fit the data: ...").  g is the graph batch (cleared by the
 * caller).  dropout: the training-mode dropout stream, NULL in evaluation. */
vs_tensor *vs_train_logits(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, vs_rng *dropout,
                           vs_graph_batch *g, vs_error *err);
/* Siamese similarity cos(enc(a), enc(b)) of the pairs order[0..n) of p (order NULL: pairs 0..n-1),
 * a = p->idx[2k], b = p->idx[2k+1]: [n], owned by the current scope; NULL with err set. */
vs_tensor *vs_train_similarity(vs_module *m, const vs_dataset *d, const vs_pairs *p, const int64_t *order, int64_t n,
                               vs_rng *dropout, vs_error *err);

/* The trainer: everything a checkpoint saves lives here. */
struct vs_trainer {
    vs_module *m;
    const vs_dataset *d;              /* training rows */
    const vs_dataset *td;             /* test rows (d itself when split) */
    const vs_train_opts *o;
    const vs_task *task;
    vs_task_run run;
    int n_terms, n_optims, n_streams, n_opts;
    vs_train_split split;
    vs_optim *opt[VS_TASK_MAX_OPTIMS];          /* one per task->optims entry */
    vs_train_optim optcfg[VS_TASK_MAX_OPTIMS];  /* their settings (defaults and overrides resolved) */
    vs_rng order;                     /* epoch order stream, current */
    vs_rng order_at_epoch;            /* ... as it stood when the current epoch began */
    vs_rng forward;                   /* dropout masks, reparameterisation noise */
    int64_t epoch;                    /* epochs completed */
    int64_t step;                     /* steps done in the current epoch */
    int64_t global_step;
    double term_sum[VS_TASK_MAX_TERMS];  /* over the current epoch's steps that computed the term */
    int64_t term_count[VS_TASK_MAX_TERMS];
    double *history;                  /* [epoch * n_terms] mean of each term per completed epoch */
    double seconds;                   /* training time of earlier sessions plus this one so far */
    int64_t n_items;                  /* the current epoch's items */
    size_t *perm;                     /* [n_items] item order of this epoch */
    int64_t *batch;                   /* [batch_size] the step's items */
};

/* Write the checkpoint atomically / restore the trainer from it (train_ckpt.c). */
vs_status vs_train_checkpoint_write(const vs_trainer *t, vs_error *err);
vs_status vs_train_checkpoint_read(vs_trainer *t, vs_error *err);
/* "training diverged at epoch E/N, step S/M: why (a smaller learning rate may help)" */
vs_status vs_train_diverged(const vs_trainer *t, vs_error *err, const char *why);
int64_t vs_train_steps_per_epoch(const vs_trainer *t);
/* The settings of optimiser name: o's defaults, or its per_optim entry (train_opts.c). */
vs_status vs_train_optim_for(const vs_train_opts *o, const char *name, vs_train_optim *out, vs_error *err);
/* Single-model, single-loss tasks: optims {"model"}, terms {"loss"} (task_registry.c). */
extern const char *const vs_task_one_model[], *const vs_task_one_loss[];
/* The train accuracy counted on the steps already taken (classifier and Siamese tasks): the correct
 * calls among the items the steps of `epoch` have seen. */
typedef struct vs_step_accuracy {
    int64_t epoch, seen, correct; /* epoch -1: nothing counted yet */
} vs_step_accuracy;
/* Add a step of the trainer's current epoch (t->epoch), `correct` of n items right. */
void vs_step_accuracy_add(vs_step_accuracy *a, const vs_trainer *t, int64_t correct, int64_t n);
/* Whether the last epoch the trainer finished was counted over all n_items; then *acc is its accuracy. */
bool vs_step_accuracy_of_last_epoch(const vs_step_accuracy *a, const vs_trainer *t, int64_t n_items, double *acc);
/* Metrics "train_accuracy" and "test_accuracy" (classifier and Siamese tasks). */
vs_status vs_train_put_accuracies(vs_train_result *res, double train, double test);

/* Write t's sample grid for the current global step into o->sample_dir (train_samples.c). */
vs_status vs_train_write_samples(vs_trainer *t, vs_error *err);

/* The progress bar: redrawn in place on a terminal at most every 0.1 s; on anything else (a log file
 * under nohup or Slurm) one line every VERSUS_PROGRESS_SECONDS (default 30).  Lines (epochs) go to both. */
typedef struct vs_progress_bar {
    FILE *f;                          /* NULL: quiet */
    bool tty;                         /* f is a terminal: redraw in place */
    double every;                     /* seconds between draws */
    double last;                      /* time of the last draw (or of init, for log lines) */
    bool drawn;                       /* a bar is on screen */
} vs_progress_bar;
void vs_progress_bar_init(vs_progress_bar *b, FILE *f);
void vs_progress_bar_update(vs_progress_bar *b, const vs_train_progress *p, bool force);
void vs_progress_bar_line(vs_progress_bar *b, const char *line); /* clear the bar, print a line */
void vs_progress_bar_done(vs_progress_bar *b);                   /* clear the bar */

double vs_train_now(void); /* monotonic seconds */

#endif
