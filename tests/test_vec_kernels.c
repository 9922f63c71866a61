/* test_vec_kernels.c - the vectorised kernels of the elementwise maps, their derivative masks,
 * broadcast binary ops, sums over axes and 2x2 max pooling, each against a plain scalar reference
 * written here: odd sizes (1, 7 x 13, 1023 and one above the parallel threshold), NaN, inf and -0
 * inputs, and the same bits at 1, 2 and 3 threads. */
#include "versus/ops.h"
#include "versus/rng.h"
#include "versus/threads.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1, 7 x 13, 1023, and more than two parallel chunks of 32768 */
static const int64_t SIZES[] = {1, 7 * 13, 1023, (1 << 17) + 5};
#define N_SIZES 4

/* Multiples of 1/1024 in [-2, 2) (so sums in double are exact in any order); with `specials`,
 * NaN, +inf, -inf, -0 and 0 at scattered positions. */
static void fill(float *x, int64_t n, uint64_t seed, bool specials)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) x[i] = (float)((int64_t)vs_rng_below(&r, 4096) - 2048) / 1024.0f;
    if (!specials) return;
    static const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
    for (int64_t i = 0; i < n; i += 37) x[i] = sp[(i / 37) % 5];
}

static vs_tensor *filled(int ndim, const int64_t *shape, uint64_t seed, bool specials)
{
    vs_tensor *t = vs_tensor_new(ndim, shape);
    ck_assert_ptr_nonnull(t);
    fill(t->data, t->size, seed, specials);
    return t;
}

/* Same float: equal bits, or both NaN (a NaN's sign and payload are not specified). */
static void ck_same(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(want[i])) continue;
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
            ck_abort_msg("%s: element %lld is %a, want %a", what, (long long)i, (double)got[i], (double)want[i]);
    }
}

/* ---- unary maps and their derivative masks ---- */

typedef enum { M_RELU, M_LEAKY, M_NEG, M_ABS, M_CLAMP, M_SQRT, M_SIGN, M_STEP, M_COUNT } map;
static const char *const MAP_NAMES[] = {"relu", "leaky_relu", "neg", "abs", "clamp", "sqrt", "sign", "step"};
#define SLOPE 0.01f
#define LO -0.5f
#define HI 0.75f

static vs_tensor *map_op(map m, vs_tensor *x)
{
    switch (m) {
    case M_RELU: return vs_relu(x);
    case M_LEAKY: return vs_leaky_relu(x, SLOPE);
    case M_NEG: return vs_neg(x);
    case M_ABS: return vs_abs(x);
    case M_CLAMP: return vs_clamp(x, LO, HI);
    case M_SQRT: return vs_sqrt(x);
    case M_SIGN: return vs_sign(x);
    default: return vs_step(x);
    }
}

static float map_ref(map m, float x)
{
    switch (m) {
    case M_RELU: return x > 0 ? x : 0.0f;
    case M_LEAKY: return x > 0 ? x : SLOPE * x;
    case M_NEG: return -x;
    case M_ABS: return fabsf(x);
    case M_CLAMP: return x < LO ? LO : (x > HI ? HI : x);
    case M_SQRT: return sqrtf(x);
    case M_SIGN: return (float)((x > 0) - (x < 0));
    default: return x > 0 ? 1.0f : 0.0f;
    }
}

/* f'(x) of the piecewise-linear maps */
static float mask_ref(map m, float x)
{
    switch (m) {
    case M_RELU: return x > 0 ? 1.0f : 0.0f;
    case M_LEAKY: return x > 0 ? 1.0f : SLOPE;
    case M_CLAMP: return x >= LO && x <= HI ? 1.0f : 0.0f;
    default: return (float)((x > 0) - (x < 0)); /* abs */
    }
}

