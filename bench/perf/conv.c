/* bench/perf/conv.c - single convolutions of the papers' models (suite "conv"): conv2d forward, and
 * forward + backward (dx, dw and db, as a training step needs them), at the shapes where the
 * training steps of train.c spend their time.  bench/perf/torch_reference.py times F.conv2d on the
 * same shapes (read from the JSON lines).  The callbacks are shared with sweep.c's shapes. */
#include "bench/perf/perf.h"
#include "versus/ops.h"

#include <stdlib.h>

enum { P_BACKWARD };

static const vs_bench_conv_shape SHAPES[] = {
    {64, 32, 14, 14, 64, 6, 2, 2, 1, false}, /* GANMEX MNIST classifier, second conv */
    {64, 32, 14, 14, 64, 5, 1, 2, 1, false}, /* CEM-MAF Fashion classifier, second conv */
    {16, 128, 7, 7, 128, 3, 1, 1, 1, false}, /* StarGAN generator, residual block */
    {16, 4, 28, 28, 32, 7, 1, 3, 1, false},  /* StarGAN generator, first conv */
    {16, 128, 7, 7, 64, 4, 2, 1, 1, true},   /* StarGAN generator, first transposed conv (upsampling) */
    {64, 1, 28, 28, 32, 6, 2, 2, 1, false},  /* GANMEX MNIST classifier, first conv */
};

typedef struct conv_state {
    const vs_bench_conv_shape *s;
    bool backward;
    vs_tensor *x, *w, *b, *g; /* g: the output gradient fed to the backward pass */
} conv_state;

static int64_t dilation(const vs_bench_conv_shape *s) { return s->dilation > 0 ? s->dilation : 1; }

static int64_t out_len(const vs_bench_conv_shape *s, int64_t in)
{
    const int64_t span = dilation(s) * (s->k - 1) + 1;
    return s->transpose ? (in - 1) * s->stride - 2 * s->pad + span : (in + 2 * s->pad - span) / s->stride + 1;
}

void vs_bench_conv_teardown(void *state)
{
    conv_state *st = state;
    if (!st) return;
    vs_tensor_free(st->x);
    vs_tensor_free(st->w);
    vs_tensor_free(st->b);
    vs_tensor_free(st->g);
    free(st);
}

void *vs_bench_conv_setup(const vs_bench_case *c, int threads)
{
    (void)threads;
    conv_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    const vs_bench_conv_shape *s = c->data;
    st->s = s;
    st->backward = c->p[P_BACKWARD] != 0;
    vs_rng r;
    vs_rng_seed(&r, 5);
    st->x = vs_tensor_randn(4, (int64_t[]){s->n, s->c, s->h, s->w}, &r, 0, 1);
    st->w = s->transpose ? vs_tensor_randn(4, (int64_t[]){s->c, s->o, s->k, s->k}, &r, 0, 0.1f)
                         : vs_tensor_randn(4, (int64_t[]){s->o, s->c, s->k, s->k}, &r, 0, 0.1f);
    st->b = vs_tensor_randn(1, (int64_t[]){s->o}, &r, 0, 0.1f);
    st->g = vs_tensor_randn(4, (int64_t[]){s->n, s->o, out_len(s, s->h), out_len(s, s->w)}, &r, 0, 1);
    if (!st->x || !st->w || !st->b || !st->g) {
        vs_bench_conv_teardown(st);
        return NULL;
    }
    vs_set_requires_grad(st->x, st->backward);
    vs_set_requires_grad(st->w, st->backward);
    vs_set_requires_grad(st->b, st->backward);
    return st;
}

