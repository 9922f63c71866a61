/* test_optim.c - SGD, Adam and AdamW against values computed by hand with PyTorch's algorithms,
 * the vectorised update loops bit for bit against the formulas written out per element, the Adam
 * update within 3 ulps of PyTorch's float formula and as close as it to the exact one, state
 * save/restore, learning-rate schedules, gradient clipping, and a small MLP learning XOR. */
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/optim.h"
#include "versus/rng.h"
#include "versus/threads.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* loss(p) = sum(0.5 c p^2 + d p), so grad = c p + d. */
static const float P0[3] = {1.0f, -2.0f, 0.5f}, C[3] = {1.0f, 0.5f, 2.0f}, D[3] = {0.3f, -0.2f, 0.1f};

static void quad_grad(vs_tensor *p)
{
    vs_scope_begin();
    vs_tensor *c = vs_tensor_from(VS_SHAPE(3), C), *d = vs_tensor_from(VS_SHAPE(3), D);
    vs_tensor *loss = vs_sum(vs_add(vs_mul_scalar(vs_mul(c, vs_mul(p, p)), 0.5f), vs_mul(d, p)), VS_ALL_AXES, false);
    ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
    vs_scope_end();
}

/* Three (or `steps`) optimiser steps on the quadratic from P0; p compared to want. */
static void run_steps(const vs_optim_opts *o, int steps, const double want[3])
{
    int64_t live = vs_live_tensors();
    vs_tensor *p = vs_tensor_from(VS_SHAPE(3), P0);
    vs_set_requires_grad(p, true);
    vs_error err;
    vs_optim *opt = vs_optim_new(o, 1, &p, NULL, &err);
    ck_assert_ptr_nonnull(opt);
    for (int t = 0; t < steps; t++) {
        vs_optim_zero_grad(opt);
        quad_grad(p);
        ck_assert_int_eq(vs_optim_step(opt, &err), VS_OK);
    }
    for (int i = 0; i < 3; i++) ck_assert_float_near(p->data[i], want[i], 2e-6 * (1 + fabs(want[i])));
    vs_optim_free(opt);
    vs_tensor_free(p);
    ck_assert_int_eq(vs_live_tensors(), live);
}

/* Expected values: PyTorch's single-tensor SGD/Adam/AdamW loops evaluated in double by hand (a
 * short script transcribing torch/optim/sgd.py and adam.py: buffer = first gradient, lerp for
 * exp_avg, bias corrections 1 - beta^t, denom = sqrt(v)/sqrt(bc2) + eps). */
START_TEST(test_sgd_plain)
{
    run_steps(&(vs_optim_opts){.kind = VS_OPTIM_SGD, .lr = 0.1f}, 3, (double[]){0.6477, -1.6577, 0.2316});
}
END_TEST

START_TEST(test_sgd_momentum_weight_decay)
{
    vs_optim_opts o = vs_sgd_opts(0.1f);
    o.momentum = 0.9f, o.weight_decay = 0.01f;
    run_steps(&o, 3, (double[]){0.327262469, -1.34512828, -0.0177589105});
}
END_TEST

START_TEST(test_sgd_nesterov)
{
    vs_optim_opts o = vs_sgd_opts(0.1f);
    o.momentum = 0.9f, o.nesterov = true;
    run_steps(&o, 3, (double[]){0.1255173, -1.1155103, -0.1095936});
}
END_TEST

START_TEST(test_sgd_dampening)
{
    vs_optim_opts o = vs_sgd_opts(0.1f);
    o.momentum = 0.9f, o.dampening = 0.5f;
    run_steps(&o, 3, (double[]){0.486825, -1.513625, 0.0886});
}
END_TEST

START_TEST(test_adam)
{
    vs_optim_opts o = vs_adam_opts(0.1f);
    run_steps(&o, 3, (double[]){0.701094785, -1.70049793, 0.204113785});
    o.weight_decay = 0.5f; /* L2 added to the gradient */
    run_steps(&o, 3, (double[]){0.701222821, -1.70055382, 0.204248089});
}
END_TEST

START_TEST(test_adamw)
{
    vs_optim_opts o = vs_adamw_opts(0.1f);
    o.weight_decay = 0.1f;
    run_steps(&o, 3, (double[]){0.674528695, -1.64420694, 0.192583399});
    o = vs_adamw_opts(0.05f);
    o.beta1 = 0.5f, o.beta2 = 0.9f, o.eps = 1e-3f, o.weight_decay = 0.2f;
    run_steps(&o, 4, (double[]){0.76658402, -1.72607605, 0.290438536});
}
END_TEST

