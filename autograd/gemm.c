/* gemm.c - vs_sgemm: the loops around the micro-kernels (BLIS-style blocking), operand packing,
 * the split over threads and the choice of instruction set.
 *
 * Loop nest of one product, outermost first:
 *   jc: columns of C in panels of nc          (B panel kc x nc stays in L3 / L2)
 *   pc: the depth K in passes of kc            (each pass adds alpha A_p B_p into C)
 *       pack B panel (in parallel), then in parallel over tasks = row blocks x column ranges:
 *         pack A block (mc x kc, per thread)
 *         jr / ir over NR-column slivers and MR-row slivers -> micro-kernel
 * Small products skip packing: A and B are read in place (ir outer, jr inner), which saves the
 * copy that dominates when op(A) has few rows.  A product op(A) B^T of few rows (a linear layer's
 * forward) runs as its transpose B op(A)^T, so that B is read in place too, and so does a product whose C
 * is a little narrower than a tile (gemm_swapped).
 *
 * Determinism: an element of C receives, per pass, one micro-kernel sum over k in order, then
 * C = alpha sum + beta' C.  The passes depend only on K and the ISA's kc, never on the thread
 * count, the row blocking or whether operands were packed; so results are bit-identical for any
 * number of threads. */
#include "autograd/gemm_kernel.h"
#include "autograd/kernels.h"
#include "versus/threads.h"

#include <assert.h>
#include <string.h>

/* Below this many flops one thread does the whole product: waking others costs more. */
#define GEMM_PAR_FLOPS (1 << 21)
/* In-place (unpacked) products keep a kc x nc block of B in L2: nc = this many bytes / (4 kc). */
#define GEMM_INPLACE_L2_BYTES (256 * 1024)

typedef struct gemm_plan {
    const vs_gemm_arch *arch;
    int64_t M, N, K;
    float alpha;
    const float *A; /* op(A)(i,k) = A[i*rsa + k*csa] */
    int64_t rsa, csa;
    const float *B; /* op(B)(k,j) = B[k*rsb + j*csb] */
    int64_t rsb, csb;
    float *C;
    int64_t ldc;
    const float *bias; /* not NULL: the first pass adds bias[j] to every row instead of beta C */
    bool pack_a, pack_b; /* pack_b false: B read in place (csb == 1), loops ir outer */
    int threads;
    int64_t ncb, kcb; /* column panel width, pass depth (the last of each may be shorter) */
    int64_t mcb, n_ib, n_js; /* rows per task block, row blocks, column ranges per row block */
    /* the current pass */
    int64_t jc, nc, pc, kc;
    float beta;
    float *bpack;      /* op(B)[pc:pc+kc, jc:jc+nc] in NR-column slivers, each kc x NR */
    float *edge;       /* in-place B: the last, partial sliver zero-padded to NR columns */
} gemm_plan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* dst[k*w + r] = src[r*rs + k*cs] for r < rows, zero for rows <= r < w; k < kc.  Copies only, so
 * how a sliver is packed never changes a result. */
#define COPY_FIXED(W)                                                                            \
    for (int64_t k = 0; k < kc; k++) memcpy(dst + k * (W), src + k * cs, (W) * sizeof(float));  \
    return
static void pack_sliver(const vs_gemm_arch *arch, float *dst, const float *src, int64_t rs, int64_t cs,
                        int64_t rows, int64_t w, int64_t kc)
{
    if (rs == 1 && rows == w) {
        /* Rows of the sliver side by side in memory: fixed-size copies the compiler inlines. */
        switch (w) {
        case 4: COPY_FIXED(4);
        case 6: COPY_FIXED(6);
        case 8: COPY_FIXED(8);
        case 16: COPY_FIXED(16);
        case 32: COPY_FIXED(32);
        default: break;
        }
    }
    if (cs == 1 && rows == w && w % 8 == 0 && arch->transpose) {
        /* Each sliver row contiguous along k: a transpose, 8 x 8 blocks at a time. */
        arch->transpose(w, kc, src, rs, dst, w);
        return;
    }
    if (cs == 1 && rows == w && w == 6 && arch->pack_transpose6) {
        arch->pack_transpose6(dst, src, rs, kc);
        return;
    }
    for (int64_t k = 0; k < kc; k++) {
        float *d = dst + k * w;
        const float *s = src + k * cs;
        for (int64_t r = 0; r < rows; r++) d[r] = s[r * rs];
        for (int64_t r = rows; r < w; r++) d[r] = 0;
    }
}
#undef COPY_FIXED

