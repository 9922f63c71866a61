/* gemm_thin.c - products with a side of 1 (M = 1: a row times a matrix; N = 1: a matrix times a
 * column; K = 1: an outer product), which the 6 x 32 tiles would fill to 1/6 or 1/32 of their lanes:
 * a linear layer into one output (WGAN critic's 6272 -> 1), its gradients, a batch of one.
 *
 * Each element of C gets the micro-kernel's operations in the kernel's order (gemm_kernel.h):
 * acc = 0, then acc = a b + acc for k from pc in passes of kc (the same passes as the tiled path),
 * then C = alpha acc (first pass with beta 0) or alpha acc + beta' C; "a b + acc" and the last
 * sum rounded once on the FMA instruction sets and twice (multiply, then add) on the scalar one, as
 * their kernels do.  So a thin product has the bits the tiled path gives it, on every ISA and for
 * any thread count.  What differs is the loop order: elements side by side in memory (along j of
 * a row of C, or along i of a column) are vectorised, each element's sum still running over k in
 * order, with THIN_BLOCK accumulators on the stack. */
#include "autograd/gemm_kernel.h"

#include <math.h>

/* Accumulators per block of C (a row segment or a column segment): 1 KiB, in L1. */
#define THIN_BLOCK 256

static int64_t thin_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* a b + c as the kernels round it: fused on the FMA ISAs (the branch is a constant after inlining) */
#define THIN_MADD(fused, a, b, c) ((fused) ? fmaf((a), (b), (c)) : (a) * (b) + (c))

/* acc[e] = s v[e * ve] + acc[e], e < n, or s v[e * ve] + 0 on a pass's first step (the kernel's
 * first step from its zeroed accumulators, without storing the zeros); inlined with ve = 1 where
 * the caller knows it, so that it vectorises. */
__attribute__((always_inline)) static inline void thin_madd(float *restrict acc, float s, const float *restrict v,
                                                            int64_t ve, int64_t n, bool first, bool fused)
{
    if (first)
        for (int64_t e = 0; e < n; e++) acc[e] = THIN_MADD(fused, s, v[e * ve], 0.0f);
    else
        for (int64_t e = 0; e < n; e++) acc[e] = THIN_MADD(fused, s, v[e * ve], acc[e]);
}

/* c[e * ce] = alpha acc[e] (beta 0: C not read) or alpha acc[e] + beta c[e * ce], as UK_ROW. */
__attribute__((always_inline)) static inline void thin_store(float *restrict c, int64_t ce, const float *restrict acc,
                                                             int64_t n, float alpha, float beta, bool fused)
{
    if (beta == 0)
        for (int64_t e = 0; e < n; e++) c[e * ce] = alpha * acc[e];
    else if (fused)
        for (int64_t e = 0; e < n; e++) c[e * ce] = fmaf(beta, c[e * ce], alpha * acc[e]);
    else
        for (int64_t e = 0; e < n; e++) c[e * ce] = alpha * acc[e] + beta * c[e * ce];
}

/* A pass of one step (K = 1): thin_madd's first step and thin_store in one loop. */
__attribute__((always_inline)) static inline void thin_outer(float *restrict c, int64_t ce, float s,
                                                             const float *restrict v, int64_t ve, int64_t n,
                                                             float alpha, float beta, bool fused)
{
    if (beta == 0)
        for (int64_t e = 0; e < n; e++) c[e * ce] = alpha * THIN_MADD(fused, s, v[e * ve], 0.0f);
    else if (fused)
        for (int64_t e = 0; e < n; e++) c[e * ce] = fmaf(beta, c[e * ce], alpha * fmaf(s, v[e * ve], 0.0f));
    else
        for (int64_t e = 0; e < n; e++) c[e * ce] = alpha * (s * v[e * ve] + 0.0f) + beta * c[e * ce];
}

/* Block `item` of the product: a segment of a row of C (along j; item = i * blocks + jb) or of a
 * column (along i; item = j * blocks + ib), every pass over k, then its write-back.  Per k, one
 * operand is a single number s and the other a vector v over the segment (a b = b a exactly, fused
 * or not, so the order of the factors does not matter). */
__attribute__((always_inline)) static inline void thin_item(const vs_gemm_thin *t, int64_t item, bool fused)
{
    const int64_t len = t->along_i ? t->M : t->N, blocks = (len + THIN_BLOCK - 1) / THIN_BLOCK;
    const int64_t outer = item / blocks, e0 = item % blocks * THIN_BLOCK, n = thin_min(THIN_BLOCK, len - e0);
    /* s of step k at s0[k * sk]; element e of v at v0[k * vk + e * ve]; of C at c[e * ce] */
    const float *s0, *v0;
    int64_t sk, vk, ve, ce;
    float *c;
    if (t->along_i) {
        s0 = t->B + outer * t->csb, sk = t->rsb;
        v0 = t->A + e0 * t->rsa, vk = t->csa, ve = t->rsa;
        c = t->C + e0 * t->ldc + outer, ce = t->ldc;
    } else {
        s0 = t->A + outer * t->rsa, sk = t->csa;
        v0 = t->B + e0 * t->csb, vk = t->rsb, ve = t->csb;
        c = t->C + outer * t->ldc + e0, ce = 1;
    }
    if (t->K == 1) {
        if (ve == 1 && ce == 1)
            thin_outer(c, 1, s0[0], v0, 1, n, t->alpha, t->beta, fused);
        else
            thin_outer(c, ce, s0[0], v0, ve, n, t->alpha, t->beta, fused);
        return;
    }
    float acc[THIN_BLOCK];
    for (int64_t pc = 0; pc < t->K; pc += t->kcb) {
        const int64_t end = pc + thin_min(t->kcb, t->K - pc);
        if (ve == 1)
            for (int64_t k = pc; k < end; k++) thin_madd(acc, s0[k * sk], v0 + k * vk, 1, n, k == pc, fused);
        else
            for (int64_t k = pc; k < end; k++) thin_madd(acc, s0[k * sk], v0 + k * vk, ve, n, k == pc, fused);
        const float beta = pc == 0 ? t->beta : 1.0f;
        if (ce == 1)
            thin_store(c, 1, acc, n, t->alpha, beta, fused);
        else
            thin_store(c, ce, acc, n, t->alpha, beta, fused);
    }
}

int64_t vs_gemm_thin_items(const vs_gemm_thin *t)
{
    const int64_t len = t->along_i ? t->M : t->N, outer = t->along_i ? t->N : t->M;
    return outer * ((len + THIN_BLOCK - 1) / THIN_BLOCK);
}

void vs_gemm_thin_plain(void *ctx, int64_t i0, int64_t i1)
{
    for (int64_t item = i0; item < i1; item++) thin_item(ctx, item, false);
}

#if defined(__x86_64__) || defined(__i386__)
/* In AVX2 vectors on both FMA instruction sets: these loops are bound by memory, not by width. */
__attribute__((target("avx2,fma"))) void vs_gemm_thin_fma(void *ctx, int64_t i0, int64_t i1)
{
    for (int64_t item = i0; item < i1; item++) thin_item(ctx, item, true);
}
#endif
