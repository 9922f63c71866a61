/* bench/perf/sweep.c - the sweep (suite "sweep"): convolutions and small models the bench was NOT
 * tuned on, to see whether the speed holds in general.  16 conv2d geometries, each forward and
 * forward + backward (timed by conv.c's callbacks), and 4 training steps (cross entropy, Adam
 * lr 1e-4, random data from fixed seeds).  bench/perf/torch_reference.py times the PyTorch twins (its
 * sweep_models and run_conv); compare.py reports them in a "sweep" section.
 *
 * The geometries were drawn once with Python's random.Random(21): batch from {8,16,32,64}, input
 * channels from {1,3,8,10,16,24,32,48,64,96}, outputs from the same without 1 and 3, side 8..32,
 * kernel 1/3/5/7, stride 1-2, padding 0..k/2; 13 plain, 2 transposed (stride 2, kernel 2..5), 1
 * dilated (2); a draw was kept when its forward costs 20-400 MFLOP, and seed 21 is the first one
 * from 20 whose table has input channels 1 and 3, channels 10/24/48/96 and every kernel size. */
#include "bench/perf/perf.h"
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/optim.h"

#include <stdlib.h>

static const vs_bench_conv_shape SHAPES[] = {
    /* n, c, h, w, o, k, stride, pad, dilation, transpose */
    {16, 32, 28, 28, 64, 5, 2, 0, 1, false},
    {32, 96, 10, 10, 64, 3, 1, 0, 1, false},
    {8, 48, 25, 25, 16, 5, 2, 1, 1, false},
    {16, 96, 11, 11, 10, 7, 2, 1, 1, false},
    {32, 8, 17, 17, 64, 5, 2, 2, 1, false},
    {16, 64, 22, 22, 10, 7, 2, 0, 1, false},
    {32, 1, 29, 29, 32, 5, 1, 1, 1, false},
    {32, 8, 27, 27, 48, 7, 2, 3, 1, false},
    {8, 16, 28, 28, 48, 3, 2, 1, 1, false},
    {16, 16, 20, 20, 48, 7, 1, 1, 1, false},
    {64, 48, 20, 20, 10, 3, 1, 1, 1, false},
    {64, 96, 25, 25, 10, 1, 2, 0, 1, false},
    {32, 96, 10, 10, 24, 5, 1, 1, 1, false},
    {64, 8, 19, 19, 96, 3, 2, 1, 1, true},
    {64, 3, 30, 30, 16, 5, 2, 2, 1, true},
    {32, 64, 12, 12, 32, 3, 1, 0, 2, false},
};

typedef enum sweep_model {
    M_CONVPOOL, /* [3,32,32]: conv3x3 3->16, relu, max pool 2, conv3x3 16->32, relu, max pool 2, linear 2048 -> 10 */
    M_MLP,      /* [300]: linear 300-200-100-10 with relus */
    M_BNCONV,   /* [1,28,28]: conv3x3 1->24, batch norm, relu, max pool 2, conv3x3 s2 24->48, batch norm, relu,
                 * linear 2352 -> 10 */
    M_LEAKY,    /* [784]: linear 784-256-128-10, leaky relu 0.01 and dropout 0.3 after each hidden layer */
} sweep_model;

enum { P_MODEL, P_BATCH };

typedef struct step_state {
    vs_module *m;
    vs_optim *opt;
    vs_tensor *x;
    int64_t *labels;
    vs_rng rng; /* dropout masks */
} step_state;

static void step_teardown(void *state)
{
    step_state *s = state;
    if (!s) return;
    vs_optim_free(s->opt);
    vs_module_free(s->m);
    vs_tensor_free(s->x);
    free(s->labels);
    free(s);
}

/* A sequential of the n layers (it owns them whatever happens), or NULL when one failed. */
static vs_module *sequential(int n, vs_module *const *layers)
{
    vs_module *seq = vs_sequential_new();
    bool ok = seq != NULL;
    for (int i = 0; i < n; i++)
        if (seq ? vs_sequential_add(seq, layers[i]) != VS_OK : (vs_module_free(layers[i]), true)) ok = false;
    if (!ok) {
        vs_module_free(seq);
        return NULL;
    }
    return seq;
}

#define SEQ(...) sequential(sizeof((vs_module *[]){__VA_ARGS__}) / sizeof(vs_module *), (vs_module *[]){__VA_ARGS__})
#define RELU() vs_activation_new(VS_MODULE_RELU, 0)

