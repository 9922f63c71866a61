/* bench/search/methods.c - every explainer of Table 1 run on one pair of the search experiment
 * (bench/search/search_bench.h), turned into what the metrics read: a first-order heat over the
 * retrieved pixels, the query object projected onto the retrieved pixels, and the inefficiency
 * |sum of indices - (v(N) - v(empty))| of the method's own game. */
#include "bench/search/search_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- games of a case --------------------------------------------------------------------------- */

static vs_tensor *pixel_score(void *ctx, vs_tensor *a, vs_tensor *b) { return vs_search_similarity_of(ctx, a, b); }

/* v(N) - v(empty) of a game. */
static vs_status game_span(vs_game *g, double *span, vs_error *err)
{
    uint8_t *z = calloc((size_t)(2 * g->n), 1);
    double v[2] = {NAN, NAN};
    *span = NAN;
    if (!z) return vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    memset(z + g->n, 1, (size_t)g->n);
    vs_status st = g->values(g->ctx, 2, z, v, err);
    free(z);
    *span = v[1] - v[0];
    return st;
}

static double inefficiency(vs_game *g, const double *phi, int64_t n, vs_error *err)
{
    double span = NAN, s = 0;
    if (game_span(g, &span, err) != VS_OK) return NAN;
    for (int64_t k = 0; k < n; k++) s += phi[k];
    return fabs(s - span);
}

/* A player's value spread over its pixels (density): heat[p] = phi[map[p]] / |player|. */
static void density(const double *phi, int64_t n, const int32_t *map, int64_t pixels, float *heat)
{
    int64_t *size = calloc((size_t)n, sizeof *size);
    for (int64_t p = 0; size && p < pixels; p++) size[map[p]]++;
    for (int64_t p = 0; p < pixels; p++) heat[p] = (float)(phi[map[p]] / (size && size[map[p]] ? (double)size[map[p]] : 1.0));
    free(size);
}

/* The feature cells of the case's pair: a prepared pair, its cell map [H W]. */
typedef struct feature_case {
    vs_search_pair pair;
    int32_t *cells;
    int64_t hw;
} feature_case;

static vs_status feature_open(const vs_search_case *c, feature_case *f, vs_error *err)
{
    f->pair = (vs_search_pair){.model = c->model, .x = c->x, .y = c->y, .bx = c->bx, .by = c->by};
    f->cells = NULL;
    vs_status st = vs_search_pair_prepare(&f->pair, err);
    if (st != VS_OK) return st;
    f->hw = vs_search_locations(&f->pair);
    f->cells = malloc((size_t)c->h * (size_t)c->w * sizeof *f->cells);
    if (!f->cells) {
        vs_search_pair_release(&f->pair);
        return vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    }
    vs_players_feature_cells(c->h, c->w, (int)f->pair.fx->shape[2], (int)f->pair.fx->shape[3], f->cells);
    return VS_OK;
}

/* heat [H W], constant over each feature cell, becomes the bilinear upsampling of the cell values
 * (CAM's upsampling: the maps of feature-map methods are smooth, not blocks). */
static void smooth_cells(const vs_search_case *c, const feature_case *f, float *heat)
{
    const int64_t fh = f->pair.fx->shape[2], fw = f->pair.fx->shape[3];
    float *cell = malloc((size_t)f->hw * sizeof *cell);
    if (!cell) return; /* out of memory: the blocks stay */
    for (int64_t p = 0; p < (int64_t)c->h * c->w; p++) cell[f->cells[p]] = heat[p];
    vs_search_upsample(cell, fh, fw, c->h, c->w, heat);
    free(cell);
}

static void feature_close(feature_case *f)
{
    vs_search_pair_release(&f->pair);
    free(f->cells);
}

/* Project the query object through phi2 (players: nq by qmap, then nr by rmap) as densities. */
static void project(const vs_search_case *c, const double *phi2, int64_t nq, int64_t nr, const int32_t *qmap, const int32_t *rmap,
                    float *proj)
{
    const int64_t HW = (int64_t)c->h * c->w;
    float *q = calloc((size_t)HW, sizeof *q);
    if (!q) {
        for (int64_t p = 0; p < HW; p++) proj[p] = 0;
    } else {
        for (int64_t p = 0; p < HW; p++) q[p] = c->qmask[p];
        vs_search_project(phi2, nq, nr, qmap, rmap, HW, q, proj);
        int64_t *size = calloc((size_t)nr, sizeof *size);
        for (int64_t p = 0; size && p < HW; p++) size[rmap[p]]++;
        for (int64_t p = 0; size && p < HW; p++) proj[p] /= (float)size[rmap[p]];
        free(size);
    }
    free(q);
}