/* dst[s*nr*kc + k*nr + c] = src[k*rs + s*nr + c] for s < n, k < kc, c < nr (full slivers of a B of
 * unit column stride), copied row by row: each row of B is read along its length, which the
 * hardware prefetchers follow; sliver by sliver, consecutive reads would be a row apart, and
 * when rows are 4 KiB or more apart (W of a 1200-wide layer) each one waits on L3. */
#define COPY_ROWS(W)                                                                             \
    for (int64_t k = 0; k < kc; k++)                                                             \
        for (int64_t s = 0; s < n; s++)                                                          \
            memcpy(dst + s * (W) * kc + k * (W), src + k * rs + s * (W), (W) * sizeof(float));   \
    return
static void pack_rows(float *dst, const float *src, int64_t rs, int64_t n, int64_t nr, int64_t kc)
{
    switch (nr) {
    case 16: COPY_ROWS(16);
    case 32: COPY_ROWS(32);
    default: break;
    }
    for (int64_t k = 0; k < kc; k++)
        for (int64_t s = 0; s < n; s++)
            memcpy(dst + s * nr * kc + k * nr, src + k * rs + s * nr, (size_t)nr * sizeof(float));
}
#undef COPY_ROWS

/* Pack B slivers [p0, p1) of the current pass. */
static void pack_b_range(void *ctx, int64_t p0, int64_t p1)
{
    const gemm_plan *p = ctx;
    const int64_t nr = p->arch->nr;
    if (p->csb == 1) {
        const int64_t full = min64(p1, p->nc / nr);
        if (full > p0)
            pack_rows(p->bpack + p0 * nr * p->kc, p->B + p->pc * p->rsb + p->jc + p0 * nr, p->rsb, full - p0, nr, p->kc);
        p0 = full > p0 ? full : p0;
    }
    for (int64_t s = p0; s < p1; s++) {
        const int64_t j = s * nr;
        pack_sliver(p->arch, p->bpack + s * nr * p->kc, p->B + p->pc * p->rsb + (p->jc + j) * p->csb, p->csb, p->rsb,
                    min64(nr, p->nc - j), nr, p->kc);
    }
}

/* One tile: rows [i, i+mr) of C (a: its A sliver, packed or in place), sliver s of the current
 * column panel.  Inlined into the task loops: as a call it was 0.8% of an MLP's training step. */
__attribute__((always_inline)) static inline void tile(const gemm_plan *p, const float *a, bool a_packed, int64_t rsa,
                                                       int64_t csa, int64_t i, int64_t mr, int64_t s)
{
    const int64_t nr_full = p->arch->nr, j = s * nr_full, nr = min64(nr_full, p->nc - j);
    const float *b;
    int64_t rsb;
    if (p->pack_b) {
        b = p->bpack + s * nr_full * p->kc;
        rsb = nr_full;
    } else if (nr < nr_full) {
        b = p->edge;
        rsb = nr_full;
    } else {
        b = p->B + p->pc * p->rsb + p->jc + j;
        rsb = p->rsb;
    }
    const vs_gemm_ukernel kernel = p->pack_b && a_packed ? p->arch->kernel_packed : p->arch->kernel;
    kernel(p->kc, a, rsa, csa, b, rsb, p->C + i * p->ldc + p->jc + j, p->ldc, 1, mr, nr, p->alpha, p->beta,
           p->bias && p->pc == 0 ? p->bias + p->jc + j : NULL);
}

