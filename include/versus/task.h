/* versus/task.h - training tasks: what one step of training means for a kind of model.
 *
 * The loop (versus/train.h, nn/train.c) owns batching, seeding, the optimisers, learning-rate
 * schedules, clipping, the NaN/Inf guard, progress, evaluation, samples, checkpoints and resume.  A
 * task says what a step does with a batch of items, which named optimisers it needs, which loss
 * terms it reports, which extra random streams and options it takes, how to evaluate the trained
 * model and (for generative models) how to draw a grid of samples.  Adding a task is one file
 * defining a `const vs_task` (listed in nn/train.mk) and its lines in the registry
 * (nn/task_registry.c); nothing else switches on task names.
 *
 * Tasks shipped (value names of the models they train: the conventions of versus/composite.h):
 *   classifier  rows; loss = cross_entropy(m(x), y); metrics train/test accuracy.
 *   siamese     SNX (or random) pairs of rows; loss = BCE(sigmoid(scale cos), [same class]).
 *   vae         rows; "x" -> "mu", "logvar", "x_logits" (Bernoulli decoder), sample "z";
 *               loss = recon + beta KL (+ DIP-VAE penalty); metric test_elbo (nats per example).
 *   gan         rows; children "generator" ("z" -> "y", or StarGAN "x", "c" -> "y") and "critic"
 *               ("x" -> "src", optional "cls"); WGAN-GP (n_critic, gradient penalty by double
 *               backward) or the non-saturating loss.
 * The task of a model: the composite's "task" key, else "siamese" for a Siamese module, else
 * "classifier" (vs_task_for_model).
 *
 * Ownership: tasks are static descriptors.  A task's per-run state (init/clear) belongs to the run.
 */
#ifndef VERSUS_TASK_H
#define VERSUS_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/nn.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_train_opts vs_train_opts;   /* versus/train.h */
typedef struct vs_train_split vs_train_split; /* versus/train.h */
typedef struct vs_train_result vs_train_result;
typedef struct vs_trainer vs_trainer;         /* the loop's own state (private) */

#define VS_TASK_MAX_TERMS 8
#define VS_TASK_MAX_OPTIMS 4
#define VS_TASK_MAX_STREAMS 4
#define VS_TASK_MAX_OPTS 16

/* A numeric option of a task ("n_critic", "beta"); with choices, the value is the index of a name
 * ("loss": "wgan-gp" = 0, "ns" = 1). */
typedef struct vs_task_opt_def {
    const char *name;
    double def, lo, hi;
    const char *const *choices;  /* NULL-terminated names, or NULL for a number */
    const char *help;
} vs_task_opt_def;

/* What the loop hands a task.  Read the fields; change the models only through steps. */
typedef struct vs_task_run {
    vs_module *model;            /* the root model (a GAN's root holds "generator" and "critic") */
    const vs_dataset *data;      /* training rows */
    const vs_dataset *test;      /* test rows: the separate test set, or data itself when split */
    const vs_train_split *split; /* train / test rows (and SNX pairs for pair tasks) */
    const vs_train_opts *opts;
    vs_rng *order;               /* the epoch-order stream (epoch_items may draw from it) */
    vs_rng *forward;             /* dropout masks and reparameterisation noise of training forwards */
    vs_rng streams[VS_TASK_MAX_STREAMS]; /* the task's declared streams, in declaration order */
    double opt[VS_TASK_MAX_OPTS];        /* option values, in the order of task->opts */
    int64_t epoch;               /* epochs completed */
    int64_t global_step;         /* steps taken before this one */
    void *state;                 /* the task's own (init), or NULL */
    vs_trainer *loop;            /* for vs_task_update */
} vs_task_run;