START_TEST(test_first_adam_step_is_lr_sign)
{
    /* with bias correction the first Adam step is lr * g / (|g| + eps) = lr sign(g) */
    vs_tensor *p = vs_tensor_from(VS_SHAPE(3), P0);
    vs_set_requires_grad(p, true);
    vs_optim *opt = vs_optim_new(&(vs_optim_opts){.kind = VS_OPTIM_ADAM, .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f}, 1, &p,
                                 NULL, NULL);
    quad_grad(p);
    ck_assert_int_eq(vs_optim_step(opt, NULL), VS_OK);
    for (int i = 0; i < 3; i++) {
        float g = C[i] * P0[i] + D[i];
        ck_assert_float_near(p->data[i], P0[i] - 0.01f * (g > 0 ? 1 : -1), 1e-6);
    }
    vs_optim_free(opt);
    vs_tensor_free(p);
}
END_TEST

START_TEST(test_options_checked)
{
    vs_tensor *p = vs_tensor_zeros(VS_SHAPE(2));
    vs_error err;
    vs_optim_opts o = vs_sgd_opts(0.1f);
    o.nesterov = true;
    ck_assert_ptr_null(vs_optim_new(&o, 1, &p, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "Nesterov"));
    o = vs_adam_opts(-1.0f);
    ck_assert_ptr_null(vs_optim_new(&o, 1, &p, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "learning rate"));
    o = vs_adam_opts(0.1f);
    o.beta2 = 1.0f;
    ck_assert_ptr_null(vs_optim_new(&o, 1, &p, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "betas"));
    vs_tensor_free(p);
}
END_TEST

START_TEST(test_nonfinite_gradient_rejected)
{
    vs_tensor *p = vs_tensor_from(VS_SHAPE(3), P0);
    vs_set_requires_grad(p, true);
    vs_optim_opts o = vs_adam_opts(0.1f);
    vs_optim *opt = vs_optim_new(&o, 1, &p, (const char *[]){"w"}, NULL);
    vs_scope_begin();
    vs_tensor *loss = vs_sum(vs_mul(p, vs_tensor_from(VS_SHAPE(3), (float[]){1, NAN, 1})), VS_ALL_AXES, false);
    ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
    vs_scope_end();
    vs_error err;
    ck_assert_int_eq(vs_optim_step(opt, &err), VS_ERR_NUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "gradient of w"));
    for (int i = 0; i < 3; i++) ck_assert_float_eq(p->data[i], P0[i]);
    vs_named_tensors st = {0};
    ck_assert_int_eq(vs_optim_state(opt, &st), VS_OK);
    ck_assert_float_eq(vs_named_tensors_find(&st, "adam.step.w")->data[0], 0.0f);
    vs_named_tensors_clear(&st);
    vs_optim_free(opt);
    vs_tensor_free(p);
}
END_TEST

/* ---- the vectorised (and, for large tensors, threaded) update loops against the formulas written
 * out per element ---- */

/* One step of o on p [n] with gradient g, by the formulas above, element by element. */
static void ref_step(const vs_optim_opts *o, float *p, const float *g, float *m, float *v, int64_t n, int t)
{
    if (o->kind == VS_OPTIM_SGD) {
        for (int64_t i = 0; i < n; i++) {
            const float d = g[i] + o->weight_decay * p[i];
            if (o->momentum == 0) {
                p[i] -= o->lr * d;
                continue;
            }
            m[i] = t == 1 ? d : o->momentum * m[i] + (1.0f - o->dampening) * d;
            p[i] -= o->lr * (o->nesterov ? d + o->momentum * m[i] : m[i]);
        }
        return;
    }
    const bool adamw = o->kind == VS_OPTIM_ADAMW;
    const float w1 = (float)(1.0 - (double)o->beta1), w2 = (float)(1.0 - (double)o->beta2);
    const float step_size = (float)((double)o->lr / (1.0 - pow((double)o->beta1, t)));
    const float inv_bc2_sqrt = (float)(1.0 / sqrt(1.0 - pow((double)o->beta2, t)));
    for (int64_t i = 0; i < n; i++) {
        if (adamw && o->weight_decay != 0) p[i] *= (float)(1.0 - (double)o->lr * (double)o->weight_decay);
        const float gi = g[i] + (adamw ? 0.0f : o->weight_decay) * p[i];
        m[i] = w1 < 0.5f ? m[i] + w1 * (gi - m[i]) : gi - (gi - m[i]) * (1.0f - w1);
        v[i] = v[i] * o->beta2 + w2 * gi * gi;
        p[i] -= step_size * m[i] / (sqrtf(v[i]) * inv_bc2_sqrt + o->eps);
    }
}

