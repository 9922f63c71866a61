/* autograd/conv_winograd.c - Winograd convolution F(m x m, r x r) (Lavin & Gray 2016) for stride-1
 * 3x3 and 5x5 kernels: forward (and so stride-1 transposes, flipped) and weight gradient.
 *
 * Forward.  The output is cut into m x m tiles (the last ones hanging past the border are computed
 * and not stored); tile t reads the alpha x alpha input patch d_t (alpha = m + r - 1) at its corner.
 *   U[xi][o][c] = (G W(o,c) G^T)[xi]      once per call
 *   V[xi][c][t] = (B^T d_t(c) B)[xi]      per block of tiles
 *   M[xi][o][t] = sum_c U[xi][o][c] V[xi][c][t]     alpha^2 matrix products (vs_sgemm)
 *   y_t(o) = A^T M(o, t) A   (m x m), plus the bias or the previous y.
 * Weight gradient.  The roles swap, F(r x r, m x m): the gy tile g_t (m x m, zeros past the output)
 * is the filter and the same input patch the data,
 *   M[xi][o][c] = sum_t (G' g_t(o) G'^T)[xi] (B^T d_t(c) B)[xi]   K = every tile of the batch
 *   dw(o,c) = A'^T M(o,c) A'   (r x r), once at the end.
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
 * Points: 0, 1, -1, 1/2, -2, 2, -1/2, the first alpha - 1 of them (for alpha 6 this set measured
 * 10-60% smaller errors than 0, +-1, +-2 and 0, +-1, +-1/2, which fails the bar on 5x5 gradients).  The entries are computed in double
 * (exact: small integers and halves, one division for G) and rounded once to float.
 *
 * Error, the max over outputs of |y - y_exact| / sum |w x| (y_exact in double) on uniform random
 * data, measured by tests/test_conv_winograd.c (the bar there is 1e-5 per F):
 *   forward  F(2x2, 3x3) 2e-7, F(4x4, 3x3) 2.0-2.3e-6, F(2x2, 5x5) 3.6-4.4e-7, F(4x4, 5x5) 2e-5 (fails);
 *   weight gradient  F(3x3, 2x2) 1.4e-7, F(3x3, 4x4) 5.8-8.0e-7, F(5x5, 2x2) 3.8-5.7e-6, F(5x5, 4x4)
 *   1.2e-5 (fails) - the direct sums' is about 1e-7.  So alpha 6 for both: F(4x4, 3x3), F(2x2, 5x5).
 *
 * Transforms run on 16 lanes (16 tiles, or 16 channels for the weights) in flat loops the compiler
 * vectorises (VS_VECTOR_CLONES512); the products are vs_sgemm's, so every ISA gains.  Blocks hold a
 * fixed number of tiles (never derived from the thread count); every output element is made by one
 * block, whose sums run in a fixed order: results do not depend on the thread count. */
#include "autograd/conv_winograd.h"

#include "autograd/kernels.h"
#include "versus/ops.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16
#define MAX_ALPHA 8
/* Tiles per block: a multiple of LANES (and of every ISA's GEMM tile width). */
#define BLOCK_TILES 64

typedef struct wino_mats {
    int m, r, alpha;
    float at[MAX_ALPHA * MAX_ALPHA];  /* A^T, m x alpha */
    float g[MAX_ALPHA * MAX_ALPHA];   /* G, alpha x r */
    float bt[MAX_ALPHA * MAX_ALPHA];  /* B^T, alpha x alpha */
    float gm[MAX_ALPHA * MAX_ALPHA];  /* G', alpha x m */
    float art[MAX_ALPHA * MAX_ALPHA]; /* A'^T, r x alpha */
} wino_mats;

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

static vs_conv_algorithm conv_algorithm(void)
{
    int a = atomic_load(&chosen);
    if (a < 0) {
        a = (int)algorithm_from_env();
        atomic_store(&chosen, a);
    }
    return (vs_conv_algorithm)a;
}

/* ---- the matrices -------------------------------------------------------------------------------- */

int vs_conv_winograd_tile(int r) { return r == 3 ? 4 : r == 5 ? 2 : 0; }

