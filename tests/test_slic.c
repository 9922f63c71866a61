/* test_slic.c - CIELAB conversion and SLIC superpixels: quadrants, checkerboards, connectivity,
 * label numbering, determinism, gray/RGB agreement, bad input. */
#include "vs_check.h"
#include "versus/rng.h"
#include "versus/superpixel.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Each label forms exactly one 4-connected region, labels are 0..k-1, first seen in raster order. */
static void check_labels(const int32_t *lab, int h, int w, int k)
{
    size_t n = (size_t)h * w;
    int32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert(lab[i] >= 0 && lab[i] < k);
        ck_assert_int_le(lab[i], next);
        if (lab[i] == next) next++;
    }
    ck_assert_int_eq(next, k);
    uint8_t *seen = calloc(n, 1);
    size_t *queue = malloc(n * sizeof *queue);
    int32_t *first_region = malloc((size_t)k * sizeof *first_region);
    for (int j = 0; j < k; j++) first_region[j] = 0;
    for (size_t s = 0; s < n; s++) {
        if (seen[s]) continue;
        ck_assert_msg(!first_region[lab[s]], "label %d has two separate regions", lab[s]);
        first_region[lab[s]] = 1;
        size_t head = 0, tail = 0;
        queue[tail++] = s;
        seen[s] = 1;
        while (head < tail) {
            size_t p = queue[head++];
            int y = (int)(p / (size_t)w), x = (int)(p % (size_t)w);
            size_t nb[4];
            int nn = 0;
            if (x > 0) nb[nn++] = p - 1;
            if (x + 1 < w) nb[nn++] = p + 1;
            if (y > 0) nb[nn++] = p - (size_t)w;
            if (y + 1 < h) nb[nn++] = p + (size_t)w;
            for (int j = 0; j < nn; j++)
                if (!seen[nb[j]] && lab[nb[j]] == lab[p]) {
                    seen[nb[j]] = 1;
                    queue[tail++] = nb[j];
                }
        }
    }
    free(seen);
    free(queue);
    free(first_region);
}

/* x[0..n) uniform in [0,1) from a seeded generator. */
static void fill_uniform(float *x, size_t n, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) x[i] = vs_rng_uniformf(&r);
}

START_TEST(test_lab)
{
    static const float rgb[][3] = {{1, 1, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5f, 0.5f, 0.5f}};
    /* reference values of the sRGB -> CIELAB (D65) conversion */
    static const float lab[][3] = {{100, 0, 0},         {0, 0, 0},           {53.24f, 80.09f, 67.20f},
                                   {87.73f, -86.18f, 83.18f}, {32.30f, 79.19f, -107.86f}, {53.39f, 0, 0}};
    for (int i = 0; i < 6; i++) {
        float out[3];
        vs_srgb_to_lab(rgb[i], out);
        for (int k = 0; k < 3; k++) ck_assert_msg(fabsf(out[k] - lab[i][k]) < 0.05f, "colour %d channel %d: %g", i, k, out[k]);
    }
}
END_TEST

/* 40x40 gray quadrants with values v[0..3] plus uniform noise of amplitude amp. */
static void quadrants(float *img, const float v[4], float amp, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++) img[y * 40 + x] = v[(y >= 20) * 2 + (x >= 20)] + amp * (2 * vs_rng_uniformf(&r) - 1);
}

START_TEST(test_quadrants)
{
    static const float v[4] = {0.15f, 0.4f, 0.65f, 0.9f};
    float img[1600];
    int32_t lab[1600];
    quadrants(img, v, 0.04f, 1);
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 4;
    int k;
    vs_error e;
    ck_assert_msg(vs_slic(img, 1, 40, 40, &o, lab, &k, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(k, 4);
    check_labels(lab, 40, 40, k);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++) ck_assert_int_eq(lab[y * 40 + x], (y >= 20) * 2 + (x >= 20));

    /* with Gaussian smoothing and without the connectivity step: the blurred pixels next to the edges
     * may go either way, the rest is still exact */
    o.sigma = 1;
    o.enforce_connectivity = 0;
    ck_assert_int_eq(vs_slic(img, 1, 40, 40, &o, lab, &k, &e), VS_OK);
    ck_assert_int_eq(k, 4);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++)
            if (abs(2 * y - 39) > 3 && abs(2 * x - 39) > 3) ck_assert_int_eq(lab[y * 40 + x], (y >= 20) * 2 + (x >= 20));
}
END_TEST

