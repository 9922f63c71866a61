/* test_search.c - the search explainers (versus/search.h) on small GAP CNNs: SAM equals the exact
 * Shapley values of v1 and second-order SAM the exact Shapley-Taylor indices of v2 on GAP-dot models
 * (Props. 4.1, 5.1), kernel estimates with a full budget equal them, IG-SAM is SAM there and keeps the
 * dummy axiom where Grad-CAM breaks it (A.4), Partition SHAP is efficient, second-order LIME fits a
 * pairwise game, SBSM and the projection behave. */
#include "vs_check.h"
#include "versus/method.h"
#include "versus/search.h"

#include <math.h>

/* conv(c->4, 3x3, pad 1) relu conv(4->5, 3x3, pad 1) relu max_pool(pool) | GAP: split 5. */
static vs_module *gap_cnn(int c, int pool, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_module *m = vs_sequential_new();
    vs_sequential_add(m, vs_conv2d_new(c, 4, 3, 1, 1, true, &r));
    vs_sequential_add(m, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(m, vs_conv2d_new(4, 5, 3, 1, 1, true, &r));
    vs_sequential_add(m, vs_activation_new(VS_MODULE_RELU, 0));
    vs_sequential_add(m, vs_max_pool2d_new(pool, 0, 0));
    vs_sequential_add(m, vs_global_avg_pool_new());
    vs_module_train(m, false);
    return m;
}

static vs_tensor *random_image(int c, int h, int w, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_tensor *t = vs_tensor_zeros(4, (int64_t[]){1, c, h, w});
    for (int64_t k = 0; k < t->size; k++) t->data[k] = vs_rng_uniformf(&r);
    return t;
}

static vs_tensor *blurred(const vs_tensor *x)
{
    vs_tensor *b = vs_tensor_zeros(4, x->shape);
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_BLUR, x->data, 3, x->shape + 1, 2.0f, NULL, NULL, 0, b->data, NULL), VS_OK);
    return b;
}

typedef struct fixture {
    vs_module *cnn;
    vs_search_model model;
    vs_tensor *x, *y, *bx, *by;
    vs_search_pair pair;
} fixture;

static void setup(fixture *f, int size, int pool, vs_search_similarity sim)
{
    f->cnn = gap_cnn(1, pool, 3);
    f->model = (vs_search_model){.encoder = f->cnn, .split = 5, .similarity = sim};
    f->x = random_image(1, size, size, 10);
    f->y = random_image(1, size, size, 11);
    f->bx = blurred(f->x);
    f->by = blurred(f->y);
    f->pair = (vs_search_pair){.model = &f->model, .x = f->x, .y = f->y, .bx = f->bx, .by = f->by};
    ck_assert_int_eq(vs_search_pair_prepare(&f->pair, NULL), VS_OK);
}

static void teardown(fixture *f)
{
    vs_search_pair_release(&f->pair);
    vs_tensor_free(f->x);
    vs_tensor_free(f->y);
    vs_tensor_free(f->bx);
    vs_tensor_free(f->by);
    vs_module_free(f->cnn);
}

static double max_err(int64_t n, const double *a, const double *b)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
    return e;
}

/* Exact order-1 values or order-2 matrix of a game (n <= 20). */
static void exact(vs_game *g, int order, double *out)
{
    int n = (int)g->n;
    double *v = malloc(((size_t)1 << n) * sizeof *v);
    ck_assert_int_eq(vs_game_enumerate(g, v, NULL), VS_OK);
    vs_harsanyi_dividends(n, v);
    if (order == 1) vs_shapley_from_dividends(n, v, out);
    else vs_shapley_taylor2_matrix(n, v, out);
    free(v);
}

