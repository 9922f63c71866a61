/* task_gan.c - the GAN task: WGAN-GP (Gulrajani et al. 2017) with n_critic critic steps per
 * generator step and the gradient penalty through double backward, or the standard non-saturating
 * loss (Goodfellow et al. 2014); unconditional generators G(z) and StarGAN-style conditional ones
 * G(x, c) (Choi et al. 2018) with the critic's classification head.
 *
 * The model is a composite with children "generator" and "critic" (versus/composite.h).  Every step
 * trains the critic on a batch; every n_critic-th step also the generator:
 *   fake  = G(z), z ~ N(0, I)            or  G(x, c'), c' a uniformly drawn target class
 *   wgan-gp: d_adv = mean D(fake) - mean D(x);  g_adv = -mean D(G(..))
 *   ns:      d_adv = mean softplus(-D(x)) + softplus(D(fake));  g_adv = mean softplus(-D(G(..)))
 *   gp    = mean_i (|d sum D(xh) / d xh_i| - 1)^2, xh = a x + (1 - a) fake, a ~ U[0,1) per example
 *   d_cls = CE(cls(x), y);  g_cls = CE(cls(G(x, c')), c');  g_rec = mean |x - G(G(x, c'), c_y)|
 *   d_loss = d_adv + lambda_gp gp + lambda_cls d_cls;  g_loss = g_adv + lambda_cls g_cls + lambda_rec g_rec
 * (the class terms only for conditional generators; D(.) is the critic's "src", averaged per example
 * for PatchGAN maps).  With range=tanh the images are mapped to [-1, 1] (2x - 1) for both networks,
 * as StarGAN's tanh generator expects, and back for samples.  The noise, target classes and mixing
 * weights come from the task's stream "noise". */
#include "nn/gan_internal.h"
#include "versus/composite.h"
#include "versus/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_STREAM 0x67616e6576616cull /* "ganeval" */
#define GRID 8
#define GP_EPS 1e-12f                   /* inside the norm's square root: its gradient at 0 */

const char *const vs_gan_loss_choices[] = {"wgan-gp", "ns", NULL};
const char *const vs_gan_range_choices[] = {"01", "tanh", NULL};
static const vs_task_opt_def gan_opts[] = {
    VS_GAN_OPT_DEFS(5, 1, 10, VS_GAN_RANGE_01),
    {NULL, 0, 0, 0, NULL, NULL},
};
static const char *const gan_optims[] = {"generator", "critic", NULL};
static const char *const gan_terms[] = {"d_loss", "g_loss", "gp", "d_cls", "g_cls", "g_rec", NULL};
static const char *const gan_streams[] = {"noise", NULL};

/* z's shape: a composite's input "z", or a sequential's first linear (in) or conv-transpose ([in,1,1]). */
static bool noise_shape(vs_module *g, vs_gan_state *s)
{
    if (g->kind == VS_MODULE_COMPOSITE) {
        for (int64_t i = 0; i < vs_composite_n_inputs(g); i++)
            if (strcmp(vs_composite_input_name(g, i), "z") == 0) {
                int nd = vs_composite_input_shape(g, i, s->z_shape);
                s->z_ndim = nd;
                return nd >= 1;
            }
        return false;
    }
    const vs_module *first = g->kind == VS_MODULE_SEQUENTIAL && g->n_children > 0 ? g->children[0] : g;
    if (first->kind == VS_MODULE_LINEAR) s->z_ndim = 1, s->z_shape[0] = first->spec.in;
    else if (first->kind == VS_MODULE_CONV_TRANSPOSE2D) s->z_ndim = 3, s->z_shape[0] = first->spec.in, s->z_shape[1] = s->z_shape[2] = 1;
    else return false;
    return true;
}

