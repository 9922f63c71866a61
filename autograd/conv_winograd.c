/* autograd/conv_winograd.c - Winograd convolution F(m x m, r x r) (Lavin & Gray 2016) for 2x2, 3x3,
 * 5x5 and 7x7 kernels: forward (and so stride-1 transposes, flipped) and weight gradient, at stride 1 or over
 * the s x s input phases of a stride-s conv whose kernel is s r (and its transpose onto dx's phases).
 *
 * Forward.  The output is cut into m x m tiles (the last ones hanging past the border are computed
 * and not stored); tile t reads the alpha x alpha input patch d_t (alpha = m + r - 1) at its corner.
 *   U[xi][c][o] = (G W(o,c) G^T)[xi]      once per call
 *   V[xi][t][c] = (B^T d_t(c) B)[xi]      per block of tiles
 *   M[xi][t][o] = sum_c V[xi][t][c] U[xi][c][o]     alpha^2 matrix products (vs_sgemm)
 *   y_t(o) = A^T M(o, t) A   (m x m), plus the bias or the previous y.
 * Weight gradient.  The roles swap, F(r x r, m x m): the gy tile g_t (m x m, zeros past the output)
 * is the filter and the same input patch the data,
 *   M[xi][o][c] = sum_t (G' g_t(o) G'^T)[xi] (B^T d_t(c) B)[xi]   K = every tile of the batch
 *   dw(o,c) = A'^T M(o,c) A'   (r x r), once at the end.
 * Dilation.  A conv with dilation d (stride 1) is d^2 undilated ones: the outputs i = I d + py, j = J d + px
 * of the phase (py, px) read only the input's rows R d + py - ph and columns likewise, so each phase is
 * cut into tiles of its own (tiles per image: d^2 th tw) whose reads and writes step by d.  Measured at
 * 1 thread (cpu clock): the sweep's 32x64x12x12 -> 32 k3 d2 (four phases of 4 x 4 outputs, one tile each)
 * forward 0.70 -> 0.36 ms, forward + backward 2.35 -> 1.66 ms against the direct kernels.
 * Phases.  A stride-s conv with a kernel of s r taps is the stride-1 r x r conv over the s^2 phases of
 * its input stacked as channels (conv_phases.h).  Here the channel (q, c), q = py s + px, of the patch
 * at stacked row R is read in place at row R s + py - ph of x (columns likewise): the tiles' reads step
 * by s, the weights' taps of phase q are (a s + py, b s + px), and the transpose (the input gradient)
 * is the flipped stride-1 conv of gy whose output channel (q, c) at stacked row R is written to dx's
 * row R s + py - ph.  No stacked copy is made.  A kernel s does not divide (5x5 or 7x7, stride 2) runs padded
 * with zero taps to s r (the weights' channels-last copy holds them): its weight gradient drops those
 * taps, and its transpose writes only the stacked rows each phase's own taps reach (a place only zero
 * taps reach would get the tile's rounding error alone instead of 0).
 * Stride 2 with 8 input channels or fewer packs the phases px = 0 and 1 into one vector: x is copied
 * with 8 channels a place, so the 16 floats at a place are both columns' (the products' depth 4 x 8, not
 * 4 x 16): 32x8x16x16 -> 64 k4 s2 forward 382 -> 240 us, weight gradient 450 -> 320 us (1 thread).
 *
 * The matrices come from Cook-Toom with alpha - 1 finite points p_j and the point at infinity.
 * E_k (alpha x k) evaluates a polynomial of k coefficients there: E_k[j][i] = p_j^i, and its
 * infinity row picks the leading coefficient, E_k[inf][i] = [i = k - 1].  A linear convolution of
 * sequences of m and r terms is c = E_alpha^-1 ((E_m h) . (E_r g)); the correlation y_i = sum_k
 * g_k d_{i+k} is its transpose in h, so y = E_m^T ((E_r g) . (E_alpha^-T d)).  Column j of E_alpha^-1
 * is the Lagrange polynomial prod_{l != j} (x - p_l) / f_j, f_j = prod_{l != j} (p_j - p_l), and
 * column inf is prod_l (x - p_l); the 1 / f_j move to G, which leaves B^T with integer rows:
 *   A = E_m,  G = diag(1 / f, 1) E_r,  B^T[j] = coefficients of prod_{l != j} (x - p_l),
 *   B^T[inf] = coefficients of prod_l (x - p_l);  for the weight gradient A' = E_r, G' = diag(1/f, 1) E_m.
 * Points: 0, 1, -1, 1/2, -2 (alpha 6 for both sizes: F(4x4, 3x3), F(2x2, 5x5); alpha 5 for 2x2 kernels,
 * F(4x4, 2x2), takes the first four); this set measured
 * 10-60% smaller errors than 0, +-1, +-2, and 0, +-1, +-1/2 failed the bar on 5x5 gradients.  The
 * matrices are written out below as exact rationals rounded once to float (the tests derive them).
 *
 * Error, the max over outputs of |y - y_exact| / sum |w x| (y_exact in double) on uniform random
 * data, measured by tests/test_conv_winograd.c (the bar there is 1e-5 per F):
 *   forward  F(2x2, 3x3) 2e-7, F(4x4, 3x3) 2.0-2.3e-6, F(2x2, 5x5) 3.6-4.4e-7, F(4x4, 5x5) 2e-5 (fails);
 *   weight gradient  F(3x3, 2x2) 1.4e-7, F(3x3, 4x4) 5.8-8.0e-7, F(5x5, 2x2) 3.8-5.7e-6, F(5x5, 4x4)
 *   1.2e-5 (fails) - the direct sums' is about 1e-7.  So alpha 6 for both: F(4x4, 3x3), F(2x2, 5x5).
 *   2x2: forward F(4x4, 2x2) 2.6-3.3e-6, weight gradient F(2x2, 4x4) 0.8-1.0e-6.  F(7x7, 2x2) (alpha 8,
 *   points 0, +-1, +-2, +-1/2: one tile for a k4 s2 conv's 7x7 outputs) was measured and left out: its
 *   weight gradient F(2x2, 7x7) had 3.0-4.5e-6 here but 1.4e-5 on a k6 s3 conv's nine phases, and was
 *   no faster (1.39 against 1.36 ms on WGAN-GP's conv: its products of depth 16 run at 81 GFLOP/s).
 *   4x4 kernels (a k7 s2 conv's phases, padded to 8x8) run F(3x3, 4x4) on the alpha-6 matrices: forward
 *   4.5e-7, weight gradient F(4x4, 3x3) 7-9.6e-7.
 *   7x7 kernels run F(2x2, 7x7) on those eight points (alpha 8; f = -1, -9/2, -9/2, 45/32, 90, 90,
 *   45/32): forward 7-9e-7; its weight gradient F(7x7, 2x2) had 1.07e-5 (fails), so a 7x7 weight
 *   gradient runs as four 4x4 ones (weight_grad_split).
 *
 * Transforms run on 16 lanes of channels (input and gy copied channels-last first, so a tile's
 * patch is whole vectors), unrolled with the matrices as constants; the products are vs_sgemm's, so
 * every ISA gains.  Blocks hold a fixed number of tiles (never derived from the thread count); with two
 * or more per thread each thread runs whole blocks, with fewer they run in order, each spread over the
 * threads by tiles (transforms), then by transformed point (products), then by tiles (outputs); every
 * output element is made by one block, whose sums run in a fixed order,
 * and the weight gradient adds the blocks' products in block order: results do not depend on the
 * thread count.  The weights are copied with the output channels last and transformed in place. */
#include "autograd/conv_winograd.h"

#include "autograd/conv_phases.h"
#include "autograd/gemm_kernel.h"
#include "autograd/kernels.h"
#include "versus/ops.h"
#include "versus/threads.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16
#define MAX_ALPHA 8
/* Tiles per block of the forward. */
#define BLOCK_TILES 64
/* The weight gradient's blocks: the depth of its products (it adds every block's into the same M). */
#define WGRAD_BLOCK_TILES 256

/* ---- the algorithm switch ---------------------------------------------------------------------- */

static atomic_int chosen = -1; /* vs_conv_algorithm, -1 until read from the environment */

static vs_conv_algorithm algorithm_from_env(void)
{
    const char *env = getenv("VERSUS_CONV");
    return env && strcmp(env, "direct") == 0 ? VS_CONV_DIRECT : VS_CONV_AUTO;
}

