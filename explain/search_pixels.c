/* search_pixels.c - the pixel-level search explainers that are not regressions (versus/search.h):
 * Partition SHAP on hierarchical squares, SBSM and its second-order generalisation (A.11), and the
 * projection of a query region through a correspondence matrix (Fig. 4). */
#include "versus/rng.h"
#include "versus/search.h"

#include <stdlib.h>
#include <string.h>

/* ---- Partition SHAP ---------------------------------------------------------------------------- */

typedef struct rect {
    int y0, x0, h, w;
    double phi;          /* credit of the rectangle */
    double alone, rest;  /* v(keep only the rectangle), v(keep all but the rectangle) */
} rect;

/* z[p] = inside ? keep : !keep for the pixels of r, the other pixels `outside`. */
static void paint(uint8_t *z, int h, int w, const rect *r, uint8_t inside, uint8_t outside)
{
    memset(z, outside, (size_t)h * (size_t)w);
    for (int y = r->y0; y < r->y0 + r->h; y++) memset(z + (size_t)y * (size_t)w + r->x0, inside, (size_t)r->w);
}

vs_status vs_search_partition_shap(vs_masked_pair *pixels, int h, int w, int min_cell, float *heat, vs_error *err)
{
    if (min_cell < 1 || h < 1 || w < 1 || pixels->n != (int64_t)h * w)
        return vs_error_set(err, VS_ERR_ARG, "partition shap: the game's players must be the %d x %d pixels and cells >= 1", h, w);
    vs_game g = vs_masked_pair_game(pixels);
    const int64_t HW = (int64_t)h * w;
    int64_t cap = 2 * HW + 2; /* rectangles of one level: at most 2 per pixel */
    rect *level = malloc((size_t)cap * sizeof *level), *next = malloc((size_t)cap * sizeof *next);
    uint8_t *z = malloc((size_t)(64 * HW));
    double *v = malloc(64 * 4 * sizeof *v), ends[2];
    vs_status st = level && next && z && v ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "partition shap: out of memory");
    if (st == VS_OK) {
        memset(z, 0, (size_t)HW);
        memset(z + HW, 1, (size_t)HW);
        st = g.values(g.ctx, 2, z, ends, err);
    }
    int64_t nl = 1;
    if (st == VS_OK) level[0] = (rect){0, 0, h, w, ends[1] - ends[0], ends[1], ends[0]};
    for (int64_t k = 0; k < HW; k++) heat[k] = 0;
    while (st == VS_OK && nl > 0) {
        int64_t nn = 0;
        /* split every rectangle larger than a cell along its longer side; 16 at a time (64 rows) */
        for (int64_t i0 = 0; i0 < nl && st == VS_OK; i0 += 16) {
            int64_t m = 0, parent[16];
            rect kids[32];
            for (int64_t i = i0; i < nl && i < i0 + 16; i++) {
                const rect *p = &level[i];
                if (p->h <= min_cell && p->w <= min_cell) {
                    for (int y = p->y0; y < p->y0 + p->h; y++)
                        for (int x = p->x0; x < p->x0 + p->w; x++) heat[y * w + x] = (float)(p->phi / ((double)p->h * p->w));
                    continue;
                }
                rect a = *p, b = *p;
                if (p->h >= p->w) {
                    a.h = p->h / 2;
                    b.y0 = p->y0 + a.h;
                    b.h = p->h - a.h;
                } else {
                    a.w = p->w / 2;
                    b.x0 = p->x0 + a.w;
                    b.w = p->w - a.w;
                }
                /* rows: a alone, b alone, all but a, all but b */
                paint(z + (4 * m + 0) * HW, h, w, &a, 1, 0);
                paint(z + (4 * m + 1) * HW, h, w, &b, 1, 0);
                paint(z + (4 * m + 2) * HW, h, w, &a, 0, 1);
                paint(z + (4 * m + 3) * HW, h, w, &b, 0, 1);
                kids[2 * m] = a;
                kids[2 * m + 1] = b;
                parent[m++] = i;
            }
            if (m == 0) continue;
            st = g.values(g.ctx, 4 * m, z, v, err);
            for (int64_t k = 0; k < m && st == VS_OK; k++) {
                const rect *p = &level[parent[k]];
                rect *a = &kids[2 * k], *b = &kids[2 * k + 1];
                a->alone = v[4 * k];
                b->alone = v[4 * k + 1];
                a->rest = v[4 * k + 2];
                b->rest = v[4 * k + 3];
                /* two-player Shapley values inside the parent, outside absent and outside present, averaged */
                double v0 = ends[0], vN = ends[1], pout = p->rest; /* v(keep all but the parent) */
                double off_a = 0.5 * ((a->alone - v0) + (p->alone - b->alone));
                double on_a = 0.5 * ((b->rest - pout) + (vN - a->rest));
                double off_b = 0.5 * ((b->alone - v0) + (p->alone - a->alone));
                double on_b = 0.5 * ((a->rest - pout) + (vN - b->rest));
                double wa = 0.5 * (off_a + on_a), wb = 0.5 * (off_b + on_b), share = 0.5 * (p->phi - wa - wb);
                a->phi = wa + share;
                b->phi = wb + share;
                next[nn++] = *a;
                next[nn++] = *b;
            }
        }
        rect *t = level;
        level = next;
        next = t;
        nl = nn;
    }
    free(level);
    free(next);
    free(z);
    free(v);
    return st;
}