START_TEST(test_sam_is_shapley)
{
    fixture f;
    setup(&f, 8, 2, VS_SEARCH_DOT); /* 4 x 4 locations */
    int64_t hw = vs_search_locations(&f.pair);
    ck_assert_int_eq(hw, 16);
    double sam[16], ref[16], ksam[16], ig[16];
    ck_assert_int_eq(vs_search_sam(&f.pair, sam, NULL), VS_OK);
    vs_masked_pair mp;
    vs_game g = vs_search_game_v1(&f.pair, &mp);
    exact(&g, 1, ref);
    double scale = max_err(hw, ref, (double[16]){0});
    ck_assert_double_gt(scale, 1e-4);
    ck_assert_double_lt(max_err(hw, sam, ref), 1e-5 * (1 + scale));
    vs_kernel_opts o;
    vs_kernel_opts_init(&o);
    o.order = 1;
    o.budget = 1 << 16;
    g = vs_search_game_v1(&f.pair, &mp);
    ck_assert_int_eq(vs_game_kernel(&g, &o, ksam, NULL), VS_OK);
    ck_assert_double_lt(max_err(hw, ksam, ref), 1e-5 * (1 + scale));
    /* v1 is linear in the soft mask on a GAP-dot model: IG-SAM is SAM */
    ck_assert_int_eq(vs_search_igsam(&f.pair, 4, ig, NULL), VS_OK);
    ck_assert_double_lt(max_err(hw, ig, sam), 1e-4 * (1 + scale));
    teardown(&f);
}
END_TEST

/* Under a cosine head SAM is taken on the normalised embeddings: with a background whose feature
 * map is zero (v(empty) = cos(x, 0) = 0) its sum is v(N) = cos(x, y) exactly, where the raw dot form
 * would sum to <GAP(x), GAP(y)>, a number on the features' scale; and on the blurred background
 * its inefficiency is off only by |GAP(by)| against |GAP(y)|. */
START_TEST(test_sam_cosine_scale)
{
    fixture f;
    setup(&f, 8, 2, VS_SEARCH_COSINE);
    int64_t hw = vs_search_locations(&f.pair);
    double sam[16], sum = 0, dot = 0, nx = 0, ny = 0;
    vs_tensor *d = vs_search_head(&f.model, f.pair.fx, f.pair.fy);
    ck_assert_ptr_nonnull(d);
    double cosine = d->data[0];
    vs_tensor_free(d);
    const int64_t C = f.pair.fx->shape[1];
    for (int64_t c = 0; c < C; c++) {
        double gx = 0, gy = 0;
        for (int64_t k = 0; k < hw; k++) gx += f.pair.fx->data[c * hw + k] / (double)hw, gy += f.pair.fy->data[c * hw + k] / (double)hw;
        dot += gx * gy, nx += gx * gx, ny += gy * gy;
    }
    ck_assert_double_gt(fabs(dot - cosine), 0.05); /* the two forms differ on this model */
    memset(f.pair.fby->data, 0, (size_t)f.pair.fby->size * sizeof(float));
    ck_assert_int_eq(vs_search_sam(&f.pair, sam, NULL), VS_OK);
    for (int64_t k = 0; k < hw; k++) sum += sam[k];
    ck_assert_double_lt(fabs(sum - cosine), 1e-5);
    /* second order: the cross terms sum to the same (query background zero as well) */
    memset(f.pair.fbx->data, 0, (size_t)f.pair.fbx->size * sizeof(float));
    const int64_t n = 2 * hw;
    double *sam2 = malloc((size_t)(n * n) * sizeof *sam2), cross = 0;
    ck_assert_int_eq(vs_search_sam2(&f.pair, sam2, NULL), VS_OK);
    for (int64_t k = 0; k < hw; k++)
        for (int64_t l = 0; l < hw; l++) cross += sam2[k * n + hw + l] + sam2[(hw + l) * n + k];
    ck_assert_double_lt(fabs(cross - cosine), 1e-5);
    free(sam2);
    teardown(&f);
}
END_TEST