vs_conv_algorithm vs_conv_set_algorithm(vs_conv_algorithm a)
{
    vs_conv_algorithm now = a == VS_CONV_DIRECT ? VS_CONV_DIRECT : algorithm_from_env();
    atomic_store(&chosen, (int)now);
    return now;
}

/* Calls of this thread that must keep the direct kernels' rounding (vs_conv_winograd_hold). */
static _Thread_local int holds;

void vs_conv_winograd_hold(bool hold)
{
    holds += hold ? 1 : -1;
    assert(holds >= 0);
}

static vs_conv_algorithm conv_algorithm(void)
{
    if (holds > 0) return VS_CONV_DIRECT;
    int a = atomic_load(&chosen);
    if (a < 0) {
        a = (int)algorithm_from_env();
        atomic_store(&chosen, a);
    }
    return (vs_conv_algorithm)a;
}

/* ---- the matrices -------------------------------------------------------------------------------- */

/* Of n outputs on tiles of m, the share the tiles use. */
static double use_of(int64_t n, int64_t m) { return (double)n / (double)((n + m - 1) / m * m); }

/* 3x3 kernels run F(4x4, 3x3) (36 multiply-adds per 16 outputs) unless F(3x3, 3x3) (25 per 9) wastes
 * less where the tiles hang past the output: 9 x 9 or 6 x 6 outputs (used 0.56 on tiles of 4, 1 on 3). */
int vs_conv_winograd_tile(int r, int64_t oh, int64_t ow)
{
    if (r == 3 && oh > 0 && ow > 0)
        return 25.0 / 9 / (use_of(oh, 3) * use_of(ow, 3)) < 36.0 / 16 / (use_of(oh, 4) * use_of(ow, 4)) ? 3 : 4;
    return r == 2 || r == 3 ? 4 : r == 4 ? 3 : r == 5 || r == 7 ? 2 : 0;
}

/* alpha 6, points 0, 1, -1, 1/2, -2 and infinity (f = 1, 3, -3, -15/16, 15; tests/test_conv_winograd.c
 * derives them again from the points). */
static const float BT6[6 * 6] = {1, -3.0f / 2, -2, 3.0f / 2, 1, 0, 0, -1, 1.0f / 2, 5.0f / 2, 1, 0, 0, 1, -5.0f / 2, 1.0f / 2, 1, 0,
                                 0, -2, -1, 2, 1, 0, 0, 1.0f / 2, -1, -1.0f / 2, 1, 0, 0, 1, -3.0f / 2, -2, 3.0f / 2, 1};
/* A^T = E_k^T (k x 6): the forward's output transform for m = k, the weight gradient's final one for r = k */
static const float AT2[2 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, -2, 1};
static const float AT3[3 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, -2, 0, 0, 1, 1, 1.0f / 4, 4, 1};
static const float AT4[4 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, -2, 0, 0, 1, 1, 1.0f / 4, 4, 0, 0, 1, -1, 1.0f / 8, -8, 1};
static const float AT5[5 * 6] = {1, 1,  1, 1,         1, 0, 0, 1, -1, 1.0f / 2,  -2, 0, 0, 1, 1,
                                 1.0f / 4, 4, 0, 0, 1, -1, 1.0f / 8, -8, 0, 0, 1, 1, 1.0f / 16, 16, 1};
/* G = diag(1/f, 1) E_k (6 x k): the weight transform for r = k, the weight gradient's gy transform for m = k */
static const float G2[6 * 2] = {1, 0, 1.0f / 3, 1.0f / 3, -1.0f / 3, 1.0f / 3, -16.0f / 15, -8.0f / 15, 1.0f / 15, -2.0f / 15, 0, 1};
static const float G3[6 * 3] = {1,           0,          0,          1.0f / 3,  1.0f / 3,  1.0f / 3,
                                -1.0f / 3,   1.0f / 3,   -1.0f / 3,  -16.0f / 15, -8.0f / 15, -4.0f / 15,
                                1.0f / 15,   -2.0f / 15, 4.0f / 15,  0,          0,          1};
static const float G4[6 * 4] = {1,          0,          0,          0,          1.0f / 3,  1.0f / 3,   1.0f / 3,  1.0f / 3,
                                -1.0f / 3,  1.0f / 3,   -1.0f / 3,  1.0f / 3,   -16.0f / 15, -8.0f / 15, -4.0f / 15, -2.0f / 15,
                                1.0f / 15,  -2.0f / 15, 4.0f / 15,  -8.0f / 15, 0,          0,          0,          1};
static const float G5[6 * 5] = {1,           0,          0,          0,           0,          1.0f / 3,  1.0f / 3,  1.0f / 3,
                                1.0f / 3,    1.0f / 3,   -1.0f / 3,  1.0f / 3,    -1.0f / 3,  1.0f / 3,  -1.0f / 3, -16.0f / 15,
                                -8.0f / 15,  -4.0f / 15, -2.0f / 15, -1.0f / 15,  1.0f / 15,  -2.0f / 15, 4.0f / 15, -8.0f / 15,
                                16.0f / 15,  0,          0,          0,           0,          1};

/* alpha 5, the first four of those points, 0, 1, -1, 1/2, and infinity (f = 1/2, 1, -3, -3/8): F(4x4, 2x2)
 * and its weight gradient F(2x2, 4x4); F(3x3, 3x3) (its weight gradient the same F). */
static const float BT5[5 * 5] = {1.0f / 2, -1, -1.0f / 2, 1, 0, 0, -1.0f / 2, 1.0f / 2, 1, 0, 0, 1.0f / 2, -3.0f / 2, 1, 0,
                                 0, -1, 0, 1, 0, 0, 1.0f / 2, -1, -1.0f / 2, 1};
static const float AT2_5[2 * 5] = {1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, 1};
static const float AT4_5[4 * 5] = {1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, 0, 0, 1, 1, 1.0f / 4, 0, 0, 1, -1, 1.0f / 8, 1};
static const float AT3_5[3 * 5] = {1, 1, 1, 1, 0, 0, 1, -1, 1.0f / 2, 0, 0, 1, 1, 1.0f / 4, 1};
static const float G3_5[5 * 3] = {2, 0, 0, 1, 1, 1, -1.0f / 3, 1.0f / 3, -1.0f / 3, -8.0f / 3, -4.0f / 3, -2.0f / 3, 0, 0, 1};
static const float G2_5[5 * 2] = {2, 0, 1, 1, -1.0f / 3, 1.0f / 3, -8.0f / 3, -4.0f / 3, 0, 1};
static const float G4_5[5 * 4] = {2,          0,          0,          0,          1, 1, 1, 1, -1.0f / 3, 1.0f / 3,
                                  -1.0f / 3,  1.0f / 3,   -8.0f / 3,  -4.0f / 3,  -2.0f / 3, -1.0f / 3, 0, 0, 0, 1};

/* alpha 8, points 0, 1, -1, 1/2, -2, 2, -1/2 and infinity (f = -1, -9/2, -9/2, 45/32, 90, 90, 45/32):
 * F(2x2, 7x7) and its weight gradient F(7x7, 2x2). */
static const float BT8[8 * 8] = {
    -1, 0, 21.0f / 4, 0, -21.0f / 4, 0, 1, 0,
    0, 1, 1, -17.0f / 4, -17.0f / 4, 1, 1, 0,
    0, -1, 1, 17.0f / 4, -17.0f / 4, -1, 1, 0,
    0, 2, 4, -5.0f / 2, -5, 1.0f / 2, 1, 0,
    0, -1.0f / 2, 1.0f / 4, 5.0f / 2, -5.0f / 4, -2, 1, 0,
    0, 1.0f / 2, 1.0f / 4, -5.0f / 2, -5.0f / 4, 2, 1, 0,
    0, -2, 4, 5.0f / 2, -5, -1.0f / 2, 1, 0,
    0, -1, 0, 21.0f / 4, 0, -21.0f / 4, 0, 1};
static const float AT2_8[2 * 8] = {
    1, 1, 1, 1, 1, 1, 1, 0,
    0, 1, -1, 1.0f / 2, -2, 2, -1.0f / 2, 1};
static const float AT7_8[7 * 8] = {
    1, 1, 1, 1, 1, 1, 1, 0,
    0, 1, -1, 1.0f / 2, -2, 2, -1.0f / 2, 0,
    0, 1, 1, 1.0f / 4, 4, 4, 1.0f / 4, 0,
    0, 1, -1, 1.0f / 8, -8, 8, -1.0f / 8, 0,
    0, 1, 1, 1.0f / 16, 16, 16, 1.0f / 16, 0,
    0, 1, -1, 1.0f / 32, -32, 32, -1.0f / 32, 0,
    0, 1, 1, 1.0f / 64, 64, 64, 1.0f / 64, 1};