/* Tasks [t0, t1) of the current pass: task t = row block t / n_js, column range t % n_js. */
static void gemm_tasks(void *ctx, int64_t t0, int64_t t1)
{
    const gemm_plan *p = ctx;
    const int64_t MR = p->arch->mr, NR = p->arch->nr, nsl = ceil_div(p->nc, NR);
    for (int64_t t = t0; t < t1; t++) {
        const int64_t i0 = (t / p->n_js) * p->mcb, js = t % p->n_js;
        const int64_t mc = min64(p->mcb, p->M - i0);
        const int64_t s0 = js * nsl / p->n_js, s1 = (js + 1) * nsl / p->n_js;
        if (mc <= 0 || s0 >= s1) continue;

        /* A block: packed in MR-row slivers (kc x MR each) when asked and memory allows; the
         * kernel reads either layout, with identical arithmetic. */
        const float *a = p->A + i0 * p->rsa + p->pc * p->csa;
        int64_t rsa = p->rsa, csa = p->csa, sliver = MR * p->rsa;
        float *apack = p->pack_a ? vs_scratch(VS_SCRATCH_GEMM_A, (size_t)(round_up(mc, MR) * p->kc) * sizeof(float)) : NULL;
        if (apack) {
            for (int64_t ir = 0; ir < mc; ir += MR)
                pack_sliver(p->arch, apack + ir * p->kc, a + ir * p->rsa, p->rsa, p->csa, min64(MR, mc - ir), MR, p->kc);
            a = apack;
            rsa = 1;
            csa = MR;
            sliver = MR * p->kc;
        }

        if (p->pack_b) {
            /* B sliver (kc x NR) stays in L1 while the A slivers stream from L2. */
            for (int64_t s = s0; s < s1; s++)
                for (int64_t ir = 0; ir < mc; ir += MR) tile(p, a + ir / MR * sliver, apack != NULL, rsa, csa, i0 + ir, min64(MR, mc - ir), s);
        } else {
            /* A sliver (MR x kc) stays in L1 while B streams from L2. */
            for (int64_t ir = 0; ir < mc; ir += MR)
                for (int64_t s = s0; s < s1; s++) tile(p, a + ir / MR * sliver, apack != NULL, rsa, csa, i0 + ir, min64(MR, mc - ir), s);
        }
    }
}

static void run_range(const gemm_plan *p, int64_t n, int64_t grain, vs_range_fn fn)
{
    if (p->threads > 1)
        vs_parallel_for(n, grain, fn, (void *)p);
    else
        fn((void *)p, 0, n);
}

/* Tasks of one pass.  One thread: row blocks of about arch->mc rows (the packed A block in L2).
 * Several: about four tasks per thread, handed out dynamically, so a thread that the OS
 * preempts (or a core shared with other work) delays the product by one small task, not by its
 * whole share.  Rows are split first, down to blocks of MIN_TASK_ROWS (a B sliver in L1 must
 * serve several A slivers), then columns, down to two slivers per task. */
#define MIN_TASK_ROWS 48
static void plan_tasks(gemm_plan *p)
{
    const int64_t MR = p->arch->mr, nt = p->threads;
    const int64_t col_slivers = ceil_div(min64(p->N, p->ncb), p->arch->nr);
    int64_t n_ib = p->pack_a ? ceil_div(p->M, p->arch->mc) : 1, n_js = 1;
    if (nt > 1) {
        const int64_t want = 4 * nt, max_ib = ceil_div(p->M, MIN_TASK_ROWS);
        if (n_ib < want) n_ib = min64(want, max_ib > n_ib ? max_ib : n_ib);
        if (n_ib < want) n_js = min64(ceil_div(want, n_ib), col_slivers / 2 > 1 ? col_slivers / 2 : 1);
    }
    p->mcb = round_up(ceil_div(p->M, n_ib), MR);
    p->n_ib = ceil_div(p->M, p->mcb);
    p->n_js = n_js;
}

static const vs_gemm_arch *current_arch(void)
{
#if defined(__x86_64__) || defined(__i386__)
    switch (vs_kernel_isa()) {
    case VS_ISA_AVX512: return vs_avx512_split() ? &vs_gemm_arch_avx512_split : &vs_gemm_arch_avx512;
    case VS_ISA_AVX2: return &vs_gemm_arch_avx2;
    default: break;
    }
#endif
    return &vs_gemm_arch_scalar;
}