/* The model and one batch of inputs drawn from r. */
static vs_module *build(sweep_model kind, int64_t n, vs_rng *r, vs_tensor **x)
{
    switch (kind) {
    case M_CONVPOOL:
        *x = vs_tensor_rand(4, (int64_t[]){n, 3, 32, 32}, r, 0, 1);
        return SEQ(vs_conv2d_new(3, 16, 3, 1, 1, true, r), RELU(), vs_max_pool2d_new(2, 2, 0),
                   vs_conv2d_new(16, 32, 3, 1, 1, true, r), RELU(), vs_max_pool2d_new(2, 2, 0), vs_flatten_new(),
                   vs_linear_new(32 * 8 * 8, 10, true, r));
    case M_MLP:
        *x = vs_tensor_rand(2, (int64_t[]){n, 300}, r, 0, 1);
        return SEQ(vs_linear_new(300, 200, true, r), RELU(), vs_linear_new(200, 100, true, r), RELU(),
                   vs_linear_new(100, 10, true, r));
    case M_BNCONV:
        *x = vs_tensor_rand(4, (int64_t[]){n, 1, 28, 28}, r, 0, 1);
        return SEQ(vs_conv2d_new(1, 24, 3, 1, 1, false, r), vs_batch_norm2d_new(24, 1e-5f, 0.1f), RELU(),
                   vs_max_pool2d_new(2, 2, 0), vs_conv2d_new(24, 48, 3, 2, 1, false, r),
                   vs_batch_norm2d_new(48, 1e-5f, 0.1f), RELU(), vs_flatten_new(), vs_linear_new(48 * 7 * 7, 10, true, r));
    case M_LEAKY:
        *x = vs_tensor_rand(2, (int64_t[]){n, 784}, r, 0, 1);
        return SEQ(vs_linear_new(784, 256, true, r), vs_activation_new(VS_MODULE_LEAKY_RELU, 0.01f), vs_dropout_new(0.3f),
                   vs_linear_new(256, 128, true, r), vs_activation_new(VS_MODULE_LEAKY_RELU, 0.01f), vs_dropout_new(0.3f),
                   vs_linear_new(128, 10, true, r));
    }
    return NULL;
}

static void *step_setup(const vs_bench_case *c, int threads)
{
    (void)threads;
    step_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    const int64_t n = c->p[P_BATCH];
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_rng_seed(&s->rng, 11);
    s->m = build((sweep_model)c->p[P_MODEL], n, &r, &s->x);
    const vs_optim_opts o = vs_adam_opts(1e-4f);
    vs_error err;
    if (s->m) s->opt = vs_optim_new_module(&o, s->m, &err);
    s->labels = malloc(sizeof(int64_t) * (size_t)n);
    if (!s->opt || !s->x || !s->labels) {
        step_teardown(s);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) s->labels[i] = i % 10;
    vs_module_train(s->m, true);
    return s;
}

/* Forward, cross entropy over 10 classes, backward, Adam step. */
static void step_run(void *state)
{
    step_state *s = state;
    const vs_forward_ctx ctx = {.rng = &s->rng};
    vs_scope_begin();
    vs_optim_zero_grad(s->opt);
    vs_tensor *loss = vs_cross_entropy(vs_module_forward(s->m, s->x, &ctx), s->labels);
    vs_error err;
    if (loss && vs_backward(loss, NULL, false) == VS_OK) (void)vs_optim_step(s->opt, &err);
    vs_scope_end();
}

static double step_flops(const vs_bench_case *c, int threads) /* not counted: reported per step */
{
    (void)c, (void)threads;
    return 0;
}

static void step_json(const vs_bench_case *c, FILE *out) { fprintf(out, ",\"batch\":%lld", (long long)c->p[P_BATCH]); }

#define SWEEP(name_, about_, shape, backward)                                                             \
    {.suite = "sweep", .name = name_, .about = about_, .p = {backward}, .data = &SHAPES[shape],           \
     .setup = vs_bench_conv_setup, .run = vs_bench_conv_run, .teardown = vs_bench_conv_teardown,         \
     .flops = vs_bench_conv_flops, .json_fields = vs_bench_conv_json}
#define STEP(name_, about_, model, batch)                                                                 \
    {.suite = "sweep", .name = name_, .about = about_, .p = {model, batch}, .setup = step_setup,          \
     .run = step_run, .teardown = step_teardown, .flops = step_flops, .json_fields = step_json}