typedef struct vs_task {
    const char *name;            /* "classifier" */
    const char *help;            /* one paragraph for `versus help train` */
    const char *const *optims;   /* NULL-terminated: "model" (the root) or names of the root's children */
    const char *const *terms;    /* NULL-terminated loss terms; terms[0] is the loss of the epoch line */
    const char *const *streams;  /* NULL-terminated extra random streams, or NULL */
    const vs_task_opt_def *opts; /* {NULL}-terminated, or NULL */
    bool pairs;                  /* the split carries SNX pairs (Siamese) */
    bool generative;             /* has a sampler; --sample-every applies */
    /* Per-run state and checks that the model fits the data (may be NULL). */
    vs_status (*init)(vs_task_run *r, vs_error *err);
    void (*clear)(vs_task_run *r);
    /* The items of the coming epoch: *n_items of them (row positions in split->train unless the task
     * says otherwise).  May draw from r->order before the loop shuffles them.  NULL: the train rows. */
    vs_status (*epoch_items)(vs_task_run *r, int64_t *n_items, vs_error *err);
    /* One step on items[0..n) (for row tasks the data rows themselves).  terms[k] receives term k
     * (left NaN when not computed in this step, e.g. the generator's loss between critic steps).
     * Updates go through vs_task_update.  Runs inside the loop's scope. */
    vs_status (*step)(vs_task_run *r, const int64_t *items, int64_t n, double *terms, vs_error *err);
    /* Named metrics of the trained model (vs_train_result_put), evaluation mode, no gradients. */
    vs_status (*evaluate)(vs_task_run *r, vs_train_result *res, vs_error *err);
    /* Images for a sample grid: *out [rows*cols, c, h, w] in [0,1] owned by the current scope, drawn
     * from rng only (the training streams are untouched).  NULL unless generative. */
    vs_status (*sample)(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err);
    /* `versus predict` on a trained model (may be NULL: the model's forward): *y for the examples x
     * [N, ...] (owned by the current scope), deterministic (no noise is drawn).  opt holds the option
     * values the model was trained with (vs_task_opts_parse); cls is a target class or -1. */
    vs_status (*predict)(vs_module *m, const double *opt, vs_tensor *x, int64_t cls, vs_tensor **y, vs_error *err);
} vs_task;

/* ---- the registry ------------------------------------------------------------------------------- */
const vs_task *vs_task_find(const char *name);        /* NULL when unknown */
const vs_task *vs_task_at(int i);                     /* i-th registered task, NULL past the end */
/* The task of m: composite "task" key, else "siamese" for Siamese modules, else "classifier".
 * NULL with err set when the key names no task. */
const vs_task *vs_task_for_model(const vs_module *m, vs_error *err);

/* The values of task's options: the defaults, then "name=value,..." (spec may be NULL) into
 * opt[VS_TASK_MAX_OPTS].  VS_ERR_ARG naming the option otherwise. */
vs_status vs_task_opts_parse(const vs_task *task, const char *spec, double *opt, vs_error *err);

/* ---- for task steps ----------------------------------------------------------------------------- */

/* One update of optimiser `optim` (one of task->optims) from loss: the NaN/Inf guard on the loss,
 * backward, gradient clipping (when configured), the optimiser step (guarded) and zero_grad of every
 * model parameter (other models' gradients from this loss are dropped too).  VS_ERR_NUMERIC with
 * "training diverged at epoch E, step S: ..." when the loss or a gradient is not finite. */
vs_status vs_task_update(vs_task_run *r, const char *optim, vs_tensor *loss, vs_error *err);
/* The child model called name (or the root for "model"), or NULL. */
vs_module *vs_task_model(const vs_task_run *r, const char *name);
/* DIP-VAE's penalty of a batch (Kumar et al. 2018; task "vae"): C = Cov_batch[mu] (+ mean_batch
 * diag(e^logvar) for DIP-VAE-ii), lambda_od sum_{i != j} C_ij^2 + lambda_d sum_i (C_ii - 1)^2;
 * mu, logvar [n,k]; a scalar owned by the current scope (differentiable twice). */
vs_tensor *vs_train_dip_penalty(vs_tensor *mu, vs_tensor *logvar, bool ii, double lambda_od, double lambda_d);
/* The value of option name of the run's task (assert: declared). */
double vs_task_opt(const vs_task_run *r, const char *name);

#ifdef __cplusplus
}
#endif
#endif