/* C = beta C (alpha == 0 or K == 0); beta == 0 writes zeros without reading C. */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc)
{
    if (beta == 1) return;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0 ? 0.0f : beta * C[i * ldc + j];
}

/* Whether to read B in place (ir outer, jr inner) instead of packing it: B must have unit column
 * stride and op(A) few rows, so that each B sliver serves few A slivers and copying it costs more
 * than reading it from L2.  Measured at 1 thread on Zen 4 (AVX-512): in place is 3-6% faster up to
 * 128 rows (64 x 784 x 256, 128 x 400 x 784, 128 x 128 x 128; 16-48 x 1200 x 64 with B in L2:
 * 10-20%), about 2% up to 256 (in the steps, the same step alternating the two ways: an MLP's
 * 256 x 200 x 100 dx = g W and 200 x 300 x 256 dW = g^T x, 256 x 256 x 256), worse at 512.  Not when B's rows are 4 KiB or more apart and B is too big to stay in L2: each
 * block's first pass then reads every row from another page, which the prefetchers do not follow,
 * waiting on L3 row after row.  64 x 1200 x 1200 (g W of a 1200-wide layer) ran at 58-80% of peak
 * in place, swinging with the other core's memory traffic, and at 76-84% packed row by row
 * (pack_rows); 128 x 1200 x 1200 at 81% and 88%; 16 and 32 rows the same or better packed. */
#define IN_PLACE_MAX_M 256
#define IN_PLACE_FAR_LDB 1024                 /* floats: 4 KiB */
#define IN_PLACE_FAR_MAX_BYTES (1024 * 1024) /* B this large comes from L3 */
static bool use_in_place(const gemm_plan *p)
{
    if (p->csb != 1 || p->M > IN_PLACE_MAX_M) return false;
    return p->rsb < IN_PLACE_FAR_LDB || (double)p->K * (double)p->N * sizeof(float) <= IN_PLACE_FAR_MAX_BYTES;
}

static const vs_gemm_arch *current_arch(void);

/* C = op(A) op(B) with op(A) = A of few rows and op(B) = B^T wide (a linear layer's forward,
 * y = x W^T): packing op(B) would transpose all of W for M / 6 uses of each copy.  Computed as
 * C^T = B A^T instead, in a transposed copy of C: W is read in place as the left operand and only
 * x^T (small) is packed.  The micro-kernel forms the same products (a b = b a) over the same passes
 * of K (kc depends on K alone) and writes alpha sum + beta C alike, so the bits are those of the
 * direct product.  False when scratch memory runs out (the caller then takes the direct path). */
#define SWAP_MAX_M 128

/* dst[j*ldd + i] = src[i*lds + j] for i < rows, j < cols: the ISA's transpose, else 16 x 16 blocks
 * copied element by element so that both sides stay in L1 while a block is copied. */
#define TRANSPOSE_BLOCK 16
void vs_transpose_floats(int64_t rows, int64_t cols, const float *restrict src, int64_t lds, float *restrict dst, int64_t ldd)
{
    const vs_gemm_arch *arch = current_arch();
    if (arch->transpose) {
        arch->transpose(rows, cols, src, lds, dst, ldd);
        return;
    }
    for (int64_t i0 = 0; i0 < rows; i0 += TRANSPOSE_BLOCK)
        for (int64_t j0 = 0; j0 < cols; j0 += TRANSPOSE_BLOCK) {
            const int64_t i1 = min64(i0 + TRANSPOSE_BLOCK, rows), j1 = min64(j0 + TRANSPOSE_BLOCK, cols);
            for (int64_t j = j0; j < j1; j++)
                for (int64_t i = i0; i < i1; i++) dst[j * ldd + i] = src[i * lds + j];
        }
}
static void gemm_direct(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                        int64_t lda, const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc);