static const double POINTS[MAX_ALPHA - 1] = {0, 1, -1, 0.5, -2, 2, -0.5};

/* E_k[j][i] (see the file comment); j = alpha - 1 is the point at infinity. */
static double eval_at(int alpha, int j, int i, int k)
{
    if (j == alpha - 1) return i == k - 1;
    double v = 1;
    for (int e = 0; e < i; e++) v *= POINTS[j];
    return v;
}

/* coefficients (x^0 first, alpha of them) of prod_{l finite, l != skip} (x - p_l) */
static void poly_without(int alpha, int skip, double *coef)
{
    for (int s = 0; s < alpha; s++) coef[s] = s == 0;
    for (int l = 0; l < alpha - 1; l++) {
        if (l == skip) continue;
        for (int s = alpha - 1; s >= 0; s--) coef[s] = (s > 0 ? coef[s - 1] : 0) - POINTS[l] * coef[s];
    }
}

static void mats_of(int m, int r, wino_mats *t)
{
    const int alpha = m + r - 1;
    t->m = m, t->r = r, t->alpha = alpha;
    for (int j = 0; j < alpha; j++) {
        double f = 1, coef[MAX_ALPHA];
        if (j < alpha - 1)
            for (int l = 0; l < alpha - 1; l++)
                if (l != j) f *= POINTS[j] - POINTS[l];
        for (int i = 0; i < m; i++) {
            t->at[i * alpha + j] = (float)eval_at(alpha, j, i, m);
            t->gm[j * m + i] = (float)(eval_at(alpha, j, i, m) / f);
        }
        for (int k = 0; k < r; k++) {
            t->g[j * r + k] = (float)(eval_at(alpha, j, k, r) / f);
            t->art[k * alpha + j] = (float)eval_at(alpha, j, k, r);
        }
        poly_without(alpha, j, coef);
        for (int s = 0; s < alpha; s++) t->bt[j * alpha + s] = (float)coef[s];
    }
}

/* ---- transforms on 16 lanes ------------------------------------------------------------------------ */

/* Z = P X P^T on each lane, P a x p, X [p][p][LANES], Z [a][a][LANES]; T [p][a][LANES] scratch: the
 * portable reference.  Zero entries of P are skipped (B^T is a third zeros). */
VS_VECTOR_CLONES512 static void xform_ref(int a, int p, const float *P, const float *restrict X, float *restrict T,
                                          float *restrict Z)
{
    for (int i = 0; i < p; i++) /* T[i][l] = sum_j X[i][j] P[l][j] */
        for (int l = 0; l < a; l++) {
            float *restrict t = T + (i * a + l) * LANES;
            for (int v = 0; v < LANES; v++) t[v] = 0;
            for (int k = 0; k < p; k++) {
                const float s = P[l * p + k];
                if (s == 0) continue;
                const float *restrict x = X + (i * p + k) * LANES;
                for (int v = 0; v < LANES; v++) t[v] += s * x[v];
            }
        }
    for (int k = 0; k < a; k++) /* Z[k][l] = sum_i P[k][i] T[i][l] */
        for (int l = 0; l < a; l++) {
            float *restrict z = Z + (k * a + l) * LANES;
            for (int v = 0; v < LANES; v++) z[v] = 0;
            for (int i = 0; i < p; i++) {
                const float s = P[k * p + i];
                if (s == 0) continue;
                const float *restrict t = T + (i * a + l) * LANES;
                for (int v = 0; v < LANES; v++) z[v] += s * t[v];
            }
        }
}

#if defined(__GNUC__) && !defined(VS_NO_CLONES)
/* The same operations on 16-float vectors (GCC/Clang vector extension: one zmm under AVX-512, two ymm
 * under AVX2) for the sizes of alpha 6, fully unrolled so that the tile stays in registers; adding
 * x for an entry 1 and subtracting it for -1 give the bits of s x + acc. */
typedef float v16 __attribute__((vector_size(LANES * sizeof(float))));

#define MULADD(acc, s, x) ((s) == 1 ? (acc) + (x) : (s) == -1 ? (acc) - (x) : (acc) + (s) * (x))

