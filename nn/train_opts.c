/* train_opts.c - the loop's options and results: defaults, per-optimiser settings (parsed from
 * "NAME:key=value,...;..."), a task's options (parsed from "name=value,..."), named metrics. */
#include "datasets/io/io_util.h"
#include "nn/train_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <float.h>
#include <string.h>

void vs_train_opts_init(vs_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 10;
    o->batch_size = 64;
    o->optim = vs_adam_opts(1e-3f);
    o->schedule.kind = VS_LR_CONSTANT;
    o->seed = 1;
    o->train_frac = 0.7;
    o->pairing = VS_PAIRING_FIXED;
    o->siamese_scale = VS_TRAIN_SIAMESE_SCALE;
}

void vs_train_result_clear(vs_train_result *r)
{
    if (!r) return;
    free(r->loss_history);
    r->loss_history = NULL;
}

double vs_train_result_get(const vs_train_result *r, const char *name)
{
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0) return r->metrics[i].value;
    return NAN;
}

vs_status vs_train_result_put(vs_train_result *r, const char *name, double value)
{
    if (strlen(name) >= sizeof r->metrics[0].name) return vs_set_last_error(VS_ERR_ARG, "metric name '%s' too long", name);
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0) {
            r->metrics[i].value = value;
            return VS_OK;
        }
    if (r->n_metrics == VS_TRAIN_MAX_METRICS) return vs_set_last_error(VS_ERR_ARG, "more than %d metrics", VS_TRAIN_MAX_METRICS);
    vs_train_metric *m = &r->metrics[r->n_metrics++];
    snprintf(m->name, sizeof m->name, "%s", name);
    m->value = value;
    return VS_OK;
}

vs_status vs_train_put_accuracies(vs_train_result *res, double train, double test)
{
    vs_status st = vs_train_result_put(res, "train_accuracy", train);
    return st == VS_OK ? vs_train_result_put(res, "test_accuracy", test) : st;
}

/* A number from s[0..len) (C locale); false when it is not one. */
static bool parse_number(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    locale_t prev = vs_io_c_locale_begin();
    *out = strtod(buf, &end);
    vs_io_c_locale_end(prev);
    return errno == 0 && *end == '\0' && isfinite(*out);
}

/* Walk "a=1,b=2": for each pair call f(key, klen, value, vlen).  Empty input is fine. */
typedef vs_status (*pair_fn)(void *ctx, const char *k, size_t kl, const char *v, size_t vl, vs_error *err);
static vs_status each_pair(const char *s, size_t len, pair_fn f, void *ctx, const char *what, vs_error *err)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != ',') j++;
        const char *eq = memchr(s + i, '=', j - i);
        if (!eq || eq == s + i)
            return vs_error_set(err, VS_ERR_ARG, "%s: '%.*s' is not name=value", what, (int)(j - i), s + i);
        vs_status st = f(ctx, s + i, (size_t)(eq - (s + i)), eq + 1, (size_t)(s + j - eq - 1), err);
        if (st != VS_OK) return st;
        i = j + 1;
    }
    return VS_OK;
}

/* ---- per-optimiser settings ------------------------------------------------------------------ */

static vs_status optim_key(void *ctx, const char *k, size_t kl, const char *v, size_t vl, vs_error *err)
{
    vs_train_optim *o = ctx;
    double x;
    if (!parse_number(v, vl, &x) || x < 0)
        return vs_error_set(err, VS_ERR_ARG, "optimizer %s: %.*s = '%.*s' is not a number >= 0", o->name, (int)kl, k, (int)vl, v);
#define KEY(name) (kl == strlen(name) && strncmp(k, name, kl) == 0)
    if (x > FLT_MAX) /* the settings are floats: 1e39 would become infinity */
        return vs_error_set(err, VS_ERR_ARG, "optimizer %s: %.*s = '%.*s' is larger than a float holds", o->name, (int)kl, k, (int)vl, v);
    bool sgd = o->optim.kind == VS_OPTIM_SGD;
    if ((KEY("momentum") && !sgd) || (sgd && (KEY("beta1") || KEY("beta2") || KEY("eps"))))
        return vs_error_set(err, VS_ERR_ARG, "optimizer %s: '%.*s' is not a setting of %s (%s)", o->name, (int)kl, k, sgd ? "SGD" : "Adam",
                            sgd ? "lr, weight_decay, momentum, clip" : "lr, beta1, beta2, eps, weight_decay, clip");
    if (KEY("lr")) o->optim.lr = (float)x;
    else if (KEY("beta1") && x < 1) o->optim.beta1 = (float)x;
    else if (KEY("beta2") && x < 1) o->optim.beta2 = (float)x;
    else if (KEY("eps")) o->optim.eps = (float)x;
    else if (KEY("weight_decay")) o->optim.weight_decay = (float)x;
    else if (KEY("momentum")) o->optim.momentum = (float)x;
    else if (KEY("clip")) o->clip_norm = (float)x;
    else if (KEY("beta1") || KEY("beta2"))
        return vs_error_set(err, VS_ERR_ARG, "optimizer %s: %.*s must be below 1", o->name, (int)kl, k);
    else
        return vs_error_set(err, VS_ERR_ARG, "optimizer %s: unknown key '%.*s' (expected lr, beta1, beta2, eps, weight_decay, momentum, clip)",
                            o->name, (int)kl, k);
#undef KEY
    return VS_OK;
}