/* Gradient c of sum(p c), exactly. */
static void linear_grad(vs_tensor *p, const float *c)
{
    vs_scope_begin();
    vs_tensor *loss = vs_sum(vs_mul(p, vs_tensor_from(1, p->shape, c)), VS_ALL_AXES, false);
    ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
    vs_scope_end();
}

static void fill_uniform(float *x, int64_t n, vs_rng *r, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * vs_rng_uniformf(r);
}

START_TEST(test_update_loops_match_reference)
{
    vs_optim_opts opts[8] = {vs_sgd_opts(0.1f), vs_sgd_opts(0.05f), vs_sgd_opts(0.05f), vs_adam_opts(1e-2f),
                             vs_adam_opts(1e-2f), vs_adamw_opts(1e-2f), vs_adam_opts(3e-3f), vs_sgd_opts(0.02f)};
    opts[0].weight_decay = 0.01f;
    opts[1].momentum = 0.9f, opts[1].dampening = 0.25f, opts[1].weight_decay = 1e-3f;
    opts[2].momentum = 0.8f, opts[2].nesterov = true;
    opts[4].weight_decay = 0.05f;
    opts[6].beta1 = 0.2f; /* lerp weight 0.8: the other form of torch.lerp */
    opts[7].momentum = 0.5f;
    /* the last size is updated in parallel chunks: run at 1, 2 and 3 threads */
    static const int64_t sizes[] = {1, 7 * 13, 1023, (1 << 17) + 3, (1 << 17) + 3, (1 << 17) + 3};
    vs_rng r;
    vs_rng_seed(&r, 42);
    for (int k = 0; k < 8; k++)
        for (int s = 0; s < (k == 3 || k == 6 ? 6 : 3); s++) { /* threads: two Adam variants */
            const int64_t n = sizes[s];
            vs_set_threads(s < 3 ? 1 : s - 2);
            float *ref = malloc((size_t)n * 4 * sizeof(float)), *m = ref + n, *v = ref + 2 * n, *c = ref + 3 * n;
            fill_uniform(ref, n, &r, -1.0f, 1.0f);
            memset(m, 0, (size_t)n * 2 * sizeof(float));
            vs_tensor *p = vs_tensor_from(1, &n, ref);
            vs_set_requires_grad(p, true);
            vs_error err;
            vs_optim *opt = vs_optim_new(&opts[k], 1, &p, NULL, &err);
            ck_assert_ptr_nonnull(opt);
            for (int t = 1; t <= 3; t++) {
                fill_uniform(c, n, &r, -2.0f, 2.0f);
                vs_optim_zero_grad(opt);
                linear_grad(p, c);
                ck_assert_int_eq(vs_optim_step(opt, &err), VS_OK);
                ref_step(&opts[k], ref, c, m, v, n, t);
                int64_t i = 0;
                while (i < n && memcmp(&p->data[i], &ref[i], sizeof(float)) == 0) i++;
                ck_assert_msg(i == n, "options %d, size %lld, step %d, element %lld: %a, want %a", k, (long long)n, t,
                              (long long)i, (double)p->data[i < n ? i : 0], (double)ref[i < n ? i : 0]);
            }
            vs_optim_free(opt);
            vs_tensor_free(p);
            free(ref);
        }
    vs_set_threads(0);
}
END_TEST

/* Distance between a and b in units in the last place of b (a float, b its exact value). */
static double ulps(float a, double b)
{
    int e;
    frexp(b, &e);
    return fabs((double)a - b) / ldexp(1.0, e - 24);
}

/* The Adam update (one division per element: sqrt(v) times 1 / sqrt(bc2)) against PyTorch's float
 * formula ((value m) / (sqrt(v) / sqrt(bc2) + eps), two divisions): within 3 ulps of it, and as
 * close as it to the exact update (the same formula in double; measured: at most 3.7 ulps from it,
 * 0.634 on average, PyTorch's 3.7 and 0.620), over steps 1 to 40 of a
 * run whose gradient spans eight decades.  p starts at 0 each step, so p after the step is exactly
 * minus the update. */