#define XFORM_FIXED(NAME, A, PP)                                                                                \
    VS_VECTOR_CLONES512 static void NAME(const float *P, const float *restrict X, float *restrict Z)            \
    {                                                                                                         \
        v16 x[PP * PP], t[PP * A];                                                                           \
        for (int e = 0; e < PP * PP; e++) memcpy(&x[e], X + e * LANES, sizeof(v16));                          \
        for (int i = 0; i < PP; i++)                                                                          \
            for (int l = 0; l < A; l++) {                                                                     \
                v16 acc = {0};                                                                                \
                for (int k = 0; k < PP; k++) {                                                                \
                    const float s = P[l * PP + k];                                                            \
                    if (s != 0) acc = MULADD(acc, s, x[i * PP + k]);                                          \
                }                                                                                             \
                t[i * A + l] = acc;                                                                           \
            }                                                                                                 \
        for (int k = 0; k < A; k++)                                                                           \
            for (int l = 0; l < A; l++) {                                                                     \
                v16 acc = {0};                                                                                \
                for (int i = 0; i < PP; i++) {                                                                \
                    const float s = P[k * PP + i];                                                            \
                    if (s != 0) acc = MULADD(acc, s, t[i * A + l]);                                           \
                }                                                                                             \
                memcpy(Z + (k * A + l) * LANES, &acc, sizeof(v16));                                           \
            }                                                                                                 \
    }
XFORM_FIXED(xform_6_6, 6, 6) /* B^T d B */
XFORM_FIXED(xform_4_6, 4, 6) /* A^T M A, F(4x4, 3x3) */
XFORM_FIXED(xform_2_6, 2, 6) /* A^T M A, F(2x2, 5x5) */
XFORM_FIXED(xform_6_4, 6, 4) /* G' g G'^T, F(3x3, 4x4) */
XFORM_FIXED(xform_6_2, 6, 2) /* G' g G'^T, F(5x5, 2x2) */
#endif

/* Z = P X P^T on each lane (see xform_ref). */
static void xform(int a, int p, const float *P, const float *X, float *T, float *Z)
{
#if defined(__GNUC__) && !defined(VS_NO_CLONES)
    if (a == 6 && p == 6) {
        xform_6_6(P, X, Z);
        return;
    }
    if (a == 4 && p == 6) {
        xform_4_6(P, X, Z);
        return;
    }
    if (a == 2 && p == 6) {
        xform_2_6(P, X, Z);
        return;
    }
    if (a == 6 && p == 4) {
        xform_6_4(P, X, Z);
        return;
    }
    if (a == 6 && p == 2) {
        xform_6_2(P, X, Z);
        return;
    }
#endif
    xform_ref(a, p, P, X, T, Z);
}

/* ---- geometry -------------------------------------------------------------------------------------- */

typedef struct wino_job {
    const vs_conv_fast *g;
    wino_mats t;
    int64_t th, tw, tiles;  /* tile rows and columns per image, tiles of the batch */
    int64_t oy, ox;         /* input row of output row 0's first tap: y0 - ph (columns: x0 - pw) */
    int64_t blocks;
    const float *x, *w, *bias, *gy;
    float *y, *u;
    bool accumulate;
    volatile int failed;
} wino_job;

static void job_init(wino_job *j, const vs_conv_fast *g)
{
    const int r = (int)g->kh, m = vs_conv_winograd_tile(r);
    j->g = g;
    mats_of(m, r, &j->t);
    j->th = (g->oh + m - 1) / m;
    j->tw = (g->ow + m - 1) / m;
    j->tiles = g->n * j->th * j->tw;
    j->oy = g->y0 - g->ph;
    j->ox = g->x0 - g->pw;
    j->blocks = (j->tiles + BLOCK_TILES - 1) / BLOCK_TILES;
}

/* Where tile t starts: image *n, output row *i0 and column *j0. */
static void tile_at(const wino_job *j, int64_t t, int64_t *n, int64_t *i0, int64_t *j0)
{
    const int64_t per = j->th * j->tw, rem = t % per;
    *n = t / per;
    *i0 = rem / j->tw * j->t.m;
    *j0 = rem % j->tw * j->t.m;
}

