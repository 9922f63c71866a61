/* lstsq.c - weighted least squares on designs whose rows are feature sets (the coalitions of Kernel
 * SHAP and LIME): the normal equations built from the sets themselves, a blocked Cholesky split
 * over the thread pool, and the plain dense version the tests compare them with. */
#include "explain/lstsq.h"

#include "autograd/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- normal equations of a set design ------------------------------------------------------------ */

/* Rows of A per chunk of the parallel Gram loop; fixed, although each element is summed in row
 * order whatever the chunks are. */
#define GRAM_GRAIN 16

typedef struct gram_job {
    int64_t groups, cols;
    const int32_t *idx;   /* every row's list, ascending, concatenated */
    const int64_t *start; /* [groups + 1]: group g's list is idx[start[r] .. start[r+1]) */
    const double *w;      /* [groups] summed weights */
    const uint8_t *used;  /* [cols]: the column is in some row's set (U, the complements' universe) */
    const double *cw;     /* [cols]: weight of the complemented rows whose C holds the column */
    double wc;            /* weight of all complemented rows */
    double *A;
} gram_job;

static const int32_t *lower_bound(const int32_t *p, const int32_t *end, int64_t v)
{
    while (p < end) {
        const int32_t *mid = p + (end - p) / 2;
        if (*mid < v) p = mid + 1;
        else end = mid;
    }
    return p;
}

/* Rows [a0, a1) of A's upper triangle: every row's list adds w_r to A[a][b] for its pairs a <= b,
 * in row order; then the complement terms 1_U 1_U^T - 1_U cw^T - cw 1_U^T. */
static void gram_chunk(void *ctx, int64_t a0, int64_t a1)
{
    const gram_job *g = ctx;
    const int64_t m = g->cols;
    for (int64_t a = a0; a < a1; a++) memset(g->A + a * m + a, 0, (size_t)(m - a) * sizeof *g->A);
    for (int64_t r = 0; r < g->groups; r++) {
        const int32_t *end = g->idx + g->start[r + 1];
        const int32_t *L = lower_bound(g->idx + g->start[r], end, a0);
        const double wr = g->w[r];
        for (; L < end && *L < a1; L++) {
            double *Aa = g->A + (int64_t)*L * m;
            for (const int32_t *q = L; q < end; q++) Aa[*q] += wr;
        }
    }
    for (int64_t a = a0; a < a1; a++) {
        if (!g->used[a]) continue;
        double *Aa = g->A + a * m;
        const double ca = g->wc - g->cw[a];
        for (int64_t b = a; b < m; b++)
            if (g->used[b]) Aa[b] += ca - g->cw[b];
    }
}

vs_status vs_sets_gram(int64_t rows, int64_t cols, const uint8_t *in, const double *w, const double *c, double *A,
                       double *b)
{
    if (rows < 0 || cols < 1 || cols > INT32_MAX) return VS_ERR_ARG;
    /* Runs of equal consecutive rows (Kernel SHAP's complement pairs have the same set) form one
     * group with their weights summed; a group whose set is more than half the columns is listed by
     * its complement. */
    const size_t nr = (size_t)(rows ? rows : 1);
    int64_t *start = malloc((nr + 1) * sizeof *start), *group = malloc(nr * sizeof *group), ng = 0;
    uint8_t *flip = malloc(nr), *used = calloc((size_t)cols, 1);
    double *gw = malloc(nr * sizeof *gw), *cw = calloc((size_t)cols, sizeof *cw), *cb = calloc((size_t)cols, sizeof *cb);
    int32_t *idx = NULL;
    vs_status st = start && group && flip && used && gw && cw && cb ? VS_OK : VS_ERR_NOMEM;
    int64_t nu = 0; /* |U| */
    if (st == VS_OK) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t k = 0; k < cols; k++) used[k] |= in[r * cols + k] != 0;
        for (int64_t k = 0; k < cols; k++) nu += used[k];
        start[0] = 0;
        for (int64_t r = 0; r < rows; r++) {
            const uint8_t *z = in + r * cols;
            if (r > 0 && memcmp(z, z - cols, (size_t)cols) == 0) {
                gw[ng - 1] += w[r];
            } else {
                int64_t s = 0;
                for (int64_t k = 0; k < cols; k++) s += z[k] != 0;
                flip[ng] = s > nu / 2;
                start[ng + 1] = start[ng] + (flip[ng] ? nu - s : s);
                gw[ng++] = w[r];
            }
            group[r] = ng - 1;
        }
        idx = malloc((size_t)(start[ng] ? start[ng] : 1) * sizeof *idx);
        if (!idx) st = VS_ERR_NOMEM;
    }
    if (st == VS_OK) {
        double wc = 0, bc = 0;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t g = group[r];
            if (r > 0 && group[r - 1] == g) continue; /* a group is listed from its first row */
            const uint8_t *z = in + r * cols, keep = !flip[g];
            int32_t *L = idx + start[g];
            for (int64_t k = 0; k < cols; k++)
                if (used[k] && (z[k] != 0) == keep) *L++ = (int32_t)k;
            if (!keep) {
                wc += gw[g];
                for (L = idx + start[g]; L < idx + start[g + 1]; L++) cw[*L] += gw[g];
            }
        }
        for (int64_t k = 0; k < cols; k++) b[k] = 0;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t g = group[r];
            const double wy = w[r] * c[r];
            double *acc = b;
            if (flip[g]) {
                bc += wy;
                acc = cb;
            }
            for (const int32_t *L = idx + start[g]; L < idx + start[g + 1]; L++) acc[*L] += wy;
        }
        for (int64_t k = 0; k < cols; k++)
            if (used[k]) b[k] += bc - cb[k];
        gram_job g = {ng, cols, idx, start, gw, used, cw, wc, A};
        vs_parallel_for(cols, GRAM_GRAIN, gram_chunk, &g);
    }
    free(start);
    free(group);
    free(flip);
    free(used);
    free(gw);
    free(cw);
    free(cb);
    free(idx);
    return st;
}

