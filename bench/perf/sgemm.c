/* bench/perf/sgemm.c - matrix-product workloads: square products, and the three products of a
 * linear layer (forward y = x W^T, input gradient dx = dy W, weight gradient dW = dy^T x) at the
 * batch x in x out sizes small models train with. */
#include "bench/perf/perf.h"
#include "autograd/kernels.h"
#include "versus/rng.h"

#include <stdbool.h>
#include <stdlib.h>

enum { P_M, P_N, P_K, P_TA, P_TB };

typedef struct sgemm_state {
    const vs_bench_case *c;
    float *A, *B, *C;
} sgemm_state;

static void sgemm_teardown(void *state)
{
    sgemm_state *s = state;
    if (!s) return;
    free(s->A);
    free(s->B);
    free(s->C);
    free(s);
}

static float *random_floats(vs_rng *r, int64_t n)
{
    float *x = malloc(sizeof(float) * (size_t)n);
    if (x)
        for (int64_t i = 0; i < n; i++) x[i] = 2 * vs_rng_uniformf(r) - 1;
    return x;
}

static void *sgemm_setup(const vs_bench_case *c, int threads)
{
    (void)threads;
    sgemm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    vs_rng r;
    vs_rng_seed(&r, 1);
    s->c = c;
    s->A = random_floats(&r, c->p[P_M] * c->p[P_K]);
    s->B = random_floats(&r, c->p[P_K] * c->p[P_N]);
    s->C = random_floats(&r, c->p[P_M] * c->p[P_N]);
    if (!s->A || !s->B || !s->C) {
        sgemm_teardown(s);
        return NULL;
    }
    return s;
}

/* Dense row-major operands: lda/ldb are the stored row lengths. */
static void sgemm_run(void *state)
{
    const sgemm_state *s = state;
    const int64_t *p = s->c->p;
    const bool ta = p[P_TA], tb = p[P_TB];
    vs_sgemm(ta, tb, p[P_M], p[P_N], p[P_K], 1.0f, s->A, ta ? p[P_M] : p[P_K], s->B, tb ? p[P_K] : p[P_N], 0.0f,
             s->C, p[P_N]);
}

static double sgemm_flops(const vs_bench_case *c, int threads)
{
    (void)threads;
    return 2.0 * (double)c->p[P_M] * (double)c->p[P_N] * (double)c->p[P_K];
}

static void sgemm_json(const vs_bench_case *c, FILE *out)
{
    fprintf(out, ",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"trans_a\":%d,\"trans_b\":%d", (long long)c->p[P_M],
            (long long)c->p[P_N], (long long)c->p[P_K], (int)c->p[P_TA], (int)c->p[P_TB]);
}

#define SGEMM(name_, about_, m, n, k, ta, tb)                                                            \
    {.suite = "sgemm", .name = name_, .about = about_, .p = {m, n, k, ta, tb}, .setup = sgemm_setup,     \
     .run = sgemm_run, .teardown = sgemm_teardown, .flops = sgemm_flops, .json_fields = sgemm_json}

/* Linear layer, batch B, in I, out O: x [B,I], W [O,I], y [B,O]. */
#define LINEAR(b, i, o)                                                                                  \
    SGEMM("linear_fwd_" #b "x" #i "x" #o, "y = x W^T: M=" #b " N=" #o " K=" #i " (NT)", b, o, i, 0, 1), \
    SGEMM("linear_dx_" #b "x" #i "x" #o, "dx = dy W: M=" #b " N=" #i " K=" #o " (NN)", b, i, o, 0, 0),  \
    SGEMM("linear_dw_" #b "x" #i "x" #o, "dW = dy^T x: M=" #o " N=" #i " K=" #b " (TN)", o, i, b, 1, 0)

const vs_bench_case vs_bench_sgemm_cases[] = {
    SGEMM("sgemm_nn_64", "C = A B, 64 x 64 x 64", 64, 64, 64, 0, 0),
    SGEMM("sgemm_nn_128", "C = A B, 128 x 128 x 128", 128, 128, 128, 0, 0),
    SGEMM("sgemm_nn_256", "C = A B, 256 x 256 x 256", 256, 256, 256, 0, 0),
    SGEMM("sgemm_nn_512", "C = A B, 512 x 512 x 512", 512, 512, 512, 0, 0),
    SGEMM("sgemm_nn_1024", "C = A B, 1024 x 1024 x 1024", 1024, 1024, 1024, 0, 0),
    LINEAR(64, 784, 256),
    LINEAR(64, 256, 10),
    LINEAR(128, 100, 64),
    LINEAR(128, 784, 400), /* the zoo VAE's encoder and decoder (vae_mlp_step) */
    LINEAR(128, 400, 784),
    LINEAR(64, 784, 1200), /* the DIP-VAE encoder (dipvae_mlp_step) */
    LINEAR(64, 1200, 1200),
    LINEAR(256, 300, 200), /* the sweep's MLP (sweep_mlp_step) */
    LINEAR(256, 200, 100),
    LINEAR(256, 100, 10),
    LINEAR(64, 3136, 256), /* the GANMEX classifier's first linear layer (ganmex_mnist_step) */
};
const size_t vs_bench_sgemm_count = sizeof vs_bench_sgemm_cases / sizeof vs_bench_sgemm_cases[0];