START_TEST(test_sam2_is_shapley_taylor)
{
    fixture f;
    setup(&f, 6, 2, VS_SEARCH_DOT); /* 3 x 3 locations per side: 18 players */
    const int n = 18;
    double *sam2 = malloc(n * n * sizeof *sam2), *ref = malloc(n * n * sizeof *ref), *ih = malloc(n * n * sizeof *ih);
    ck_assert_int_eq(vs_search_sam2(&f.pair, sam2, NULL), VS_OK);
    vs_masked_pair mp;
    vs_game g = vs_search_game_v2(&f.pair, &mp);
    ck_assert_int_eq(g.n, n);
    exact(&g, 2, ref);
    double scale = max_err(n * n, ref, (double[324]){0});
    ck_assert_double_gt(scale, 1e-5);
    ck_assert_double_lt(max_err(n * n, sam2, ref), 1e-5 * (1 + scale));
    /* A.14: on GAP-dot models Integrated Hessians' cross pairs are proportional to the indices
     * (half of them in the matrix layout of versus/games.h) */
    ck_assert_int_eq(vs_search_igsam2(&f.pair, 4, ih, NULL), VS_OK);
    double tot = 0;
    for (int a = 0; a < 9; a++)
        for (int b = 9; b < n; b++) ck_assert_float_near(ih[a * n + b] + ih[b * n + a], (ref[a * n + b] + ref[b * n + a]) / 2, 1e-4 * (1 + scale));
    for (int k = 0; k < n * n; k++) tot += ih[k];
    double full = 0, none = 0;
    uint8_t z[18];
    memset(z, 1, sizeof z);
    g.values(g.ctx, 1, z, &full, NULL);
    memset(z, 0, sizeof z);
    g.values(g.ctx, 1, z, &none, NULL);
    ck_assert_float_near(tot, full - none, 1e-4 * (1 + fabs(full)));
    free(sam2);
    free(ref);
    free(ih);
    teardown(&f);
}
END_TEST

/* A.4: d = cos(GAP(fx), GAP(fy * M)), M = 0 on the left half of the retrieved feature map. */
static vs_tensor *left_blind(void *ctx, vs_tensor *fx, vs_tensor *fy)
{
    (void)ctx;
    vs_scope_begin();
    int64_t w = fy->shape[3];
    vs_tensor *mask = vs_tensor_zeros(4, (int64_t[]){1, 1, 1, w});
    for (int64_t k = w / 2; k < w; k++) mask->data[k] = 1;
    vs_tensor *gx = vs_mean(fx, VS_AXIS(2) | VS_AXIS(3), false), *gy = vs_mean(vs_mul(fy, mask), VS_AXIS(2) | VS_AXIS(3), false);
    return vs_scope_return(vs_cosine_similarity(gx, gy, 1, 1e-8f));
}

START_TEST(test_gradcam_dummy)
{
    fixture f;
    setup(&f, 8, 2, VS_SEARCH_COSINE);
    f.model.head = left_blind;
    int64_t hw = vs_search_locations(&f.pair), w = f.pair.fy->shape[3];
    double gc[16], ig[16], ks[16];
    ck_assert_int_eq(vs_search_gradcam(&f.pair, gc, NULL), VS_OK);
    ck_assert_int_eq(vs_search_igsam(&f.pair, 16, ig, NULL), VS_OK);
    vs_kernel_opts o;
    vs_kernel_opts_init(&o);
    o.order = 1;
    o.budget = 1 << 16;
    vs_masked_pair mp;
    vs_game g = vs_search_game_v1(&f.pair, &mp);
    ck_assert_int_eq(vs_game_kernel(&g, &o, ks, NULL), VS_OK);
    double gc_left = 0, ig_left = 0, ks_left = 0, gc_all = 0;
    for (int64_t k = 0; k < hw; k++) gc_all = fmax(gc_all, fabs(gc[k]));
    for (int64_t k = 0; k < hw; k++)
        if (k % w < w / 2) {
            gc_left = fmax(gc_left, fabs(gc[k]));
            ig_left = fmax(ig_left, fabs(ig[k]));
            ks_left = fmax(ks_left, fabs(ks[k]));
        }
    ck_assert_double_gt(gc_left, 0.1 * gc_all); /* Grad-CAM credits features the function never reads */
    ck_assert_double_lt(ig_left, 1e-7);
    ck_assert_double_lt(ks_left, 1e-7);
    teardown(&f);
}
END_TEST

static vs_tensor *pixel_score(void *ctx, vs_tensor *a, vs_tensor *b) { return vs_search_similarity_of(ctx, a, b); }