/* Whether to compute C^T = op(B)^T op(A)^T instead: a product x W^T of few rows (see above), or one
 * whose C is a little narrower than a tile (nr/2 < N < nr: a linear layer into 20 latents fills 20
 * of the 32 columns of each full-width step, where MR-row slivers of the transposed product waste
 * at most 5 rows of N; N <= nr/2 takes the kernel's half-width step, whose lanes are all used) and
 * tall enough for the transposed product's tiles to fill.  Measured at 1 thread (AVX-512): 128 x 20
 * x 400 (x W^T, g W) 35 -> 31 us, 400 x 20 x 128 (g^T z) 36 -> 24 us; 64 x 16 x 1200 no better.
 * x W^T only when K >= M: packing W^T copies N K floats, the transposed product copies C's M N
 * twice (128 x 400 x 20, a decoder's first layer: 38 us swapped, 24 us direct). */
static bool want_swap(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K)
{
    const int64_t nr = current_arch()->nr;
    if (2 * N > nr && N < nr && M >= 2 * nr) return true;
    /* M < nr / 2: the transposed product's tiles would be mostly padding (M columns of nr) */
    return !trans_a && trans_b && M <= SWAP_MAX_M && 2 * M >= nr && N >= 2 * M && K >= M;
}

/* t[j*m + i] = bias[j] for j < n, i < m: row j of C^T is bias[j] repeated, in the widest stores
 * the clones have (the baseline build's are 4 floats wide). */
VS_VECTOR_CLONES512 static void bias_rows(float *restrict t, const float *restrict bias, int64_t n, int64_t m)
{
    for (int64_t j = 0; j < n; j++) {
        const float b = bias[j];
        for (int64_t i = 0; i < m; i++) t[j * m + i] = b;
    }
}

/* C starting as bias (every row bias[0, N)) when bias is not NULL, else as beta C; the transposed
 * copy t starts as its transpose, filled row by row from bias without reading C. */
static bool gemm_swapped(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                         int64_t lda, const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc)
{
    if (!want_swap(trans_a, trans_b, M, N, K)) return false;
    float *t = vs_scratch(VS_SCRATCH_GEMM_T, (size_t)(M * N) * sizeof(float));
    if (!t) return false;
    if (bias)
        bias_rows(t, bias, N, M);
    else if (beta != 0)
        vs_transpose_floats(M, N, C, ldc, t, M);
    gemm_direct(!trans_b, !trans_a, N, M, K, alpha, B, ldb, A, lda, bias ? 1.0f : beta, NULL, t, M);
    vs_transpose_floats(N, M, t, M, C, ldc);
    return true;
}

/* Whether to copy blocks of A into MR-row slivers.  The kernel broadcasts A from anywhere, so
 * packing pays only when its row stride is a multiple of 4 KiB (the six rows of a sliver then fall
 * into the same L1 sets and evict each other), when the block is reused over so many B slivers that
 * the copy is cheap insurance, or when A is transposed (op(A)(i,k) = A[k*csa + i]: each k touches a
 * new cache line for six floats) unless B is read in place: a sliver's kc lines then stay in L1
 * while it meets every B sliver, provided they spread over enough L1 sets (a_spread).
 * Measured at 1 thread (Zen 4), g^T x in place: 200 x 300 x 256 287 -> 284 us, 100 x 200 x 256 98 ->
 * 95.5, 10 x 100 x 256 7.8 -> 6.8, 64 x 100 x 128 18.4 -> 17.2; 256 x 784 x 64 (rows 1 KiB apart,
 * 64 lines in 4 sets) 240 -> 258 unless packed. */
#define L1_WAY_BYTES 4096 /* 32-48 KiB L1 of 8-12 ways: one way spans 4 KiB, 64 sets of 64 bytes */
static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}
/* kc lines csa floats apart land in L1_WAY_BYTES / gcd(4 csa, L1_WAY_BYTES) sets (at most 64): in
 * place when that leaves at most 8 per set. */
static bool a_spread(int64_t csa, int64_t kc)
{
    int64_t sets = L1_WAY_BYTES / gcd64(4 * csa, L1_WAY_BYTES);
    if (sets > L1_WAY_BYTES / 64) sets = L1_WAY_BYTES / 64;
    return kc <= 8 * sets;
}
static bool pack_a_block(const gemm_plan *p, int64_t lda_rows)
{
    if (p->csa != 1) return p->pack_b || p->rsa != 1 || !a_spread(p->csa, p->kcb);
    if (p->N <= p->arch->nr) return false;
    return lda_rows % 1024 == 0 || p->N >= 512;
}