START_TEST(test_adam_update_close_to_pytorch)
{
    const int64_t n = 4099;
    vs_rng r;
    vs_rng_seed(&r, 9);
    vs_optim_opts o = vs_adam_opts(1e-3f);
    vs_tensor *p = vs_tensor_zeros(1, &n);
    vs_set_requires_grad(p, true);
    vs_optim *opt = vs_optim_new(&o, 1, &p, NULL, NULL);
    vs_named_tensors st = {0};
    ck_assert_int_eq(vs_optim_state(opt, &st), VS_OK);
    const float *m = st.items[1].tensor->data, *v = st.items[2].tensor->data;
    float *c = malloc((size_t)n * sizeof *c);
    double worst = 0, worst_ours = 0, worst_torch = 0, sum_ours = 0, sum_torch = 0;
    for (int t = 1; t <= 40; t++) {
        for (int64_t i = 0; i < n; i++) c[i] = (vs_rng_uniformf(&r) - 0.5f) * powf(10.0f, -6.0f + 8.0f * vs_rng_uniformf(&r));
        memset(p->data, 0, (size_t)n * sizeof(float));
        vs_optim_zero_grad(opt);
        linear_grad(p, c);
        ck_assert_int_eq(vs_optim_step(opt, NULL), VS_OK);
        const double bc1 = 1.0 - pow((double)o.beta1, t), bc2 = 1.0 - pow((double)o.beta2, t);
        const float step_size = (float)((double)o.lr / bc1), bc2_sqrt = (float)sqrt(bc2);
        for (int64_t i = 0; i < n; i++) {
            /* from the moments as the loop keeps them (their rounding is PyTorch's) */
            const float torch = step_size * m[i] / (sqrtf(v[i]) / bc2_sqrt + o.eps);
            const double exact = (double)o.lr / bc1 * m[i] / (sqrt((double)v[i]) / sqrt(bc2) + (double)o.eps);
            const double d = ulps(-p->data[i], torch), de = ulps(-p->data[i], exact), dt = ulps(torch, exact);
            worst = d > worst ? d : worst;
            worst_ours = de > worst_ours ? de : worst_ours;
            worst_torch = dt > worst_torch ? dt : worst_torch;
            sum_ours += de;
            sum_torch += dt;
        }
    }
    ck_assert_msg(worst <= 3.0, "Adam update %.2f ulps from PyTorch's", worst);
    ck_assert_msg(worst_ours <= worst_torch + 0.5 && sum_ours <= 1.1 * sum_torch,
                  "Adam update %.2f ulps from the exact one (%.3f on average), PyTorch's %.2f (%.3f)", worst_ours,
                  sum_ours / (40.0 * n), worst_torch, sum_torch / (40.0 * n));
    free(c);
    vs_named_tensors_clear(&st);
    vs_optim_free(opt);
    vs_tensor_free(p);
}
END_TEST

/* A NaN or inf anywhere (in a block of 8 or in the tail) stops the whole step before any update,
 * and the message names the first bad element. */
START_TEST(test_nonfinite_found_everywhere)
{
    static const struct {
        int64_t at[2];
        float val[2];
        const char *msg;
    } cases[] = {{{1020, 1020}, {NAN, NAN}, "element 1020"},
                 {{1020, 9}, {NAN, INFINITY}, "element 9"},
                 {{0, 0}, {-INFINITY, -INFINITY}, "element 0"},
                 {{1015, 1016}, {INFINITY, NAN}, "element 1015"}};
    for (int k = 0; k < 4; k++) {
        const int64_t n = 1023;
        vs_tensor *p[2] = {vs_tensor_full(VS_SHAPE(5), 1.0f), vs_tensor_full(1, &n, 0.5f)};
        vs_set_requires_grad(p[0], true);
        vs_set_requires_grad(p[1], true);
        vs_optim_opts o = vs_adam_opts(0.1f);
        vs_optim *opt = vs_optim_new(&o, 2, p, (const char *[]){"a", "b"}, NULL);
        float *c = malloc((size_t)n * sizeof *c);
        for (int64_t i = 0; i < n; i++) c[i] = 0.25f;
        for (int j = 0; j < 2; j++) c[cases[k].at[j]] = cases[k].val[j];
        linear_grad(p[0], (float[]){1, 2, 3, 4, 5});
        linear_grad(p[1], c);
        vs_error err;
        ck_assert_int_eq(vs_optim_step(opt, &err), VS_ERR_NUMERIC);
        ck_assert_ptr_nonnull(strstr(err.msg, "gradient of b"));
        ck_assert_msg(strstr(err.msg, cases[k].msg) != NULL, "%s: want %s", err.msg, cases[k].msg);
        for (int64_t i = 0; i < 5; i++) ck_assert_float_eq(p[0]->data[i], 1.0f);
        for (int64_t i = 0; i < n; i++) ck_assert_float_eq(p[1]->data[i], 0.5f);
        free(c);
        vs_optim_free(opt);
        vs_tensor_free(p[0]);
        vs_tensor_free(p[1]);
    }
}
END_TEST

