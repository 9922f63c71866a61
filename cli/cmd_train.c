/* cmd_train.c - `versus train`: build a model from the zoo or a model.json, train it on a data SPEC
 * (versus/train.h), write the model directory and metrics.json, print the accuracies last. */
#include "cli/cli.h"
#include "versus/versus.h"
#include "versus/train.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#define INIT_STREAM 0x696e6974ull /* "init": seed ^ this seeds the initial weights */

static const vs_cli_opt data_only_opts[] = {VS_DATA_CLI_OPTS, {NULL, 0, NULL}};

static const vs_cli_opt train_opts[] = {
    VS_DATA_CLI_OPTS,
    {"arch", 1, "an architecture of the zoo (listed above)"},
    {"spec", 1, "model.json holding the architecture (instead of --arch)"},
    {"data", 1, "training data SPEC"},
    {"test-data", 1, "a separate test SPEC (default: 30% of --data, stratified)"},
    {"classes", 1, "keep these classes, relabelled 0.. in the order given: C,C,..."},
    {"epochs", 1, "passes over the training data (default 10)"},
    {"batch-size", 1, "examples, or pairs for Siamese models, per step (default 64)"},
    {"optimizer", 1, "sgd or adam (default adam)"},
    {"lr", 1, "learning rate (default 0.001 for adam, 0.01 for sgd)"},
    {"betas", 1, "Adam's B1,B2 (default 0.9,0.999)"},
    {"weight-decay", 1, "L2 weight decay (default 0)"},
    {"clip-norm", 1, "clip each optimizer's gradient norm to X (default: no clipping)"},
    {"lr-schedule", 1, "constant, step:S:G (x G every S epochs) or cosine[:T] (default constant)"},
    {"optimizers", 1, "per model: NAME:key=value,...;NAME:... (keys lr beta1 beta2 eps weight_decay momentum clip)"},
    {"task-opts", 1, "the task's options: name=value,... (listed below)"},
    {"alpha", 1, "shorthand for --task-opts alpha=A (svae, m2: the classifier's weight)"},
    {"beta", 1, "shorthand for --task-opts beta=B (svae: Eq. 6's beta; vae: the KL weight)"},
    {"sample-every", 1, "generative tasks: write OUT/samples/step-N.png every N steps"},
    {"eval-every", 1, "test metrics in the epoch line every E epochs (default 1 for classifier and siamese tasks, 0 = at the end only)"},
    {"pairs", 1, "Siamese training pairs: snx or random (default snx)"},
    {"checkpoint-every", 1, "also checkpoint every N steps (default: at each epoch end)"},
    {"classifier", 1, "a trained classifier's model directory, added as the frozen child \"classifier\" (task ganmex)"},
    {"out", 1, "model directory to write"},
    {"resume", 0, "continue from OUT/checkpoint.safetensors"},
    {NULL, 0, NULL},
};

/* ---- models ------------------------------------------------------------------------------------------ */

/* The shape of one example of d, as model.json's "input" records it. */
static int data_input(const vs_dataset *d, int64_t *input)
{
    if (d->kind == VS_DATA_GRAPHS) {
        input[0] = d->n_node_features;
        return 1;
    }
    for (int i = 0; i < d->ndim; i++) input[i] = d->shape[i];
    return d->ndim;
}

static int shape_str(int ndim, const int64_t *s, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)s[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return 0;
}

