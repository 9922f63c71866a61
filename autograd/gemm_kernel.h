/* autograd/gemm_kernel.h - what gemm.c needs to know about each instruction set's micro-kernel:
 * its tile, its cache blocks and the function.  One descriptor per ISA, defined beside its kernel
 * (gemm_ref.c, gemm_avx2.c, gemm_avx512.c). */
#ifndef VERSUS_AUTOGRAD_GEMM_KERNEL_H
#define VERSUS_AUTOGRAD_GEMM_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

/* Micro-kernel: one mr x nr tile of C (mr <= MR, nr <= NR of its descriptor).
 *   acc[i][j] = sum_{k < kc} a[i*rsa + k*csa] * b[k*rsb + j]     summed in k order from 0
 *   c[i*rsc + j*csc] = beta == 0 ? alpha acc : alpha acc + beta c
 *   or, given bias (its nr values for the tile's columns), alpha acc + bias[j]: the bits of the
 *   line above with beta 1 and c holding the bias, without reading c
 * b must hold NR readable columns per row (zero padding past nr); rows of a past mr are not read.
 * Full tiles and partial ones round identically, so a tile's position never changes its bits. */
typedef void (*vs_gemm_ukernel)(int64_t kc, const float *a, int64_t rsa, int64_t csa, const float *b,
                                int64_t rsb, float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr,
                                float alpha, float beta, const float *bias);

/* C = alpha op(A) op(B) + beta C for a product with M, N or K equal to 1 (gemm_thin.c), in blocks
 * of up to 256 elements of C: along a row of C (along_i false) or down a column.  op(A)(i,k) =
 * A[i*rsa + k*csa], op(B)(k,j) = B[k*rsb + j*csb]; kcb the tiled path's pass depth. */
typedef struct vs_gemm_thin {
    int64_t M, N, K, kcb;
    float alpha, beta;
    const float *A;
    int64_t rsa, csa;
    const float *B;
    int64_t rsb, csb;
    float *C;
    int64_t ldc;
    bool along_i;
} vs_gemm_thin;

/* Blocks of a thin product (the range the functions below take). */
int64_t vs_gemm_thin_items(const vs_gemm_thin *t);
/* Blocks [i0, i1) of the vs_gemm_thin at ctx, rounded as the scalar kernel (multiply, then add) or
 * as the FMA kernels; each element of C as the tiled path computes it, bit for bit. */
void vs_gemm_thin_plain(void *ctx, int64_t i0, int64_t i1);
#if defined(__x86_64__) || defined(__i386__)
void vs_gemm_thin_fma(void *ctx, int64_t i0, int64_t i1);
#endif

typedef struct vs_gemm_arch {
    const char *name;
    int64_t mr, nr; /* micro-tile of C */
    int64_t mc;     /* rows of the packed A block (kept in L2) */
    int64_t kc;     /* depth of one pass: a kc x nr sliver of B sits in L1 */
    int64_t kc_big; /* the same for products whose C exceeds L2 (fewer passes over it) */
    int64_t nc;     /* columns of the packed B panel (kept in L3) */
    vs_gemm_ukernel kernel;        /* operands in place (any strides) */
    vs_gemm_ukernel kernel_packed; /* a packed (rsa 1, csa mr), b packed (rsb nr); same rounding */
    /* dst[c*ldd + r] = src[r*lds + c] for r < rows, c < cols (packing transposed slivers, and the
     * swapped product's copies of C); NULL: plain loops. */
    void (*transpose)(int64_t rows, int64_t cols, const float *src, int64_t lds, float *dst, int64_t ldd);
    /* the same for w = 6 (a sliver of MR = 6 rows); NULL: plain loops */
    void (*pack_transpose6)(float *dst, const float *src, int64_t rs, int64_t kc);
    /* products with a side of 1, rounded as this ISA's kernel (vs_gemm_thin_plain or _fma) */
    void (*thin)(void *ctx, int64_t i0, int64_t i1);
} vs_gemm_arch;

extern const vs_gemm_arch vs_gemm_arch_scalar;
#if defined(__x86_64__) || defined(__i386__)
extern const vs_gemm_arch vs_gemm_arch_avx2;
extern const vs_gemm_arch vs_gemm_arch_avx512;       /* cores with full-width zmm FMAs */
extern const vs_gemm_arch vs_gemm_arch_avx512_split; /* cores running a zmm FMA as two halves */
void vs_gemm_transpose_avx2(int64_t rows, int64_t cols, const float *src, int64_t lds, float *dst, int64_t ldd);
void vs_gemm_transpose_avx512(int64_t rows, int64_t cols, const float *src, int64_t lds, float *dst, int64_t ldd);
void vs_gemm_pack_transpose6_avx2(float *dst, const float *src, int64_t rs, int64_t kc);
#endif

#endif