START_TEST(test_parameter_without_gradient_skipped)
{
    vs_tensor *p[2] = {vs_tensor_from(VS_SHAPE(3), P0), vs_tensor_full(VS_SHAPE(2), 7.0f)};
    vs_set_requires_grad(p[0], true);
    vs_set_requires_grad(p[1], true);
    vs_optim_opts o = vs_sgd_opts(0.1f);
    o.momentum = 0.5f;
    vs_optim *opt = vs_optim_new(&o, 2, p, (const char *[]){"a", "b"}, NULL);
    quad_grad(p[0]);
    ck_assert_int_eq(vs_optim_step(opt, NULL), VS_OK);
    ck_assert_float_eq(p[1]->data[0], 7.0f);
    vs_named_tensors st = {0};
    ck_assert_int_eq(vs_optim_state(opt, &st), VS_OK);
    /* per parameter: step, momentum */
    ck_assert_int_eq(st.n, 4);
    ck_assert_str_eq(st.items[0].name, "sgd.step.a");
    ck_assert_str_eq(st.items[1].name, "sgd.momentum.a");
    ck_assert_str_eq(st.items[2].name, "sgd.step.b");
    ck_assert_float_eq(st.items[0].tensor->data[0], 1.0f);
    ck_assert_float_eq(st.items[2].tensor->data[0], 0.0f);
    vs_named_tensors_clear(&st);
    vs_optim_free(opt);
    vs_tensor_free(p[0]);
    vs_tensor_free(p[1]);
}
END_TEST

static void square_loss_step(vs_module *m, vs_optim *o, vs_tensor *x)
{
    vs_optim_zero_grad(o);
    vs_scope_begin();
    vs_tensor *y = vs_module_forward(m, x, NULL);
    ck_assert_int_eq(vs_backward(vs_sum(vs_mul(y, y), VS_ALL_AXES, false), NULL, false), VS_OK);
    vs_scope_end();
    ck_assert_int_eq(vs_optim_step(o, NULL), VS_OK);
}

/* Two steps, checkpoint (parameters and optimiser state) into a fresh model and optimiser, two more
 * steps on both: the two runs agree bit for bit. */