/* Depth of a pass: the ISA's kc, or its kc_big when C is larger than L2 (BIG_C floats), where each
 * pass re-reads C from L3.  A function of K and of M N only, so a product and its transpose (the
 * swapped path) make the same passes and the same bits.  Measured at 1 thread on Zen 4, kc 128 ->
 * 256: sgemm 1024 +4%, 512 +1-2%, 512 x 500 x 1000 x W^T +4%, g W and g^T x of that layer +1-2%. */
#define BIG_C (256 * 1024)
static int64_t kc_max(const vs_gemm_arch *arch, int64_t M, int64_t N)
{
    return (double)M * (double)N >= BIG_C ? arch->kc_big : arch->kc;
}

/* A product with M, N or K equal to 1 by the ISA's thin loops (gemm_thin.c), which vectorise
 * along the side of C longer than 1 instead of filling 1 of the tile's 6 rows or 32 columns; the
 * same bits as the tiles.  Along a row of C unless C is one column, or op(A) runs down its columns
 * in memory and op(B) does not along its rows.  Where the elements of that side are strided in
 * memory (op(B)(k, j) = W[j, k] for a batch of one, x W^T; W x), each is its own chain over k
 * read element by element, which beats the tiles only up to THIN_STRIDED_MAX elements.  Measured
 * at 1 thread (Zen 4), tiles -> thin: 16 x 1 x 6272 (the WGAN critic's last layer, x w^T)
 * 57 -> 24 us, its gradients 1 x 6272 x 16 11 -> 8 us and 16 x 6272 x 1 the same; a batch of one
 * through a 1200 x 1200 layer, x W 275 -> 133 us, W^T x 680 -> 130 us; 1 x 64 x 784 x W^T 13 -> 11
 * us, 1 x 128 x 784 25 -> 37 us (tiles kept). */
#define THIN_STRIDED_MAX 64
static bool gemm_thin(const vs_gemm_arch *arch, const gemm_plan *p)
{
    if (p->M != 1 && p->N != 1 && p->K != 1) return false;
    vs_gemm_thin t = {
        .M = p->M, .N = p->N, .K = p->K, .kcb = ceil_div(p->K, ceil_div(p->K, kc_max(arch, p->M, p->N))), .alpha = p->alpha,
        .beta = p->beta, .A = p->A, .rsa = p->rsa, .csa = p->csa, .B = p->B, .rsb = p->rsb, .csb = p->csb,
        .C = p->C, .ldc = p->ldc,
        .along_i = p->M > 1 && (p->N == 1 || (p->csb != 1 && p->rsa == 1)),
    };
    if ((t.along_i ? t.rsa != 1 && t.M > THIN_STRIDED_MAX : t.csb != 1 && t.N > THIN_STRIDED_MAX)) return false;
    const int64_t items = vs_gemm_thin_items(&t);
    const int threads = 2.0 * (double)p->M * (double)p->N * (double)p->K < GEMM_PAR_FLOPS ? 1 : vs_get_threads();
    if (threads > 1 && items > 1)
        vs_parallel_for(items, ceil_div(items, 4 * (int64_t)threads), arch->thin, &t);
    else
        arch->thin(&t, 0, items);
    return true;
}

/* Every row of C = bias[0, N). */
static void fill_bias(int64_t M, int64_t N, const float *bias, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < M; i++) memcpy(C + i * ldc, bias, (size_t)N * sizeof(float));
}

/* C = alpha op(A) op(B) + beta C as posed (M, N, K > 0, alpha != 0); given a bias, C = alpha op(A)
 * op(B) + bias on every row, the bits of C filled with the bias and beta 1: the tiles' first pass
 * reads the bias instead (the copy was half the time of a 256 x 200 x 300 x W^T's other work). */