/* Where the lanes of one group of tiles start: the image, the patch's first row and column (in the
 * input, or in gy with dy = dx = 0), one entry per lane; tiles past the batch get n = -1. */
typedef struct lane_corners {
    int64_t n[LANES], r0[LANES], c0[LANES];
} lane_corners;

static void corners_of(const wino_job *j, int64_t t0, int64_t dy, int64_t dx, lane_corners *q)
{
    for (int v = 0; v < LANES; v++) {
        int64_t n = -1, i0 = 0, j0 = 0;
        if (t0 + v < j->tiles) tile_at(j, t0 + v, &n, &i0, &j0);
        q->n[v] = n, q->r0[v] = i0 + dy, q->c0[v] = j0 + dx;
    }
}

/* X[a][b][v] = plane ch of image q->n[v] at (q->r0[v] + a, q->c0[v] + b), a < rows, b < cols, for planes of
 * h x w, nplanes per image; zero outside the plane and for lanes past the batch. */
VS_SHORT_COPIES static void gather(const lane_corners *q, const float *base, int64_t ch, int64_t nplanes, int64_t h,
                                   int64_t w, int rows, int cols, float *restrict X)
{
    for (int v = 0; v < LANES; v++) {
        const int64_t r0 = q->r0[v], c0 = q->c0[v];
        if (q->n[v] < 0) {
            for (int e = 0; e < rows * cols; e++) X[e * LANES + v] = 0;
            continue;
        }
        const float *plane = base + (q->n[v] * nplanes + ch) * h * w;
        if (r0 >= 0 && r0 + rows <= h && c0 >= 0 && c0 + cols <= w) {
            const float *src = plane + r0 * w + c0;
            for (int a = 0; a < rows; a++)
                for (int b = 0; b < cols; b++) X[(a * cols + b) * LANES + v] = src[a * w + b];
            continue;
        }
        for (int a = 0; a < rows; a++) {
            const int64_t row = r0 + a;
            const bool in = row >= 0 && row < h;
            for (int b = 0; b < cols; b++) {
                const int64_t col = c0 + b;
                X[(a * cols + b) * LANES + v] = in && col >= 0 && col < w ? plane[row * w + col] : 0;
            }
        }
    }
}

/* V[xi][c][k] for the block's tiles t0 + k, k < nt (a multiple of LANES), rows ldv apart per c. */
static void input_transform(const wino_job *j, int64_t t0, int64_t nt, float *V, int64_t ldv)
{
    const vs_conv_fast *g = j->g;
    const int alpha = j->t.alpha, a2 = alpha * alpha;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], T[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t k = 0; k < nt; k += LANES) {
        lane_corners q;
        corners_of(j, t0 + k, j->oy, j->ox, &q);
        for (int64_t c = 0; c < g->c; c++) {
            gather(&q, j->x, c, g->c, g->h, g->w, alpha, alpha, X);
            xform(alpha, alpha, j->t.bt, X, T, Z);
            for (int xi = 0; xi < a2; xi++) memcpy(V + ((int64_t)xi * g->c + c) * ldv + k, Z + xi * LANES, LANES * sizeof(float));
        }
    }
}

/* ---- forward -------------------------------------------------------------------------------------- */

/* U[xi][o][c] = (G W(o,c) G^T)[xi], 16 input channels at a time. */
static void weight_transform(const wino_job *j)
{
    const vs_conv_fast *g = j->g;
    const int r = j->t.r, alpha = j->t.alpha, a2 = alpha * alpha;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], T[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t c0 = 0; c0 < g->c; c0 += LANES) {
            const int nv = g->c - c0 < LANES ? (int)(g->c - c0) : LANES;
            for (int v = 0; v < LANES; v++)
                for (int ki = 0; ki < r; ki++)
                    for (int kj = 0; kj < r; kj++) {
                        const int64_t c = c0 + v;
                        float val = 0;
                        if (v < nv)
                            val = g->flip ? j->w[((c * g->o + o) * r + r - 1 - ki) * r + r - 1 - kj]
                                          : j->w[((o * g->c + c) * r + ki) * r + kj];
                        X[(ki * r + kj) * LANES + v] = val;
                    }
            xform(alpha, r, j->t.g, X, T, Z);
            for (int xi = 0; xi < a2; xi++)
                memcpy(j->u + ((int64_t)xi * g->o + o) * g->c + c0, Z + xi * LANES, (size_t)nv * sizeof(float));
        }
}