START_TEST(test_state_restore_continues_exactly)
{
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_module *m1 = vs_sequential_new(), *m2 = vs_sequential_new();
    ck_assert_int_eq(vs_sequential_add(m1, vs_linear_new(3, 2, true, &r)), VS_OK);
    ck_assert_int_eq(vs_sequential_add(m2, vs_linear_new(3, 2, true, &r)), VS_OK); /* different weights */
    vs_optim_opts o = vs_adamw_opts(0.05f);
    vs_optim *a = vs_optim_new_module(&o, m1, NULL), *b = vs_optim_new_module(&o, m2, NULL);
    vs_tensor *x = vs_tensor_from(VS_SHAPE(2, 3), (float[]){1, 2, 3, -1, 0.5f, 0});
    square_loss_step(m1, a, x);
    square_loss_step(m1, a, x);

    vs_named_tensors sa = {0}, sb = {0}, pa = {0};
    ck_assert_int_eq(vs_optim_state(a, &sa), VS_OK);
    ck_assert_int_eq(vs_optim_state(b, &sb), VS_OK);
    ck_assert_int_eq(sa.n, 6);
    ck_assert_str_eq(sa.items[0].name, "adamw.step.0.weight");
    ck_assert_str_eq(sa.items[1].name, "adamw.m.0.weight");
    ck_assert_str_eq(sa.items[2].name, "adamw.v.0.weight");
    ck_assert_str_eq(sa.items[5].name, "adamw.v.0.bias");
    ck_assert_float_eq(sa.items[0].tensor->data[0], 2.0f);
    for (int64_t i = 0; i < sa.n; i++)
        memcpy(sb.items[i].tensor->data, sa.items[i].tensor->data, (size_t)sa.items[i].tensor->size * sizeof(float));
    ck_assert_int_eq(vs_module_named_tensors(m1, VS_STATE_ALL, &pa), VS_OK);
    ck_assert_int_eq(vs_module_load_state(m2, &pa, NULL), VS_OK);
    vs_named_tensors_clear(&sa);
    vs_named_tensors_clear(&sb);
    vs_named_tensors_clear(&pa);

    for (int t = 0; t < 2; t++) {
        square_loss_step(m1, a, x);
        square_loss_step(m2, b, x);
    }
    vs_named_tensors pb = {0};
    vs_module_named_tensors(m1, VS_STATE_ALL, &pa);
    vs_module_named_tensors(m2, VS_STATE_ALL, &pb);
    for (int64_t i = 0; i < pa.n; i++)
        for (int64_t k = 0; k < pa.items[i].tensor->size; k++)
            ck_assert_float_eq(pa.items[i].tensor->data[k], pb.items[i].tensor->data[k]);
    vs_named_tensors_clear(&pa);
    vs_named_tensors_clear(&pb);
    vs_tensor_free(x);
    vs_optim_free(a);
    vs_optim_free(b);
    vs_module_free(m1);
    vs_module_free(m2);
}
END_TEST

START_TEST(test_lr_schedules)
{
    vs_lr_schedule s = {.kind = VS_LR_STEP, .base_lr = 0.1f, .step_size = 3, .gamma = 0.5f};
    const float step_want[8] = {0.1f, 0.1f, 0.1f, 0.05f, 0.05f, 0.05f, 0.025f, 0.025f};
    for (int e = 0; e < 8; e++) ck_assert_float_near(vs_lr_at(&s, e), step_want[e], 1e-8);
    vs_lr_schedule c = {.kind = VS_LR_COSINE, .base_lr = 0.1f, .t_max = 4, .eta_min = 0.01f};
    ck_assert_float_near(vs_lr_at(&c, 0), 0.1, 1e-7);
    ck_assert_float_near(vs_lr_at(&c, 1), 0.01 + 0.045 * (1 + cos(3.14159265358979323846 / 4)), 1e-7);
    ck_assert_float_near(vs_lr_at(&c, 2), 0.055, 1e-7);
    ck_assert_float_near(vs_lr_at(&c, 4), 0.01, 1e-7);
    ck_assert_float_near(vs_lr_at(&c, 6), 0.055, 1e-7); /* the closed form keeps going round */
    vs_lr_schedule k = {.kind = VS_LR_CONSTANT, .base_lr = 0.3f};
    ck_assert_float_eq(vs_lr_at(&k, 100), 0.3f);
}
END_TEST

START_TEST(test_clip_grad_norm)
{
    vs_tensor *p[2] = {vs_tensor_zeros(VS_SHAPE(2)), vs_tensor_zeros(VS_SHAPE(1))};
    vs_set_requires_grad(p[0], true);
    vs_set_requires_grad(p[1], true);
    vs_scope_begin();
    vs_tensor *loss = vs_add(vs_sum(vs_mul(p[0], vs_tensor_from(VS_SHAPE(2), (float[]){3, 4})), VS_ALL_AXES, false),
                             vs_sum(vs_mul_scalar(p[1], 12), VS_ALL_AXES, false));
    ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
    vs_scope_end();
    float n = vs_clip_grad_norm(2, p, 100.0f); /* below the limit: untouched */
    ck_assert_float_near(n, 13.0, 1e-5);
    ck_assert_float_eq(p[0]->grad->data[0], 3.0f);
    n = vs_clip_grad_norm(2, p, 6.5f);
    ck_assert_float_near(n, 13.0, 1e-5);
    double coef = 6.5 / (13.0 + 1e-6);
    ck_assert_float_near(p[0]->grad->data[0], 3 * coef, 1e-6);
    ck_assert_float_near(p[0]->grad->data[1], 4 * coef, 1e-6);
    ck_assert_float_near(p[1]->grad->data[0], 12 * coef, 1e-6);

    /* gradients that share storage (both are the add's output gradient) are each scaled once */
    vs_zero_grad(p[0]);
    vs_zero_grad(p[1]);
    vs_tensor *q[2] = {vs_tensor_zeros(VS_SHAPE(2)), vs_tensor_zeros(VS_SHAPE(2))};
    vs_set_requires_grad(q[0], true);
    vs_set_requires_grad(q[1], true);
    vs_scope_begin();
    ck_assert_int_eq(vs_backward(vs_sum(vs_add(q[0], q[1]), VS_ALL_AXES, false), NULL, false), VS_OK);
    vs_scope_end();
    n = vs_clip_grad_norm(2, q, 1.0f);
    ck_assert_float_near(n, 2.0, 1e-6);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) ck_assert_float_near(q[i]->grad->data[k], 1 / (2 + 1e-6), 1e-6);
    for (int i = 0; i < 2; i++) {
        vs_tensor_free(p[i]);
        vs_tensor_free(q[i]);
    }
}
END_TEST