vs_status vs_gan_init(vs_task_run *r, vs_error *err)
{
    if (r->data->kind != VS_DATA_IMAGES) return vs_error_set(err, VS_ERR_ARG, "the gan task trains on images; %s holds none", r->data->name);
    vs_gan_state *s = calloc(1, sizeof *s);
    if (!s) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    r->state = s;
    s->g = vs_task_model(r, "generator"), s->d = vs_task_model(r, "critic");
    s->labels = malloc((size_t)r->opts->batch_size * sizeof *s->labels);
    s->targets = malloc((size_t)r->opts->batch_size * sizeof *s->targets);
    if (!s->labels || !s->targets) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    s->conditional = s->g->kind == VS_MODULE_COMPOSITE && vs_composite_defines(s->g, "c") && vs_composite_defines(s->g, "x");
    s->has_cls = s->d->kind == VS_MODULE_COMPOSITE && vs_composite_defines(s->d, "cls");
    s->critic_cls = s->has_cls;
    if (!s->conditional && !noise_shape(s->g, s))
        return vs_error_set(err, VS_ERR_ARG, "gan: the generator takes neither \"z\" (a noise vector) nor \"x\" and \"c\" (image and class)");
    if (s->conditional && r->data->n_classes < 2)
        return vs_error_set(err, VS_ERR_ARG, "gan: a conditional generator needs labelled data with 2 or more classes");
    return VS_OK;
}

void vs_gan_clear(vs_task_run *r)
{
    vs_gan_state *s = r->state;
    if (s) free(s->labels), free(s->targets);
    free(s);
    r->state = NULL;
}

/* Real images of rows, in the networks' range. */
static vs_tensor *real_images(vs_task_run *r, const vs_dataset *d, const int64_t *rows, int64_t n, vs_error *err)
{
    vs_tensor *x;
    if (vs_train_input(d, rows, n, &x, NULL, &(vs_forward_ctx){0}, err) != VS_OK) return NULL;
    return (int)r->opt[VS_GAN_OPT_RANGE] == VS_GAN_RANGE_TANH ? vs_add_scalar(vs_mul_scalar(x, 2), -1) : x;
}

static vs_tensor *one_hot(const int64_t *cls, int64_t n, int64_t C)
{
    vs_tensor *c = vs_tensor_zeros(VS_SHAPE(n, C));
    for (int64_t i = 0; c && i < n; i++) c->data[i * C + cls[i]] = 1;
    return c;
}

/* G(z) for n fresh noise vectors, or G(x, one_hot(cls)). */
static vs_tensor *generate(vs_gan_state *s, vs_tensor *x, const int64_t *cls, int64_t n, int64_t C, vs_rng *noise, vs_rng *fwd,
                           vs_error *err)
{
    vs_tensor *y = NULL;
    if (s->conditional) {
        const char *names[2] = {"x", "c"}, *want = "y";
        vs_tensor *in[2] = {x, one_hot(cls, n, C)};
        if (vs_module_eval(s->g, 2, names, in, 1, &want, &y, fwd, err) != VS_OK) return NULL;
    } else {
        int64_t shape[VS_MAX_DIMS + 1] = {n};
        memcpy(shape + 1, s->z_shape, (size_t)s->z_ndim * sizeof *shape);
        const char *name = "z", *want = "y";
        vs_tensor *z = vs_tensor_randn((int)s->z_ndim + 1, shape, noise, 0, 1);
        if (vs_module_eval(s->g, 1, &name, &z, 1, &want, &y, fwd, err) != VS_OK) return NULL;
    }
    if (y && x && !vs_same_shape(x, y)) {
        char a[64], b[64];
        vs_shape_str(y, a, sizeof a);
        vs_shape_str(x, b, sizeof b);
        vs_error_set(err, VS_ERR_SHAPE, "gan: the generator gives %s, the real images are %s", a, b);
        return NULL;
    }
    return y;
}

