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
typedef struct vs_trainer {
    vs_module *m;
    const vs_dataset *d;              /* training rows */
    const vs_dataset *td;             /* test rows (d itself when split) */
    const vs_train_opts *o;
    bool siamese;
    vs_train_split split;
    vs_optim *opt;
    vs_rng order;                     /* epoch order stream, current */
    vs_rng order_at_epoch;            /* ... as it stood when the current epoch began */
    vs_rng dropout;
    int64_t epoch;                    /* epochs completed */
    int64_t step;                     /* steps done in the current epoch */
    int64_t global_step;
    double loss_sum;                  /* over the current epoch's steps */
    int64_t loss_count;
    double *history;                  /* [epoch] mean loss of each completed epoch */
    double seconds;                   /* training time of earlier sessions plus this one so far */
    /* the current epoch's items: rows of split.train (classifier) or pairs */
    vs_pairs *random_pairs;           /* VS_PAIRING_RANDOM: this epoch's pairs */
    const vs_pairs *pairs;            /* the pairs being trained on (Siamese) */
    int64_t n_items;
    size_t *perm;                     /* [n_items] item order of this epoch */
    int64_t *batch;                   /* [batch_size] rows or pair indices of the step */
    int64_t *labels;                  /* [batch_size] classifier labels of the step */
} vs_trainer;

/* Write t to t->o->checkpoint atomically. */
vs_status vs_train_checkpoint_write(const vs_trainer *t, vs_error *err);
/* Restore model, optimiser and loop state from t->o->checkpoint; checks the options it records. */
vs_status vs_train_checkpoint_read(vs_trainer *t, vs_error *err);

/* The progress bar: drawn on f only when f is a terminal, at most every 0.1 s. */
typedef struct vs_progress_bar {
    FILE *f;                          /* NULL: not drawing */
    double last;                      /* time of the last draw */
    bool drawn;                       /* a line is on screen */
} vs_progress_bar;
void vs_progress_bar_init(vs_progress_bar *b, FILE *f);
void vs_progress_bar_update(vs_progress_bar *b, const vs_train_progress *p, bool force);
void vs_progress_bar_line(vs_progress_bar *b, const char *line); /* clear the bar, print a line */
void vs_progress_bar_done(vs_progress_bar *b);                   /* clear the bar */

double vs_train_now(void); /* monotonic seconds */

#endif