START_TEST(test_unary_maps)
{
    for (int s = 0; s < N_SIZES; s++)
        for (map m = 0; m < M_COUNT; m++) {
            vs_scope_begin();
            const int64_t n = SIZES[s];
            vs_tensor *x = filled(1, &n, 100 + (uint64_t)s, true);
            vs_tensor *y = map_op(m, x);
            ck_assert_ptr_nonnull(y);
            float *want = malloc((size_t)n * sizeof *want);
            for (int64_t i = 0; i < n; i++) want[i] = map_ref(m, x->data[i]);
            ck_same(y->data, want, n, MAP_NAMES[m]);
            free(want);
            vs_scope_end();
        }
}
END_TEST

START_TEST(test_derivative_masks)
{
    static const map masked[] = {M_RELU, M_LEAKY, M_CLAMP, M_ABS};
    for (int s = 0; s < N_SIZES; s++)
        for (int k = 0; k < 4; k++) {
            vs_scope_begin();
            const int64_t n = SIZES[s];
            vs_tensor *x = filled(1, &n, 200 + (uint64_t)s, true), *w = filled(1, &n, 300 + (uint64_t)s, false);
            vs_set_requires_grad(x, true);
            /* d/dx sum(f(x) w) = w f'(x), one product per element */
            vs_tensor *loss = vs_sum(vs_mul(map_op(masked[k], x), w), VS_ALL_AXES, false);
            ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
            ck_assert_ptr_nonnull(x->grad);
            float *want = malloc((size_t)n * sizeof *want);
            for (int64_t i = 0; i < n; i++) want[i] = w->data[i] * mask_ref(masked[k], x->data[i]);
            ck_same(x->grad->data, want, n, MAP_NAMES[masked[k]]);
            free(want);
            vs_scope_end();
        }
}
END_TEST

/* ---- broadcasting binary ops ---- */

typedef vs_tensor *(*bin_fn)(vs_tensor *, vs_tensor *);

static float bin_ref(int op, float a, float b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
    }
}

/* y = a op b for a [shape_a] and b [shape_b] broadcast to 4-d [out]; checked element by element. */
static void check_broadcast(const int64_t *sa, const int64_t *sb, const int64_t *out, uint64_t seed)
{
    static const bin_fn fns[] = {vs_add, vs_sub, vs_mul, vs_div};
    static const char *const names[] = {"add", "sub", "mul", "div"};
    vs_scope_begin();
    vs_tensor *a = filled(4, sa, seed, true), *b = filled(4, sb, seed + 1, true);
    for (int op = 0; op < 4; op++) {
        vs_tensor *y = fns[op](a, b);
        ck_assert_ptr_nonnull(y);
        ck_assert_int_eq(y->size, out[0] * out[1] * out[2] * out[3]);
        float *want = malloc((size_t)y->size * sizeof *want);
        int64_t o = 0;
        for (int64_t i = 0; i < out[0]; i++)
            for (int64_t j = 0; j < out[1]; j++)
                for (int64_t k = 0; k < out[2]; k++)
                    for (int64_t l = 0; l < out[3]; l++) {
                        const int64_t ia = (((i % sa[0]) * sa[1] + j % sa[1]) * sa[2] + k % sa[2]) * sa[3] + l % sa[3];
                        const int64_t ib = (((i % sb[0]) * sb[1] + j % sb[1]) * sb[2] + k % sb[2]) * sb[3] + l % sb[3];
                        want[o++] = bin_ref(op, a->data[ia], b->data[ib]);
                    }
        ck_same(y->data, want, y->size, names[op]);
        free(want);
    }
    vs_scope_end();
}