/* The critic's score per example [n] (PatchGAN maps averaged) and, when wanted and present, cls. */
static vs_status critic(vs_gan_state *s, vs_tensor *x, vs_rng *fwd, vs_tensor **src, vs_tensor **cls, vs_error *err)
{
    const char *name = "x", *want[2] = {"src", "cls"};
    vs_tensor *outs[2] = {0};
    int n_want = cls && s->has_cls ? 2 : 1;
    vs_status st = vs_module_eval(s->d, 1, &name, &x, n_want, want, outs, fwd, err);
    if (st != VS_OK) return st;
    *src = outs[0];
    if (cls) *cls = outs[1];
    return VS_OK;
}

/* Every axis of t but the batch axis. */
static uint32_t example_axes(const vs_tensor *t) { return ((1u << t->ndim) - 1u) & ~VS_AXIS(0); }

static vs_tensor *per_example(vs_tensor *src)
{
    return src->ndim == 1 ? src : vs_mean(src, example_axes(src), false);
}

/* mean_i (|grad_i| - 1)^2 of sum D(xh) at xh = a x + (1 - a) fake (both constants here). */
static vs_tensor *gradient_penalty(vs_gan_state *s, vs_tensor *x, vs_tensor *fake, vs_rng *noise, vs_rng *fwd, vs_error *err)
{
    int64_t n = x->shape[0], per = x->size / n;
    vs_tensor *xh = vs_tensor_new(x->ndim, x->shape);
    if (!xh) return NULL;
    for (int64_t i = 0; i < n; i++) {
        float a = vs_rng_uniformf(noise);
        for (int64_t k = i * per; k < (i + 1) * per; k++) xh->data[k] = a * x->data[k] + (1 - a) * fake->data[k];
    }
    vs_set_requires_grad(xh, true);
    vs_tensor *src, *g;
    if (critic(s, xh, fwd, &src, NULL, err) != VS_OK) return NULL;
    vs_tensor *total = vs_sum(src, VS_ALL_AXES, false);
    if (vs_grad(1, &total, NULL, 1, &xh, &g, true) != VS_OK) {
        vs_error_set(err, vs_last_error()->code, "gan: gradient penalty: %s", vs_last_error()->msg);
        return NULL;
    }
    vs_tensor *norm = vs_sqrt(vs_add_scalar(vs_sum(vs_mul(g, g), example_axes(g), false), GP_EPS));
    return vs_mean(vs_pow_scalar(vs_add_scalar(norm, -1), 2), VS_ALL_AXES, false);
}

static float mean_of(vs_tensor *t) { return vs_item(vs_mean(t, VS_ALL_AXES, false)); }

static vs_status critic_step(vs_task_run *r, vs_gan_state *s, vs_tensor *x, int64_t n, int64_t C, double *terms, vs_error *err)
{
    vs_rng *noise = &r->streams[0];
    bool ns = (int)r->opt[VS_GAN_OPT_LOSS] == VS_GAN_LOSS_NS;
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *fake = generate(s, x, s->targets, n, C, noise, r->forward, err);
    vs_set_grad_enabled(grad);
    if (!fake) return err->code;
    vs_tensor *src_real, *src_fake, *cls = NULL;
    vs_status st = critic(s, x, r->forward, &src_real, s->conditional && s->critic_cls ? &cls : NULL, err);
    if (st == VS_OK) st = critic(s, fake, r->forward, &src_fake, NULL, err);
    if (st != VS_OK) return st;
    vs_tensor *dr = per_example(src_real), *df = per_example(src_fake);
    vs_tensor *loss = ns ? vs_add(vs_mean(vs_softplus(vs_neg(dr)), VS_ALL_AXES, false), vs_mean(vs_softplus(df), VS_ALL_AXES, false))
                         : vs_sub(vs_mean(df, VS_ALL_AXES, false), vs_mean(dr, VS_ALL_AXES, false));
    if (r->opt[VS_GAN_OPT_LAMBDA_GP] > 0) {
        vs_tensor *gp = gradient_penalty(s, x, fake, noise, r->forward, err);
        if (!gp) return err->code ? err->code : vs_error_set(err, vs_last_error()->code, "gan: %s", vs_last_error()->msg);
        terms[VS_GAN_T_GP] = vs_item(gp);
        loss = vs_add(loss, vs_mul_scalar(gp, (float)r->opt[VS_GAN_OPT_LAMBDA_GP]));
    }
    if (cls) {
        vs_tensor *ce = vs_cross_entropy(cls, s->labels);
        if (ce) terms[VS_GAN_T_DCLS] = vs_item(ce);
        loss = vs_add(loss, vs_mul_scalar(ce, (float)r->opt[VS_GAN_OPT_LAMBDA_CLS]));
    }
    if (loss) terms[VS_GAN_T_D] = vs_item(loss);
    return vs_task_update(r, "critic", loss, err);
}