/* ---- SBSM ------------------------------------------------------------------------------------------ */

vs_status vs_search_sbsm(vs_masked_pair *pixels, int h, int w, int window, int stride, float *heat, vs_error *err)
{
    if (window < 1 || stride < 1 || pixels->n != (int64_t)h * w)
        return vs_error_set(err, VS_ERR_ARG, "sbsm: the game's players must be the %d x %d pixels, window and stride >= 1", h, w);
    vs_game g = vs_masked_pair_game(pixels);
    const int64_t HW = (int64_t)h * w;
    int ny = h > window ? (h - window + stride - 1) / stride + 1 : 1, nx = w > window ? (w - window + stride - 1) / stride + 1 : 1;
    int64_t nwin = (int64_t)ny * nx;
    uint8_t *z = malloc((size_t)(64 * HW));
    double *v = malloc(65 * sizeof *v), *acc = calloc((size_t)HW, sizeof *acc), *cover = calloc((size_t)HW, sizeof *cover);
    vs_status st = z && v && acc && cover ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "sbsm: out of memory");
    double full = 0;
    if (st == VS_OK) {
        memset(z, 1, (size_t)HW);
        st = g.values(g.ctx, 1, z, &full, err);
    }
    for (int64_t i0 = 0; i0 < nwin && st == VS_OK; i0 += 64) {
        int64_t m = nwin - i0 < 64 ? nwin - i0 : 64;
        for (int64_t k = 0; k < m; k++) {
            int64_t i = i0 + k;
            int y0 = (int)(i / nx) * stride, x0 = (int)(i % nx) * stride;
            rect r = {y0, x0, y0 + window <= h ? window : h - y0, x0 + window <= w ? window : w - x0, 0, 0, 0};
            paint(z + k * HW, h, w, &r, 0, 1);
        }
        st = g.values(g.ctx, m, z, v, err);
        for (int64_t k = 0; k < m && st == VS_OK; k++) {
            int64_t i = i0 + k;
            int y0 = (int)(i / nx) * stride, x0 = (int)(i % nx) * stride;
            double wt = full - v[k] > 0 ? full - v[k] : 0;
            for (int y = y0; y < y0 + window && y < h; y++)
                for (int x = x0; x < x0 + window && x < w; x++) {
                    acc[y * w + x] += wt;
                    cover[y * w + x] += 1;
                }
        }
    }
    for (int64_t p = 0; st == VS_OK && p < HW; p++) heat[p] = (float)(cover[p] > 0 ? acc[p] / cover[p] : 0);
    free(z);
    free(v);
    free(acc);
    free(cover);
    return st;
}