static const float G7_8[8 * 7] = {
    -1, 0, 0, 0, 0, 0, 0,
    -2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9,
    -2.0f / 9, 2.0f / 9, -2.0f / 9, 2.0f / 9, -2.0f / 9, 2.0f / 9, -2.0f / 9,
    32.0f / 45, 16.0f / 45, 8.0f / 45, 4.0f / 45, 2.0f / 45, 1.0f / 45, 1.0f / 90,
    1.0f / 90, -1.0f / 45, 2.0f / 45, -4.0f / 45, 8.0f / 45, -16.0f / 45, 32.0f / 45,
    1.0f / 90, 1.0f / 45, 2.0f / 45, 4.0f / 45, 8.0f / 45, 16.0f / 45, 32.0f / 45,
    32.0f / 45, -16.0f / 45, 8.0f / 45, -4.0f / 45, 2.0f / 45, -1.0f / 45, 1.0f / 90,
    0, 0, 0, 0, 0, 0, 1};
static const float G2_8[8 * 2] = {
    -1, 0, -2.0f / 9, -2.0f / 9, -2.0f / 9, 2.0f / 9, 32.0f / 45, 16.0f / 45,
    1.0f / 90, -1.0f / 45, 1.0f / 90, 1.0f / 45, 32.0f / 45, -16.0f / 45, 0, 1};

/* The F(m x m, r x r) the kernels run, 0 to 5 (-1: none). */
static int kind_index(int m, int r)
{
    static const int ms[6] = {4, 4, 3, 3, 2, 2}, rs[6] = {2, 3, 3, 4, 5, 7};
    for (int k = 0; k < 6; k++)
        if (ms[k] == m && rs[k] == r) return k;
    return -1;
}

/* The matrices of one F for tests: which 0 B^T, 1 A^T (m x alpha), 2 G (alpha x r), 3 G' (alpha x m), 4
 * A'^T (r x alpha) of F(m x m, r x r); NULL for other sizes. */
const float *vs_conv_winograd_matrix(int m, int r, int which)
{
    const int k = kind_index(m, r);
    if (k < 0 || which < 0 || which > 4) return NULL;
    const float *const ms[6][5] = {{BT5, AT4_5, G2_5, G4_5, AT2_5}, {BT6, AT4, G3, G4, AT3},   {BT5, AT3_5, G3_5, G3_5, AT3_5},
                                   {BT6, AT3, G4, G3, AT4},        {BT6, AT2, G5, G2, AT5}, {BT8, AT2_8, G7_8, G2_8, AT7_8}};
    return ms[k][which];
}

/* ---- transforms on 16 lanes ------------------------------------------------------------------------ */

/* Z = P X P^T on each lane, P a x p: X's element (i, k) is the 16 floats at X + i xr + k xc, Z's
 * element (k, l) those at Z + k zr + l zc.  The portable reference; zero entries of P are skipped. */
VS_VECTOR_CLONES512 static void xform_ref(int a, int p, const float *P, const float *restrict X, int64_t xr, int64_t xc,
                                          float *restrict Z, int64_t zr, int64_t zc)
{
    float T[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int i = 0; i < p; i++) /* T[i][l] = sum_k X[i][k] P[l][k] */
        for (int l = 0; l < a; l++) {
            float *restrict t = T + (i * a + l) * LANES;
            for (int v = 0; v < LANES; v++) t[v] = 0;
            for (int k = 0; k < p; k++) {
                const float s = P[l * p + k];
                if (s == 0) continue;
                const float *restrict x = X + i * xr + k * xc;
                for (int v = 0; v < LANES; v++) t[v] += s * x[v];
            }
        }
    for (int k = 0; k < a; k++) /* Z[k][l] = sum_i P[k][i] T[i][l] */
        for (int l = 0; l < a; l++) {
            float *restrict z = Z + k * zr + l * zc;
            for (int v = 0; v < LANES; v++) z[v] = 0;
            for (int i = 0; i < p; i++) {
                const float s = P[k * p + i];
                if (s == 0) continue;
                const float *restrict t = T + (i * a + l) * LANES;
                for (int v = 0; v < LANES; v++) z[v] += s * t[v];
            }
        }
}

/* One transform Z = P X P^T of a fixed P, strides as xform_ref's. */
typedef void (*xform_fn)(const float *X, int64_t xr, int64_t xc, float *Z, int64_t zr, int64_t zc);

#if defined(__GNUC__) && !defined(VS_NO_CLONES)
/* The same operations on 16-float vectors (GCC/Clang vector extension: one zmm under AVX-512, two ymm
 * under AVX2, four xmm otherwise), unrolled so that P's entries are constants: its zeros vanish, its
 * ones become an add (-1: a subtract), which gives the bits of s x + acc. */
typedef float v16 __attribute__((vector_size(LANES * sizeof(float))));

/* Under AddressSanitizer (our sanitizer builds turn on UBSan with it), the loops stay loops: GCC 12
 * spends ten minutes instrumenting the unrolled bodies, and the memory accesses checked are the same. */
#if defined(__SANITIZE_ADDRESS__)
#define UNROLL8
#else
#define UNROLL8 _Pragma("GCC unroll 8")
#endif

#define MULADD(acc, s, x) ((s) == 1 ? (acc) + (x) : (s) == -1 ? (acc) - (x) : (acc) + (s) * (x))

#define XFORM(NAME, A, PP, P)                                                                                \
    VS_VECTOR_CLONES512 __attribute__((aligned(64))) static void NAME(const float *restrict X, int64_t xr, int64_t xc, \
                                                                      float *restrict Z, int64_t zr, int64_t zc)      \
    {                                                                                                       \
        v16 t[PP * A];                                                                                      \
        UNROLL8 for (int i = 0; i < PP; i++)                                                \
        {                                                                                                   \
            v16 x[PP];                                                                                      \
            UNROLL8 for (int k = 0; k < PP; k++) memcpy(&x[k], X + i * xr + k * xc, sizeof(v16)); \
            UNROLL8 for (int l = 0; l < A; l++)                                             \
            {                                                                                               \
                v16 acc = {0};                                                                              \
                UNROLL8 for (int k = 0; k < PP; k++) if (P[l * PP + k] != 0) acc =          \
                    MULADD(acc, P[l * PP + k], x[k]);                                                       \
                t[i * A + l] = acc;                                                                         \
            }                                                                                               \
        }                                                                                                   \
        UNROLL8 for (int k = 0; k < A; k++)                                                 \
        UNROLL8 for (int l = 0; l < A; l++)                                                 \
        {                                                                                                   \
            v16 acc = {0};                                                                                  \
            UNROLL8 for (int i = 0; i < PP; i++) if (P[k * PP + i] != 0) acc =              \
                MULADD(acc, P[k * PP + i], t[i * A + l]);                                                   \
            memcpy(Z + k * zr + l * zc, &acc, sizeof(v16));                                                 \
        }                                                                                                   \
    }
#else
#define XFORM(NAME, A, PP, P) \
    static void NAME(const float *X, int64_t xr, int64_t xc, float *Z, int64_t zr, int64_t zc) \
    {                                                                                      \
        xform_ref(A, PP, P, X, xr, xc, Z, zr, zc);                                         \
    }