/* ---- feature-map methods ---------------------------------------------------------------------------- */

typedef enum { F_SAM, F_KSAM, F_IGSAM, F_GRADCAM, F_VESM } feature_kind;

static vs_status feature_first(const vs_search_case *c, feature_kind kind, float *heat, double *ineff, vs_error *err)
{
    feature_case f;
    vs_status st = feature_open(c, &f, err);
    if (st != VS_OK) return st;
    double *phi = malloc((size_t)f.hw * sizeof *phi);
    vs_masked_pair mp;
    vs_game g = vs_search_game_v1(&f.pair, &mp);
    if (!phi) st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    else if (kind == F_SAM) st = vs_search_sam(&f.pair, phi, err);
    else if (kind == F_IGSAM) st = vs_search_igsam(&f.pair, 32, phi, err);
    else if (kind == F_GRADCAM) st = vs_search_gradcam(&f.pair, phi, err);
    else if (kind == F_VESM) st = vs_search_vesm(&f.pair, phi, err);
    else {
        vs_kernel_opts o;
        vs_kernel_opts_init(&o);
        o.order = 1;
        o.budget = c->budget1;
        o.seed = c->seed;
        st = vs_game_kernel(&g, &o, phi, err);
    }
    if (st == VS_OK) {
        density(phi, f.hw, f.cells, (int64_t)c->h * c->w, heat);
        smooth_cells(c, &f, heat);
        *ineff = kind == F_VESM ? NAN : inefficiency(&g, phi, f.hw, err);
    }
    free(phi);
    feature_close(&f);
    return st;
}

typedef enum { S_SAM2, S_KSAM2, S_IGSAM2 } feature2_kind;

static vs_status feature_second(const vs_search_case *c, feature2_kind kind, float *proj, double *ineff, vs_error *err)
{
    feature_case f;
    vs_status st = feature_open(c, &f, err);
    if (st != VS_OK) return st;
    const int64_t n = 2 * f.hw;
    double *phi2 = malloc((size_t)(n * n) * sizeof *phi2);
    vs_masked_pair mp;
    vs_game g = vs_search_game_v2(&f.pair, &mp);
    if (!phi2) st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    else if (kind == S_SAM2) st = vs_search_sam2(&f.pair, phi2, err);
    else if (kind == S_IGSAM2) st = vs_search_igsam2(&f.pair, 8, phi2, err);
    else {
        vs_kernel_opts o;
        vs_kernel_opts_init(&o);
        o.budget = vs_search_ksam2_budget(c->budget2, n);
        o.seed = c->seed;
        st = vs_game_kernel(&g, &o, phi2, err);
    }
    if (st == VS_OK) {
        project(c, phi2, f.hw, f.hw, f.cells, f.cells, proj);
        smooth_cells(c, &f, proj);
        *ineff = inefficiency(&g, phi2, n * n, err);
    }
    free(phi2);
    feature_close(&f);
    return st;
}

int64_t vs_search_ksam2_budget(int64_t budget2, int64_t players) { return budget2 > players * players + 2 ? budget2 : players * players + 2; }

vs_status vs_search_cell_oracle(const vs_search_case *c, float *proj, vs_error *err)
{
    feature_case f;
    vs_status st = feature_open(c, &f, err);
    if (st != VS_OK) return st;
    const int64_t HW = (int64_t)c->h * c->w;
    double *share = calloc((size_t)f.hw, sizeof *share);
    if (!share) {
        st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    } else {
        for (int64_t p = 0; p < HW; p++) share[f.cells[p]] += c->rmask[p] != 0;
        density(share, f.hw, f.cells, HW, proj);
        smooth_cells(c, &f, proj);
    }
    free(share);
    feature_close(&f);
    return st;
}