vs_status vs_search_sbsm2(vs_masked_pair *pixels, int h, int w, int window, const int32_t *qcells, int64_t nq,
                          const int32_t *rcells, int64_t nr, int64_t samples, uint64_t seed, double *corr, vs_error *err)
{
    const int64_t HW = (int64_t)h * w;
    if (window < 1 || samples < 1 || pixels->n != 2 * HW || !pixels->qx)
        return vs_error_set(err, VS_ERR_ARG, "sbsm2: the game's players must be both images' %d x %d pixels (query first)", h, w);
    vs_game g = vs_masked_pair_game(pixels);
    uint8_t *z = malloc((size_t)(64 * 2 * HW)), *inq = malloc((size_t)(64 * nq)), *inr = malloc((size_t)(64 * nr));
    double *v = malloc(64 * sizeof *v), *cover = calloc((size_t)(nq * nr), sizeof *cover);
    vs_status st = z && inq && inr && v && cover ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "sbsm2: out of memory");
    double full = 0;
    for (int64_t k = 0; k < nq * nr; k++) corr[k] = 0;
    if (st == VS_OK) {
        memset(z, 1, (size_t)(2 * HW));
        st = g.values(g.ctx, 1, z, &full, err);
    }
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int64_t s0 = 0; s0 < samples && st == VS_OK; s0 += 64) {
        int64_t m = samples - s0 < 64 ? samples - s0 : 64;
        memset(inq, 0, (size_t)(m * nq));
        memset(inr, 0, (size_t)(m * nr));
        for (int64_t k = 0; k < m; k++) {
            uint8_t *zk = z + k * 2 * HW;
            memset(zk, 1, (size_t)(2 * HW));
            for (int side = 0; side < 2; side++) {
                int y0 = (int)vs_rng_below(&r, (uint64_t)(h > window ? h - window + 1 : 1));
                int x0 = (int)vs_rng_below(&r, (uint64_t)(w > window ? w - window + 1 : 1));
                for (int y = y0; y < y0 + window && y < h; y++)
                    for (int x = x0; x < x0 + window && x < w; x++) {
                        zk[side * HW + y * w + x] = 0;
                        if (side == 0) inq[k * nq + qcells[y * w + x]] = 1;
                        else inr[k * nr + rcells[y * w + x]] = 1;
                    }
            }
        }
        st = g.values(g.ctx, m, z, v, err);
        for (int64_t k = 0; k < m && st == VS_OK; k++) {
            double wt = full - v[k] > 0 ? full - v[k] : 0;
            for (int64_t a = 0; a < nq; a++)
                if (inq[k * nq + a])
                    for (int64_t b = 0; b < nr; b++)
                        if (inr[k * nr + b]) {
                            corr[a * nr + b] += wt;
                            cover[a * nr + b] += 1;
                        }
        }
    }
    for (int64_t k = 0; st == VS_OK && k < nq * nr; k++) corr[k] = cover[k] > 0 ? corr[k] / cover[k] : 0;
    free(z);
    free(inq);
    free(inr);
    free(v);
    free(cover);
    return st;
}

void vs_search_upsample(const float *cell, int64_t fh, int64_t fw, int64_t H, int64_t W, float *out)
{
    for (int64_t yy = 0; yy < H; yy++)
        for (int64_t xx = 0; xx < W; xx++) {
            double fy = ((double)yy + 0.5) * (double)fh / (double)H - 0.5, fx = ((double)xx + 0.5) * (double)fw / (double)W - 0.5;
            fy = fy < 0 ? 0 : fy;
            fx = fx < 0 ? 0 : fx;
            int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
            int64_t y1 = y0 + 1 < fh ? y0 + 1 : fh - 1, x1 = x0 + 1 < fw ? x0 + 1 : fw - 1;
            double ty = fy - (double)y0, tx = fx - (double)x0;
            out[yy * W + xx] = (float)((1 - ty) * ((1 - tx) * cell[y0 * fw + x0] + tx * cell[y0 * fw + x1]) +
                                       ty * ((1 - tx) * cell[y1 * fw + x0] + tx * cell[y1 * fw + x1]));
        }
}

/* ---- projection (Fig. 4) ------------------------------------------------------------------------- */

void vs_search_project(const double *phi2, int64_t nq, int64_t nr, const int32_t *qmap, const int32_t *rmap, int64_t pixels,
                       const float *qmask, float *out)
{
    const int64_t n = nq + nr;
    double *share = calloc((size_t)nq, sizeof *share), *size = calloc((size_t)nq, sizeof *size), *col = calloc((size_t)nr, sizeof *col);
    if (!share || !size || !col) {
        for (int64_t p = 0; p < pixels; p++) out[p] = 0;
    } else {
        for (int64_t p = 0; p < pixels; p++) {
            share[qmap[p]] += qmask[p];
            size[qmap[p]] += 1;
        }
        for (int64_t a = 0; a < nq; a++) {
            double s = size[a] > 0 ? share[a] / size[a] : 0;
            for (int64_t b = 0; b < nr && s > 0; b++) col[b] += s * (phi2[a * n + nq + b] + phi2[(nq + b) * n + a]);
        }
        for (int64_t p = 0; p < pixels; p++) out[p] = (float)col[rmap[p]];
    }
    free(share);
    free(size);
    free(col);
}