/* The judge's logits S(y) for generated images y (in the networks' range; S reads [0,1] images). */
static vs_tensor *judge_logits(const vs_task_run *r, const vs_gan_state *s, vs_tensor *y, vs_error *err)
{
    if ((int)r->opt[VS_GAN_OPT_RANGE] == VS_GAN_RANGE_TANH) y = vs_mul_scalar(vs_add_scalar(y, 1), 0.5f);
    const char *name = "x", *want = "logits";
    vs_tensor *out = NULL;
    if (s->judge->kind == VS_MODULE_COMPOSITE) name = vs_composite_input_name(s->judge, 0), want = vs_composite_output_name(s->judge, 0);
    if (vs_module_eval(s->judge, 1, &name, &y, 1, &want, &out, NULL, err) != VS_OK) return NULL;
    return out;
}

/* The generator's class term *ce: CE(cls(G(x, c')), c') from the critic's D_cls, or CE(S(G(x, c')), c')
 * from the frozen judge (GANMEX); NULL without either. */
static vs_status class_term(const vs_task_run *r, const vs_gan_state *s, vs_tensor *fake, vs_tensor *cls, vs_tensor **ce, vs_error *err)
{
    *ce = NULL;
    if (s->critic_cls || !s->judge) {
        *ce = cls ? vs_cross_entropy(cls, s->targets) : NULL;
        return VS_OK;
    }
    vs_tensor *logits = judge_logits(r, s, fake, err);
    if (!logits) return err->code;
    *ce = vs_cross_entropy(logits, s->targets);
    return VS_OK;
}

static vs_status generator_step(vs_task_run *r, vs_gan_state *s, vs_tensor *x, int64_t n, int64_t C, double *terms, vs_error *err)
{
    vs_rng *noise = &r->streams[0];
    vs_tensor *fake = generate(s, x, s->targets, n, C, noise, r->forward, err), *src, *cls = NULL;
    if (!fake) return err->code;
    vs_status st = critic(s, fake, r->forward, &src, s->conditional && s->critic_cls ? &cls : NULL, err);
    if (st != VS_OK) return st;
    vs_tensor *df = per_example(src);
    vs_tensor *loss = (int)r->opt[VS_GAN_OPT_LOSS] == VS_GAN_LOSS_NS ? vs_mean(vs_softplus(vs_neg(df)), VS_ALL_AXES, false)
                                                                    : vs_neg(vs_mean(df, VS_ALL_AXES, false));
    if (s->conditional) {
        vs_tensor *ce;
        if ((st = class_term(r, s, fake, cls, &ce, err)) != VS_OK) return st;
        if (ce) {
            terms[VS_GAN_T_GCLS] = vs_item(ce);
            loss = vs_add(loss, vs_mul_scalar(ce, (float)r->opt[VS_GAN_OPT_LAMBDA_CLS]));
        }
        if (r->opt[VS_GAN_OPT_LAMBDA_REC] > 0) {
            vs_tensor *back = generate(s, fake, s->labels, n, C, noise, r->forward, err);
            if (!back) return err->code;
            vs_tensor *rec = vs_l1_loss(back, x);
            if (rec) terms[VS_GAN_T_GREC] = vs_item(rec);
            loss = vs_add(loss, vs_mul_scalar(rec, (float)r->opt[VS_GAN_OPT_LAMBDA_REC]));
        }
        if (s->lambda_sim > 0) {
            vs_tensor *sim = vs_l1_loss(fake, x);
            if (sim) terms[VS_GAN_T_GSIM] = vs_item(sim);
            loss = vs_add(loss, vs_mul_scalar(sim, (float)s->lambda_sim));
        }
    }
    if (loss) terms[VS_GAN_T_G] = vs_item(loss);
    return vs_task_update(r, "generator", loss, err);
}