/* ---- blocked Cholesky ---------------------------------------------------------------------------- */

/* A = U^T U by panels of CHOL_NB rows: a panel's rows are finished one by one (each subtracts its
 * outer product from the later rows of the same panel), then the whole panel's rank-CHOL_NB update
 * of the trailing matrix runs as CHOL_MR x CHOL_NR register tiles, split over the thread pool by
 * blocks of rows.  Every element sums its panel's products from zero in k order and subtracts the
 * sum, whichever tile or thread computes it. */
#define CHOL_NB 64
#define CHOL_MR 4
#define CHOL_NR 4
#define CHOL_GRAIN 4 /* tiles of rows per chunk */

/* y[0..n) -= u x[0..n), unrolled by four so that -O2 turns it into vector code. */
static void axpy_neg(int64_t n, double u, const double *restrict x, double *restrict y)
{
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        y[j] -= u * x[j];
        y[j + 1] -= u * x[j + 1];
        y[j + 2] -= u * x[j + 2];
        y[j + 3] -= u * x[j + 3];
    }
    for (; j < n; j++) y[j] -= u * x[j];
}

/* Rows [k0, k1) of U, the earlier panels already subtracted from them. */
static bool chol_panel(int64_t n, double *A, int64_t k0, int64_t k1)
{
    for (int64_t k = k0; k < k1; k++) {
        double *uk = A + k * n;
        double d = uk[k];
        if (!(d > 0) || !isfinite(d)) return false;
        d = sqrt(d);
        uk[k] = d;
        for (int64_t j = k + 1; j < n; j++) uk[j] /= d;
        for (int64_t i = k + 1; i < k1; i++) axpy_neg(n - i, uk[i], uk + i, A + i * n + i);
    }
    return true;
}

typedef struct chol_update {
    int64_t n, k0, k1; /* panel rows [k0, k1), trailing rows [k1, n) */
    double *A;
} chol_update;

/* A[i][j] -= sum_{k0 <= k < k1} U[k][i] U[k][j] on the tile rows [i0, i0 + CHOL_MR), columns
 * [j0, j0 + CHOL_NR), all inside the matrix. */
static void tile_full(const chol_update *u, int64_t i0, int64_t j0)
{
    const int64_t n = u->n;
    double acc[CHOL_MR][CHOL_NR] = {{0}};
    for (int64_t k = u->k0; k < u->k1; k++) {
        const double *uk = u->A + k * n;
        for (int ii = 0; ii < CHOL_MR; ii++) {
            const double ui = uk[i0 + ii];
            for (int jj = 0; jj < CHOL_NR; jj++) acc[ii][jj] += ui * uk[j0 + jj];
        }
    }
    for (int ii = 0; ii < CHOL_MR; ii++)
        for (int jj = 0; jj < CHOL_NR; jj++) u->A[(i0 + ii) * n + j0 + jj] -= acc[ii][jj];
}

/* The same for a tile cut by the matrix edge: mi rows, nj columns. */
static void tile_edge(const chol_update *u, int64_t i0, int64_t j0, int64_t mi, int64_t nj)
{
    const int64_t n = u->n;
    double acc[CHOL_MR][CHOL_NR] = {{0}};
    for (int64_t k = u->k0; k < u->k1; k++) {
        const double *uk = u->A + k * n;
        for (int64_t ii = 0; ii < mi; ii++)
            for (int64_t jj = 0; jj < nj; jj++) acc[ii][jj] += uk[i0 + ii] * uk[j0 + jj];
    }
    for (int64_t ii = 0; ii < mi; ii++)
        for (int64_t jj = 0; jj < nj; jj++) u->A[(i0 + ii) * n + j0 + jj] -= acc[ii][jj];
}

/* Row tiles [t0, t1) of the trailing matrix; a tile row starting at i covers the columns from i
 * (the part left of the diagonal in the first tile lands in the unused lower triangle). */