#endif
XFORM(xf_bt6, 6, 6, BT6) /* B^T d B */
XFORM(xf_at2, 2, 6, AT2) /* A^T M A, F(2x2, 5x5) */
XFORM(xf_at3, 3, 6, AT3) /* A^T M A, F(3x3, 4x4); 3x3's weight gradient's A'^T M A' */
XFORM(xf_at4, 4, 6, AT4) /* A^T M A, F(4x4, 3x3); 4x4's weight gradient's A'^T M A' */
XFORM(xf_at5, 5, 6, AT5) /* A'^T M A', F(5x5, 2x2) */
XFORM(xf_g2, 6, 2, G2)   /* G' g G'^T, F(5x5, 2x2) */
XFORM(xf_g3, 6, 3, G3)   /* G w G^T, F(4x4, 3x3); 4x4's weight gradient's G' g G'^T */
XFORM(xf_g4, 6, 4, G4)   /* G w G^T, F(3x3, 4x4); 3x3's weight gradient's G' g G'^T */
XFORM(xf_g5, 6, 5, G5)   /* G w G^T, F(2x2, 5x5) */
XFORM(xf_bt5, 5, 5, BT5)     /* B^T d B, F(4x4, 2x2) */
XFORM(xf_at4_5, 4, 5, AT4_5) /* A^T M A, F(4x4, 2x2) */
XFORM(xf_at2_5, 2, 5, AT2_5) /* A'^T M A', F(2x2, 4x4) */
XFORM(xf_g2_5, 5, 2, G2_5)   /* G w G^T, F(4x4, 2x2) */
XFORM(xf_g4_5, 5, 4, G4_5)   /* G' g G'^T, F(2x2, 4x4) */
XFORM(xf_at3_5, 3, 5, AT3_5) /* A^T M A and A'^T M A', F(3x3, 3x3) */
XFORM(xf_g3_5, 5, 3, G3_5)   /* G w G^T and G' g G'^T, F(3x3, 3x3) */
XFORM(xf_bt8, 8, 8, BT8)     /* B^T d B, F(2x2, 7x7) */
XFORM(xf_at2_8, 2, 8, AT2_8) /* A^T M A, F(2x2, 7x7) */
XFORM(xf_at7_8, 7, 8, AT7_8) /* A'^T M A', F(7x7, 2x2) */
XFORM(xf_g7_8, 8, 7, G7_8)   /* G w G^T, F(2x2, 7x7) */
XFORM(xf_g2_8, 8, 2, G2_8)   /* G' g G'^T, F(7x7, 2x2) */

/* The transforms of F(m x m, r x r): data (B^T d B), out (A^T M A), weight (G w G^T), and the weight
 * gradient's grad (G' g G'^T) and finish (A'^T M A'). */
typedef struct wino_kind {
    int m, r, alpha;
    xform_fn data, out, weight, grad, finish;
} wino_kind;

static const wino_kind F4_3 = {4, 3, 6, xf_bt6, xf_at4, xf_g3, xf_g4, xf_at3};
static const wino_kind F2_5 = {2, 5, 6, xf_bt6, xf_at2, xf_g5, xf_g2, xf_at5};
static const wino_kind F4_2 = {4, 2, 5, xf_bt5, xf_at4_5, xf_g2_5, xf_g4_5, xf_at2_5};
static const wino_kind F3_4 = {3, 4, 6, xf_bt6, xf_at3, xf_g4, xf_g3, xf_at4};
static const wino_kind F3_3 = {3, 3, 5, xf_bt5, xf_at3_5, xf_g3_5, xf_g3_5, xf_at3_5};
static const wino_kind F2_7 = {2, 7, 8, xf_bt8, xf_at2_8, xf_g7_8, xf_g2_8, xf_at7_8};

/* F(m x m, r x r) (a pair kind_index takes). */
static const wino_kind *kind_of(int m, int r)
{
    static const wino_kind *const kinds[6] = {&F4_2, &F4_3, &F3_3, &F3_4, &F2_5, &F2_7};
    return kinds[kind_index(m, r)];
}

void vs_conv_winograd_transform(int m, int r, int which, bool reference, const float *X, float *Z)
{
    const wino_kind *k = kind_of(m, r);
    const int a = k->alpha, rows[5] = {a, k->m, a, a, r}, cols[5] = {a, a, r, k->m, a};
    const xform_fn fn[5] = {k->data, k->out, k->weight, k->grad, k->finish};
    const int p = cols[which];
    if (reference)
        xform_ref(rows[which], p, vs_conv_winograd_matrix(m, r, which), X, p * LANES, LANES, Z, rows[which] * LANES, LANES);
    else
        fn[which](X, p * LANES, LANES, Z, rows[which] * LANES, LANES);
}

/* ---- geometry -------------------------------------------------------------------------------------- */

/* One side of the products - the input the tiles read, or the output they write - as it lies in a real
 * tensor copied channels last, [n][h][w][cl] (cl = ch rounded up to LANES).  With phases (s > 1, a
 * strided conv whose kernel s divides) the products' channel (q, c), q = py s + px, at their row R is
 * the tensor's channel c at row R s + py + oy; without (s = 1) row R is row R + oy.  Columns likewise. */
typedef struct wino_side {
    int64_t s, h, w, ch, cl, oy, ox;
    int64_t k;  /* the products' channels: ch (s = 1) or s^2 cl, with the padding channels of each phase */
    int64_t ld; /* the rows of V or M: s^2 cl */
    int64_t dl; /* a dilated conv's dilation (s = 1): a tile of the phase (py, px) reads and writes rows
                 * and columns dl apart, its row R at R dl + py (+ oy) */
} wino_side;

static int64_t round_lanes(int64_t k) { return (k + LANES - 1) / LANES * LANES; }

static wino_side side_of(int64_t s, int64_t h, int64_t w, int64_t ch, int64_t oy, int64_t ox)
{
    const int64_t cl = round_lanes(ch);
    return (wino_side){s, h, w, ch, cl, oy, ox, s == 1 ? ch : s * s * cl, s * s * cl, 1};
}

/* A stride-2 input side of 8 channels or fewer, packed: copied with 8 channels a place (cl = 8), so
 * that the 16 floats at a place are the phases px = 0 and 1 of its (py, .) - the products' channels
 * (q, c) and (q + 1, c) in one vector, and their depth 4 x 8 instead of 4 x 16. */
static wino_side side_packed(int64_t h, int64_t w, int64_t ch, int64_t oy, int64_t ox)
{
    return (wino_side){2, h, w, ch, LANES / 2, oy, ox, 2 * LANES, 2 * LANES, 1};
}

typedef struct wino_job {
    const vs_conv_fast *g;
    wino_kind t;
    int64_t toh, tow;      /* the products' output rows and columns (the stacked ones of a transpose) */
    int64_t dl;            /* dilation: tiles per image and dilation phase (py, px), dl^2 phases */
    int64_t th, tw, tiles; /* tile rows and columns per image (and phase), tiles of the batch */
    int64_t blocks, block; /* blocks of `block` tiles */
    wino_side in, out;     /* x (gy for a transpose) and y (dx); the weight gradient's gy is `out` */
    int64_t kw;            /* the weights' taps per row (g->kh) */
    int64_t kp;            /* r times the stride: kw, or past it when the stride does not divide kw (the
                            * taps from kw on are zeros) */
    bool flip;             /* the weights as [in][out][kw][kw], rotated (else [out][in][kw][kw]) */
    const float *x, *w, *bias, *gy;
    float *xt, *gyt;   /* the inputs channels last, zero-padded */
    float *yt;         /* the forward's output, channels last */
    int64_t t0, nt;    /* the current block: its first tile and its tiles */
    float *V, *Gt, *M; /* its transformed tiles and the products' sums */
    float *y, *u;
    float *wt; /* the weights with the output channels last (weights_channels_last) */
    bool accumulate;
    bool covered; /* a phased output: every place is written */
    int64_t fr, fc; /* a phased output's first stacked row and column */
    atomic_int failed; /* a thread ran out of memory for its block's scratch */
} wino_job;

/* The job's kernel and tiles: r taps per phase, outputs toh x tow, dilation dl (its phases' outputs
 * are toh / dl rows, rounded up). */
static void job_init(wino_job *j, const vs_conv_fast *g, int64_t r, int64_t toh, int64_t tow, int64_t dl)
{
    const int m = vs_conv_winograd_tile((int)r, (toh + dl - 1) / dl, (tow + dl - 1) / dl);
    j->g = g;
    j->t = *kind_of(m, (int)r);
    j->kw = g->kh;
    j->kp = r * (g->sh > 1 ? g->sh : 1);
    j->toh = toh, j->tow = tow;
    j->dl = dl;
    j->th = ((toh + dl - 1) / dl + m - 1) / m;
    j->tw = ((tow + dl - 1) / dl + m - 1) / m;
    j->tiles = g->n * dl * dl * j->th * j->tw;
}

/* The forward of g, strided (phases of the input) or not. */
static void job_forward(wino_job *j, const vs_conv_fast *g)
{
    const int64_t s = g->sh;
    job_init(j, g, (g->kh + s - 1) / s, g->oh, g->ow, g->dh);
    j->in = s == 2 && g->c <= LANES / 2 ? side_packed(g->h, g->w, g->c, g->y0 - g->ph, g->x0 - g->pw)
                                        : side_of(s, g->h, g->w, g->c, g->y0 - g->ph, g->x0 - g->pw);
    j->out = side_of(1, g->oh, g->ow, g->o, 0, 0);
    j->in.dl = j->out.dl = g->dh;
    j->flip = g->flip;
}