/* A model from model.json; its "input" (when present) must be the data's. */
static vs_module *spec_build(const char *path, const vs_dataset *d, vs_rng *r, vs_error *err)
{
    vs_json *doc = NULL;
    vs_model_spec spec = {0};
    vs_module *m = NULL;
    if (vs_json_parse_file(path, NULL, &doc, err) == VS_OK && vs_model_spec_from_json(doc, &spec, err) == VS_OK) {
        int64_t in[VS_MAX_DIMS];
        int nd = data_input(d, in);
        if (spec.input_ndim > 0 && (spec.input_ndim != nd || memcmp(spec.input, in, (size_t)nd * sizeof *in) != 0)) {
            char a[96], b[96];
            shape_str(spec.input_ndim, spec.input, a, sizeof a);
            shape_str(nd, in, b, sizeof b);
            vs_error_set(err, VS_ERR_ARG, "%s: \"input\" is %s, the examples of %s are %s", path, a, d->name, b);
        } else {
            if (spec.input_ndim == 0) {
                spec.input_ndim = nd;
                memcpy(spec.input, in, (size_t)nd * sizeof *in);
            }
            vs_error e;
            vs_error_clear(&e);
            if (!(m = vs_model_from_spec(&spec, r, &e))) vs_error_set(err, e.code, "%s: %s", path, e.msg);
        }
    }
    vs_model_spec_clear(&spec);
    vs_json_free(doc);
    return m;
}

/* ---- flags -------------------------------------------------------------------------------------------- */

typedef struct train_cli {
    const char *arch, *spec, *data, *test_data, *out;
    const vs_zoo_entry *zoo;     /* the --arch entry, or NULL with --spec */
    char task_opts[1024];        /* the zoo's defaults, then --task-opts */
    char sample_dir[4096];
    vs_train_optim per_optim[VS_TASK_MAX_OPTIMS];
    int64_t classes[64], n_classes; /* --classes, n_classes 0: all */
    vs_data_flags df;
    vs_train_opts o;
} train_cli;

static int parse_classes(const char *s, train_cli *c)
{
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 0 || v > 1000000 || (*end != ',' && *end != '\0') || c->n_classes == 64)
            return vs_usage_error("train", "option '--classes' expects class numbers C,C,... (at most 64), got '%s'", s);
        c->classes[c->n_classes++] = v;
        p = *end ? end + 1 : end;
    }
    return c->n_classes ? 0 : vs_usage_error("train", "option '--classes' expects class numbers C,C,...");
}

/* Digits only (no sign, no space) from s up to stop ('\0' or ':'), 1 <= value <= 10^15; s moves past. */
static bool schedule_count(const char **s, char stop, long long *n)
{
    const char *p = *s;
    *n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (*n > 100000000000000LL) return false;
        *n = *n * 10 + (*p - '0');
    }
    if (p == *s || *p != stop || *n < 1) return false;
    *s = stop ? p + 1 : p;
    return true;
}

/* "step:S:G", "cosine" or "cosine:T", "constant" */
static int parse_schedule(const char *s, vs_lr_schedule *out)
{
    memset(out, 0, sizeof *out);
    long long n = 0;
    double g = 0;
    const char *p = s + 5;
    char *end = NULL;
    if (strcmp(s, "constant") == 0) out->kind = VS_LR_CONSTANT;
    else if (strcmp(s, "cosine") == 0) out->kind = VS_LR_COSINE;
    else if (strncmp(s, "cosine:", 7) == 0 && (p = s + 7, schedule_count(&p, '\0', &n))) out->kind = VS_LR_COSINE, out->t_max = n;
    else if (strncmp(s, "step:", 5) == 0 && schedule_count(&p, ':', &n) && *p >= '0' && *p <= '9' && (g = strtod(p, &end), !*end) &&
             g > 0 && g <= 1)
        out->kind = VS_LR_STEP, out->step_size = n, out->gamma = (float)g;
    else
        return vs_usage_error("train", "option '--lr-schedule' expects constant, step:S:G (S >= 1, 0 < G <= 1) or cosine[:T], got '%s'", s);
    return 0;
}