vs_status vs_gan_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    vs_gan_state *s = r->state;
    int64_t C = r->data->n_classes;
    vs_tensor *x = real_images(r, r->data, rows, n, err);
    if (!x) return err->code;
    for (int64_t i = 0; i < n; i++) s->labels[i] = r->data->y[rows[i]];
    for (int64_t i = 0; s->conditional && i < n; i++) s->targets[i] = (int64_t)vs_rng_below(&r->streams[0], (uint64_t)C);
    if (s->judge) vs_module_train(s->judge, false); /* frozen: no dropout, no batch statistics */
    vs_status st = critic_step(r, s, x, n, C, terms, err);
    if (st == VS_OK && (r->global_step + 1) % (int64_t)r->opt[VS_GAN_OPT_N_CRITIC] == 0) st = generator_step(r, s, x, n, C, terms, err);
    return st;
}

/* Adds to *on_target the generated images y that the judge classifies as their target class, and to
 * *dist their L2 distances to the sources x in [0,1] units. */
static vs_status judge_counts(const vs_task_run *r, const vs_gan_state *s, const vs_tensor *x, vs_tensor *y, const int64_t *targets,
                              int64_t nb, double *on_target, double *dist, vs_error *err)
{
    vs_tensor *logits = judge_logits(r, s, y, err);
    if (!logits) return err->code;
    int64_t C = logits->shape[1], per = x->size / nb;
    double unit = (int)r->opt[VS_GAN_OPT_RANGE] == VS_GAN_RANGE_TANH ? 0.5 : 1.0;
    for (int64_t i = 0; i < nb; i++) {
        int64_t b = 0;
        for (int64_t c = 1; c < C; c++)
            if (logits->data[i * C + c] > logits->data[i * C + b]) b = c;
        *on_target += b == targets[i];
        double d = 0;
        for (int64_t k = i * per; k < (i + 1) * per; k++) d += ((double)y->data[k] - x->data[k]) * ((double)y->data[k] - x->data[k]);
        *dist += unit * sqrt(d);
    }
    return VS_OK;
}

/* Over the test rows: mean critic score of real and generated images, and for conditional models
 * the critic's accuracy on real images and on generated ones (as their target class). */