/* 2 -> 8 tanh -> 1 trained with Adam on the four XOR points reaches a near-zero loss. */
START_TEST(test_xor_mlp)
{
    int64_t live = vs_live_tensors();
    vs_rng r;
    vs_rng_seed(&r, 42);
    vs_module *m = vs_sequential_new();
    ck_assert_int_eq(vs_sequential_add(m, vs_linear_new(2, 8, true, &r)), VS_OK);
    ck_assert_int_eq(vs_sequential_add(m, vs_activation_new(VS_MODULE_TANH, 0)), VS_OK);
    ck_assert_int_eq(vs_sequential_add(m, vs_linear_new(8, 1, true, &r)), VS_OK);
    vs_optim_opts o = vs_adam_opts(0.05f);
    vs_optim *opt = vs_optim_new_module(&o, m, NULL);
    vs_tensor *x = vs_tensor_from(VS_SHAPE(4, 2), (float[]){0, 0, 0, 1, 1, 0, 1, 1});
    vs_tensor *t = vs_tensor_from(VS_SHAPE(4, 1), (float[]){0, 1, 1, 0});
    float loss = INFINITY;
    for (int step = 0; step < 600; step++) {
        vs_optim_zero_grad(opt);
        vs_scope_begin();
        vs_tensor *l = vs_bce_with_logits(vs_module_forward(m, x, NULL), t);
        ck_assert_ptr_nonnull(l);
        loss = vs_item(l);
        ck_assert_int_eq(vs_backward(l, NULL, false), VS_OK);
        vs_scope_end();
        ck_assert_int_eq(vs_optim_step(opt, NULL), VS_OK);
    }
    ck_assert_msg(loss < 0.01f, "XOR loss %g after training", loss);
    vs_scope_begin();
    vs_tensor *y = vs_module_forward(m, x, NULL);
    for (int i = 0; i < 4; i++) ck_assert_msg((y->data[i] > 0) == (t->data[i] > 0.5f), "XOR point %d misclassified", i);
    vs_scope_end();
    vs_tensor_free(x);
    vs_tensor_free(t);
    vs_optim_free(opt);
    vs_module_free(m);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

static Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = vs_tcase(s, "updates", 30);
    tcase_add_test(tc, test_sgd_plain);
    tcase_add_test(tc, test_sgd_momentum_weight_decay);
    tcase_add_test(tc, test_sgd_nesterov);
    tcase_add_test(tc, test_sgd_dampening);
    tcase_add_test(tc, test_adam);
    tcase_add_test(tc, test_adamw);
    tcase_add_test(tc, test_first_adam_step_is_lr_sign);
    tcase_add_test(tc, test_options_checked);
    tcase_add_test(tc, test_nonfinite_gradient_rejected);
    tcase_add_test(tc, test_parameter_without_gradient_skipped);
    tcase_add_test(tc, test_state_restore_continues_exactly);
    tcase_add_test(tc, test_update_loops_match_reference);
    tcase_add_test(tc, test_adam_update_close_to_pytorch);
    tcase_add_test(tc, test_nonfinite_found_everywhere);
    tc = vs_tcase(s, "schedules and clipping", 30);
    tcase_add_test(tc, test_lr_schedules);
    tcase_add_test(tc, test_clip_grad_norm);
    tc = vs_tcase(s, "training", 60);
    tcase_add_test(tc, test_xor_mlp);
    return s;
}

VS_TEST_MAIN(optim_suite)