void vs_bench_conv_run(void *state)
{
    conv_state *st = state;
    const int d = (int)dilation(st->s);
    const vs_conv_opts o = {.stride = {(int)st->s->stride, (int)st->s->stride}, .padding = {(int)st->s->pad, (int)st->s->pad},
                            .dilation = {d, d}};
    vs_scope_begin();
    vs_tensor *y = st->s->transpose ? vs_conv_transpose2d(st->x, st->w, st->b, &o) : vs_conv2d(st->x, st->w, st->b, &o);
    if (y && st->backward) {
        vs_zero_grad(st->x);
        vs_zero_grad(st->w);
        vs_zero_grad(st->b);
        (void)vs_backward(y, st->g, false);
    }
    vs_scope_end();
}

/* The backward's two products cost as much as the forward each. */
double vs_bench_conv_flops(const vs_bench_case *c, int threads)
{
    (void)threads;
    const vs_bench_conv_shape *s = c->data;
    const double px = s->transpose ? (double)(s->h * s->w) : (double)(out_len(s, s->h) * out_len(s, s->w));
    double fwd = 2.0 * (double)s->n * (double)s->o * px * (double)s->c * (double)(s->k * s->k);
    return c->p[P_BACKWARD] ? 3 * fwd : fwd;
}

void vs_bench_conv_json(const vs_bench_case *c, FILE *out)
{
    const vs_bench_conv_shape *s = c->data;
    fprintf(out, ",\"n\":%lld,\"c\":%lld,\"h\":%lld,\"w\":%lld,\"o\":%lld,\"k\":%lld,\"stride\":%lld,\"pad\":%lld,\"backward\":%d",
            (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->o, (long long)s->k,
            (long long)s->stride, (long long)s->pad, (int)c->p[P_BACKWARD]);
    if (s->transpose) fputs(",\"transpose\":1", out);
    if (dilation(s) > 1) fprintf(out, ",\"dilation\":%lld", (long long)dilation(s));
}

#define CONV(name_, about_, shape, backward)                                                              \
    {.suite = "conv", .name = name_, .about = about_, .p = {backward}, .data = &SHAPES[shape],             \
     .setup = vs_bench_conv_setup, .run = vs_bench_conv_run, .teardown = vs_bench_conv_teardown,           \
     .flops = vs_bench_conv_flops, .json_fields = vs_bench_conv_json}

const vs_bench_case vs_bench_conv_cases[] = {
    CONV("conv_ganmex_fwd", "conv2d 64x32x14x14 -> 64, k6 s2 p2 (GANMEX), forward", 0, 0),
    CONV("conv_ganmex_fwdbwd", "the same, forward + backward (dx, dw, db)", 0, 1),
    CONV("conv_cem_fwd", "conv2d 64x32x14x14 -> 64, k5 s1 p2 (CEM-MAF), forward", 1, 0),
    CONV("conv_cem_fwdbwd", "the same, forward + backward (dx, dw, db)", 1, 1),
    CONV("conv_res3x3_fwd", "conv2d 16x128x7x7 -> 128, k3 s1 p1 (StarGAN residual), forward", 2, 0),
    CONV("conv_res3x3_fwdbwd", "the same, forward + backward (dx, dw, db)", 2, 1),
    CONV("conv_stem7_fwd", "conv2d 16x4x28x28 -> 32, k7 s1 p3 (StarGAN first conv), forward", 3, 0),
    CONV("conv_stem7_fwdbwd", "the same, forward + backward (dx, dw, db)", 3, 1),
    CONV("conv_up4_fwd", "conv_transpose2d 16x128x7x7 -> 64, k4 s2 p1 (StarGAN upsampling), forward", 4, 0),
    CONV("conv_up4_fwdbwd", "the same, forward + backward (dx, dw, db)", 4, 1),
    CONV("conv_ganmex1_fwd", "conv2d 64x1x28x28 -> 32, k6 s2 p2 (GANMEX first conv), forward", 5, 0),
    CONV("conv_ganmex1_fwdbwd", "the same, forward + backward (dx, dw, db)", 5, 1),
};
const size_t vs_bench_conv_count = sizeof vs_bench_conv_cases / sizeof vs_bench_conv_cases[0];