/* Cut the batch's tiles into blocks of `block` (the last one shorter). */
static void job_blocks(wino_job *j, int64_t block)
{
    j->block = block;
    j->blocks = (j->tiles + block - 1) / block;
}

/* Where a tile starts: image n, dilation phase (py, px), the phase's output row i0 and column j0. */
typedef struct wino_tile {
    int64_t n, py, px, i0, j0;
} wino_tile;

static wino_tile tile_at(const wino_job *j, int64_t t)
{
    const int64_t per = j->th * j->tw, rem = t % per;
    if (j->dl == 1) return (wino_tile){t / per, 0, 0, rem / j->tw * j->t.m, rem % j->tw * j->t.m};
    const int64_t ph = t / per % (j->dl * j->dl);
    return (wino_tile){t / per / (j->dl * j->dl), ph / j->dl, ph % j->dl, rem / j->tw * j->t.m, rem % j->tw * j->t.m};
}

/* Channels last: dst[n][i][c] = src[n][c][i] for i < plane, c < ch, zero for ch <= c < cl. */
typedef struct channels_last {
    const float *src;
    float *dst;
    int64_t ch, cl, plane;
} channels_last;

/* The (image, group of 16 channels) pairs [p0, p1). */
static void channels_last_images(void *ctx, int64_t p0, int64_t p1)
{
    const channels_last *q = ctx;
    const int64_t groups = q->cl / LANES;
    if (groups == 0) { /* packed (cl = 8): whole images */
        for (int64_t n = p0; n < p1; n++)
            for (int64_t i = 0; i < q->plane; i++)
                for (int64_t v = 0; v < q->cl; v++)
                    q->dst[(n * q->plane + i) * q->cl + v] = v < q->ch ? q->src[(n * q->ch + v) * q->plane + i] : 0;
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        const int64_t n = p / groups, c0 = p % groups * LANES;
        const int nv = q->ch - c0 < LANES ? (int)(q->ch - c0) : LANES;
        const float *s = q->src + (n * q->ch + c0) * q->plane;
        float *d = q->dst + n * q->plane * q->cl + c0;
        vs_transpose_floats(nv, q->plane, s, q->plane, d, q->cl); /* blocks transposed in registers */
        if (nv < LANES)
            for (int64_t i = 0; i < q->plane; i++) memset(d + i * q->cl + nv, 0, (size_t)(LANES - nv) * sizeof(float));
    }
}

/* The tensor of side d ([n][ch][h][w]) channels last into dst. */
static void to_channels_last(const float *src, float *dst, int64_t n, const wino_side *d)
{
    channels_last q = {src, dst, d->ch, d->cl, d->h * d->w};
    const int64_t pairs = n * (d->cl >= LANES ? d->cl / LANES : 1);
    /* a few planes' worth of copying per task */
    vs_parallel_for(pairs, q.plane >= 4096 ? 1 : 4096 / (q.plane > 0 ? q.plane : 1), channels_last_images, &q);
}

/* X[a][b] = the 16 channels c0.. of img (channels last, planes h x w, cl channels) at (r0 + a s, c0 + b s),
 * a, b < size; zero outside the plane.  Packed (cl = 8): their 8 and the next column's 8. */
VS_SHORT_COPIES static void gather(const float *img, int64_t h, int64_t w, int64_t cl, int64_t r0, int64_t col0, int64_t s,
                                   int size, float *restrict X)
{
    enum { HALF = LANES / 2 };
    for (int a = 0; a < size; a++) {
        const int64_t row = r0 + a * s;
        const bool in_rows = row >= 0 && row < h;
        for (int b = 0; b < size; b++) {
            const int64_t col = col0 + b * s;
            float *dst = X + (a * size + b) * LANES;
            if (cl >= LANES) {
                if (in_rows && col >= 0 && col < w)
                    memcpy(dst, img + (row * w + col) * cl, LANES * sizeof(float));
                else
                    memset(dst, 0, LANES * sizeof(float));
                continue;
            }
            for (int u = 0; u < 2; u++) /* packed: two columns' 8 */
                if (in_rows && col + u >= 0 && col + u < w)
                    memcpy(dst + u * HALF, img + (row * w + col + u) * cl, HALF * sizeof(float));
                else
                    memset(dst + u * HALF, 0, HALF * sizeof(float));
        }
    }
}

/* One tile's size x size patch of side d's image img at tile t, transformed by f on 16 channels at a
 * time into dst + the channel (the transformed points zr apart, rows of the block zs apart): each
 * phase's rows and columns s (or dl) apart, read in place when they lie inside the image, else
 * gathered with their zeros. */
static void patch_transform(xform_fn f, const wino_side *d, const float *img, const wino_tile *t, int size, float *dst,
                            int64_t zr, int64_t zs)
{
    float X[MAX_ALPHA * MAX_ALPHA * LANES];
    const int64_t s = d->s, step = s * d->dl, reach = (size - 1) * step;
    const int64_t pack = d->cl < LANES ? LANES / d->cl : 1; /* phases a vector holds: packed, px = 0 and 1 */
    for (int64_t q = 0; q < s * s; q += pack) {
        const int64_t r0 = t->i0 * step + q / s + t->py + d->oy, c0 = t->j0 * step + q % s + t->px + d->ox;
        const bool inside = r0 >= 0 && r0 + reach < d->h && c0 >= 0 && c0 + reach + pack - 1 < d->w;
        float *dq = dst + q * d->cl;
        for (int64_t ch = 0; ch < d->cl; ch += LANES) {
            if (inside) {
                f(img + (r0 * d->w + c0) * d->cl + ch, step * d->w * d->cl, step * d->cl, dq + ch, zr, zs);
            } else {
                gather(img + ch, d->h, d->w, d->cl, r0, c0, step, size, X);
                f(X, size * LANES, LANES, dq + ch, zr, zs);
            }
        }
    }
}

/* V[xi][k][c] = (B^T d_t(c) B)[xi] for the block's tiles t = t0 + k, k0 <= k < k1 (rows in.ld apart,
 * j->block per xi). */
static void input_transform(const wino_job *j, int64_t t0, int64_t k0, int64_t k1, float *V)
{
    const int64_t ld = j->in.ld, zs = j->block * ld;
    for (int64_t k = k0; k < k1; k++) {
        const wino_tile t = tile_at(j, t0 + k);
        patch_transform(j->t.data, &j->in, j->xt + t.n * j->in.h * j->in.w * j->in.cl, &t, j->t.alpha, V + k * ld, j->t.alpha * zs,
                        zs);
    }
}

/* ---- forward -------------------------------------------------------------------------------------- */

/* The weights with the output channels last, zero-padded to out.cl: wt[b][tap][o] = w[b][o][tap], b the
 * input channel (flipped: [in][out][kw][kw]), or wt[c][tap][o] = w[o][c][tap] (one block of in.ch kw^2
 * rows); with kp > kw each b's taps on a kp x kp grid, zeros past kw (copied channels last at wt's end,
 * in.ch kw^2 rows past its in.ch kp^2, then spread forward: a row never lands past where it is read). */
static void weights_channels_last(const wino_job *j, float *wt)
{
    const int64_t kw = j->kw, kp = j->kp, taps = kw * kw, cl = j->out.cl, padded = j->in.ch * kp * kp * cl;
    const wino_side d = {1, j->flip ? taps : j->in.ch * taps, 1, j->out.ch, cl, 0, 0, 0, 0, 1};
    float *raw = kp > kw ? wt + padded : wt;
    to_channels_last(j->w, raw, j->flip ? j->in.ch : 1, &d);
    if (kp == kw) return;
    for (int64_t b = 0; b < j->in.ch; b++)
        for (int64_t a = 0; a < kp; a++)
            for (int64_t e = 0; e < kp; e++) {
                float *dst = wt + ((b * kp + a) * kp + e) * cl;
                if (a < kw && e < kw)
                    memmove(dst, raw + ((b * kw + a) * kw + e) * cl, (size_t)cl * sizeof(float));
                else
                    memset(dst, 0, (size_t)cl * sizeof(float));
            }
}

/* U[xi][k][n] = (G W(n,k) G^T)[xi] for the products' input channels k in [k0, k1), 16 output channels n
 * at a time (rows out.k apart), from the weights channels last (j->wt).  W(n,k)'s taps (a, b) are the
 * weights' (a s + py, b s + px) of the phase (py, px) of k or n, rotated when flipped; the padding
 * channels of a phase get zeros. */