START_TEST(test_rgb_quadrants_and_gray_agreement)
{
    /* four colours of similar lightness (gray would barely tell them apart) */
    static const float col[4][3] = {{0.8f, 0.2f, 0.2f}, {0.2f, 0.6f, 0.2f}, {0.3f, 0.3f, 0.9f}, {0.6f, 0.5f, 0.1f}};
    float img[3 * 1600];
    vs_rng r;
    vs_rng_seed(&r, 2);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++)
            for (int c = 0; c < 3; c++)
                img[c * 1600 + y * 40 + x] = col[(y >= 20) * 2 + (x >= 20)][c] + 0.03f * (2 * vs_rng_uniformf(&r) - 1);
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 4;
    int32_t lab[1600];
    int k;
    vs_error e;
    ck_assert_int_eq(vs_slic(img, 3, 40, 40, &o, lab, &k, &e), VS_OK);
    ck_assert_int_eq(k, 4);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++) ck_assert_int_eq(lab[y * 40 + x], (y >= 20) * 2 + (x >= 20));

    /* a gray image g and the RGB image (g,g,g) cluster identically */
    static const float v[4] = {0.2f, 0.5f, 0.35f, 0.8f};
    float g[1600], g3[3 * 1600];
    quadrants(g, v, 0.1f, 3);
    for (int c = 0; c < 3; c++) memcpy(g3 + c * 1600, g, sizeof g);
    int32_t l1[1600], l3[1600];
    int k1, k3;
    o.n_segments = 25;
    ck_assert_int_eq(vs_slic(g, 1, 40, 40, &o, l1, &k1, &e), VS_OK);
    ck_assert_int_eq(vs_slic(g3, 3, 40, 40, &o, l3, &k3, &e), VS_OK);
    ck_assert_int_eq(k1, k3);
    ck_assert_mem_eq(l1, l3, sizeof l1);
}
END_TEST

START_TEST(test_checkerboard_edges)
{
    /* 48x48 board of 8x8 squares, dark 0.1 and light 0.9: with one seed per square each superpixel
     * must stay inside one square, and every square is one superpixel */
    float img[48 * 48];
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 48; x++) img[y * 48 + x] = ((x / 8 + y / 8) % 2) ? 0.9f : 0.1f;
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 36;
    int32_t lab[48 * 48];
    int k;
    vs_error e;
    ck_assert_int_eq(vs_slic(img, 1, 48, 48, &o, lab, &k, &e), VS_OK);
    ck_assert_int_eq(k, 36);
    check_labels(lab, 48, 48, k);
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 48; x++) ck_assert_int_eq(lab[y * 48 + x], lab[(y / 8 * 8) * 48 + x / 8 * 8]);

    /* squares of 16 pixels, about four superpixels per square: none straddles a dark/light edge */
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 48; x++) img[y * 48 + x] = ((x / 16 + y / 16) % 2) ? 0.9f : 0.1f;
    ck_assert_int_eq(vs_slic(img, 1, 48, 48, &o, lab, &k, &e), VS_OK);
    ck_assert_int_ge(k, 27);
    check_labels(lab, 48, 48, k);
    float *seen = malloc((size_t)k * sizeof *seen);
    for (int j = 0; j < k; j++) seen[j] = -1;
    for (int i = 0; i < 48 * 48; i++) {
        if (seen[lab[i]] < 0) seen[lab[i]] = img[i];
        ck_assert_float_eq(seen[lab[i]], img[i]);
    }
    free(seen);
}
END_TEST

START_TEST(test_seed_moves_off_edges)
{
    /* 20x10, dark left half, bright right half, and a bright one-pixel spike exactly where the first
     * grid seed falls (5,5).  The seed must move to a flat spot (lowest gradient in 3x3) and start
     * dark; a seed left on the spike would start bright and, after one round, own the bright pixels
     * x = 10..14 that are nearer to it than to the second seed at (5,15). */
    float img[200];
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++) img[y * 20 + x] = x < 10 ? 0.1f : 0.9f;
    img[5 * 20 + 5] = 0.9f;
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 2;
    o.max_iter = 1;
    o.enforce_connectivity = 0;
    int32_t lab[200];
    int k;
    vs_error e;
    ck_assert_int_eq(vs_slic(img, 1, 10, 20, &o, lab, &k, &e), VS_OK);
    ck_assert_int_eq(k, 2);
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++)
            if (y != 5 || x != 5) ck_assert_int_eq(lab[y * 20 + x], x >= 10);
}
END_TEST