START_TEST(test_binary_broadcast)
{
    for (int s = 0; s < N_SIZES; s++) {
        const int64_t n = SIZES[s];
        check_broadcast((int64_t[]){1, 1, 1, n}, (int64_t[]){1, 1, 1, n}, (int64_t[]){1, 1, 1, n}, 10); /* same shape */
        check_broadcast((int64_t[]){1, 1, 1, n}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1, 1, n}, 20); /* tensor op scalar */
        check_broadcast((int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1, 1, n}, (int64_t[]){1, 1, 1, n}, 30); /* scalar op tensor */
    }
    /* bias over channels, per column, per row, both sides broadcast */
    check_broadcast((int64_t[]){3, 5, 7, 13}, (int64_t[]){1, 5, 1, 1}, (int64_t[]){3, 5, 7, 13}, 40);
    check_broadcast((int64_t[]){3, 5, 7, 13}, (int64_t[]){1, 1, 1, 13}, (int64_t[]){3, 5, 7, 13}, 50);
    check_broadcast((int64_t[]){3, 5, 7, 13}, (int64_t[]){3, 5, 7, 1}, (int64_t[]){3, 5, 7, 13}, 60);
    check_broadcast((int64_t[]){3, 1, 7, 1}, (int64_t[]){1, 5, 1, 13}, (int64_t[]){3, 5, 7, 13}, 70);
    check_broadcast((int64_t[]){4, 64, 17, 31}, (int64_t[]){1, 64, 1, 1}, (int64_t[]){4, 64, 17, 31}, 80);
}
END_TEST

START_TEST(test_scalar_forms)
{
    for (int s = 0; s < N_SIZES; s++) {
        vs_scope_begin();
        const int64_t n = SIZES[s];
        vs_tensor *x = filled(1, &n, 400 + (uint64_t)s, true);
        vs_tensor *ya = vs_add_scalar(x, 0.375f), *ym = vs_mul_scalar(x, -1.5f), *yp = vs_pow_scalar(x, 2.0f);
        ck_assert(ya && ym && yp);
        float *want = malloc((size_t)n * 3 * sizeof *want);
        for (int64_t i = 0; i < n; i++) {
            want[i] = x->data[i] + 0.375f;
            want[n + i] = x->data[i] * -1.5f;
            want[2 * n + i] = x->data[i] * x->data[i];
        }
        ck_same(ya->data, want, n, "add_scalar");
        ck_same(ym->data, want + n, n, "mul_scalar");
        ck_same(yp->data, want + 2 * n, n, "pow_scalar 2");
        free(want);
        vs_scope_end();
    }
}
END_TEST

/* ---- sums over axes ---- */

/* Sum of x [d0,d1,d2,d3] over the axes in mask, by the definition, in double. */
static void sum_ref(const vs_tensor *x, uint32_t mask, float *out, int64_t out_size)
{
    double *acc = calloc((size_t)out_size, sizeof *acc);
    const int64_t *d = x->shape;
    int64_t i[4];
    for (i[0] = 0; i[0] < d[0]; i[0]++)
        for (i[1] = 0; i[1] < d[1]; i[1]++)
            for (i[2] = 0; i[2] < d[2]; i[2]++)
                for (i[3] = 0; i[3] < d[3]; i[3]++) {
                    int64_t o = 0;
                    for (int k = 0; k < 4; k++)
                        if (!(mask & VS_AXIS(k))) o = o * d[k] + i[k];
                    acc[o] += x->data[((i[0] * d[1] + i[1]) * d[2] + i[2]) * d[3] + i[3]];
                }
    for (int64_t k = 0; k < out_size; k++) out[k] = (float)acc[k];
    free(acc);
}

static const uint32_t MASKS[] = {VS_AXIS(0) | VS_AXIS(2) | VS_AXIS(3), VS_AXIS(1), VS_AXIS(3), VS_AXIS(0) | VS_AXIS(1),
                                 VS_AXIS(2), VS_AXIS(0) | VS_AXIS(3), VS_ALL_AXES};
#define N_MASKS 7