START_TEST(test_pixel_methods)
{
    fixture f;
    setup(&f, 8, 2, VS_SEARCH_COSINE);
    const int h = 8, w = 8, HW = 64;
    int32_t pix[64], pix2[64], cells[64];
    for (int k = 0; k < HW; k++) {
        pix[k] = k;
        pix2[k] = HW + k;
    }
    vs_masked_pair mp = {pixel_score, &f.model, f.x, f.y, f.bx, f.by, NULL, pix, HW};
    float heat[64], sb[64];
    ck_assert_int_eq(vs_search_partition_shap(&mp, h, w, 2, heat, NULL), VS_OK);
    vs_game g = vs_masked_pair_game(&mp);
    uint8_t z[128];
    double full, none, sum = 0;
    memset(z, 1, HW);
    g.values(g.ctx, 1, z, &full, NULL);
    memset(z, 0, HW);
    g.values(g.ctx, 1, z, &none, NULL);
    for (int k = 0; k < HW; k++) sum += heat[k];
    ck_assert_float_near(sum, full - none, 1e-5);
    ck_assert_int_eq(vs_search_sbsm(&mp, h, w, 3, 1, sb, NULL), VS_OK);
    for (int k = 0; k < HW; k++) ck_assert(sb[k] >= 0 && isfinite(sb[k]));
    /* second-order SBSM over 2 x 2 cells of both images */
    int64_t nc = vs_players_patches(h, w, 4, cells);
    ck_assert_int_eq(nc, 4);
    vs_masked_pair mp2 = {pixel_score, &f.model, f.x, f.y, f.bx, f.by, pix, pix2, 2 * HW};
    double corr[16];
    ck_assert_int_eq(vs_search_sbsm2(&mp2, h, w, 4, cells, nc, cells, nc, 200, 1, corr, NULL), VS_OK);
    for (int k = 0; k < 16; k++) ck_assert(corr[k] >= 0 && isfinite(corr[k]));
    vs_masked_pair bad = mp;
    bad.n = 10;
    ck_assert_int_eq(vs_search_sbsm(&bad, h, w, 3, 1, sb, NULL), VS_ERR_ARG);
    teardown(&f);
}
END_TEST

/* v(S) = sum of c over the pairs and singles in S: order-2 LIME without a penalty recovers it. */
static vs_status pairwise_values(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err)
{
    (void)err;
    const double *c = ctx;
    for (int64_t r = 0; r < m; r++) {
        v[r] = 1.5;
        for (int i = 0; i < 6; i++)
            for (int j = i; j < 6; j++)
                if (z[r * 6 + i] && z[r * 6 + j]) v[r] += c[i * 6 + j];
    }
    return VS_OK;
}

START_TEST(test_lime_orders)
{
    double c[36], phi[36];
    for (int k = 0; k < 36; k++) c[k] = sin(1.0 + k);
    vs_game g = {.n = 6, .values = pairwise_values, .ctx = c};
    ck_assert_int_eq(vs_game_lime(&g, 2, 200, 0.25, 0, 3, phi, NULL), VS_OK);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) ck_assert_float_near(phi[i * 6 + j], i == j ? c[i * 6 + i] : c[(i < j ? i : j) * 6 + (i < j ? j : i)] / 2, 1e-6);
    ck_assert_int_eq(vs_game_lime(&g, 1, 200, 0.25, 1.0, 3, phi, NULL), VS_OK);
    ck_assert_int_eq(vs_game_lime(&g, 3, 200, 0.25, 1.0, 3, phi, NULL), VS_ERR_ARG);
}
END_TEST

START_TEST(test_projection)
{
    /* 2 query players (left, right half), 2 retrieved players; left corresponds to right */
    const int64_t nq = 2, nr = 2, n = 4;
    double phi2[16] = {0};
    phi2[0 * n + 3] = phi2[3 * n + 0] = 0.5; /* query 0 <-> retrieved 1 */
    phi2[1 * n + 2] = phi2[2 * n + 1] = 0.1; /* query 1 <-> retrieved 0 */
    int32_t qmap[4] = {0, 1, 0, 1}, rmap[4] = {0, 1, 0, 1};
    float qmask[4] = {1, 0, 1, 0}, out[4];
    vs_search_project(phi2, nq, nr, qmap, rmap, 4, qmask, out);
    ck_assert_float_near(out[1], 1.0, 1e-6);
    ck_assert_float_near(out[0], 0.0, 1e-6);
    /* the bilinear upsampling of a cell map: the same size is the identity, a linear ramp stays a
     * ramp inside, the border is clamped, and values stay within the cells' range */
    float cell[6] = {0, 1, 2, 3, 4, 5}, big[12 * 8], same[6];
    vs_search_upsample(cell, 2, 3, 2, 3, same);
    for (int k = 0; k < 6; k++) ck_assert_float_eq(same[k], cell[k]);
    vs_search_upsample(cell, 2, 3, 8, 12, big);
    ck_assert_float_eq(big[0], 0);
    ck_assert_float_eq(big[8 * 12 - 1], 5);
    for (int k = 0; k < 8 * 12; k++) ck_assert(big[k] >= 0 && big[k] <= 5);
    for (int y = 2; y < 6; y++) /* between the cell centres the map is linear: equal steps along x */
        for (int x = 2; x + 2 < 10; x++) ck_assert_float_near(big[y * 12 + x + 1] - big[y * 12 + x], big[y * 12 + x + 2] - big[y * 12 + x + 1], 1e-5);
}
END_TEST