vs_status vs_gan_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    vs_gan_state *s = r->state;
    const vs_train_split *sp = r->split;
    int64_t C = r->data->n_classes;
    vs_rng rng;
    vs_rng_seed(&rng, r->opts->seed ^ EVAL_STREAM);
    double real = 0, fake = 0, ok_real = 0, ok_fake = 0, on_target = 0, dist = 0;
    vs_status st = VS_OK;
    res->n_train = sp->n_train, res->n_test = sp->n_test;
    int64_t labels[VS_TRAIN_EVAL_BATCH], targets[VS_TRAIN_EVAL_BATCH];
    for (int64_t i0 = 0; i0 < sp->n_test && st == VS_OK; i0 += VS_TRAIN_EVAL_BATCH) {
        int64_t nb = sp->n_test - i0 < VS_TRAIN_EVAL_BATCH ? sp->n_test - i0 : VS_TRAIN_EVAL_BATCH;
        vs_scope_begin();
        vs_tensor *x = real_images(r, r->test, sp->test + i0, nb, err), *y = NULL, *sr, *sf, *cr = NULL, *cf = NULL;
        for (int64_t i = 0; i < nb; i++) labels[i] = r->test->y[sp->test[i0 + i]], targets[i] = (int64_t)vs_rng_below(&rng, (uint64_t)C);
        st = x ? VS_OK : err->code;
        if (st == VS_OK && !(y = generate(s, x, targets, nb, C, &rng, NULL, err))) st = err->code;
        if (st == VS_OK) st = critic(s, x, NULL, &sr, &cr, err);
        if (st == VS_OK) st = critic(s, y, NULL, &sf, &cf, err);
        if (st == VS_OK) real += (double)mean_of(per_example(sr)) * (double)nb, fake += (double)mean_of(per_example(sf)) * (double)nb;
        if (st == VS_OK && s->judge && s->conditional) st = judge_counts(r, s, x, y, targets, nb, &on_target, &dist, err);
        for (int64_t i = 0; st == VS_OK && s->conditional && cr && i < nb; i++) {
            int64_t br = 0, bf = 0;
            for (int64_t c = 1; c < C; c++) {
                if (cr->data[i * C + c] > cr->data[i * C + br]) br = c;
                if (cf->data[i * C + c] > cf->data[i * C + bf]) bf = c;
            }
            ok_real += br == labels[i], ok_fake += bf == targets[i];
        }
        vs_scope_end();
    }
    if (st == VS_OK && sp->n_test > 0) {
        double n = (double)sp->n_test;
        vs_train_result_put(res, "critic_real", real / n);
        vs_train_result_put(res, "critic_fake", fake / n);
        vs_train_result_put(res, "critic_gap", (real - fake) / n);
        if (s->judge && s->conditional) {
            vs_train_result_put(res, "target_class_rate", on_target / n);
            vs_train_result_put(res, "baseline_l2", dist / n);
        }
        if (s->conditional && s->has_cls && s->critic_cls) {
            vs_train_result_put(res, "cls_accuracy_real", ok_real / n);
            vs_train_result_put(res, "cls_accuracy_fake", ok_fake / n);
        }
    }
    return st;
}

/* Unconditional: GRID x GRID samples.  Conditional: GRID test images (first column), then one
 * column per target class. */
vs_status vs_gan_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err)
{
    vs_gan_state *s = r->state;
    const vs_train_split *sp = r->split;
    const vs_dataset *d = sp->n_test > 0 ? r->test : r->data;
    const int64_t *from = sp->n_test > 0 ? sp->test : sp->train;
    int64_t pool = sp->n_test > 0 ? sp->n_test : sp->n_train, C = r->data->n_classes, idx[GRID], cls[GRID];
    vs_tensor *y;
    if (!s->conditional) {
        if (!(y = generate(s, NULL, NULL, GRID * GRID, C, rng, NULL, err))) return err->code;
        *rows = *cols = GRID;
    } else {
        for (int i = 0; i < GRID; i++) idx[i] = from[i % pool];
        vs_tensor *x = real_images(r, d, idx, GRID, err);
        if (!x) return err->code;
        vs_tensor **parts = calloc((size_t)C + 1, sizeof *parts);
        if (!parts) return vs_error_set(err, VS_ERR_NOMEM, "samples: out of memory");
        parts[0] = x;
        for (int64_t c = 0; c < C && parts[c]; c++) {
            for (int i = 0; i < GRID; i++) cls[i] = c;
            parts[c + 1] = generate(s, x, cls, GRID, C, rng, NULL, err);
        }
        /* [C+1, GRID, ...] -> [GRID, C+1, ...]: one row per source image */
        vs_tensor *all = parts[C] ? vs_concat((int)C + 1, parts, 0) : NULL;
        free(parts);
        if (!all) return err->code ? err->code : vs_error_set(err, vs_last_error()->code, "samples: %s", vs_last_error()->msg);
        int64_t sh[5] = {C + 1, GRID, x->shape[1], x->shape[2], x->shape[3]};
        vs_tensor *t = vs_transpose(vs_reshape(all, 5, sh), 0, 1); /* a copy, contiguous */
        y = vs_reshape(t, 4, (int64_t[]){GRID * (C + 1), x->shape[1], x->shape[2], x->shape[3]});
        *rows = GRID, *cols = (int)(C + 1);
    }
    if ((int)r->opt[VS_GAN_OPT_RANGE] == VS_GAN_RANGE_TANH) y = vs_mul_scalar(vs_add_scalar(y, 1), 0.5f);
    *out = y;
    return y ? VS_OK : vs_error_set(err, vs_last_error()->code, "samples: %s", vs_last_error()->msg);
}