vs_status vs_train_parse_optims(const char *spec, const vs_train_opts *base, vs_train_optim *out, int max, int *n,
                                vs_error *err)
{
    *n = 0;
    const char *s = spec;
    while (*s) {
        const char *end = strchr(s, ';'), *colon = strchr(s, ':');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (!colon || colon >= s + len || colon == s)
            return vs_error_set(err, VS_ERR_ARG, "optimizers: '%.*s' is not NAME:key=value,...", (int)len, s);
        size_t nl = (size_t)(colon - s);
        if (nl >= sizeof out[0].name) return vs_error_set(err, VS_ERR_ARG, "optimizers: name '%.*s' too long", (int)nl, s);
        if (*n == max) return vs_error_set(err, VS_ERR_ARG, "optimizers: more than %d entries", max);
        vs_train_optim *o = &out[*n];
        memset(o, 0, sizeof *o);
        memcpy(o->name, s, nl);
        for (int i = 0; i < *n; i++)
            if (strcmp(out[i].name, o->name) == 0) return vs_error_set(err, VS_ERR_ARG, "optimizers: %s given twice", o->name);
        o->optim = base->optim, o->schedule = base->schedule, o->clip_norm = base->clip_norm;
        vs_status st = each_pair(colon + 1, len - nl - 1, optim_key, o, "optimizers", err);
        if (st != VS_OK) return st;
        (*n)++;
        s += len + (end ? 1 : 0);
    }
    return VS_OK;
}

vs_status vs_train_optim_for(const vs_train_opts *o, const char *name, vs_train_optim *out, vs_error *err)
{
    (void)err;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->optim = o->optim, out->schedule = o->schedule, out->clip_norm = o->clip_norm;
    for (int i = 0; i < o->n_per_optim; i++)
        if (strcmp(o->per_optim[i].name, name) == 0) *out = o->per_optim[i];
    return VS_OK;
}

/* ---- task options ------------------------------------------------------------------------------ */

typedef struct task_opts_ctx {
    const vs_task *task;
    double *out;
} task_opts_ctx;

static vs_status task_key(void *ctx, const char *k, size_t kl, const char *v, size_t vl, vs_error *err)
{
    task_opts_ctx *c = ctx;
    const vs_task_opt_def *d = c->task->opts;
    int i = 0;
    for (; d && d[i].name; i++)
        if (strlen(d[i].name) == kl && strncmp(d[i].name, k, kl) == 0) break;
    if (!d || !d[i].name) {
        char names[256] = "";
        size_t o = 0;
        for (int j = 0; d && d[j].name && o < sizeof names; j++) o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", j ? ", " : "", d[j].name);
        return vs_error_set(err, VS_ERR_ARG, "the %s task has no option '%.*s'%s%s", c->task->name, (int)kl, k,
                            o ? "; its options are " : " (it takes none)", names);
    }
    if (d[i].choices) {
        for (int j = 0; d[i].choices[j]; j++)
            if (strlen(d[i].choices[j]) == vl && strncmp(d[i].choices[j], v, vl) == 0) {
                c->out[i] = j;
                return VS_OK;
            }
        return vs_error_set(err, VS_ERR_ARG, "%s task option %s: '%.*s' is not one of its choices", c->task->name, d[i].name, (int)vl, v);
    }
    double x;
    if (!parse_number(v, vl, &x) || x < d[i].lo || x > d[i].hi)
        return vs_error_set(err, VS_ERR_ARG, "%s task option %s: '%.*s', expected a number in [%g, %g]", c->task->name, d[i].name,
                            (int)vl, v, d[i].lo, d[i].hi);
    c->out[i] = x;
    return VS_OK;
}

vs_status vs_task_opts_parse(const vs_task *task, const char *spec, double *out, vs_error *err)
{
    for (int i = 0; task->opts && task->opts[i].name; i++) out[i] = task->opts[i].def;
    task_opts_ctx c = {task, out};
    return spec ? each_pair(spec, strlen(spec), task_key, &c, "task options", err) : VS_OK;
}

double vs_task_opt(const vs_task_run *r, const char *name)
{
    const vs_task_opt_def *d = r->loop->task->opts;
    for (int i = 0; d && d[i].name; i++)
        if (strcmp(d[i].name, name) == 0) return r->opt[i];
    assert(!"undeclared task option");
    return NAN;
}