/* y of the block's tiles from M[xi][o][k] (rows ldm apart per o). */
static void output_transform(const wino_job *j, int64_t t0, int64_t nt, const float *M, int64_t ldm)
{
    const vs_conv_fast *g = j->g;
    const int m = j->t.m, alpha = j->t.alpha, a2 = alpha * alpha;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], T[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t k = 0; k < nt; k += LANES) {
        lane_corners q;
        corners_of(j, t0 + k, 0, 0, &q);
        for (int64_t o = 0; o < g->o; o++) {
            const float b = j->bias ? j->bias[o] : 0;
            for (int xi = 0; xi < a2; xi++) memcpy(X + xi * LANES, M + ((int64_t)xi * g->o + o) * ldm + k, LANES * sizeof(float));
            xform(m, alpha, j->t.at, X, T, Z);
            for (int v = 0; v < LANES && q.n[v] >= 0; v++) {
                const int64_t i0 = q.r0[v], j0 = q.c0[v];
                float *plane = j->y + (q.n[v] * g->o + o) * g->oh * g->ow;
                for (int a = 0; a < m && i0 + a < g->oh; a++)
                    for (int c = 0; c < m && j0 + c < g->ow; c++) {
                        float *d = plane + (i0 + a) * g->ow + j0 + c;
                        *d = (j->accumulate ? *d : b) + Z[(a * m + c) * LANES + v];
                    }
            }
        }
    }
}

static void forward_blocks(void *ctx, int64_t b0, int64_t b1)
{
    wino_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const int64_t a2 = j->t.alpha * j->t.alpha;
    void *owned;
    float *V = vs_scratch_or_own(VS_SCRATCH_WINO, (size_t)(a2 * (g->c + g->o) * BLOCK_TILES) * sizeof(float), &owned);
    if (!V) {
        j->failed = 1;
        return;
    }
    float *M = V + a2 * g->c * BLOCK_TILES;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t t0 = b * BLOCK_TILES, left = j->tiles - t0;
        const int64_t nt = left < BLOCK_TILES ? (left + LANES - 1) / LANES * LANES : BLOCK_TILES;
        input_transform(j, t0, nt, V, BLOCK_TILES);
        for (int64_t xi = 0; xi < a2; xi++)
            vs_sgemm(false, false, g->o, nt, g->c, 1.0f, j->u + xi * g->o * g->c, g->c, V + xi * g->c * BLOCK_TILES,
                     BLOCK_TILES, 0.0f, M + xi * g->o * BLOCK_TILES, BLOCK_TILES);
        output_transform(j, t0, nt, M, BLOCK_TILES);
    }
    free(owned);
}

bool vs_conv_winograd_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                              float *y)
{
    wino_job j = {0};
    job_init(&j, g);
    j.x = x, j.w = w, j.bias = bias, j.y = y, j.accumulate = accumulate;
    const int64_t a2 = j.t.alpha * j.t.alpha;
    void *owned;
    j.u = vs_scratch_or_own(VS_SCRATCH_WINO_U, (size_t)(a2 * g->o * g->c) * sizeof(float), &owned);
    if (!j.u) return false;
    weight_transform(&j);
    if (j.blocks <= 1)
        forward_blocks(&j, 0, j.blocks);
    else
        vs_parallel_for(j.blocks, 1, forward_blocks, &j);
    free(owned);
    return !j.failed;
}

/* ---- weight gradient ------------------------------------------------------------------------------ */