START_TEST(test_connectivity_and_sizes)
{
    /* smooth colour noise: many irregular segments, all connected, small pieces merged */
    enum { H = 30, W = 50 };
    float img[3 * H * W];
    fill_uniform(img, 3 * H * W, 11);
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 30;
    o.sigma = 1.5f;
    int32_t lab[H * W];
    int k;
    vs_error e;
    ck_assert_int_eq(vs_slic(img, 3, H, W, &o, lab, &k, &e), VS_OK);
    ck_assert_int_ge(k, 10);
    ck_assert_int_le(k, 60);
    check_labels(lab, H, W, k);
    /* every label but the first is at least min_size_factor x the mean segment size */
    int *size = calloc((size_t)k, sizeof *size);
    for (int i = 0; i < H * W; i++) size[lab[i]]++;
    for (int j = 1; j < k; j++) ck_assert_int_ge(size[j], (int)(0.5 * H * W / 30));
    free(size);

    /* without enforcement labels are renumbered 0..k-1 but need not be connected */
    o.enforce_connectivity = 0;
    ck_assert_int_eq(vs_slic(img, 3, H, W, &o, lab, &k, &e), VS_OK);
    int32_t next = 0;
    for (int i = 0; i < H * W; i++) {
        ck_assert(lab[i] >= 0 && lab[i] <= next);
        if (lab[i] == next) next++;
    }
    ck_assert_int_eq(next, k);

    /* more segments than pixels and a one-pixel image */
    float one = 0.5f;
    int32_t l1;
    o = vs_slic_defaults();
    ck_assert_int_eq(vs_slic(&one, 1, 1, 1, &o, &l1, &k, &e), VS_OK);
    ck_assert(k == 1 && l1 == 0);
    float tiny[6] = {0, 1, 0, 1, 0, 1};
    int32_t lt[6];
    ck_assert_int_eq(vs_slic(tiny, 1, 2, 3, &o, lt, &k, &e), VS_OK);
    check_labels(lt, 2, 3, k);
    /* a thin strip: one row */
    float strip[100];
    for (int i = 0; i < 100; i++) strip[i] = i < 50 ? 0.1f : 0.9f;
    int32_t ls[100];
    o.n_segments = 2;
    ck_assert_int_eq(vs_slic(strip, 1, 1, 100, &o, ls, &k, &e), VS_OK);
    ck_assert_int_eq(k, 2);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(ls[i], i >= 50);
}
END_TEST

START_TEST(test_deterministic)
{
    enum { H = 32, W = 32 };
    float img[3 * H * W];
    fill_uniform(img, 3 * H * W, 4);
    vs_slic_options o = vs_slic_defaults();
    o.n_segments = 16;
    o.sigma = 1;
    int32_t a[H * W], b[H * W];
    int ka, kb;
    vs_error e;
    ck_assert_int_eq(vs_slic(img, 3, H, W, &o, a, &ka, &e), VS_OK);
    ck_assert_int_eq(vs_slic(img, 3, H, W, &o, b, &kb, &e), VS_OK);
    ck_assert_int_eq(ka, kb);
    ck_assert_mem_eq(a, b, sizeof a);
    /* compactness matters: a very compact run gives a grid-like, different segmentation */
    o.compactness = 1000;
    ck_assert_int_eq(vs_slic(img, 3, H, W, &o, b, &kb, &e), VS_OK);
    ck_assert_int_eq(kb, 16);
    ck_assert(ka != kb || memcmp(a, b, sizeof a) != 0);
}
END_TEST

START_TEST(test_bad_input)
{
    float img[4] = {0, 0.5f, 1, NAN};
    int32_t lab[4];
    int k;
    vs_error e;
    vs_slic_options o = vs_slic_defaults();
    ck_assert_int_eq(vs_slic(img, 2, 2, 1, &o, lab, &k, &e), VS_ERR_ARG);
    ck_assert_int_eq(vs_slic(img, 1, 2, 2, &o, lab, &k, &e), VS_ERR_NUMERIC);
    ck_assert_msg(strstr(e.msg, "pixel 3"), "%s", e.msg);
    ck_assert_int_eq(vs_slic(img, 1, 0, 2, &o, lab, &k, &e), VS_ERR_ARG);
    o.n_segments = 0;
    ck_assert_int_eq(vs_slic(img, 1, 1, 2, &o, lab, &k, &e), VS_ERR_ARG);
    o = vs_slic_defaults();
    o.compactness = 0;
    ck_assert_int_eq(vs_slic(img, 1, 1, 2, &o, lab, &k, &e), VS_ERR_ARG);
    o = vs_slic_defaults();
    o.sigma = -1;
    ck_assert_int_eq(vs_slic(img, 1, 1, 2, &o, lab, &k, &e), VS_ERR_ARG);
    o = vs_slic_defaults();
    o.max_iter = 0;
    ck_assert_int_eq(vs_slic(img, 1, 1, 2, &o, lab, &k, &e), VS_ERR_ARG);
    ck_assert_int_eq(vs_slic(img, 1, 1, 2, NULL, lab, &k, &e), VS_OK); /* NULL options: defaults */
}
END_TEST

static Suite *slic_suite(void)
{
    Suite *s = suite_create("slic");
    TCase *tc = vs_tcase(s, "slic", 20);
    tcase_add_test(tc, test_lab);
    tcase_add_test(tc, test_quadrants);
    tcase_add_test(tc, test_rgb_quadrants_and_gray_agreement);
    tcase_add_test(tc, test_checkerboard_edges);
    tcase_add_test(tc, test_seed_moves_off_edges);
    tcase_add_test(tc, test_connectivity_and_sizes);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_bad_input);
    return s;
}

VS_TEST_MAIN(slic_suite)