static void weight_transform(void *ctx, int64_t k0, int64_t k1)
{
    const wino_job *j = ctx;
    const wino_side *in = &j->in, *out = &j->out;
    const int64_t r = j->t.r, alpha = j->t.alpha, a2 = alpha * alpha, kw = j->kp, ocl = out->cl, K = in->k, N = out->k;
    const int64_t s = in->s > 1 ? in->s : out->s;
    float Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t k = k0; k < k1; k++) {
        const int64_t qi = in->s > 1 ? k / in->cl : 0, c = in->s > 1 ? k % in->cl : k;
        if (c >= in->ch) { /* a phase's padding channel */
            for (int64_t xi = 0; xi < a2; xi++) memset(j->u + (xi * K + k) * N, 0, (size_t)N * sizeof(float));
            continue;
        }
        for (int64_t n0 = 0; n0 < N; n0 += LANES) {
            const int64_t qo = out->s > 1 ? n0 / ocl : 0, o0 = out->s > 1 ? n0 % ocl : n0, q = in->s > 1 ? qi : qo;
            /* tap (a, b) of the 16 channels from o0: at X + a xr + b xc */
            int64_t xr = s * kw * ocl, xc = s * ocl;
            const float *X = j->wt + (c * kw * kw + q / s * kw + q % s) * ocl + o0;
            if (j->flip) X += (r - 1) * (xr + xc), xr = -xr, xc = -xc;
            const int64_t nw = N - n0 < LANES ? N - n0 : LANES; /* U's columns here */
            if (nw == LANES) { /* straight into U */
                j->t.weight(X, xr, xc, j->u + k * N + n0, alpha * K * N, K * N);
                continue;
            }
            j->t.weight(X, xr, xc, Z, alpha * LANES, LANES);
            for (int64_t xi = 0; xi < a2; xi++) memcpy(j->u + (xi * K + k) * N + n0, Z + xi * LANES, (size_t)nw * sizeof(float));
        }
    }
}

/* yt (out's tensor channels last) of the block's tiles from M[xi][k][n] (rows out.ld apart, j->block per
 * xi): A^T M A; whole tiles of an unphased output are written in place, the others through Z, their
 * places outside the products' outputs or the tensor dropped. */
static void output_transform(const wino_job *j, int64_t t0, int64_t k0, int64_t nt, const float *M)
{
    const wino_side *d = &j->out;
    const int m = j->t.m, alpha = j->t.alpha;
    const int64_t ld = d->ld, xc = j->block * ld, s = d->s, step = s * d->dl, kw = j->kw;
    float Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t k = k0; k < nt; k++) {
        const wino_tile t = tile_at(j, t0 + k);
        /* the products' outputs of this tile's phase past i0, j0 */
        const int64_t ri = (j->dl == 1 ? j->toh : (j->toh - t.py + j->dl - 1) / j->dl) - t.i0;
        const int64_t ci = (j->dl == 1 ? j->tow : (j->tow - t.px + j->dl - 1) / j->dl) - t.j0;
        const int rows = ri < m ? (int)ri : m, cols = ci < m ? (int)ci : m;
        float *img = j->yt + t.n * d->h * d->w * d->cl;
        for (int64_t q = 0; q < s * s; q++) {
            const int64_t r0 = t.i0 * step + q / s + t.py + d->oy, c0 = t.j0 * step + q % s + t.px + d->ox;
            /* a padded kernel's phase (py, px) has (kw - py) / s taps rounded up, and reaches the
             * stacked rows below oh plus them less one: places past those are its zero taps' alone */
            int rq = rows, cq = cols;
            if (j->kp > kw) {
                const int64_t re = j->g->oh + (kw - q / s + s - 1) / s - 1 - j->fr - t.i0;
                const int64_t ce = j->g->ow + (kw - q % s + s - 1) / s - 1 - j->fc - t.j0;
                rq = re < rq ? (int)re : rq, cq = ce < cq ? (int)ce : cq;
            }
            for (int64_t ch = 0; ch < d->cl; ch += LANES) {
                const float *src = M + k * ld + q * d->cl + ch;
                if (s == 1 && rows == m && cols == m) {
                    j->t.out(src, alpha * xc, xc, img + (r0 * d->w + c0) * d->cl + ch, step * d->w * d->cl, step * d->cl);
                    continue;
                }
                j->t.out(src, alpha * xc, xc, Z, m * LANES, LANES);
                for (int a = 0; a < rq; a++) {
                    const int64_t y = r0 + a * step;
                    if (y < 0 || y >= d->h) continue;
                    for (int b = 0; b < cq; b++) {
                        const int64_t x = c0 + b * step;
                        if (x >= 0 && x < d->w)
                            memcpy(img + (y * d->w + x) * d->cl + ch, Z + (a * m + b) * LANES, LANES * sizeof(float));
                    }
                }
            }
        }
    }
}

/* y of images [n0, n1) from yt: y = (accumulate ? y : bias, or 0) + yt moved channels first. */
static void output_images(void *ctx, int64_t n0, int64_t n1)
{
    const wino_job *j = ctx;
    const wino_side *o = &j->out;
    const int64_t plane = o->h * o->w, op = o->cl;
    for (int64_t n = n0; n < n1; n++) {
        const float *s = j->yt + n * plane * op;
        float *d = j->y + n * o->ch * plane;
        if (j->accumulate) {
            for (int64_t c = 0; c < o->ch; c++)
                for (int64_t i = 0; i < plane; i++) d[c * plane + i] += s[i * op + c];
            continue;
        }
        vs_transpose_floats(plane, o->ch, s, op, d, plane);
        if (j->bias)
            for (int64_t c = 0; c < o->ch; c++) {
                const float b = j->bias[c];
                for (int64_t i = 0; i < plane; i++) d[c * plane + i] = b + d[c * plane + i];
            }
    }
}

/* The forward's block at j->t0 (j->nt tiles): its tiles' transforms, its products per transformed point, its
 * outputs. */
static void fwd_tiles(void *ctx, int64_t k0, int64_t k1)
{
    const wino_job *j = ctx;
    input_transform(j, j->t0, k0, k1, j->V);
}

/* M[xi] = V[xi] U[xi] for the transformed points [x0, x1) of a block of nt tiles. */
static void block_products(const wino_job *j, int64_t nt, const float *V, float *M, int64_t x0, int64_t x1)
{
    for (int64_t xi = x0; xi < x1; xi++)
        vs_sgemm(false, false, nt, j->out.k, j->in.k, 1.0f, V + xi * j->block * j->in.ld, j->in.ld, j->u + xi * j->in.k * j->out.k,
                 j->out.k, 0.0f, M + xi * j->block * j->out.ld, j->out.ld);
}

static void fwd_products(void *ctx, int64_t x0, int64_t x1)
{
    const wino_job *j = ctx;
    block_products(j, j->nt, j->V, j->M, x0, x1);
}

static void fwd_outputs(void *ctx, int64_t k0, int64_t k1)
{
    const wino_job *j = ctx;
    output_transform(j, j->t0, k0, k1, j->M);
}

/* Whole blocks [b0, b1) on this thread, in its own scratch: transforms, products, outputs. */
static void fwd_whole_blocks(void *ctx, int64_t b0, int64_t b1)
{
    wino_job *j = ctx;
    const int64_t a2 = j->t.alpha * j->t.alpha;
    void *owned;
    float *V = vs_scratch_or_own(VS_SCRATCH_WINO, (size_t)(a2 * (j->in.ld + j->out.ld) * j->block) * sizeof(float), &owned);
    if (!V) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *M = V + a2 * j->in.ld * j->block;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t t0 = b * j->block, nt = j->tiles - t0 < j->block ? j->tiles - t0 : j->block;
        input_transform(j, t0, 0, nt, V);
        block_products(j, nt, V, M, 0, a2);
        output_transform(j, t0, 0, nt, M);
    }
    free(owned);
}

