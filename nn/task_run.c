/* task_run.c - what task steps call into the loop for: the guarded update of one optimiser
 * (NaN/Inf guard, backward, clipping, step) and the models of a run by name. */
#include "nn/train_internal.h"
#include "versus/composite.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

vs_module *vs_task_model(const vs_task_run *r, const char *name)
{
    return strcmp(name, "model") == 0 ? r->model : vs_module_child(r->model, name);
}

vs_status vs_task_update(vs_task_run *r, const char *optim, vs_tensor *loss, vs_error *err)
{
    vs_trainer *t = r->loop;
    int k = 0;
    while (k < t->n_optims && strcmp(t->task->optims[k], optim) != 0) k++;
    assert(k < t->n_optims && "the task updates an optimiser it did not declare");
    const char *whose = t->n_optims > 1 ? optim : NULL;
    if (!loss) {
        const vs_error *e = vs_last_error();
        return vs_error_set(err, e->code ? e->code : VS_ERR_NOMEM, "train: loss: %s", e->msg);
    }
    double l = vs_item(loss);
    if (!isfinite(l)) {
        char why[96];
        snprintf(why, sizeof why, "the %s%sloss is %s", whose ? whose : "", whose ? "'s " : "", isnan(l) ? "nan" : "inf");
        return vs_train_diverged(t, err, why);
    }
    if (vs_backward(loss, NULL, false) != VS_OK)
        return vs_error_set(err, vs_last_error()->code, "train: backward: %s", vs_last_error()->msg);
    vs_status st = VS_OK;
    if (t->optcfg[k].clip_norm > 0) {
        vs_clear_last_error(); /* a NaN norm from non-finite gradients is the optimiser step's to report */
        float norm = vs_optim_clip_grad_norm(t->opt[k], t->optcfg[k].clip_norm);
        if (isnan(norm) && vs_last_error()->code != VS_OK)
            st = vs_error_set(err, vs_last_error()->code, "train: clipping: %s", vs_last_error()->msg);
    }
    if (st == VS_OK) {
        vs_error e;
        vs_error_clear(&e);
        st = vs_optim_step(t->opt[k], &e);
        if (st == VS_ERR_NUMERIC) st = vs_train_diverged(t, err, e.msg);
        else if (st != VS_OK) vs_error_set(err, st, "train: %s", e.msg);
    }
    vs_module_zero_grad(t->m);
    return st;
}