static void gemm_direct(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                        int64_t lda, const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc)
{
    gemm_plan p = {
        .arch = current_arch(), .M = M, .N = N, .K = K, .alpha = alpha, .A = A,
        .rsa = trans_a ? 1 : lda, .csa = trans_a ? lda : 1,
        .B = B, .rsb = trans_b ? 1 : ldb, .csb = trans_b ? ldb : 1, .C = C, .ldc = ldc, .bias = bias,
    };
    const vs_gemm_arch *arch = p.arch;
    p.beta = bias ? 1.0f : beta;
    if (bias && (M == 1 || N == 1 || K == 1)) { /* the thin loops add beta C: C holds the bias first */
        fill_bias(M, N, bias, C, ldc);
        p.bias = NULL;
    }
    if (gemm_thin(arch, &p)) return;
    p.threads = 2.0 * (double)M * (double)N * (double)K < GEMM_PAR_FLOPS ? 1 : vs_get_threads();
    p.kcb = ceil_div(K, ceil_div(K, kc_max(arch, M, N))); /* equal passes: K = 300 is 150 + 150, not 256 + 44 */
    p.pack_b = !use_in_place(&p);
    p.pack_a = pack_a_block(&p, trans_a ? 0 : lda);
    if (p.pack_b) {
        p.ncb = min64(N, arch->nc);
    } else {
        const int64_t cols = round_up(GEMM_INPLACE_L2_BYTES / ((int64_t)sizeof(float) * p.kcb), arch->nr);
        p.ncb = min64(N, cols > arch->nr ? cols : arch->nr);
    }
    plan_tasks(&p);

    /* Shared buffers come from this thread's scratch; per-thread A blocks from each thread's. */
    const int64_t nr = arch->nr;
    if (p.pack_b) {
        p.bpack = vs_scratch(VS_SCRATCH_GEMM_B, (size_t)(p.kcb * round_up(p.ncb, nr)) * sizeof(float));
        if (!p.bpack) goto fallback;
    } else if (N % nr != 0) {
        p.edge = vs_scratch(VS_SCRATCH_GEMM_EDGE, (size_t)(p.kcb * nr) * sizeof(float));
        if (!p.edge) goto fallback;
    }

    for (p.jc = 0; p.jc < N; p.jc += p.ncb) {
        p.nc = min64(p.ncb, N - p.jc);
        const int64_t slivers = ceil_div(p.nc, nr);
        for (p.pc = 0; p.pc < K; p.pc += p.kcb) {
            p.kc = min64(p.kcb, K - p.pc);
            p.beta = p.pc == 0 ? beta : 1.0f;
            if (p.pack_b) {
                run_range(&p, slivers, ceil_div(slivers, 4 * (int64_t)p.threads), pack_b_range);
            } else if (p.nc % nr != 0) {
                const int64_t j = (slivers - 1) * nr;
                pack_sliver(arch, p.edge, B + p.pc * p.rsb + p.jc + j, 1, p.rsb, p.nc - j, nr, p.kc);
            }
            run_range(&p, p.n_ib * p.n_js, 1, gemm_tasks);
        }
    }
    return;

fallback:
    if (p.bias) fill_bias(M, N, p.bias, C, ldc);
    vs_sgemm_ref(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, p.beta, C, ldc);
}

void vs_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
              int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    assert(M >= 0 && N >= 0 && K >= 0);
    assert(ldc >= N && lda >= (trans_a ? M : K) && ldb >= (trans_b ? K : N));
    if (M == 0 || N == 0) return;
    if (K == 0 || alpha == 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    if (!gemm_swapped(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, NULL, C, ldc))
        gemm_direct(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, NULL, C, ldc);
}

void vs_sgemm_bias(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc)
{
    assert(M >= 0 && N >= 0 && K >= 0);
    assert(ldc >= N && lda >= (trans_a ? M : K) && ldb >= (trans_b ? K : N));
    if (M == 0 || N == 0) return;
    if (K != 0 && alpha != 0 && gemm_swapped(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, 1.0f, bias, C, ldc))
        return;
    if (K == 0 || alpha == 0)
        fill_bias(M, N, bias, C, ldc);
    else
        gemm_direct(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, 1.0f, bias, C, ldc); /* swap ruled out above */
}