/* Run the job's products on x (the in side's tensor) into y (the out side's). */
static bool forward_run(wino_job *j, const float *x, const float *w, const float *bias, bool accumulate, float *y)
{
    const vs_conv_fast *g = j->g;
    job_blocks(j, BLOCK_TILES);
    j->x = x, j->w = w, j->bias = bias, j->y = y, j->accumulate = accumulate;
    const int64_t a2 = j->t.alpha * j->t.alpha, nu = a2 * j->in.k * j->out.k;
    const int64_t nx = g->n * j->in.h * j->in.w * j->in.cl, ny = g->n * j->out.h * j->out.w * j->out.cl;
    const int64_t nwt = j->in.ch * (j->kp * j->kp + (j->kp > j->kw ? j->kw * j->kw : 0)) * j->out.cl;
    void *owned_u, *owned_x;
    j->u = vs_scratch_or_own(VS_SCRATCH_WINO_U, (size_t)nu * sizeof(float), &owned_u);
    j->xt = j->u ? vs_scratch_or_own(VS_SCRATCH_WINO_X, (size_t)(nx + ny + nwt) * sizeof(float), &owned_x) : NULL;
    if (!j->xt) {
        free(owned_u);
        return false;
    }
    j->yt = j->xt + nx;
    j->wt = j->yt + ny;
    weights_channels_last(j, j->wt);
    /* a phased output's places that no tap reaches (and so no tile writes) stay 0 */
    if (j->out.s > 1 && !j->covered) memset(j->yt, 0, (size_t)ny * sizeof(float));
    vs_parallel_for(j->in.k, 8, weight_transform, j);
    to_channels_last(x, j->xt, g->n, &j->in);
    /* Every block is the same operations whichever way it runs, so the choice keeps the bits: with
     * two blocks or more per thread each thread runs whole blocks (CEM's 5x5 conv, 49 blocks: three
     * barriers per block cost 20% at 2 threads); with fewer (WGAN-GP's critic: 1 block) the blocks
     * run in order, each spread over the threads by tiles, by transformed point, by tiles. */
    bool ok = true;
    if (j->blocks >= 2 * (int64_t)vs_get_threads()) {
        atomic_store(&j->failed, 0);
        vs_parallel_for(j->blocks, 1, fwd_whole_blocks, j);
        ok = !atomic_load(&j->failed);
    } else {
        void *owned_v;
        j->V = vs_scratch_or_own(VS_SCRATCH_WINO, (size_t)(a2 * (j->in.ld + j->out.ld) * j->block) * sizeof(float), &owned_v);
        ok = j->V != NULL;
        if (ok) {
            j->M = j->V + a2 * j->in.ld * j->block;
            for (int64_t b = 0; b < j->blocks; b++) {
                j->t0 = b * j->block;
                j->nt = j->tiles - j->t0 < j->block ? j->tiles - j->t0 : j->block;
                vs_parallel_for(j->nt, 4, fwd_tiles, j);
                vs_parallel_for(a2, 1, fwd_products, j);
                vs_parallel_for(j->nt, 4, fwd_outputs, j);
            }
        }
        free(owned_v);
    }
    if (ok) vs_parallel_for(g->n, 1, output_images, j);
    free(owned_x);
    free(owned_u);
    return ok;
}

bool vs_conv_winograd_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                              float *y)
{
    wino_job j = {0};
    job_forward(&j, g);
    return forward_run(&j, x, w, bias, accumulate, y);
}

bool vs_conv_winograd_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx)
{
    const int64_t s = g->sh, r = (g->kh + s - 1) / s;
    int64_t fr, er, fc, ec;
    vs_conv_phases_span(g->h, r, s, g->ph, g->oh, &fr, &er);
    vs_conv_phases_span(g->w, r, s, g->pw, g->ow, &fc, &ec);
    wino_job j = {0};
    job_init(&j, g, r, er - fr, ec - fc, 1);
    /* the flipped stride-1 conv of gy (padding r - 1) onto the stacked rows from fr, dealt to dx's places */
    j.in = side_of(1, g->oh, g->ow, g->o, fr - (r - 1), fc - (r - 1));
    j.out = side_of(s, g->h, g->w, g->c, fr * s - g->ph, fc * s - g->pw);
    j.flip = true;
    /* dx's row y is the stacked row (y + ph) / s of its phase: written unless past the taps' rows */
    j.covered = (g->h - 1 + g->ph) / s < g->oh + r - 1 && (g->w - 1 + g->pw) / s < g->ow + r - 1 && j.kp == j.kw;
    j.fr = fr, j.fc = fc;
    if (j.tiles == 0) {
        for (int64_t nc = 0; nc < g->n * g->c; nc++)
            for (int64_t i = 0; i < g->h * g->w; i++) dx[nc * g->h * g->w + i] = bias ? bias[nc % g->c] : 0.0f;
        return true;
    }
    return forward_run(&j, gy, w, bias, false, dx);
}

/* ---- weight gradient ------------------------------------------------------------------------------ */

/* Gt[xi][k][o] = (G' g_t(o) G'^T)[xi] for the block's tiles t0 + k, k0 <= k < k1 (rows out.ld apart, j->block
 * per xi). */
static void grad_transform(const wino_job *j, int64_t t0, int64_t k0, int64_t k1, float *Gt)
{
    const wino_side *d = &j->out;
    const int64_t zs = j->block * d->ld;
    for (int64_t k = k0; k < k1; k++) {
        const wino_tile t = tile_at(j, t0 + k);
        patch_transform(j->t.grad, d, j->gyt + t.n * d->h * d->w * d->cl, &t, j->t.m, Gt + k * d->ld, j->t.alpha * zs, zs);
    }
}

/* The taps a < r of phase p whose a s + p lies in a kernel of kw. */
static int64_t taps_of(int64_t kw, int64_t p, int64_t s, int64_t r)
{
    const int64_t t = (kw - p + s - 1) / s;
    return t < r ? t : r;
}

/* dw(o,c) = A'^T M(o,c) A' (dw is j->y) for output channels [o0, o1), 16 of the products' input channels
 * at a time, dealt to their phase's taps. */
static void weight_grad_finish(void *ctx, int64_t o0, int64_t o1)
{
    const wino_job *j = ctx;
    const wino_side *in = &j->in;
    const float *M = j->M;
    float *dw = j->y;
    const int64_t r = j->t.r, alpha = j->t.alpha, a2 = alpha * alpha, s = in->s, kw = j->kw, K = in->k, O = j->out.ch;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t o = o0; o < o1; o++)
        for (int64_t k0 = 0; k0 < K; k0 += LANES) {
            /* lane v is the products' channel k0 + v: (q, c) with phases (q a packed pair's two), c alone without */
            const int64_t q0 = s > 1 ? k0 / in->cl : 0, c0 = s > 1 ? k0 % in->cl : k0;
            if (c0 >= in->ch) continue; /* a phase's padding channels */
            const int nv = K - k0 < LANES ? (int)(K - k0) : LANES;
            if (nv == LANES) {
                j->t.finish(M + o * K + k0, alpha * O * K, O * K, Z, r * LANES, LANES);
            } else {
                for (int64_t xi = 0; xi < a2; xi++)
                    for (int v = 0; v < LANES; v++) X[xi * LANES + v] = v < nv ? M[(xi * O + o) * K + k0 + v] : 0;
                j->t.finish(X, alpha * LANES, LANES, Z, r * LANES, LANES);
            }
            /* the phase (py, px) of the lanes; with phases cl is 8 (packed: lanes from 8 on are the next
             * phase's, px + 1, q0 being even) or a multiple of 16.  A padded kernel's taps past kw are
             * dropped: ra rows, rb[next] columns. */
            const int64_t py = q0 / s, px = q0 % s, ra = taps_of(kw, py, s, r);
            const int64_t rb[2] = {taps_of(kw, px, s, r), taps_of(kw, px + 1, s, r)};
            for (int v = 0; v < nv; v++) {
                const int next = s > 1 && c0 + v >= in->cl;
                const int64_t c = next ? c0 + v - in->cl : c0 + v;
                if (c >= in->ch) continue;
                float *d = dw + ((o * in->ch) + c) * kw * kw + py * kw + px + next;
                for (int64_t a = 0; a < ra; a++)
                    for (int64_t e = 0; e < rb[next]; e++) d[(a * kw + e) * s] = Z[(a * r + e) * LANES + v];
            }
        }
}

/* One block of the weight gradient: the transforms of tiles [k0, k1) of the block at j->t0. */
static void wgrad_tiles(void *ctx, int64_t k0, int64_t k1)
{
    const wino_job *j = ctx;
    input_transform(j, j->t0, k0, k1, j->V);
    grad_transform(j, j->t0, k0, k1, j->Gt);
}

/* M[xi] (+)= Gt[xi]^T V[xi] for xi in [x0, x1): the block's depth nt added to the earlier blocks'. */
static void wgrad_products(void *ctx, int64_t x0, int64_t x1)
{
    const wino_job *j = ctx;
    const int64_t O = j->out.ch, K = j->in.k;
    for (int64_t xi = x0; xi < x1; xi++)
        vs_sgemm(true, false, O, K, j->nt, 1.0f, j->Gt + xi * j->block * j->out.ld, j->out.ld, j->V + xi * j->block * j->in.ld,
                 j->in.ld, j->t0 == 0 ? 0.0f : 1.0f, j->M + xi * O * K, K);
}