START_TEST(test_sums)
{
    /* the exact data make the double sums exact in any order: the reference must match bit for bit */
    static const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 7, 1, 13}, {3, 1, 1, 1023}, {7, 13, 3, 5}, {8, 33, 29, 31}};
    for (int s = 0; s < 5; s++)
        for (int m = 0; m < N_MASKS; m++) {
            vs_scope_begin();
            vs_tensor *x = filled(4, shapes[s], 500 + (uint64_t)s, false);
            vs_tensor *y = vs_sum(x, MASKS[m], false);
            ck_assert_ptr_nonnull(y);
            float *want = malloc((size_t)y->size * sizeof *want);
            sum_ref(x, MASKS[m], want, y->size);
            ck_same(y->data, want, y->size, "sum");
            free(want);
            vs_scope_end();
        }
}
END_TEST

START_TEST(test_sum_nonfinite)
{
    vs_scope_begin();
    vs_tensor *x = filled(VS_SHAPE(3, 5, 7, 13), 600, false);
    x->data[(1 * 5 + 2) * 91 + 40] = NAN;      /* channel 2 */
    x->data[(2 * 5 + 3) * 91 + 90] = INFINITY; /* channel 3, in the tail of the row */
    vs_tensor *y = vs_sum(x, VS_AXIS(0) | VS_AXIS(2) | VS_AXIS(3), false);
    ck_assert(isnan(y->data[2]) && y->data[3] == INFINITY && isfinite(y->data[0]) && isfinite(y->data[4]));
    vs_scope_end();
}
END_TEST

/* ---- max pooling ---- */

/* max_pool2d by the definition: first maximum of each window wins, NaN propagates. */
static void max_pool_ref(const vs_tensor *x, int k, int s, int p, float *y, int64_t *arg)
{
    const int64_t planes = x->shape[0] * x->shape[1], h = x->shape[2], w = x->shape[3];
    const int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                float m = 0;
                int64_t best = -1;
                for (int64_t r = i * s - p; r < i * s - p + k; r++)
                    for (int64_t c = j * s - p; c < j * s - p + k; c++) {
                        if (r < 0 || r >= h || c < 0 || c >= w) continue;
                        const float v = x->data[(pl * h + r) * w + c];
                        if (best < 0 || (!isnan(m) && (isnan(v) || v > m))) {
                            m = v;
                            best = (pl * h + r) * w + c;
                        }
                    }
                y[(pl * oh + i) * ow + j] = m;
                arg[(pl * oh + i) * ow + j] = best;
            }
}

static void check_max_pool(const int64_t *shape, int k, int s, int p, uint64_t seed)
{
    vs_scope_begin();
    vs_tensor *x = filled(4, shape, seed, true);
    for (int64_t i = 0; i < x->size; i++) x->data[i] = isfinite(x->data[i]) ? roundf(x->data[i]) : x->data[i]; /* ties */
    vs_set_requires_grad(x, true);
    vs_tensor *y = vs_max_pool2d(x, k, s, p);
    ck_assert_ptr_nonnull(y);
    float *want = malloc((size_t)y->size * sizeof *want);
    int64_t *arg = malloc((size_t)y->size * sizeof *arg);
    max_pool_ref(x, k, s, p, want, arg);
    ck_same(y->data, want, y->size, "max_pool2d");
    /* gradient of sum(y w): w scattered to the argmax positions */
    vs_tensor *w = filled(y->ndim, y->shape, seed + 1, false);
    ck_assert_int_eq(vs_backward(vs_sum(vs_mul(y, w), VS_ALL_AXES, false), NULL, false), VS_OK);
    float *gwant = calloc((size_t)x->size, sizeof *gwant);
    for (int64_t o = 0; o < y->size; o++) gwant[arg[o]] += w->data[o];
    ck_same(x->grad->data, gwant, x->size, "max_pool2d gradient");
    free(gwant);
    free(arg);
    free(want);
    vs_scope_end();
}