static vs_status sam1(const vs_search_case *c, float *h, double *i, vs_error *e) { return feature_first(c, F_SAM, h, i, e); }
static vs_status ksam1(const vs_search_case *c, float *h, double *i, vs_error *e) { return feature_first(c, F_KSAM, h, i, e); }
static vs_status igsam1(const vs_search_case *c, float *h, double *i, vs_error *e) { return feature_first(c, F_IGSAM, h, i, e); }
static vs_status gradcam1(const vs_search_case *c, float *h, double *i, vs_error *e) { return feature_first(c, F_GRADCAM, h, i, e); }
static vs_status vesm1(const vs_search_case *c, float *h, double *i, vs_error *e) { return feature_first(c, F_VESM, h, i, e); }
static vs_status sam2(const vs_search_case *c, float *p, double *i, vs_error *e) { return feature_second(c, S_SAM2, p, i, e); }
static vs_status ksam2(const vs_search_case *c, float *p, double *i, vs_error *e) { return feature_second(c, S_KSAM2, p, i, e); }
static vs_status igsam2(const vs_search_case *c, float *p, double *i, vs_error *e) { return feature_second(c, S_IGSAM2, p, i, e); }

/* ---- pixel methods --------------------------------------------------------------------------------- */

/* Player maps of pixels (identity; + HW for the retrieved side of v2) and of superpixels, over the
 * case's one channel. */
typedef struct pixel_maps {
    int32_t *pix, *pix_r, *seg_r;
} pixel_maps;

static vs_status maps_open(const vs_search_case *c, pixel_maps *m, vs_error *err)
{
    const int64_t HW = (int64_t)c->h * c->w;
    m->pix = malloc((size_t)HW * sizeof *m->pix);
    m->pix_r = malloc((size_t)HW * sizeof *m->pix_r);
    m->seg_r = malloc((size_t)HW * sizeof *m->seg_r);
    if (!m->pix || !m->pix_r || !m->seg_r) return vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    for (int64_t p = 0; p < HW; p++) {
        m->pix[p] = (int32_t)p;
        m->pix_r[p] = (int32_t)(HW + p);
        m->seg_r[p] = (int32_t)(c->nq_seg + c->rseg[p]);
    }
    return VS_OK;
}

static void maps_close(pixel_maps *m)
{
    free(m->pix);
    free(m->pix_r);
    free(m->seg_r);
}

typedef enum { P_LIME, P_KSHAP, P_PSHAP, P_SBSM } pixel_kind;

static vs_status pixel_first(const vs_search_case *c, pixel_kind kind, float *heat, double *ineff, vs_error *err)
{
    pixel_maps m = {0};
    vs_status st = maps_open(c, &m, err);
    bool mean_bg = kind == P_LIME || kind == P_SBSM;
    const int64_t HW = (int64_t)c->h * c->w;
    vs_masked_pair mp = {pixel_score, (void *)c->model, c->x, c->y, mean_bg ? c->mx : c->bx, mean_bg ? c->my : c->by, NULL, NULL, 0};
    double *phi = malloc((size_t)c->nr_seg * sizeof *phi);
    if (st == VS_OK && !phi) st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
    *ineff = NAN;
    if (st == VS_OK && (kind == P_PSHAP || kind == P_SBSM)) {
        mp.ry = m.pix;
        mp.n = HW;
        vs_game g = vs_masked_pair_game(&mp);
        st = kind == P_PSHAP ? vs_search_partition_shap(&mp, c->h, c->w, 2, heat, err) : vs_search_sbsm(&mp, c->h, c->w, 6, 2, heat, err);
        if (st == VS_OK && kind == P_PSHAP) {
            double *hp = malloc((size_t)HW * sizeof *hp);
            for (int64_t p = 0; hp && p < HW; p++) hp[p] = heat[p];
            *ineff = hp ? inefficiency(&g, hp, HW, err) : NAN;
            free(hp);
        }
    } else if (st == VS_OK) {
        mp.ry = c->rseg;
        mp.n = c->nr_seg;
        vs_game g = vs_masked_pair_game(&mp);
        if (kind == P_LIME) {
            st = vs_game_lime(&g, 1, c->budget1, 0.25, 1.0, c->seed, phi, err);
        } else {
            vs_kernel_opts o;
            vs_kernel_opts_init(&o);
            o.order = 1;
            o.budget = c->budget1;
            o.seed = c->seed;
            o.pair_complements = true;
            st = vs_game_kernel(&g, &o, phi, err);
        }
        if (st == VS_OK) {
            density(phi, c->nr_seg, c->rseg, HW, heat);
            *ineff = inefficiency(&g, phi, c->nr_seg, err);
        }
    }
    free(phi);
    maps_close(&m);
    return st;
}