static bool weight_grad_split(const vs_conv_fast *g, const float *x, const float *gy, float *dw);

bool vs_conv_winograd_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
    if (g->kh == 7 && g->sh == 1) return weight_grad_split(g, x, gy, dw); /* a k7 s2's phases are 4x4 */
    wino_job j = {0};
    job_forward(&j, g);
    job_blocks(&j, WGRAD_BLOCK_TILES);
    j.x = x, j.gy = gy;
    const int64_t a2 = j.t.alpha * j.t.alpha, nm = a2 * g->o * j.in.k;
    const int64_t nx = g->n * j.in.h * j.in.w * j.in.cl, ngy = g->n * g->oh * g->ow * j.out.cl;
    void *owned_m, *owned_v, *owned_x;
    j.M = vs_scratch_or_own(VS_SCRATCH_WINO_U, (size_t)nm * sizeof(float), &owned_m);
    j.V = j.M ? vs_scratch_or_own(VS_SCRATCH_WINO, (size_t)(a2 * (j.in.ld + j.out.ld) * j.block) * sizeof(float), &owned_v) : NULL;
    j.xt = j.V ? vs_scratch_or_own(VS_SCRATCH_WINO_X, (size_t)(nx + ngy) * sizeof(float), &owned_x) : NULL;
    if (!j.xt) {
        if (j.V) free(owned_v);
        free(owned_m);
        return false;
    }
    j.gyt = j.xt + nx;
    to_channels_last(x, j.xt, g->n, &j.in);
    to_channels_last(gy, j.gyt, g->n, &j.out);
    j.Gt = j.V + a2 * j.in.ld * j.block;
    if (j.blocks == 0) memset(j.M, 0, (size_t)nm * sizeof(float));
    /* the blocks in order, each spread over the threads by tiles, then by transformed point */
    for (int64_t b = 0; b < j.blocks; b++) {
        j.t0 = b * j.block;
        j.nt = j.tiles - j.t0 < j.block ? j.tiles - j.t0 : j.block;
        vs_parallel_for(j.nt, LANES, wgrad_tiles, &j);
        vs_parallel_for(a2, 1, wgrad_products, &j);
    }
    j.y = dw;
    vs_parallel_for(g->o, 4, weight_grad_finish, &j);
    free(owned_x);
    free(owned_v);
    free(owned_m);
    return true;
}

/* ---- dispatch -------------------------------------------------------------------------------------- */

/* When Winograd beats the direct kernels (measured per op at 1 thread, forward / transpose / weight
 * gradient; the measurements are in bench/results/perf.md, "Winograd dispatch"):
 * - 3x3 and 2x2/4x4 (under the 3x3 rule): 16+ channels each side and 64+ together, tiles used >= 65%
 *   (tiles hanging past the output cost as much as full ones);
 * - 5x5: 24+ channels each side, tiles used >= 85%;
 * - 7x7, F(2x2, 7x7): 32+ output channels, used x inside (the taps' share inside the input) >= 0.65 with
 *   32+ input channels, else >= 0.88; the weight gradient as four 4x4 parts with 32+ input channels;
 * - 3x3 on F(3x3, 3x3) (9 x 9 or 5 x 5 outputs): used x inside >= 0.65;
 * - full-width AVX-512 cores (Zen 5: direct kernels twice as fast per cycle, Winograd's copies much less
 *   so): a 3x3 forward needs 32 output channels, a 5x5 one c o > 16 (c + o) (copies and transforms cost
 *   c + o per tile, savings c o), 3x3/5x5 weight gradients 64 input channels, 7x7 32 input channels. */
/* The share of a conv's taps (output, tap) that land inside the input, one dim: len input places,
 * n outputs, offset off (the first output's first tap), dilation d. */
static double inside_share(int64_t len, int64_t n, int64_t k, int64_t off, int64_t d)
{
    int64_t in = 0;
    for (int64_t t = 0; t < k; t++) {
        int64_t lo, hi;
        vs_conv_reach(n, 1, off + t * d, len, &lo, &hi);
        in += hi - lo;
    }
    return (double)in / (double)(n * k);
}

bool vs_conv_winograd_fits(const vs_conv_fast *g)
{
    if (conv_algorithm() != VS_CONV_AUTO) return false;
    if (g->sh != 1 || g->sw != 1 || g->dh != g->dw || g->dh < 1 || g->kh != g->kw) return false;
    const int64_t d = g->dh, min_ch = g->kh == 5 ? 24 : 16;
    const int64_t m = vs_conv_winograd_tile((int)g->kh, (g->oh + d - 1) / d, (g->ow + d - 1) / d);
    if (m == 0 || g->n * g->oh * g->ow == 0 || g->c < min_ch || g->o < min_ch || g->c + g->o < 64) return false;
    /* a dilated conv's tiles cover each of its d^2 phases (outputs i = I d + py) */
    const int64_t th = ((g->oh + d - 1) / d + m - 1) / m, tw = ((g->ow + d - 1) / d + m - 1) / m;
    const double used = (double)(g->oh * g->ow) / (double)(d * d * th * tw * m * m);
    const double inside = inside_share(g->h, g->oh, g->kh, g->y0 - g->ph, d) * inside_share(g->w, g->ow, g->kh, g->x0 - g->pw, d);
    /* on full-width AVX-512 cores the direct kernels (48-channel tiles, loads weighed) beat it on fewer
     * channels than on Zen 4: see the dispatch notes above */
    const bool full_width = vs_avx512_full_width();
    if (full_width && ((g->kh == 3 && g->o < 32) || (g->kh == 5 && g->c * g->o <= 16 * (g->c + g->o)))) return false;
    if (g->kh == 7) return g->o >= 32 && (g->c >= 32 || !full_width) && used * inside >= (g->c >= 32 ? 0.65 : 0.88);
    if (g->kh == 3 && m == 3) return used * inside >= 0.65;
    return used >= (g->kh == 5 ? 0.85 : 0.65);
}

/* A 7x7 weight gradient as four 4x4 ones, F(4x4, 3x3), of the taps from (a0, b0) in {0, 4}^2 (the
 * input shifted by them: padding less a0, b0), each a weight gradient of its own; the taps past 7 are
 * dropped.  F(7x7, 2x2) would take one pass but misses the error bar (1.07e-5 of sum |w x|); the split
 * runs 4 x 16 = 64 taps' worth at 36 multiply-adds per 9 outputs against the direct kernels' 49 taps. */
static bool weight_grad_split(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
    const int64_t oc = g->o * g->c;
    float *sub = malloc((size_t)oc * 16 * sizeof(float));
    if (!sub) return false;
    for (int64_t a0 = 0; a0 < 7; a0 += 4)
        for (int64_t b0 = 0; b0 < 7; b0 += 4) {
            vs_conv_fast f = *g;
            f.kh = f.kw = 4, f.ph = g->ph - a0, f.pw = g->pw - b0;
            if (!vs_conv_winograd_weight_grad(&f, x, gy, sub)) {
                free(sub);
                return false;
            }
            for (int64_t k = 0; k < oc; k++)
                for (int64_t a = 0; a < 4 && a0 + a < 7; a++)
                    for (int64_t b = 0; b < 4 && b0 + b < 7; b++) dw[(k * 7 + a0 + a) * 7 + b0 + b] = sub[(k * 4 + a) * 4 + b];
        }
    free(sub);
    return true;
}

/* A 7x7 weight gradient runs split (weight_grad_split) where its 4x4 parts fit and 32 input channels or
 * more fill the products (1 thread against the direct kernels: 16x32x22x22 -> 96 p0 1.31x, 8x32x28x28 ->
 * 64 p3 1.07x; with 16 channels 0.62-0.75x). */
bool vs_conv_winograd_weight_grad_fits(const vs_conv_fast *g)
{
    /* full-width AVX-512 cores: 3x3 and 5x5 weight gradients need 64 input channels (notes above) */
    if ((g->kh == 3 || g->kh == 5) && g->c < 64 && vs_avx512_full_width())
        return false;
    if (g->kh != 7) return vs_conv_winograd_fits(g);
    vs_conv_fast f = *g;
    f.kh = f.kw = 4;
    return g->dh == 1 && g->c >= 32 && vs_conv_winograd_fits(&f);
}