/* --betas, --weight-decay, --clip-norm, --lr-schedule, --optimizers, --task-opts, --sample-every */
static int parse_optim_flags(const vs_args *a, train_cli *c)
{
    int rc;
    double wd, clip;
    const char *betas = vs_args_get(a, "betas"), *sched = vs_args_get(a, "lr-schedule"), *per = vs_args_get(a, "optimizers");
    if (betas) {
        double b1, b2;
        char tail;
        if (sscanf(betas, "%lf,%lf%c", &b1, &b2, &tail) != 2 || !(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1))
            return vs_usage_error("train", "option '--betas' expects B1,B2 in [0, 1), got '%s'", betas);
        c->o.optim.beta1 = (float)b1, c->o.optim.beta2 = (float)b2;
    }
    if ((rc = vs_args_float(a, "weight-decay", 0, 0, 1e6, &wd)) || (rc = vs_args_float(a, "clip-norm", 0, 0, 1e35, &clip))) return rc;
    c->o.optim.weight_decay = (float)wd, c->o.clip_norm = (float)clip;
    if (sched && (rc = parse_schedule(sched, &c->o.schedule))) return rc;
    vs_error err;
    if (per && vs_train_parse_optims(per, &c->o, c->per_optim, VS_TASK_MAX_OPTIMS, &c->o.n_per_optim, &err) != VS_OK)
        return vs_usage_error("train", "option '--optimizers': %s", err.msg);
    c->o.per_optim = c->per_optim;
    /* the zoo's defaults, then --task-opts, then the shorthands --alpha and --beta */
    const char *def = c->zoo ? c->zoo->task_opts : NULL, *keys[] = {"", "alpha=", "beta="};
    const char *vals[] = {vs_args_get(a, "task-opts"), vs_args_get(a, "alpha"), vs_args_get(a, "beta")};
    int n = snprintf(c->task_opts, sizeof c->task_opts, "%s", def ? def : "");
    for (int i = 0; i < 3 && n < (int)sizeof c->task_opts; i++)
        if (vals[i]) n += snprintf(c->task_opts + n, sizeof c->task_opts - (size_t)n, "%s%s%s", n ? "," : "", keys[i], vals[i]);
    if (n >= (int)sizeof c->task_opts) return vs_usage_error("train", "option '--task-opts' is too long");
    c->o.task_opts = c->task_opts[0] ? c->task_opts : NULL;
    int64_t every;
    if ((rc = vs_args_int(a, "sample-every", 0, 1, INT64_MAX, &every))) return rc;
    c->o.sample_every = every;
    return 0;
}

static int parse_flags(const vs_args *a, train_cli *c)
{
    memset(c, 0, sizeof *c);
    vs_train_opts_init(&c->o);
    if (a->n_pos) return vs_usage_error("train", "unexpected argument '%s'", a->pos[0]);
    c->arch = vs_args_get(a, "arch"), c->spec = vs_args_get(a, "spec");
    c->data = vs_args_get(a, "data"), c->test_data = vs_args_get(a, "test-data"), c->out = vs_args_get(a, "out");
    if (!c->arch == !c->spec) return vs_usage_error("train", "give one of --arch NAME and --spec model.json");
    if (!c->data) return vs_usage_error("train", "--data SPEC is required");
    if (!c->out) return vs_usage_error("train", "--out DIR is required");
    c->zoo = c->arch ? vs_zoo_find(c->arch) : NULL;
    if (c->arch && !c->zoo) return vs_usage_error("train", "unknown architecture '%s' (see 'versus help train')", c->arch);
    int rc;
    const char *cl = vs_args_get(a, "classes");
    if (cl && (rc = parse_classes(cl, c))) return rc;
    if ((rc = vs_cli_data_flags(a, &c->df))) return rc;
    const char *opt = vs_args_get(a, "optimizer");
    bool sgd = opt && strcmp(opt, "sgd") == 0;
    if (opt && !sgd && strcmp(opt, "adam") != 0) return vs_usage_error("train", "option '--optimizer' expects sgd or adam, got '%s'", opt);
    double lr;
    int64_t epochs, batch, every;
    if ((rc = vs_args_int(a, "eval-every", -1, 0, 1000000, &c->o.eval_every))) return rc;
    if ((rc = vs_args_int(a, "epochs", 10, 1, 1000000, &epochs)) || (rc = vs_args_int(a, "batch-size", 64, 1, 1 << 20, &batch)) ||
        (rc = vs_args_int(a, "checkpoint-every", 0, 1, INT64_MAX, &every)) ||
        (rc = vs_args_float(a, "lr", sgd ? 0.01 : 0.001, 1e-12, 1e35, &lr)))
        return rc;
    c->o.optim = sgd ? vs_sgd_opts((float)lr) : vs_adam_opts((float)lr);
    c->o.epochs = epochs, c->o.batch_size = batch, c->o.checkpoint_every = every;
    if ((rc = parse_optim_flags(a, c))) return rc;
    c->o.seed = c->df.seed;
    const char *pairs = vs_args_get(a, "pairs");
    if (pairs && !vs_pairing_from_name(pairs, &c->o.pairing))
        return vs_usage_error("train", "option '--pairs' expects fixed or random, got '%s'", pairs);
    c->o.resume = vs_args_has(a, "resume");
    return 0;
}