START_TEST(test_max_pool)
{
    /* the 2x2 stride-2 fast path: odd sizes drop the last row and column; w = 1023 spans blocks */
    check_max_pool((int64_t[]){1, 1, 2, 2}, 2, 2, 0, 700);
    check_max_pool((int64_t[]){2, 3, 7, 13}, 2, 2, 0, 710);
    check_max_pool((int64_t[]){1, 2, 5, 1023}, 2, 2, 0, 720);
    check_max_pool((int64_t[]){4, 8, 28, 28}, 2, 2, 0, 730);
    /* the general path: overlapping, padded and stride-1 windows */
    check_max_pool((int64_t[]){2, 3, 7, 13}, 3, 2, 1, 740);
    check_max_pool((int64_t[]){1, 2, 9, 11}, 2, 1, 0, 750);
    check_max_pool((int64_t[]){1, 1, 8, 8}, 2, 2, 1, 760);
}
END_TEST

/* ---- thread counts ---- */

/* Every kernel above on tensors over the parallel threshold: the same bits at 1, 2 and 3 threads. */
START_TEST(test_threads_identical)
{
    const int64_t shape[4] = {8, 33, 29, 31};
    float *first[16] = {0};
    int64_t sizes[16];
    for (int t = 1; t <= 3; t++) {
        vs_set_threads(t);
        vs_scope_begin();
        vs_tensor *x = filled(4, shape, 800, false), *b = filled(VS_SHAPE(1, 33, 1, 1), 801, false);
        for (int64_t i = 0; i < x->size; i++) x->data[i] = x->data[i] * 1.37f + 1e-3f; /* inexact sums */
        vs_set_requires_grad(x, true);
        vs_tensor *outs[16];
        int n = 0;
        for (int m = 0; m < N_MASKS; m++) outs[n++] = vs_sum(x, MASKS[m], false);
        outs[n++] = vs_mean(x, VS_AXIS(0) | VS_AXIS(2), true);
        outs[n++] = vs_add(x, b);
        outs[n++] = vs_leaky_relu(x, SLOPE);
        outs[n++] = vs_mul_scalar(x, 0.3f);
        vs_tensor *pool = vs_max_pool2d(x, 2, 2, 0);
        outs[n++] = pool;
        ck_assert_int_eq(vs_backward(vs_sum(vs_mul(vs_leaky_relu(pool, SLOPE), pool), VS_ALL_AXES, false), NULL, false), VS_OK);
        outs[n++] = x->grad;
        for (int k = 0; k < n; k++) {
            ck_assert_ptr_nonnull(outs[k]);
            if (t == 1) {
                sizes[k] = outs[k]->size;
                first[k] = malloc((size_t)sizes[k] * sizeof(float));
                memcpy(first[k], outs[k]->data, (size_t)sizes[k] * sizeof(float));
            } else {
                ck_assert_int_eq(outs[k]->size, sizes[k]);
                ck_assert_msg(memcmp(first[k], outs[k]->data, (size_t)sizes[k] * sizeof(float)) == 0,
                              "output %d differs at %d threads", k, t);
            }
        }
        vs_scope_end();
    }
    vs_set_threads(0);
    for (int k = 0; k < 16; k++) free(first[k]);
}
END_TEST

static Suite *vec_kernels_suite(void)
{
    Suite *s = suite_create("vec_kernels");
    TCase *tc = vs_tcase(s, "elementwise", 60);
    tcase_add_test(tc, test_unary_maps);
    tcase_add_test(tc, test_derivative_masks);
    tcase_add_test(tc, test_binary_broadcast);
    tcase_add_test(tc, test_scalar_forms);
    tc = vs_tcase(s, "reductions", 60);
    tcase_add_test(tc, test_sums);
    tcase_add_test(tc, test_sum_nonfinite);
    tcase_add_test(tc, test_max_pool);
    tc = vs_tcase(s, "threads", 60);
    tcase_add_test(tc, test_threads_identical);
    return s;
}

VS_TEST_MAIN(vec_kernels_suite)