/* f(x) = x W x^T + x c over 6 inputs: pairs (W_ij + W_ji) x_i x_j, singles W_ii x_i^2 + c_i x_i. */
static vs_tensor *quadratic_forward(void *ctx, vs_tensor *x)
{
    const float *wc = ctx;
    vs_scope_begin();
    vs_tensor *W = vs_tensor_from(2, (int64_t[]){6, 6}, wc), *c = vs_tensor_from(2, (int64_t[]){6, 1}, wc + 36);
    vs_tensor *f = vs_add(vs_sum(vs_mul(x, vs_matmul(x, W)), VS_AXIS(1), true), vs_matmul(x, c));
    return vs_scope_return(f);
}

START_TEST(test_registered_shapley_taylor)
{
    float wc[42], xv[6] = {0.5f, -1, 2, 1.5f, -0.5f, 1};
    for (int k = 0; k < 42; k++) wc[k] = (float)sin(0.7 * k + 0.3);
    vs_model_fn fn = {.forward = quadratic_forward, .ctx = wc};
    const vs_method *m = vs_method_find("shapley_taylor");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->output, VS_OUTPUT_INTERACTIONS);
    /* 64 samples cover all 2^6 coalitions, so every sampling scheme must give the exact indices */
    static const char *const sampling[] = {"direct", "weighting", "leverage"};
    for (int k = 0; k < 3; k++) {
        vs_method_opts *o = vs_method_opts_new(m);
        ck_assert_int_eq(vs_method_opts_set(o, "samples", "64", NULL), VS_OK);
        ck_assert_int_eq(vs_method_opts_set(o, "sampling", sampling[k], NULL), VS_OK);
        ck_assert_int_eq(vs_method_opts_set(o, "sampling", "sideways", NULL), VS_ERR_ARG);
        vs_tensor *x = vs_tensor_from(2, (int64_t[]){1, 6}, xv), *out = NULL;
        vs_attr_report rep;
        ck_assert_int_eq(vs_explain(&fn, x, m, o, NULL, &out, &rep, NULL), VS_OK);
        ck_assert_int_eq(out->ndim, 3);
        ck_assert_int_eq(out->shape[1], 6);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double want = i == j ? wc[i * 6 + i] * xv[i] * xv[i] + wc[36 + i] * xv[i] : (wc[i * 6 + j] + wc[j * 6 + i]) * xv[i] * xv[j] / 2;
                ck_assert_float_near(out->data[i * 6 + j], want, 1e-5);
            }
        ck_assert_float_near(rep.delta, 0, 1e-5); /* efficiency */
        vs_tensor_free(out);
        vs_tensor_free(x);
        vs_method_opts_free(o);
    }
}
END_TEST

static Suite *search_suite(void)
{
    Suite *s = suite_create("search");
    TCase *tc = vs_tcase(s, "axioms", 240);
    tcase_add_test(tc, test_sam_is_shapley);
    tcase_add_test(tc, test_sam_cosine_scale);
    tcase_add_test(tc, test_sam2_is_shapley_taylor);
    tcase_add_test(tc, test_gradcam_dummy);
    tc = vs_tcase(s, "methods", 120);
    tcase_add_test(tc, test_pixel_methods);
    tcase_add_test(tc, test_lime_orders);
    tcase_add_test(tc, test_projection);
    tcase_add_test(tc, test_registered_shapley_taylor);
    return s;
}

VS_TEST_MAIN(search_suite)