static void chol_update_chunk(void *ctx, int64_t t0, int64_t t1)
{
    const chol_update *u = ctx;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t i0 = u->k1 + t * CHOL_MR, mi = u->n - i0 < CHOL_MR ? u->n - i0 : CHOL_MR;
        int64_t j0 = i0;
        if (mi == CHOL_MR)
            for (; j0 + CHOL_NR <= u->n; j0 += CHOL_NR) tile_full(u, i0, j0);
        for (; j0 < u->n; j0 += CHOL_NR) tile_edge(u, i0, j0, mi, u->n - j0 < CHOL_NR ? u->n - j0 : CHOL_NR);
    }
}

bool vs_spd_solve(int64_t n, double *A, double *b)
{
    for (int64_t k0 = 0; k0 < n; k0 += CHOL_NB) {
        const int64_t k1 = n - k0 < CHOL_NB ? n : k0 + CHOL_NB;
        if (!chol_panel(n, A, k0, k1)) return false;
        chol_update u = {n, k0, k1, A};
        vs_parallel_for((n - k1 + CHOL_MR - 1) / CHOL_MR, CHOL_GRAIN, chol_update_chunk, &u);
    }
    /* U^T y = b by columns of U (contiguous rows), then U x = y by rows. */
    for (int64_t k = 0; k < n; k++) {
        b[k] /= A[k * n + k];
        axpy_neg(n - k - 1, b[k], A + k * n + k + 1, b + k + 1);
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int64_t j = i + 1; j < n; j++) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return true;
}

/* ---- the solve ----------------------------------------------------------------------------------- */

/* Ridge on the first n_pen unknowns, a 1e-12 relative jitter on the others (upper triangle). */
static void add_ridge(int64_t cols, double *A, double ridge, int64_t n_pen)
{
    for (int64_t a = 0; a < cols; a++) A[a * cols + a] += a < n_pen ? ridge : 1e-12 * (1 + A[a * cols + a]);
}

vs_status vs_lstsq_sets(int64_t rows, int64_t cols, const uint8_t *in, const double *w, const double *c, double ridge,
                        int64_t n_pen, double *beta)
{
    size_t na;
    if (cols < 1 || !vs_size_mul((size_t)cols, (size_t)cols, &na) || !vs_size_mul(na, sizeof(double), &na))
        return VS_ERR_NOMEM;
    double *A = calloc(1, na);
    if (!A) return VS_ERR_NOMEM;
    vs_status st = vs_sets_gram(rows, cols, in, w, c, A, beta);
    if (st == VS_OK) {
        add_ridge(cols, A, ridge, n_pen);
        if (!vs_spd_solve(cols, A, beta)) st = VS_ERR_NUMERIC;
    }
    free(A);
    return st;
}

/* ---- dense reference ----------------------------------------------------------------------------- */

static bool spd_solve_ref(int64_t n, double *A, double *b)
{
    for (int64_t k = 0; k < n; k++) {
        double d = A[k * n + k];
        for (int64_t p = 0; p < k; p++) d -= A[k * n + p] * A[k * n + p];
        if (!(d > 0)) return false;
        d = sqrt(d);
        A[k * n + k] = d;
        for (int64_t i = k + 1; i < n; i++) {
            double s = A[i * n + k];
            for (int64_t p = 0; p < k; p++) s -= A[i * n + p] * A[k * n + p];
            A[i * n + k] = s / d;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        double s = b[i];
        for (int64_t p = 0; p < i; p++) s -= A[i * n + p] * b[p];
        b[i] = s / A[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int64_t p = i + 1; p < n; p++) s -= A[p * n + i] * b[p];
        b[i] = s / A[i * n + i];
    }
    return true;
}

vs_status vs_lstsq_dense_ref(int64_t rows, int64_t cols, const double *X, const double *y, const double *w,
                             double ridge, int64_t n_pen, double *beta)
{
    double *A = calloc((size_t)(cols * cols), sizeof *A);
    if (!A) return VS_ERR_NOMEM;
    for (int64_t i = 0; i < cols; i++) beta[i] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double *x = X + r * cols;
        for (int64_t a = 0; a < cols; a++) {
            if (x[a] == 0) continue;
            double wa = w[r] * x[a];
            beta[a] += wa * y[r];
            for (int64_t b = 0; b <= a; b++) A[a * cols + b] += wa * x[b];
        }
    }
    /* the reference keeps the lower triangle; mirror it so that add_ridge (row-major, diagonal) fits */
    for (int64_t a = 0; a < cols; a++)
        for (int64_t b = a + 1; b < cols; b++) A[a * cols + b] = A[b * cols + a];
    add_ridge(cols, A, ridge, n_pen);
    bool ok = spd_solve_ref(cols, A, beta);
    free(A);
    return ok ? VS_OK : VS_ERR_NUMERIC;
}