const vs_bench_case vs_bench_sweep_cases[] = {
    SWEEP("sweep_32x28_64_k5s2_fwd", "conv2d 16x32x28x28 -> 64, k5 s2 p0, forward", 0, 0),
    SWEEP("sweep_32x28_64_k5s2_fwdbwd", "the same, forward + backward (dx, dw, db)", 0, 1),
    SWEEP("sweep_96x10_64_k3s1_fwd", "conv2d 32x96x10x10 -> 64, k3 s1 p0, forward", 1, 0),
    SWEEP("sweep_96x10_64_k3s1_fwdbwd", "the same, forward + backward", 1, 1),
    SWEEP("sweep_48x25_16_k5s2_fwd", "conv2d 8x48x25x25 -> 16, k5 s2 p1, forward", 2, 0),
    SWEEP("sweep_48x25_16_k5s2_fwdbwd", "the same, forward + backward", 2, 1),
    SWEEP("sweep_96x11_10_k7s2_fwd", "conv2d 16x96x11x11 -> 10, k7 s2 p1, forward", 3, 0),
    SWEEP("sweep_96x11_10_k7s2_fwdbwd", "the same, forward + backward", 3, 1),
    SWEEP("sweep_8x17_64_k5s2_fwd", "conv2d 32x8x17x17 -> 64, k5 s2 p2, forward", 4, 0),
    SWEEP("sweep_8x17_64_k5s2_fwdbwd", "the same, forward + backward", 4, 1),
    SWEEP("sweep_64x22_10_k7s2_fwd", "conv2d 16x64x22x22 -> 10, k7 s2 p0, forward", 5, 0),
    SWEEP("sweep_64x22_10_k7s2_fwdbwd", "the same, forward + backward", 5, 1),
    SWEEP("sweep_1x29_32_k5s1_fwd", "conv2d 32x1x29x29 -> 32, k5 s1 p1, forward", 6, 0),
    SWEEP("sweep_1x29_32_k5s1_fwdbwd", "the same, forward + backward", 6, 1),
    SWEEP("sweep_8x27_48_k7s2_fwd", "conv2d 32x8x27x27 -> 48, k7 s2 p3, forward", 7, 0),
    SWEEP("sweep_8x27_48_k7s2_fwdbwd", "the same, forward + backward", 7, 1),
    SWEEP("sweep_16x28_48_k3s2_fwd", "conv2d 8x16x28x28 -> 48, k3 s2 p1, forward", 8, 0),
    SWEEP("sweep_16x28_48_k3s2_fwdbwd", "the same, forward + backward", 8, 1),
    SWEEP("sweep_16x20_48_k7s1_fwd", "conv2d 16x16x20x20 -> 48, k7 s1 p1, forward", 9, 0),
    SWEEP("sweep_16x20_48_k7s1_fwdbwd", "the same, forward + backward", 9, 1),
    SWEEP("sweep_48x20_10_k3s1_fwd", "conv2d 64x48x20x20 -> 10, k3 s1 p1, forward", 10, 0),
    SWEEP("sweep_48x20_10_k3s1_fwdbwd", "the same, forward + backward", 10, 1),
    SWEEP("sweep_96x25_10_k1s2_fwd", "conv2d 64x96x25x25 -> 10, k1 s2 p0, forward", 11, 0),
    SWEEP("sweep_96x25_10_k1s2_fwdbwd", "the same, forward + backward", 11, 1),
    SWEEP("sweep_96x10_24_k5s1_fwd", "conv2d 32x96x10x10 -> 24, k5 s1 p1, forward", 12, 0),
    SWEEP("sweep_96x10_24_k5s1_fwdbwd", "the same, forward + backward", 12, 1),
    SWEEP("sweep_8x19_96_k3s2_t_fwd", "conv_transpose2d 64x8x19x19 -> 96, k3 s2 p1, forward", 13, 0),
    SWEEP("sweep_8x19_96_k3s2_t_fwdbwd", "the same, forward + backward", 13, 1),
    SWEEP("sweep_3x30_16_k5s2_t_fwd", "conv_transpose2d 64x3x30x30 -> 16, k5 s2 p2, forward", 14, 0),
    SWEEP("sweep_3x30_16_k5s2_t_fwdbwd", "the same, forward + backward", 14, 1),
    SWEEP("sweep_64x12_32_k3s1_d2_fwd", "conv2d 32x64x12x12 -> 32, k3 s1 p0 dilation 2, forward", 15, 0),
    SWEEP("sweep_64x12_32_k3s1_d2_fwdbwd", "the same, forward + backward", 15, 1),
    STEP("sweep_convpool_step", "conv3x3-relu-maxpool x2 + linear on 3x32x32, batch 32, CE + Adam", M_CONVPOOL, 32),
    STEP("sweep_mlp_step", "MLP 300-200-100-10 relu, batch 256, CE + Adam", M_MLP, 256),
    STEP("sweep_bnconv_step", "conv-bn-relu-pool, conv s2-bn-relu, linear on 1x28x28, batch 32, CE + Adam", M_BNCONV, 32),
    STEP("sweep_leaky_mlp_step", "MLP 784-256-128-10, leaky relu 0.01 + dropout 0.3, batch 128, CE + Adam", M_LEAKY, 128),
};
const size_t vs_bench_sweep_count = sizeof vs_bench_sweep_cases / sizeof vs_bench_sweep_cases[0];