/* G'[xi][o][k] = (G' g_t(o) G'^T)[xi] for the block's tiles (rows ldv apart per o). */
static void grad_transform(const wino_job *j, int64_t t0, int64_t nt, float *Gt, int64_t ldv)
{
    const vs_conv_fast *g = j->g;
    const int m = j->t.m, alpha = j->t.alpha, a2 = alpha * alpha;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], T[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t k = 0; k < nt; k += LANES) {
        lane_corners q;
        corners_of(j, t0 + k, 0, 0, &q);
        for (int64_t o = 0; o < g->o; o++) {
            gather(&q, j->gy, o, g->o, g->oh, g->ow, m, m, X);
            xform(alpha, m, j->t.gm, X, T, Z);
            for (int xi = 0; xi < a2; xi++) memcpy(Gt + ((int64_t)xi * g->o + o) * ldv + k, Z + xi * LANES, LANES * sizeof(float));
        }
    }
}

/* dw(o,c) = A'^T M(o,c) A', 16 input channels at a time. */
static void weight_grad_finish(const wino_job *j, const float *M, float *dw)
{
    const vs_conv_fast *g = j->g;
    const int r = j->t.r, alpha = j->t.alpha, a2 = alpha * alpha;
    float X[MAX_ALPHA * MAX_ALPHA * LANES], T[MAX_ALPHA * MAX_ALPHA * LANES], Z[MAX_ALPHA * MAX_ALPHA * LANES];
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t c0 = 0; c0 < g->c; c0 += LANES) {
            const int nv = g->c - c0 < LANES ? (int)(g->c - c0) : LANES;
            for (int xi = 0; xi < a2; xi++)
                for (int v = 0; v < LANES; v++) X[xi * LANES + v] = v < nv ? M[((int64_t)xi * g->o + o) * g->c + c0 + v] : 0;
            xform(r, alpha, j->t.art, X, T, Z);
            for (int v = 0; v < nv; v++)
                for (int e = 0; e < r * r; e++) dw[((o * g->c) + c0 + v) * r * r + e] = Z[e * LANES + v];
        }
}

bool vs_conv_winograd_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
    wino_job j = {0};
    job_init(&j, g);
    j.x = x, j.gy = gy;
    const int64_t a2 = j.t.alpha * j.t.alpha;
    void *owned_m, *owned_v;
    float *M = vs_scratch_or_own(VS_SCRATCH_WINO_U, (size_t)(a2 * g->o * g->c) * sizeof(float), &owned_m);
    float *V = M ? vs_scratch_or_own(VS_SCRATCH_WINO, (size_t)(a2 * (g->c + g->o) * BLOCK_TILES) * sizeof(float), &owned_v)
                 : NULL;
    if (!V) {
        free(owned_m);
        return false;
    }
    float *Gt = V + a2 * g->c * BLOCK_TILES;
    if (j.blocks == 0) memset(M, 0, (size_t)(a2 * g->o * g->c) * sizeof(float));
    for (int64_t b = 0; b < j.blocks; b++) {
        const int64_t t0 = b * BLOCK_TILES, left = j.tiles - t0;
        const int64_t nt = left < BLOCK_TILES ? (left + LANES - 1) / LANES * LANES : BLOCK_TILES;
        input_transform(&j, t0, nt, V, BLOCK_TILES);
        grad_transform(&j, t0, nt, Gt, BLOCK_TILES);
        for (int64_t xi = 0; xi < a2; xi++)
            vs_sgemm(false, true, g->o, g->c, nt, 1.0f, Gt + xi * g->o * BLOCK_TILES, BLOCK_TILES,
                     V + xi * g->c * BLOCK_TILES, BLOCK_TILES, b == 0 ? 0.0f : 1.0f, M + xi * g->o * g->c, g->c);
    }
    weight_grad_finish(&j, M, dw);
    free(owned_v);
    free(owned_m);
    return true;
}

/* ---- dispatch -------------------------------------------------------------------------------------- */

bool vs_conv_winograd_fits(const vs_conv_fast *g)
{
    if (conv_algorithm() != VS_CONV_AUTO) return false;
    if (g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 || g->kh != g->kw) return false;
    if (vs_conv_winograd_tile((int)g->kh) == 0) return false;
    return g->c >= 16 && g->o >= 16 && g->n * g->oh * g->ow > 0;
}
