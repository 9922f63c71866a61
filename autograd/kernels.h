/* autograd/kernels.h - private interface of the optimised kernels: the parallel loop, per-thread
 * scratch buffers, run-time instruction-set choice and single-precision matrix products.
 *
 * Not installed: library code (ops, layers, the benchmarks and the tests) includes it as
 * "autograd/kernels.h".  Thread count itself is public, in versus/threads.h. */
#ifndef VERSUS_AUTOGRAD_KERNELS_H
#define VERSUS_AUTOGRAD_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- vector clones ---- */

/* Put VS_VECTOR_CLONES before a function whose loops are written for the vectoriser (flat loops over
 * restrict pointers, no calls): GCC and Clang then also compile an AVX2 clone of it and glibc's
 * ifunc picks the clone at load time on CPUs that have AVX2; other compilers, platforms and CPUs
 * run the baseline build.  (Not "arch=haswell": glibc matches that by CPU model, and AMD's never
 * match.)  Without FMA in the clone, both clones round alike. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && defined(__has_attribute) && !defined(VS_NO_CLONES)
#if __has_attribute(target_clones)
#define VS_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef VS_VECTOR_CLONES
#define VS_VECTOR_CLONES
#endif
/* VS_VECTOR_CLONES with an AVX-512F clone as well, for memory-bound maps and reductions over short
 * rows (normalisation planes, activations) where the wider registers halve the loop's instructions.
 * Without FMA contraction (ISO C's default) each element is computed by the same operations in
 * every clone, so the three give the same bits. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && defined(__has_attribute) && !defined(VS_NO_CLONES)
#if __has_attribute(target_clones)
#define VS_VECTOR_CLONES512 __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef VS_VECTOR_CLONES512
#define VS_VECTOR_CLONES512
#endif

/* Put VS_SHORT_COPIES before a function whose copy loops are short (a few floats each): GCC would
 * otherwise turn each into a call to memcpy/memset, which costs more than the copy. */
#if defined(__GNUC__) && !defined(__clang__)
#define VS_SHORT_COPIES __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define VS_SHORT_COPIES
#endif

/* Put VS_SELECTS before a function whose loops pick between values with a comparison and multiply by
 * the pick (a ReLU's slope): GCC otherwise keeps such a loop as branches, since under -ftrapping-math a
 * multiply it would make unconditional might raise a flag the branch did not.  The values are the same. */
#if defined(__GNUC__) && !defined(__clang__)
#define VS_SELECTS __attribute__((optimize("no-trapping-math")))
#else
#define VS_SELECTS
#endif

/* ---- parallel loop (threadpool.c) ---- */