static vs_status pixel_second(const vs_search_case *c, pixel_kind kind, float *proj, double *ineff, vs_error *err)
{
    pixel_maps m = {0};
    vs_status st = maps_open(c, &m, err);
    const int64_t HW = (int64_t)c->h * c->w;
    bool mean_bg = kind == P_LIME || kind == P_SBSM;
    vs_masked_pair mp = {pixel_score, (void *)c->model, c->x, c->y, mean_bg ? c->mx : c->bx, mean_bg ? c->my : c->by, NULL, NULL, 0};
    *ineff = NAN;
    if (st == VS_OK && kind == P_SBSM) {
        /* 4 x 4 pixel cells on both sides */
        int32_t *cells = malloc((size_t)HW * sizeof *cells);
        int64_t nc = cells ? vs_players_patches(c->h, c->w, 4, cells) : 0, n = 2 * nc;
        double *corr = malloc((size_t)(nc * nc) * sizeof *corr), *phi2 = calloc((size_t)(n * n), sizeof *phi2);
        if (!cells || !corr || !phi2) st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
        mp.qx = m.pix;
        mp.ry = m.pix_r;
        mp.n = 2 * HW;
        if (st == VS_OK) st = vs_search_sbsm2(&mp, c->h, c->w, 6, cells, nc, cells, nc, c->budget2 / 2, c->seed, corr, err);
        for (int64_t a = 0; st == VS_OK && a < nc; a++)
            for (int64_t b = 0; b < nc; b++) phi2[a * n + nc + b] = phi2[(nc + b) * n + a] = corr[a * nc + b] / 2;
        if (st == VS_OK) project(c, phi2, nc, nc, cells, cells, proj);
        free(cells);
        free(corr);
        free(phi2);
    } else if (st == VS_OK) {
        const int64_t n = c->nq_seg + c->nr_seg;
        double *phi2 = malloc((size_t)(n * n) * sizeof *phi2);
        mp.qx = c->qseg;
        mp.ry = m.seg_r;
        mp.n = n;
        vs_game g = vs_masked_pair_game(&mp);
        if (!phi2) {
            st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
        } else if (kind == P_LIME) {
            st = vs_game_lime(&g, 2, c->budget2, 0.25, 1.0, c->seed, phi2, err);
        } else {
            vs_kernel_opts o;
            vs_kernel_opts_init(&o);
            o.budget = c->budget2;
            o.seed = c->seed;
            st = vs_game_kernel(&g, &o, phi2, err);
        }
        if (st == VS_OK) {
            project(c, phi2, c->nq_seg, c->nr_seg, c->qseg, c->rseg, proj);
            *ineff = inefficiency(&g, phi2, n * n, err);
        }
        free(phi2);
    }
    maps_close(&m);
    return st;
}

static vs_status lime1(const vs_search_case *c, float *h, double *i, vs_error *e) { return pixel_first(c, P_LIME, h, i, e); }
static vs_status kshap1(const vs_search_case *c, float *h, double *i, vs_error *e) { return pixel_first(c, P_KSHAP, h, i, e); }
static vs_status pshap1(const vs_search_case *c, float *h, double *i, vs_error *e) { return pixel_first(c, P_PSHAP, h, i, e); }
static vs_status sbsm1(const vs_search_case *c, float *h, double *i, vs_error *e) { return pixel_first(c, P_SBSM, h, i, e); }
static vs_status lime2(const vs_search_case *c, float *p, double *i, vs_error *e) { return pixel_second(c, P_LIME, p, i, e); }
static vs_status kshap2(const vs_search_case *c, float *p, double *i, vs_error *e) { return pixel_second(c, P_KSHAP, p, i, e); }
static vs_status sbsm2(const vs_search_case *c, float *p, double *i, vs_error *e) { return pixel_second(c, P_SBSM, p, i, e); }

const vs_search_method_row vs_search_methods[] = {
    {"SBSM", sbsm1, sbsm2},   {"PSHAP", pshap1, NULL}, {"LIME", lime1, lime2},    {"KSHAP", kshap1, kshap2}, {"VESM", vesm1, NULL},
    {"GCAM", gradcam1, NULL}, {"SAM", sam1, sam2},     {"IG-SAM", igsam1, igsam2}, {"KSAM", ksam1, ksam2},
};
const int vs_search_n_methods = (int)(sizeof vs_search_methods / sizeof vs_search_methods[0]);
