/* cmd_demo.c - `versus demo`: train a small model and explain it, end to end, in seconds. */
#include "cli/cli.h"
#include "versus/explain.h"
#include "versus/versus.h"

#include <math.h>
#include <stdio.h>

/* A two-layer tanh network on a planted problem: the class is decided by features 0 and 1 only
 * (label = x0 + x1 > 0); features 2..7 are noise.  A faithful explanation puts its mass on 0 and 1. */
enum { DEMO_N = 512, DEMO_D = 8, DEMO_H = 16 };

typedef struct demo_net {
    vs_tensor *w1, *b1, *w2, *b2;
} demo_net;

static vs_tensor *demo_forward(void *ctx, vs_tensor *x)
{
    demo_net *n = ctx;
    return vs_linear(vs_tanh(vs_linear(x, n->w1, n->b1)), n->w2, n->b2);
}

static const vs_cli_opt demo_opts[] = {{"seed", 1, "random seed (default 1)"}, {NULL, 0, NULL}};

static int run_demo(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("demo", demo_opts, argc, argv, &a);
    if (rc) return rc;
    int64_t seed;
    if ((rc = vs_args_int(&a, "seed", 1, 0, INT64_MAX, &seed))) return rc;

    vs_rng r;
    vs_rng_seed(&r, (uint64_t)seed);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(DEMO_N, DEMO_D), &r, 0, 1);
    int64_t y[DEMO_N];
    for (int i = 0; i < DEMO_N; i++) y[i] = x->data[i * DEMO_D] + x->data[i * DEMO_D + 1] > 0;
    demo_net net = {vs_tensor_randn(VS_SHAPE(DEMO_H, DEMO_D), &r, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(DEMO_H)),
                    vs_tensor_randn(VS_SHAPE(2, DEMO_H), &r, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(2))};
    vs_tensor *params[4] = {net.w1, net.b1, net.w2, net.b2};
    for (int i = 0; i < 4; i++) vs_set_requires_grad(params[i], true);

    printf("versus demo: a 2-layer network learns label = [x0 + x1 > 0] from 8 features\n");
    double loss = NAN;
    for (int step = 0; step < 300; step++) {
        vs_scope_begin();
        vs_tensor *l = vs_cross_entropy(demo_forward(&net, x), y);
        loss = vs_item(l);
        for (int i = 0; i < 4; i++) vs_zero_grad(params[i]);
        vs_backward(l, NULL, false);
        for (int i = 0; i < 4; i++)
            for (int64_t k = 0; k < params[i]->size; k++) params[i]->data[k] -= 0.5f * params[i]->grad->data[k];
        vs_scope_end();
        if (step % 100 == 0 || step == 299) printf("  step %3d  loss %.4f\n", step, loss);
    }
    for (int i = 0; i < 4; i++) vs_zero_grad(params[i]);

    vs_model_fn m = {demo_forward, NULL, &net};
    vs_tensor *q = vs_tensor_from(VS_SHAPE(1, DEMO_D), (float[]){1.2f, 0.9f, -1.5f, 0.3f, 2.0f, -0.7f, 0.1f, 1.1f});
    printf("\nwhy class 1 and not class 0 for x = [1.2 0.9 -1.5 0.3 2.0 -0.7 0.1 1.1]?\n");
    const vs_attr_method methods[] = {VS_ATTR_INTEGRATED_GRADIENTS, VS_ATTR_DEEPLIFT, VS_ATTR_KERNEL_SHAP};
    rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        vs_attr_opts o;
        vs_attr_opts_init(&o, methods[k]);
        o.target = 1;
        o.contrast = 0;
        o.samples = 254; /* Kernel SHAP: every coalition of 8 features */
        vs_tensor *attr;
        vs_attr_report rep;
        vs_error err;
        if (vs_attribute(&m, q, &o, &attr, &rep, &err) != VS_OK) {
            rc = vs_fail("%s", err.msg);
            break;
        }
        printf("  %-22s", vs_attr_method_name(methods[k]));
        double on = 0, all = 0;
        for (int i = 0; i < DEMO_D; i++) {
            printf(" %+6.2f", attr->data[i]);
            on += fabs(attr->data[i]) * (i < 2);
            all += fabs(attr->data[i]);
        }
        printf("   share on x0,x1 %3.0f%%  completeness gap %.1e  (%lld evaluations)\n", 100 * on / all, rep.delta,
               (long long)rep.evaluations);
        vs_tensor_free(attr);
    }
    for (int i = 0; i < 4; i++) vs_tensor_free(params[i]);
    vs_tensor_free(q);
    vs_tensor_free(x);
    return rc;
}

const vs_verb vs_verb_demo = {
    "demo",
    "train a small model and explain it end to end",
    "usage: versus demo [--seed S]\n\n"
    "Trains a two-layer network on a planted problem (the label depends on features 0 and 1 only) and\n"
    "explains one prediction one-vs-one (class 1 against class 0) with integrated gradients, DeepLIFT\n"
    "and Kernel SHAP, printing each method's completeness gap and model evaluations.",
    demo_opts,
    run_demo,
};