/* Body of a parallel loop: handle indices [begin, end) of the range, using ctx. */
typedef void (*vs_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Call fn on the chunks [0,g), [g,2g), ... [c*g, n) of [0, n), g = max(grain, 1), spread over up to
 * vs_get_threads() threads (the caller is one of them); returns when every chunk is done.
 * The chunk boundaries depend only on n and grain, never on the thread count, so a reduction that
 * keeps one partial result per chunk and combines them in chunk order is bit-identical for any
 * number of threads.  Chunks may run in any order and concurrently.  A call made from inside a
 * chunk (nested), or while another thread owns the pool, runs its chunks serially in order on the
 * calling thread.  fn must not call exit() or longjmp out. */
void vs_parallel_for(int64_t n, int64_t grain, vs_range_fn fn, void *ctx);

/* Scratch buffers, one set per thread, reused between calls: a kernel asks for its slot and gets
 * at least `bytes` bytes, 64-byte aligned.  The contents are NOT kept when the buffer grows.
 * Valid until this thread asks for the same slot again; freed when the thread exits (or at
 * program exit for the main thread).  NULL when memory runs out. */
typedef enum vs_scratch_slot {
    VS_SCRATCH_GEMM_A = 0, /* packed block of op(A) */
    VS_SCRATCH_GEMM_B,     /* packed panel of op(B), shared by the threads of one product */
    VS_SCRATCH_GEMM_EDGE,  /* zero-padded last column strip of op(B) */
    VS_SCRATCH_GEMM_T,     /* C transposed, for a product computed as C^T = op(B)^T op(A)^T (gemm.c) */
    VS_SCRATCH_CONV,       /* im2col and patch matrices of a chunk of images (ops_conv.c) */
    VS_SCRATCH_CONV_PARTS, /* the weight gradient's partial sums, owned by the thread that runs the op */
    VS_SCRATCH_CONV_WEIGHTS, /* packed weights of the direct AVX-512 convolution (conv_avx512.c) */
    VS_SCRATCH_CONV_PHASES,  /* a strided conv's input phases stacked as channels (conv_phases.c) */
    VS_SCRATCH_WINO_U,     /* transformed weights of a Winograd convolution (conv_winograd.c) */
    VS_SCRATCH_WINO,       /* a block's transformed tiles and products (conv_winograd.c) */
    VS_SCRATCH_WINO_X,     /* a Winograd convolution's input (and gy) with the channels last */
    VS_SCRATCH_SLOTS
} vs_scratch_slot;
void *vs_scratch(vs_scratch_slot slot, size_t bytes);
/* Largest buffer vs_scratch_or_own keeps per thread (32 MiB). */
#define VS_SCRATCH_KEEP ((size_t)32 << 20)
/* `bytes` of scratch: this thread's slot when bytes <= VS_SCRATCH_KEEP (*owned = NULL), else a fresh
 * 64-byte aligned block the caller frees (*owned, the same pointer), so one huge call does not keep
 * its memory for the thread's life.  NULL when memory runs out. */
void *vs_scratch_or_own(vs_scratch_slot slot, size_t bytes, void **owned);

/* ---- bulk draws ---- */

struct vs_rng;
/* out[i] = lo + (hi - lo) u_i for i < n, u_i = vs_rng_uniformf(r) drawn in order: the same values as a
 * loop over vs_rng_uniformf, without two calls per draw (rng.c).  Dropout masks and uniform fills. */
void vs_rng_fill_uniformf(struct vs_rng *r, float *out, int64_t n, float lo, float hi);
/* out[i] = mean + std (float) vs_rng_normal(r) for i < n, drawn in order: the same values as that
 * loop, with log and cos vectorised (rng.c).  vs_tensor_randn and normal initialisation. */
void vs_rng_fill_normalf(struct vs_rng *r, float *out, int64_t n, float mean, float std);

/* y[i] = e^(x[i]) for i < n, within 2 ulps, the same bits on every instruction set (exp_pd.c); 0 below
 * -708, +inf above ln(DBL_MAX), NaN for NaN.  y may be x.  softmax, log_softmax and logsumexp. */
void vs_exp_pd(const double *x, double *y, int64_t n);

/* ---- instruction sets (isa.c) ---- */

typedef enum vs_isa {
    VS_ISA_AUTO = 0, /* the best the processor and operating system support */
    VS_ISA_SCALAR,   /* portable C, no SIMD intrinsics */
    VS_ISA_AVX2,     /* x86-64 AVX2 + FMA */
    VS_ISA_AVX512    /* x86-64 AVX-512F */
} vs_isa;

/* Best instruction set this machine runs (cpuid, and xgetbv for the OS-saved register state). */
vs_isa vs_cpu_isa(void);
/* Instruction set the kernels use now: set by vs_set_kernel_isa(), else the environment variable
 * VERSUS_ISA (scalar, avx2, avx512, auto), else vs_cpu_isa(). */
vs_isa vs_kernel_isa(void);
/* Force the kernels onto isa (AUTO = back to the default); an isa the machine lacks is lowered to
 * the best one it has.  Returns the instruction set now in use.  Call it between kernels. */
vs_isa vs_set_kernel_isa(vs_isa isa);
/* "scalar", "avx2", "avx512" or "auto". */
const char *vs_isa_name(vs_isa isa);
/* Whether the AVX-512 kernels are tuned for a core that runs a zmm FMA as two ymm halves (AMD Zen
 * 4, cpuid family 0x19) rather than on full-width pipes (Zen 5, Intel): the two choices read
 * operands differently and compute the same bits; the convolutions' choices follow it too (tile kinds,
 * and Winograd or the direct kernels: the latter moves results by rounding, as a change of ISA does, so a
 * run is reproducible on the same kind of core).  vs_set_avx512_split forces it (0 or 1; -1: back
 * to the CPU's answer) and returns the value now in use; call it between kernels. */
bool vs_avx512_split(void);
bool vs_set_avx512_split(int split);
/* The kernels run AVX-512 on a full-width core: vs_kernel_isa() is AVX-512 and vs_avx512_split() false. */
bool vs_avx512_full_width(void);

/* ---- matrix products (gemm.c, gemm_ref.c) ---- */

/* C = alpha op(A) op(B) + beta C, all row-major; op(X) = X^T when trans_x.  op(A) is [M,K],
 * op(B) is [K,N], C is [M,N]; lda, ldb, ldc are row strides in elements (lda >= K columns of A
 * as stored, i.e. lda >= (trans_a ? M : K), likewise ldb, and ldc >= N).  beta == 0 overwrites C
 * without reading it (NaN in C does not propagate); alpha == 0 or K == 0 gives C = beta C
 * without reading A or B.  C must not overlap A or B.  Each element of C is computed by the same
 * operations for any thread count (bit-identical results); the instruction set may change the
 * rounding (see vs_set_kernel_isa). */
void vs_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
              int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* C = alpha op(A) op(B) + bias for every row of C (bias [N]): the bits of vs_sgemm with beta 1 on a
 * C whose rows hold bias, without writing them there first when the product runs transposed
 * (a linear layer's forward, y = x W^T + b). */
void vs_sgemm_bias(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc);

/* dst[c*ldd + r] = src[r*lds + c] for r < rows, c < cols, through the current ISA's register
 * transposes (gemm.c); a copy, so the same bits on every ISA.  src and dst must not overlap. */
void vs_transpose_floats(int64_t rows, int64_t cols, const float *src, int64_t lds, float *dst, int64_t ldd);

/* Reference for the tests: the same product by a plain triple loop accumulating in double. */
void vs_sgemm_ref(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

#endif