/* Load SPEC, keeping the classes of --classes (the same subset for the training and the test data). */
static int load_data(train_cli *c, const char *spec, vs_dataset **out)
{
    vs_error err;
    vs_dataset *d = NULL;
    if (vs_load_spec(spec, &c->df, &d, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (c->n_classes > 0) {
        vs_dataset *s = NULL;
        vs_status st = vs_dataset_select_classes(d, c->classes, c->n_classes, &s, &err);
        vs_dataset_free(d);
        if (st != VS_OK) return vs_fail("%s: %s", spec, err.msg);
        d = s;
    }
    *out = d;
    return 0;
}

/* ---- outputs ------------------------------------------------------------------------------------------ */

static vs_json *data_flags_json(const vs_args *a)
{
    vs_json *o = vs_json_new_object();
    for (int i = 0; o && i < a->n; i++)
        for (const vs_cli_opt *d = data_only_opts; d->name; d++)
            if (strcmp(d->name, a->name[i]) == 0 &&
                vs_json_set(o, d->name, a->value[i] ? vs_json_new_string(a->value[i]) : vs_json_new_bool(true)) != VS_OK) {
                vs_json_free(o);
                return NULL;
            }
    return o;
}

static vs_json *num_or_null(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* {"loss": [per epoch], "d_loss": [...], ...}: the mean of each loss term per epoch. */
static vs_json *history_json(const vs_train_result *r)
{
    vs_json *h = vs_json_new_object();
    for (int k = 0; h && k < r->n_terms; k++) {
        vs_json *a = vs_json_new_array();
        for (int64_t e = 0; a && e < r->epochs; e++)
            if (vs_json_push(a, num_or_null(r->loss_history[e * r->n_terms + k])) != VS_OK) {
                vs_json_free(a);
                a = NULL;
            }
        if (vs_json_set(h, r->terms[k], a) != VS_OK) {
            vs_json_free(h);
            return NULL;
        }
    }
    return h;
}

static int write_metrics(const vs_args *a, const train_cli *c, const vs_train_result *r, const vs_task *task, double wall)
{
    vs_json *j = vs_json_new_object(), *hist = vs_json_new_array(), *cls = c->n_classes ? vs_json_new_array() : vs_json_new_null();
    bool ok = j && hist && cls;
    for (int64_t e = 0; ok && e < r->epochs; e++) ok = vs_json_push(hist, num_or_null(r->loss_history[e * r->n_terms])) == VS_OK;
    for (int64_t i = 0; ok && i < c->n_classes; i++) ok = vs_json_push(cls, vs_json_new_int(c->classes[i])) == VS_OK;
    ok = ok && vs_json_set(j, "format", vs_json_new_string("versus-metrics/1")) == VS_OK;
    ok = ok && vs_json_set(j, "task", vs_json_new_string(r->task)) == VS_OK;
    ok = ok && vs_json_set(j, c->arch ? "arch" : "spec", vs_json_new_string(c->arch ? c->arch : c->spec)) == VS_OK;
    ok = ok && vs_json_set(j, "data", vs_json_new_string(c->data)) == VS_OK;
    ok = ok && vs_json_set(j, "data_flags", data_flags_json(a)) == VS_OK;
    ok = ok && vs_json_set(j, "test_data", c->test_data ? vs_json_new_string(c->test_data) : vs_json_new_null()) == VS_OK;
    ok = ok && vs_json_set(j, "classes", cls) == VS_OK;
    cls = NULL;
    ok = ok && vs_json_set(j, "seed", vs_json_new_int((int64_t)c->o.seed)) == VS_OK;
    ok = ok && vs_json_set(j, "split_seed", vs_json_new_int((int64_t)c->o.seed)) == VS_OK;
    ok = ok && vs_json_set(j, "train_frac", c->test_data ? vs_json_new_null() : vs_json_new_number(c->o.train_frac)) == VS_OK;
    if (task->pairs) {
        ok = ok && vs_json_set(j, "pairing", vs_json_new_string(vs_pairing_name(c->o.pairing))) == VS_OK;
        ok = ok && vs_json_set(j, "siamese_scale", vs_json_new_number(c->o.siamese_scale)) == VS_OK;
    }
    ok = ok && vs_json_set(j, "task_opts", c->o.task_opts ? vs_json_new_string(c->o.task_opts) : vs_json_new_null()) == VS_OK;
    ok = ok && vs_json_set(j, "epochs", vs_json_new_int(r->epochs)) == VS_OK;
    ok = ok && vs_json_set(j, "steps", vs_json_new_int(r->global_step)) == VS_OK;
    ok = ok && vs_json_set(j, "batch_size", vs_json_new_int(c->o.batch_size)) == VS_OK;
    ok = ok && vs_json_set(j, "optimizer", vs_json_new_string(c->o.optim.kind == VS_OPTIM_SGD ? "sgd" : "adam")) == VS_OK;
    ok = ok && vs_json_set(j, "lr", vs_json_new_number(c->o.optim.lr)) == VS_OK;
    ok = ok && vs_json_set(j, "optimizers", vs_json_new_string(vs_args_get(a, "optimizers") ? vs_args_get(a, "optimizers") : "")) == VS_OK;
    ok = ok && vs_json_set(j, task->pairs ? "train_pairs" : "train_rows", vs_json_new_int(r->n_train)) == VS_OK;
    ok = ok && vs_json_set(j, task->pairs ? "test_pairs" : "test_rows", vs_json_new_int(r->n_test)) == VS_OK;
    for (int i = 0; ok && i < r->n_metrics; i++) ok = vs_json_set(j, r->metrics[i].name, num_or_null(r->metrics[i].value)) == VS_OK;
    ok = ok && vs_json_set(j, "final_loss", num_or_null(r->final_loss)) == VS_OK;
    ok = ok && vs_json_set(j, "loss_history", hist) == VS_OK;
    hist = NULL;
    ok = ok && vs_json_set(j, "history", history_json(r)) == VS_OK;
    ok = ok && vs_json_set(j, "train_seconds", vs_json_new_number(r->seconds)) == VS_OK;
    ok = ok && vs_json_set(j, "wall_seconds", vs_json_new_number(wall)) == VS_OK;
    vs_json_free(hist);
    vs_json_free(cls);
    int rc = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.json", c->out);
    vs_error err;
    if (!ok)
        rc = vs_fail("%s: out of memory", path);
    else if (vs_json_write_file(path, j, &err) != VS_OK)
        rc = vs_fail("%s", err.msg);
    vs_json_free(j);
    return rc;
}

/* ---- the verb ----------------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* First SIGINT/SIGTERM: ask the loop to checkpoint and stop; the handler resets itself (SA_RESETHAND),
 * so a second one ends the program at once. */
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* The last line: "accuracy: train A test B" ("pair accuracy" for pair tasks) when the task reports
 * accuracies, else every metric "name value" on one line. */
static void print_metrics(const vs_train_result *r, const vs_task *task)
{
    double train = vs_train_result_get(r, "train_accuracy"), test = vs_train_result_get(r, "test_accuracy");
    if (!isnan(train)) {
        printf("%saccuracy: train %.4f test %.4f\n", task->pairs ? "pair " : "", train, test);
        return;
    }
    for (int i = 0; i < r->n_metrics; i++) printf("%s%s %.6g", i ? "  " : "", r->metrics[i].name, r->metrics[i].value);
    printf("\n");
}

static int train_and_save(const vs_args *a, train_cli *c, vs_module *m, const vs_dataset *d, const vs_dataset *test)
{
    char ckpt[4096];
    if (snprintf(ckpt, sizeof ckpt, "%s/checkpoint.safetensors", c->out) >= (int)sizeof ckpt) return vs_fail("%s: path too long", c->out);
    vs_error err;
    const vs_task *task = vs_task_for_model(m, &err);
    if (!task) return vs_fail("%s", err.msg);
    if (c->o.sample_every > 0 && !task->generative)
        return vs_usage_error("train", "--sample-every applies to generative models; the %s task draws no samples", task->name);
    if (snprintf(c->sample_dir, sizeof c->sample_dir, "%s/samples", c->out) >= (int)sizeof c->sample_dir)
        return vs_fail("%s: path too long", c->out);
    c->o.sample_dir = c->sample_dir;
    c->o.test = test;
    c->o.checkpoint = ckpt;
    c->o.progress = stderr;
    if (c->o.eval_every < 0) /* the tasks whose evaluation is a deterministic forward pass */
        c->o.eval_every = strcmp(task->name, "classifier") == 0 || strcmp(task->name, "siamese") == 0;
    else if (c->o.eval_every > 0 && strcmp(task->name, "classifier") != 0 && strcmp(task->name, "siamese") != 0)
        return vs_usage_error("train", "--eval-every applies to the classifier and siamese tasks, not %s", task->name);
    c->o.stop = &stop_requested;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    double t0 = now_seconds();
    vs_train_result r;
    vs_status st = vs_train(m, d, &c->o, &r, &err);
    double wall = now_seconds() - t0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int rc = 0;
    if (st != VS_OK) {
        rc = vs_fail("%s", err.msg);
    } else if (r.interrupted) {
        rc = vs_fail("interrupted after %lld steps (%lld epochs done); checkpoint written to %s; continue with --resume",
                     (long long)r.global_step, (long long)r.epochs, ckpt);
    } else {
        int64_t in[VS_MAX_DIMS];
        int nd = data_input(d, in);
        vs_module_train(m, false);
        if (vs_model_save(m, nd, in, c->out, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        if (rc == 0) rc = write_metrics(a, c, &r, task, wall);
        if (rc == 0) {
            printf("wrote %s: model.json, model.safetensors, metrics.json (%lld epochs, %.1f s)\n", c->out, (long long)r.epochs, r.seconds);
            print_metrics(&r, task);
        }
    }
    vs_train_result_clear(&r);
    return rc;
}

/* --classifier DIR: the trained model of DIR becomes m's child "classifier" (a root composite only). */
static int attach_classifier(vs_module *m, const char *dir)
{
    const char *task = m->kind == VS_MODULE_COMPOSITE ? vs_composite_task(m) : NULL;
    if (!task || strcmp(task, "ganmex") != 0 || vs_module_child(m, "classifier"))
        return vs_usage_error("train", "--classifier applies to ganmex models without a \"classifier\" (--arch ganmex)");
    vs_error err;
    vs_model_spec spec = {0};
    vs_module *s = vs_model_load(dir, &spec, &err);
    vs_model_spec_clear(&spec);
    if (!s) return vs_fail("%s", err.msg);
    vs_module_train(s, false);
    return vs_composite_add_model(m, "classifier", s) == VS_OK ? 0 : vs_fail("%s: %s", dir, vs_last_error()->msg);
}

/* The output directory (and, with --resume, its checkpoint) checked before the data are loaded, so a
 * mistyped --out fails at once rather than after seconds of decoding; *made says whether it is new
 * (run_train removes it again, if still empty, when training never starts). */
static int prepare_out(const train_cli *c, bool *made)
{
    char ckpt[4096];
    if (snprintf(ckpt, sizeof ckpt, "%s/checkpoint.safetensors", c->out) >= (int)sizeof ckpt) return vs_fail("%s: path too long", c->out);
    struct stat sb;
    if (c->o.resume && stat(ckpt, &sb) != 0) return vs_fail("%s: no checkpoint to resume from: %s", ckpt, strerror(errno));
    *made = mkdir(c->out, 0777) == 0;
    if (!*made && errno != EEXIST) return vs_fail("%s: cannot create directory: %s", c->out, strerror(errno));
    return 0;
}

static int run_train(int argc, char **argv)
{
    vs_args a;
    train_cli c;
    bool made = false;
    int rc = vs_args_parse("train", train_opts, argc, argv, &a);
    if (rc || (rc = parse_flags(&a, &c)) || (rc = prepare_out(&c, &made))) return rc;
    vs_dataset *d = NULL, *test = NULL;
    rc = load_data(&c, c.data, &d);
    if (rc == 0 && c.test_data) rc = load_data(&c, c.test_data, &test);
    vs_module *m = NULL;
    if (rc == 0) {
        vs_rng r;
        vs_rng_seed(&r, c.o.seed ^ INIT_STREAM);
        vs_error err;
        vs_error_clear(&err);
        m = c.zoo ? vs_zoo_build(c.zoo, d, &r, &err) : spec_build(c.spec, d, &r, &err);
        rc = m ? 0 : vs_fail("%s", err.msg);
        if (rc == 0 && vs_args_get(&a, "classifier")) rc = attach_classifier(m, vs_args_get(&a, "classifier"));
        if (rc == 0) rc = train_and_save(&a, &c, m, d, test);
        else if (made) rmdir(c.out); /* nothing was written into it */
    } else if (made)
        rmdir(c.out);
    vs_module_free(m);
    vs_dataset_free(d);
    vs_dataset_free(test);
    return rc;
}

/* `versus help train` after the usage: the zoo and the tasks with their options, from the registries. */
static void train_help(void)
{
    printf("\nArchitectures (--arch); input sizes and class counts come from the data:\n");
    for (int i = 0; vs_zoo_at(i); i++) {
        const vs_zoo_entry *e = vs_zoo_at(i);
        printf("  %-20s ", e->name);
        for (const char *p = e->help; *p; p++) {
            putchar(*p);
            if (*p == '\n') printf("  %-20s ", "");
        }
        printf("\n");
    }
    printf("\nTasks (chosen by the model; options with --task-opts name=value,...):\n");
    for (int i = 0; vs_task_at(i); i++) {
        const vs_task *t = vs_task_at(i);
        printf("  %s\n", t->help);
        for (const vs_task_opt_def *o = t->opts; o && o->name; o++) {
            char def[64];
            if (o->choices) snprintf(def, sizeof def, "%s", o->choices[(int)o->def]);
            else snprintf(def, sizeof def, "%g", o->def);
            printf("      %-12s %s (default %s)\n", o->name, o->help, def);
        }
    }
}

const vs_verb vs_verb_train = {
    "train",
    "train a model (classifier, Siamese, VAE, GAN) and write its model directory",
    "usage: versus train (--arch NAME | --spec model.json) --data SPEC [data flags] [--test-data SPEC]\n"
    "                    [--classes C,...] [--epochs N] [--batch-size B] [--optimizer sgd|adam] [--lr X]\n"
    "                    [--betas B1,B2] [--weight-decay X] [--clip-norm X] [--lr-schedule S]\n"
    "                    [--optimizers NAME:key=value,...;...] [--task-opts name=value,...] [--alpha A] [--beta B]\n"
    "                    [--pairs fixed|random] [--seed S] [--checkpoint-every N] [--sample-every N]\n"
    "                    [--classifier DIR] --out DIR [--resume]\n\n"
    "The task follows the model (listed below): a model.json composite names it (\"task\"), a Siamese model\n"
    "is trained on pairs, anything else as a classifier.  Classifiers minimise cross-entropy and report\n"
    "accuracy.  Siamese models see pairs of rows: the loss is the binary cross-entropy of\n"
    "sigmoid(5 cos(enc(a), enc(b))) against [same class], a pair is called same-class when the cosine is\n"
    "> 0, and the reported figure is that pair accuracy.  Pairs (--pairs): fixed (default; 'snx' is an\n"
    "alias) = SNX's protocol, each training row with 2 same-class and 2 other-class partners drawn once,\n"
    "random = 4 fresh balanced random pairs per training row each epoch; both are evaluated on fixed pairs.  A GAN has two optimizers,\n"
    "\"generator\" and \"critic\"; every other task one, \"model\".  --lr, --betas, --weight-decay,\n"
    "--clip-norm and --lr-schedule set them all; --optimizers sets one by name, e.g.\n"
    "  --optimizers 'generator:lr=1e-4,beta1=0.5,beta2=0.999;critic:lr=1e-4,beta1=0.5,beta2=0.999'\n"
    "The learning rate follows --lr-schedule per epoch: step:S:G multiplies it by G every S epochs,\n"
    "cosine[:T] anneals it to 0 over T epochs (default: the run's).\n\n"
    "--classifier DIR adds the trained classifier of DIR to the model as its frozen child \"classifier\":\n"
    "GANMEX (--arch ganmex) trains a StarGAN whose class term is that classifier's; give the same DIR\n"
    "with --resume.  The written model directory holds it too.\n\n"
    "Without --test-data, --data is split 70/30 per class with --seed (the same split and pairs as\n"
    "'versus data export --pairs'); metrics.json records split_seed and train_frac so the test portion\n"
    "can be recovered.  --seed also seeds synthetic data, the initial weights, the batch order, dropout\n"
    "and the tasks' noise: the same command gives the same model, bit for bit.\n\n"
    "Writes DIR/model.json, DIR/model.safetensors, DIR/metrics.json (the task's metrics, epochs, seed,\n"
    "data SPEC, \"history\": the mean of each loss term per epoch, wall time), DIR/checkpoint.safetensors\n"
    "(every model, optimizer and random stream and the loop state, written atomically at each epoch end,\n"
    "every --checkpoint-every steps, and on Ctrl-C, which stops the run cleanly; a second Ctrl-C ends it\n"
    "at once) and for generative models DIR/samples/step-N.png every --sample-every steps and at the end.\n"
    "--resume continues from the checkpoint with the same flags (--epochs may grow), also after the\n"
    "process was killed, and ends with the bits an uninterrupted run would have.  A loss or gradient\n"
    "that stops being finite ends the run with a message naming the epoch and step.  Progress (every\n"
    "loss term) is shown on standard error when it is a terminal.  The last line of standard output is\n"
    "  accuracy: train A test B          (classifiers; train A counted on the last epoch's steps, as\n"
    "                                    they ran: dropout on, weights of each step)\n"
    "  pair accuracy: train A test B     (Siamese models)\n"
    "  NAME VALUE  NAME VALUE ...        (other tasks: their metrics, e.g. test_elbo for a VAE)\n"
    "--threads T sets the kernels' threads; the result does not depend on it.",
    train_opts,
    run_train,
    train_help,
};