/* Conditional: G(x, one_hot(cls)) for source images x; unconditional: G(z) for noise rows z.  In and
 * out in [0,1] (range=tanh maps both). */
vs_status vs_gan_predict(vs_module *m, const double *opt, vs_tensor *x, int64_t cls, vs_tensor **y, vs_error *err)
{
    vs_gan_state s = {.g = vs_module_child(m, "generator"), .d = vs_module_child(m, "critic")};
    if (!s.g) return vs_error_set(err, VS_ERR_ARG, "gan: the model has no \"generator\"");
    s.conditional = s.g->kind == VS_MODULE_COMPOSITE && vs_composite_defines(s.g, "c") && vs_composite_defines(s.g, "x");
    bool tanh_range = (int)opt[VS_GAN_OPT_RANGE] == VS_GAN_RANGE_TANH;
    vs_tensor *out;
    if (s.conditional) {
        int64_t C = 0, cs[VS_MAX_DIMS];
        for (int64_t i = 0; i < vs_composite_n_inputs(s.g); i++)
            if (strcmp(vs_composite_input_name(s.g, i), "c") == 0 && vs_composite_input_shape(s.g, i, cs) == 1) C = cs[0];
        if (cls < 0 || cls >= C)
            return vs_error_set(err, VS_ERR_ARG, "a conditional generator needs a target class in [0, %lld) (--class C)", (long long)C);
        int64_t n = x->shape[0], *c = malloc((size_t)n * sizeof *c);
        if (!c) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++) c[i] = cls;
        out = generate(&s, tanh_range ? vs_add_scalar(vs_mul_scalar(x, 2), -1) : x, c, n, C, NULL, NULL, err);
        free(c);
    } else {
        if (cls >= 0) return vs_error_set(err, VS_ERR_ARG, "the generator is unconditional; --class applies to conditional generators");
        const char *name = "z", *want = "y";
        if (vs_module_eval(s.g, 1, &name, &x, 1, &want, &out, NULL, err) != VS_OK) return err->code;
    }
    if (!out) return err->code;
    *y = tanh_range ? vs_mul_scalar(vs_add_scalar(out, 1), 0.5f) : out;
    return *y ? VS_OK : vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
}

const vs_task vs_task_gan = {
    .name = "gan",
    .help = "gan: a composite of \"generator\" (z -> y, or StarGAN x, c -> y) and \"critic\" (x -> src [, cls]);\n"
            "    WGAN-GP with n_critic critic steps per generator step, or the non-saturating loss; reports\n"
            "    the critic's mean score on real and generated test images (and its class accuracy on both).",
    .optims = gan_optims,
    .terms = gan_terms,
    .streams = gan_streams,
    .opts = gan_opts,
    .generative = true,
    .init = vs_gan_init,
    .clear = vs_gan_clear,
    .step = vs_gan_step,
    .evaluate = vs_gan_evaluate,
    .sample = vs_gan_sample,
    .predict = vs_gan_predict,
};
