/* test_ops.c - first- and second-order gradient checks of every elementwise, reduction, shape,
 * matmul, normalisation and loss op, plus forward values against hand-computed answers. */
#include "gradcheck.h"

#include <math.h>
#include <string.h>

static vs_rng R;

static vs_tensor *rnd(int ndim, const int64_t *shape, float lo, float hi)
{
    return vs_tensor_rand(ndim, shape, &R, lo, hi);
}

/* Keep values at least `m` away from 0 (kinks of relu/abs/sign). */
static vs_tensor *away(vs_tensor *t, float m)
{
    for (int64_t i = 0; i < t->size; i++)
        if (fabsf(t->data[i]) < m) t->data[i] = t->data[i] < 0 ? -m - t->data[i] : m + t->data[i];
    return t;
}

/* Keep values at least `m` away from c (the clamp bounds). */
static vs_tensor *away_from(vs_tensor *t, float c, float m)
{
    for (int64_t i = 0; i < t->size; i++)
        if (fabsf(t->data[i] - c) < m) t->data[i] = c + (t->data[i] < c ? -m : m);
    return t;
}

/* Values spaced apart (for max/min: no near ties). */
static vs_tensor *spaced(int ndim, const int64_t *shape)
{
    vs_tensor *t = vs_tensor_new(ndim, shape);
    int64_t n = t->size;
    for (int64_t i = 0; i < n; i++) t->data[i] = (float)((i * 7919) % n) * 0.1f - 0.05f * (float)n;
    return t;
}

static void free_all(int n, vs_tensor **x)
{
    for (int i = 0; i < n; i++) vs_tensor_free(x[i]);
}

#define CHECK1(fname, expr, make0)                                       \
    static vs_tensor *fn_##fname(vs_tensor **x, void *c)                  \
    {                                                                     \
        (void)c;                                                          \
        return expr;                                                      \
    }                                                                     \
    START_TEST(test_##fname)                                              \
    {                                                                     \
        vs_tensor *x[1] = {make0};                                        \
        gradcheck(#fname, fn_##fname, NULL, 1, x);                        \
        free_all(1, x);                                                   \
    }                                                                     \
    END_TEST

#define CHECK2(fname, expr, make0, make1)                                 \
    static vs_tensor *fn_##fname(vs_tensor **x, void *c)                  \
    {                                                                     \
        (void)c;                                                          \
        return expr;                                                      \
    }                                                                     \
    START_TEST(test_##fname)                                              \
    {                                                                     \
        vs_tensor *x[2] = {make0, make1};                                 \
        gradcheck(#fname, fn_##fname, NULL, 2, x);                        \
        free_all(2, x);                                                   \
    }                                                                     \
    END_TEST

#define CHECK3(fname, expr, make0, make1, make2)                          \
    static vs_tensor *fn_##fname(vs_tensor **x, void *c)                  \
    {                                                                     \
        (void)c;                                                          \
        return expr;                                                      \
    }                                                                     \
    START_TEST(test_##fname)                                              \
    {                                                                     \
        vs_tensor *x[3] = {make0, make1, make2};                          \
        gradcheck(#fname, fn_##fname, NULL, 3, x);                        \
        free_all(3, x);                                                   \
    }                                                                     \
    END_TEST

/* Products with another input make second derivatives non-trivial even for piecewise-linear ops. */
CHECK2(add_bcast, vs_mul(vs_add(x[0], x[1]), vs_add(x[0], x[1])), rnd(VS_SHAPE(3, 1), -1, 1), rnd(VS_SHAPE(1, 4), -1, 1))
CHECK2(sub_bcast, vs_mul(vs_sub(x[0], x[1]), x[0]), rnd(VS_SHAPE(2, 3), -1, 1), rnd(VS_SHAPE(3), -1, 1))
CHECK2(mul_bcast, vs_mul(x[0], x[1]), rnd(VS_SHAPE(2, 3, 4), -1, 1), rnd(VS_SHAPE(3, 1), -1, 1))
CHECK2(div, vs_div(x[0], x[1]), rnd(VS_SHAPE(2, 3), -1, 1), rnd(VS_SHAPE(2, 3), 0.5f, 2))
CHECK2(pow_tt, vs_pow(x[0], x[1]), rnd(VS_SHAPE(2, 3), 0.5f, 2), rnd(VS_SHAPE(3), -1.5f, 1.5f))
CHECK2(minimum, vs_mul(vs_minimum(x[0], x[1]), x[0]), rnd(VS_SHAPE(3, 4), -1, 0), rnd(VS_SHAPE(3, 4), 0.1f, 1))
CHECK2(maximum, vs_mul(vs_maximum(x[0], x[1]), x[1]), rnd(VS_SHAPE(3, 4), -1, 0), rnd(VS_SHAPE(4), 0.1f, 1))
CHECK1(add_scalar, vs_mul(vs_add_scalar(x[0], 3.0f), x[0]), rnd(VS_SHAPE(5), -1, 1))
CHECK1(mul_scalar, vs_mul(vs_mul_scalar(x[0], -2.5f), x[0]), rnd(VS_SHAPE(5), -1, 1))
CHECK1(pow_scalar, vs_pow_scalar(x[0], 3.5f), rnd(VS_SHAPE(2, 3), 0.5f, 2))
CHECK1(neg, vs_mul(vs_neg(x[0]), x[0]), rnd(VS_SHAPE(4), -1, 1))
CHECK1(exp, vs_exp(x[0]), rnd(VS_SHAPE(2, 3), -1, 1))
CHECK1(log, vs_log(x[0]), rnd(VS_SHAPE(2, 3), 0.5f, 3))
CHECK1(sqrt, vs_sqrt(x[0]), rnd(VS_SHAPE(2, 3), 0.5f, 3))
CHECK1(abs, vs_mul(vs_abs(x[0]), x[0]), away(rnd(VS_SHAPE(3, 3), -1, 1), 0.1f))
CHECK1(clamp, vs_mul(vs_clamp(x[0], -0.5f, 0.5f), x[0]), away_from(away_from(rnd(VS_SHAPE(4, 3), -1, 1), 0.5f, 0.1f), -0.5f, 0.1f))
CHECK1(relu, vs_mul(vs_relu(x[0]), x[0]), away(rnd(VS_SHAPE(3, 4), -1, 1), 0.1f))
CHECK1(leaky_relu, vs_mul(vs_leaky_relu(x[0], 0.2f), x[0]), away(rnd(VS_SHAPE(3, 4), -1, 1), 0.1f))
CHECK1(elu, vs_elu(x[0], 1.3f), away(rnd(VS_SHAPE(3, 4), -2, 2), 0.1f))
CHECK1(sigmoid, vs_sigmoid(x[0]), rnd(VS_SHAPE(3, 4), -3, 3))
CHECK1(tanh, vs_tanh(x[0]), rnd(VS_SHAPE(3, 4), -2, 2))
CHECK1(softplus, vs_softplus(x[0]), rnd(VS_SHAPE(3, 4), -3, 3))
CHECK1(log_sigmoid, vs_log_sigmoid(x[0]), rnd(VS_SHAPE(3, 4), -3, 3))
static vs_tensor *fn_where_impl(vs_tensor **x, void *c)
{
    (void)c;
    vs_tensor *cond = vs_tensor_from(VS_SHAPE(4), (float[]){1, 0, 0, 1});
    return vs_mul(vs_where(cond, x[0], vs_mul(x[0], x[1])), x[0]);
}
START_TEST(test_where)
{
    vs_tensor *x[2] = {rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 1), -1, 1)};
    gradcheck("where", fn_where_impl, NULL, 2, x);
    free_all(2, x);
}
END_TEST

CHECK1(sum_all, vs_mul(vs_sum(x[0], VS_ALL_AXES, false), vs_sum(x[0], VS_ALL_AXES, false)), rnd(VS_SHAPE(2, 3), -1, 1))
CHECK1(sum_axes, vs_pow_scalar(vs_sum(x[0], VS_AXIS(0) | VS_AXIS(2), false), 2.0f), rnd(VS_SHAPE(2, 3, 4), -1, 1))
CHECK1(sum_keep, vs_mul(vs_sum(x[0], VS_AXIS(1), true), x[0]), rnd(VS_SHAPE(2, 3, 4), -1, 1))
CHECK1(mean_axes, vs_pow_scalar(vs_mean(x[0], VS_AXIS(1), false), 3.0f), rnd(VS_SHAPE(2, 3, 4), -1, 1))
CHECK1(max_axis, vs_mul(vs_max(x[0], VS_AXIS(1), true), x[0]), spaced(VS_SHAPE(3, 5)))
CHECK1(min_all, vs_pow_scalar(vs_min(x[0], VS_ALL_AXES, false), 2.0f), spaced(VS_SHAPE(2, 3, 2)))
CHECK1(logsumexp, vs_logsumexp(x[0], 1, false), rnd(VS_SHAPE(3, 5), -2, 2))
CHECK1(logsumexp0, vs_logsumexp(x[0], 0, true), rnd(VS_SHAPE(4, 2, 3), -2, 2))
CHECK1(softmax, vs_softmax(x[0], -1), rnd(VS_SHAPE(3, 5), -2, 2))
CHECK1(softmax_mid, vs_softmax(x[0], 1), rnd(VS_SHAPE(2, 3, 4), -2, 2))
CHECK1(log_softmax, vs_log_softmax(x[0], 1), rnd(VS_SHAPE(3, 5), -2, 2))
CHECK1(expand, vs_mul(vs_expand(x[0], VS_SHAPE(2, 3, 4)), vs_expand(x[0], VS_SHAPE(2, 3, 4))), rnd(VS_SHAPE(3, 1), -1, 1))
CHECK1(sum_to, vs_pow_scalar(vs_sum_to(x[0], VS_SHAPE(3, 1)), 2.0f), rnd(VS_SHAPE(2, 3, 4), -1, 1))

CHECK2(matmul, vs_matmul(x[0], x[1]), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(4, 2), -1, 1))
CHECK2(matmul_batched, vs_matmul(x[0], x[1]), rnd(VS_SHAPE(2, 3, 4), -1, 1), rnd(VS_SHAPE(4, 5), -1, 1))
CHECK2(matmul_bcast, vs_matmul(x[0], x[1]), rnd(VS_SHAPE(2, 1, 3, 4), -1, 1), rnd(VS_SHAPE(3, 4, 2), -1, 1))
CHECK2(matmul_tt, vs_mul(vs_matmul_t(x[0], true, x[1], true), vs_matmul_t(x[0], true, x[1], true)), rnd(VS_SHAPE(4, 3), -1, 1),
       rnd(VS_SHAPE(2, 4), -1, 1))
CHECK2(matmul_ta, vs_matmul_t(x[0], true, x[1], false), rnd(VS_SHAPE(2, 4, 3), -1, 1), rnd(VS_SHAPE(2, 4, 2), -1, 1))
CHECK3(linear, vs_tanh(vs_linear(x[0], x[1], x[2])), rnd(VS_SHAPE(5, 4), -1, 1), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3), -1, 1))

static const int perm3[] = {2, 0, 1};
CHECK1(reshape, vs_mul(vs_reshape(x[0], VS_SHAPE(3, -1)), vs_reshape(x[0], VS_SHAPE(3, 4))), rnd(VS_SHAPE(2, 6), -1, 1))
CHECK1(permute, vs_mul(vs_permute(x[0], perm3), vs_permute(x[0], perm3)), rnd(VS_SHAPE(2, 3, 4), -1, 1))
CHECK1(transpose, vs_matmul(vs_transpose(x[0], 0, 1), x[0]), rnd(VS_SHAPE(3, 2), -1, 1))
static vs_tensor *fn_concat_impl(vs_tensor **x, void *c)
{
    (void)c;
    vs_tensor *xs[3] = {x[0], x[1], x[0]};
    vs_tensor *y = vs_concat(3, xs, 1);
    return vs_mul(y, y);
}
START_TEST(test_concat)
{
    vs_tensor *x[2] = {rnd(VS_SHAPE(2, 3, 2), -1, 1), rnd(VS_SHAPE(2, 1, 2), -1, 1)};
    gradcheck("concat", fn_concat_impl, NULL, 2, x);
    free_all(2, x);
}
END_TEST
CHECK1(slice, vs_pow_scalar(vs_slice(x[0], 1, 1, 3), 2.0f), rnd(VS_SHAPE(2, 4, 3), -1, 1))
static const int64_t pads2[] = {1, 0, 2, 1};
CHECK1(pad, vs_mul(vs_pad(x[0], pads2, 0.5f), vs_pad(x[0], pads2, 0.5f)), rnd(VS_SHAPE(2, 3), -1, 1))
static const int64_t idx5[] = {2, 0, 2, 1, 3};
CHECK1(index_select, vs_pow_scalar(vs_index_select(x[0], 0, idx5, 5), 2.0f), rnd(VS_SHAPE(4, 3), -1, 1))
CHECK1(scatter_add, vs_pow_scalar(vs_scatter_add(x[0], 0, idx5, 4), 2.0f), rnd(VS_SHAPE(5, 3), -1, 1))

CHECK3(batch_norm_train, vs_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(4, 3, 2, 2), -1, 1),
       rnd(VS_SHAPE(3), 0.5f, 1.5f), rnd(VS_SHAPE(3), -1, 1))
CHECK3(batch_norm1d, vs_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1f, 1e-5f), rnd(VS_SHAPE(5, 3), -1, 1),
       rnd(VS_SHAPE(3), 0.5f, 1.5f), rnd(VS_SHAPE(3), -1, 1))
CHECK3(instance_norm, vs_instance_norm(x[0], x[1], x[2], 1e-5f), rnd(VS_SHAPE(2, 3, 3, 2), -1, 1), rnd(VS_SHAPE(3), 0.5f, 1.5f),
       rnd(VS_SHAPE(3), -1, 1))
CHECK3(layer_norm, vs_layer_norm(x[0], 1, x[1], x[2], 1e-5f), rnd(VS_SHAPE(3, 5), -1, 1), rnd(VS_SHAPE(5), 0.5f, 1.5f),
       rnd(VS_SHAPE(5), -1, 1))

CHECK2(mse, vs_mse_loss(x[0], x[1]), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 4), -1, 1))
CHECK2(l1, vs_mul(vs_l1_loss(x[0], x[1]), vs_l1_loss(x[0], x[1])), rnd(VS_SHAPE(3, 4), 0.2f, 1), rnd(VS_SHAPE(3, 4), -1, -0.2f))
CHECK2(smooth_l1, vs_smooth_l1_loss(x[0], x[1], 0.5f), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 4), -0.1f, 0.1f))
CHECK2(bce_logits, vs_bce_with_logits(x[0], x[1]), rnd(VS_SHAPE(4, 3), -3, 3), rnd(VS_SHAPE(4, 3), 0, 1))
static const int64_t labels4[] = {2, 0, 1, 2};
CHECK1(cross_entropy, vs_cross_entropy(x[0], labels4), rnd(VS_SHAPE(4, 3), -2, 2))
CHECK2(cross_entropy_soft, vs_cross_entropy_soft(x[0], vs_softmax(x[1], 1)), rnd(VS_SHAPE(4, 3), -2, 2), rnd(VS_SHAPE(4, 3), -2, 2))
CHECK1(nll, vs_nll_loss(vs_log_softmax(x[0], 1), labels4), rnd(VS_SHAPE(4, 3), -2, 2))
static vs_tensor *fn_kl_impl(vs_tensor **x, void *c)
{
    (void)c;
    return vs_add(vs_kl_diag_gaussian(x[0], x[1], x[2], x[3]), vs_kl_diag_gaussian(x[0], x[1], NULL, NULL));
}
START_TEST(test_kl)
{
    vs_tensor *x[4] = {rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 4), -1, 1), rnd(VS_SHAPE(3, 4), -1, 1)};
    gradcheck("kl", fn_kl_impl, NULL, 4, x);
    free_all(4, x);
}
END_TEST
CHECK2(cosine, vs_cosine_similarity(x[0], x[1], 1, 1e-8f), rnd(VS_SHAPE(3, 5), -1, 1), rnd(VS_SHAPE(3, 5), -1, 1))
CHECK2(cosine_bcast, vs_cosine_similarity(x[0], x[1], -1, 1e-8f), rnd(VS_SHAPE(3, 5), -1, 1), rnd(VS_SHAPE(1, 5), -1, 1))

/* dropout: the same seed inside f gives the same mask on every call, so f is a fixed function */
static vs_tensor *fn_dropout_impl(vs_tensor **x, void *c)
{
    (void)c;
    vs_rng r;
    vs_rng_seed(&r, 77);
    return vs_mul(vs_dropout(x[0], 0.3f, true, &r), x[0]);
}
START_TEST(test_dropout)
{
    vs_tensor *x[1] = {rnd(VS_SHAPE(4, 5), -1, 1)};
    gradcheck("dropout", fn_dropout_impl, NULL, 1, x);
    vs_scope_begin();
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_tensor *ones = vs_tensor_full(VS_SHAPE(10000), 1.0f);
    vs_tensor *d = vs_dropout(ones, 0.25f, true, &r);
    double kept = 0, sum = 0;
    for (int i = 0; i < 10000; i++) {
        kept += d->data[i] != 0;
        sum += d->data[i];
    }
    ck_assert_float_near(kept / 10000, 0.75, 0.02);
    ck_assert_float_near(sum / 10000, 1.0, 0.03); /* scaled by 1 / (1 - p) */
    vs_tensor *e = vs_dropout(ones, 0.25f, false, &r);
    ck_assert_float_eq(e->data[17], 1.0f);
    ck_assert_ptr_null(vs_dropout(ones, 1.0f, true, &r));
    vs_scope_end();
    free_all(1, x);
}
END_TEST

/* ---- forward values ---------------------------------------------------------------------------- */

/* A sum over the leading dims (a bias gradient) is each column's double sum in row order, rounded
 * once, whole or split over columns between threads (300 x 250 is past the parallel grain), at 1
 * and 2 threads. */
START_TEST(test_sum_rows_in_order)
{
    const int64_t shapes[][3] = {{1, 13, 37}, {2, 13, 37}, {1, 3, 5}, {1, 300, 250}};
    vs_rng r;
    vs_rng_seed(&r, 5);
    for (int t = 1; t <= 2; t++) {
        vs_set_threads(t);
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
            vs_scope_begin();
            const int64_t *sh = shapes[c], rows = sh[0] * sh[1], cols = sh[2];
            vs_tensor *x = vs_tensor_rand(3, sh, &r, -1, 1);
            vs_tensor *y = vs_sum(x, VS_AXIS(0) | VS_AXIS(1), false);
            ck_assert_int_eq(y->size, cols);
            for (int64_t j = 0; j < cols; j++) {
                double s = 0;
                for (int64_t i = 0; i < rows; i++) s += x->data[i * cols + j];
                ck_assert_msg(y->data[j] == (float)s, "shape %lld x %lld x %lld, column %lld, %d threads",
                              (long long)sh[0], (long long)sh[1], (long long)cols, (long long)j, t);
            }
            vs_scope_end();
        }
    }
    vs_set_threads(1);
}
END_TEST


START_TEST(test_forward_values)
{
    vs_scope_begin();
    vs_tensor *a = vs_tensor_from(VS_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
    vs_tensor *b = vs_tensor_from(VS_SHAPE(3), (float[]){10, 20, 30});
    vs_tensor *s = vs_add(a, b);
    ck_assert_float_eq(s->data[4], 25);
    vs_tensor *m = vs_sum(a, VS_AXIS(0), false);
    ck_assert_float_eq(m->data[2], 9);
    vs_tensor *mx = vs_max(a, VS_AXIS(1), false);
    ck_assert_float_eq(mx->data[0], 3);
    ck_assert_float_eq(mx->data[1], 6);
    vs_tensor *mm = vs_matmul(a, vs_reshape(b, VS_SHAPE(3, 1)));
    ck_assert_float_eq(mm->data[0], 140);
    ck_assert_float_eq(mm->data[1], 320);
    vs_tensor *sm = vs_softmax(vs_tensor_from(VS_SHAPE(1, 2), (float[]){0, 0}), 1);
    ck_assert_float_near(sm->data[0], 0.5, 1e-7);
    vs_tensor *lse = vs_logsumexp(vs_tensor_from(VS_SHAPE(2), (float[]){1000, 1000}), 0, false);
    ck_assert_float_near(lse->data[0], 1000 + log(2.0), 1e-3);
    vs_tensor *sp = vs_softplus(vs_tensor_from(VS_SHAPE(2), (float[]){-100, 100}));
    ck_assert_float_near(sp->data[0], 0, 1e-30);
    ck_assert_float_near(sp->data[1], 100, 1e-5);
    vs_tensor *p = vs_pad(vs_tensor_from(VS_SHAPE(1, 2), (float[]){1, 2}), (int64_t[]){0, 1, 1, 0}, -1);
    ck_assert_int_eq(p->shape[0], 2);
    ck_assert_int_eq(p->shape[1], 3);
    ck_assert_float_eq(p->data[0], -1);
    ck_assert_float_eq(p->data[1], 1);
    ck_assert_float_eq(p->data[5], -1);
    vs_tensor *cs = vs_cosine_similarity(vs_tensor_from(VS_SHAPE(1, 2), (float[]){1, 0}), vs_tensor_from(VS_SHAPE(1, 2), (float[]){1, 1}), 1, 1e-8f);
    ck_assert_float_near(cs->data[0], 1 / sqrt(2.0), 1e-6);
    /* cross entropy of uniform logits = log(c) */
    vs_tensor *ce = vs_cross_entropy(vs_tensor_zeros(VS_SHAPE(2, 4)), (int64_t[]){1, 3});
    ck_assert_float_near(vs_item(ce), log(4.0), 1e-6);
    /* batch norm in eval uses the running statistics */
    vs_tensor *rm = vs_tensor_from(VS_SHAPE(2), (float[]){1, 2}), *rv = vs_tensor_from(VS_SHAPE(2), (float[]){4, 9});
    vs_tensor *bn = vs_batch_norm(vs_tensor_from(VS_SHAPE(1, 2), (float[]){3, 8}), NULL, NULL, rm, rv, false, 0.1f, 0);
    ck_assert_float_near(bn->data[0], 1.0, 1e-6);
    ck_assert_float_near(bn->data[1], 2.0, 1e-6);
    /* training updates the running statistics with the unbiased variance */
    vs_tensor *xb = vs_tensor_from(VS_SHAPE(2, 2), (float[]){0, 0, 2, 4});
    vs_batch_norm(xb, NULL, NULL, rm, rv, true, 0.5f, 1e-5f);
    ck_assert_float_near(rm->data[0], 0.5 * 1 + 0.5 * 1, 1e-6);
    ck_assert_float_near(rv->data[1], 0.5 * 9 + 0.5 * 8, 1e-5);
    vs_scope_end();
}
END_TEST

START_TEST(test_known_derivatives)
{
    /* f(x) = x^4 - 2x^2 at x = 2: f' = 24, f'' = 44 */
    vs_tensor *x = vs_scalar(2.0f);
    vs_set_requires_grad(x, true);
    vs_scope_begin();
    vs_tensor *f = vs_sub(vs_pow_scalar(x, 4), vs_mul_scalar(vs_mul(x, x), 2));
    ck_assert_float_near(vs_item(f), 8, 1e-6);
    vs_tensor *g;
    ck_assert_int_eq(vs_grad(1, &f, NULL, 1, &x, &g, true), VS_OK);
    ck_assert_float_near(vs_item(g), 24, 1e-5);
    vs_tensor *h;
    ck_assert_int_eq(vs_grad(1, &g, NULL, 1, &x, &h, true), VS_OK);
    ck_assert_float_near(vs_item(h), 44, 1e-4);
    vs_tensor *t;
    ck_assert_int_eq(vs_grad(1, &h, NULL, 1, &x, &t, false), VS_OK);
    ck_assert_float_near(vs_item(t), 48, 1e-4); /* f''' = 24x */
    /* backward() accumulates into ->grad across calls */
    ck_assert_int_eq(vs_backward(f, NULL, false), VS_OK);
    ck_assert_int_eq(vs_backward(f, NULL, false), VS_OK);
    ck_assert_float_near(vs_item(x->grad), 48, 1e-4);
    ck_assert(!x->grad->requires_grad);
    vs_zero_grad(x);
    ck_assert_ptr_null(x->grad);
    vs_scope_end();
    vs_tensor_free(x);
}
END_TEST

START_TEST(test_grad_of_intermediate_and_unused)
{
    vs_tensor *x = vs_tensor_from(VS_SHAPE(2), (float[]){1, 2});
    vs_tensor *u = vs_tensor_from(VS_SHAPE(3), (float[]){1, 2, 3});
    vs_set_requires_grad(x, true);
    vs_set_requires_grad(u, true);
    vs_scope_begin();
    vs_tensor *h = vs_mul_scalar(x, 3); /* intermediate */
    vs_tensor *y = vs_sum(vs_mul(h, h), VS_ALL_AXES, false);
    vs_tensor *ins[3] = {h, x, u}, *g[3];
    ck_assert_int_eq(vs_grad(1, &y, NULL, 3, ins, g, false), VS_OK);
    ck_assert_float_near(g[0]->data[1], 12, 1e-5); /* 2h */
    ck_assert_float_near(g[1]->data[1], 36, 1e-5); /* 18x */
    ck_assert_float_eq(g[2]->data[0], 0);           /* unused input: zeros */
    ck_assert_int_eq(g[2]->size, 3);
    /* weighted outputs */
    vs_tensor *w = vs_tensor_from(VS_SHAPE(2), (float[]){1, -1});
    vs_tensor *gw;
    ck_assert_int_eq(vs_grad(1, &h, &w, 1, &x, &gw, false), VS_OK);
    ck_assert_float_eq(gw->data[0], 3);
    ck_assert_float_eq(gw->data[1], -3);
    /* non-scalar output without weights is an error */
    ck_assert_int_eq(vs_grad(1, &h, NULL, 1, &x, &gw, false), VS_ERR_SHAPE);
    vs_scope_end();
    vs_tensor_free(x);
    vs_tensor_free(u);
}
END_TEST

/* The walk adds gradients in place only into its own running sums: a caller's output gradient that
 * reaches an input along several paths and a gradient handed out by an earlier vs_grad keep their
 * values, and the sums are right. */
START_TEST(test_accumulate_in_place_keeps_visible_tensors)
{
    vs_tensor *x = vs_tensor_from(VS_SHAPE(3), (float[]){1, 2, 3});
    vs_set_requires_grad(x, true);
    vs_scope_begin();
    /* y = x + 3x: gout reaches x unchanged first (the add), then 3 gout is added to it */
    vs_tensor *y = vs_add(x, vs_mul_scalar(x, 3));
    vs_tensor *gout = vs_tensor_from(VS_SHAPE(3), (float[]){1, 10, 100}), *g;
    ck_assert_int_eq(vs_grad(1, &y, &gout, 1, &x, &g, false), VS_OK);
    for (int i = 0; i < 3; i++) ck_assert_float_eq(g->data[i], 4 * gout->data[i]);
    ck_assert_float_eq(gout->data[0], 1);
    ck_assert_float_eq(gout->data[1], 10);
    ck_assert_float_eq(gout->data[2], 100);
    /* a second walk reusing the first one's gradient as its output gradient */
    vs_tensor *g2;
    ck_assert_int_eq(vs_grad(1, &y, &g, 1, &x, &g2, false), VS_OK);
    for (int i = 0; i < 3; i++) {
        ck_assert_float_eq(g->data[i], 4 * gout->data[i]);
        ck_assert_float_eq(g2->data[i], 16 * gout->data[i]);
    }
    /* leaves: ->grad accumulates across calls */
    vs_tensor *s = vs_sum(vs_mul(y, gout), VS_ALL_AXES, false);
    ck_assert_int_eq(vs_backward(s, NULL, false), VS_OK);
    ck_assert_int_eq(vs_backward(s, NULL, false), VS_OK);
    for (int i = 0; i < 3; i++) ck_assert_float_eq(x->grad->data[i], 8 * gout->data[i]);
    vs_zero_grad(x);
    vs_scope_end();
    vs_tensor_free(x);
}
END_TEST

START_TEST(test_no_grad_mode)
{
    vs_tensor *x = vs_tensor_from(VS_SHAPE(2), (float[]){1, 2});
    vs_set_requires_grad(x, true);
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *y = vs_exp(x);
    ck_assert(!y->requires_grad);
    ck_assert_ptr_null(y->node);
    vs_set_grad_enabled(prev);
    ck_assert(vs_grad_enabled());
    vs_tensor_free(y);
    vs_tensor_free(x);
}
END_TEST

START_TEST(test_shape_errors)
{
    vs_scope_begin();
    vs_tensor *a = vs_tensor_zeros(VS_SHAPE(2, 3)), *b = vs_tensor_zeros(VS_SHAPE(4));
    ck_assert_ptr_null(vs_add(a, b));
    ck_assert_int_eq(vs_last_error()->code, VS_ERR_SHAPE);
    ck_assert(strstr(vs_last_error()->msg, "[2,3]") != NULL);
    ck_assert_ptr_null(vs_exp(vs_add(a, b))); /* NULL propagates */
    ck_assert_ptr_null(vs_matmul(a, a));
    ck_assert(strstr(vs_last_error()->msg, "inner dimensions") != NULL);
    ck_assert_ptr_null(vs_reshape(a, VS_SHAPE(5)));
    ck_assert_ptr_null(vs_reshape(a, VS_SHAPE(-1, -1)));
    ck_assert_ptr_null(vs_slice(a, 1, 2, 5));
    ck_assert_ptr_null(vs_sum(a, VS_AXIS(4), false));
    ck_assert_ptr_null(vs_softmax(a, 2));
    ck_assert_ptr_null(vs_index_select(a, 0, (int64_t[]){2}, 1));
    ck_assert_ptr_null(vs_scatter_add(a, 0, (int64_t[]){0, 7}, 3));
    ck_assert_ptr_null(vs_cross_entropy(a, (int64_t[]){0, 3}));
    ck_assert_ptr_null(vs_permute(a, (int[]){0, 0}));
    ck_assert_ptr_null(vs_tensor_new(VS_SHAPE(-1, 2)));
    ck_assert_ptr_null(vs_tensor_new(VS_SHAPE(INT64_MAX / 2, 4)));
    ck_assert_ptr_null(vs_clamp(a, 1, 0));
    ck_assert_ptr_null(vs_linear(a, b, NULL));
    ck_assert_ptr_null(vs_concat(2, (vs_tensor *[]){a, b}, 0));
    vs_scope_end();
}
END_TEST

START_TEST(test_empty_and_size1)
{
    vs_scope_begin();
    vs_tensor *e = vs_tensor_zeros(VS_SHAPE(0, 3));
    vs_tensor *s = vs_sum(vs_exp(e), VS_AXIS(0), false);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->size, 3);
    ck_assert_float_eq(s->data[0], 0);
    ck_assert_ptr_nonnull(vs_add(e, vs_tensor_zeros(VS_SHAPE(1, 3))));
    ck_assert_ptr_nonnull(vs_matmul(e, vs_tensor_zeros(VS_SHAPE(3, 2))));
    vs_tensor *one = vs_tensor_full(VS_SHAPE(1, 1, 1), 2);
    vs_tensor *b = vs_mul(one, vs_tensor_full(VS_SHAPE(4), 3));
    ck_assert_int_eq(b->ndim, 3);
    ck_assert_int_eq(b->shape[2], 4);
    ck_assert_float_eq(b->data[3], 6);
    vs_tensor *sc = vs_add(vs_scalar(1), vs_scalar(2));
    ck_assert_int_eq(sc->ndim, 0);
    ck_assert_float_eq(vs_item(sc), 3);
    vs_tensor *six = vs_tensor_zeros(VS_SHAPE(1, 2, 1, 2, 1, 2));
    ck_assert_int_eq(vs_sum(six, VS_AXIS(5), false)->ndim, 5);
    vs_scope_end();
}
END_TEST

START_TEST(test_scopes_reclaim_memory)
{
    /* A training-like loop: memory must be steady across 10,000 iterations. */
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_tensor *w = vs_tensor_randn(VS_SHAPE(4, 8), &r, 0, 0.3f);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(16, 8), &r, 0, 1);
    vs_set_requires_grad(w, true);
    int64_t live0 = vs_live_tensors();
    int64_t live_mid = -1;
    for (int it = 0; it < 10000; it++) {
        vs_scope_begin();
        vs_tensor *loss = vs_mean(vs_pow_scalar(vs_tanh(vs_linear(x, w, NULL)), 2), VS_ALL_AXES, false);
        vs_zero_grad(w);
        ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
        for (int64_t i = 0; i < w->size; i++) w->data[i] -= 0.01f * w->grad->data[i];
        vs_scope_end();
        if (it == 10) live_mid = vs_live_tensors();
    }
    ck_assert_int_eq(vs_live_tensors(), live_mid);
    vs_zero_grad(w);
    ck_assert_int_eq(vs_live_tensors(), live0);
    /* vs_keep moves a result out of the scope; its graph stays alive with it */
    vs_scope_begin();
    vs_tensor *k = vs_keep(vs_sum(vs_exp(w), VS_ALL_AXES, false));
    vs_scope_end();
    ck_assert_int_eq(vs_backward(k, NULL, false), VS_OK);
    ck_assert_ptr_nonnull(w->grad);
    vs_tensor_free(k);
    vs_zero_grad(w);
    ck_assert_int_eq(vs_live_tensors(), live0);
    vs_tensor_free(w);
    vs_tensor_free(x);
}
END_TEST

/* DeepLIFT rescale: a single nonlinearity satisfies summation-to-delta exactly. */
START_TEST(test_rescale_rule)
{
    vs_scope_begin();
    vs_tensor *x = vs_tensor_from(VS_SHAPE(2, 3), (float[]){1.0f, -2.0f, 0.5f, /* ref */ -1.0f, 1.0f, 0.5f});
    vs_set_requires_grad(x, true);
    vs_backward_rule prev = vs_set_backward_rule(VS_RULE_RESCALE);
    vs_tensor *y = vs_sigmoid(x);
    vs_set_backward_rule(prev);
    vs_tensor *g;
    vs_tensor *w = vs_tensor_from(VS_SHAPE(2, 3), (float[]){1, 1, 1, 0, 0, 0});
    ck_assert_int_eq(vs_grad(1, &y, &w, 1, &x, &g, false), VS_OK);
    for (int i = 0; i < 3; i++) {
        float dx = x->data[i] - x->data[i + 3], dy = y->data[i] - y->data[i + 3];
        if (dx != 0) ck_assert_float_near(g->data[i] * dx, dy, 1e-6);
    }
    /* equal input and reference: the local derivative s(1-s) */
    float s = y->data[2];
    ck_assert_float_near(g->data[2], s * (1 - s), 1e-6);
    vs_scope_end();
}
END_TEST

/* A backward without a graph takes the fused g f'(x) pass (un_grad_kernel); with create_graph it
 * composes the rule from ops.  Both must give the same bits, on both sides of every kink, and on
 * the parallel path too (more than 2 x 32768 elements). */
static vs_tensor *leaky02(vs_tensor *x) { return vs_leaky_relu(x, 0.2f); }
static vs_tensor *elu1(vs_tensor *x) { return vs_elu(x, 1.0f); }
static vs_tensor *clamp11(vs_tensor *x) { return vs_clamp(x, -1.0f, 1.0f); }

START_TEST(test_unary_fused_backward)
{
    vs_tensor *(*const maps[])(vs_tensor *) = {vs_relu, leaky02, clamp11, vs_abs, vs_exp, elu1,
                                                vs_sigmoid, vs_tanh, vs_softplus, vs_log_sigmoid};
    const int64_t sizes[2] = {37, 2 * 32768 + 17};
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++) {
            vs_scope_begin();
            vs_tensor *x = rnd(1, (int64_t[]){sizes[s]}, -6, 6), *w = rnd(1, (int64_t[]){sizes[s]}, -2, 2);
            x->data[0] = 0.0f, x->data[1] = -1.0f, x->data[2] = 1.0f, x->data[3] = -0.0f;
            vs_set_requires_grad(x, true);
            vs_tensor *y = maps[k](x), *fused = NULL, *composed = NULL;
            ck_assert_int_eq(vs_grad(1, &y, &w, 1, &x, &fused, false), VS_OK);
            ck_assert_int_eq(vs_grad(1, &y, &w, 1, &x, &composed, true), VS_OK);
            ck_assert_int_eq(fused->size, composed->size);
            for (int64_t i = 0; i < fused->size; i++)
                if (memcmp(&fused->data[i], &composed->data[i], sizeof(float)) != 0)
                    ck_abort_msg("map %zu, element %lld: fused %a, composed %a", k, (long long)i, fused->data[i],
                                 composed->data[i]);
            vs_scope_end();
        }
}
END_TEST

/* BCE with logits is one fused node: its loss and, on a backward without a graph, both gradients
 * must be the bits of the composed ops it replaced, mean(softplus(x) - t x), on the serial and the
 * parallel path (more than 2 x 32768 elements). */
START_TEST(test_bce_logits_fused)
{
    const int64_t sizes[2] = {129, 2 * 32768 + 5};
    for (int s = 0; s < 2; s++) {
        vs_scope_begin();
        vs_tensor *x = rnd(1, (int64_t[]){sizes[s]}, -30, 30), *t = rnd(1, (int64_t[]){sizes[s]}, 0, 1);
        vs_set_requires_grad(x, true);
        vs_set_requires_grad(t, true);
        vs_tensor *ins[2] = {x, t}, *fused[2], *composed[2];
        vs_tensor *lf = vs_mul_scalar(vs_bce_with_logits(x, t), 3.0f);
        vs_tensor *lc = vs_mul_scalar(vs_mean(vs_sub(vs_softplus(x), vs_mul(t, x)), VS_ALL_AXES, false), 3.0f);
        ck_assert_int_eq(memcmp(lf->data, lc->data, sizeof(float)), 0);
        ck_assert_int_eq(vs_grad(1, &lf, NULL, 2, ins, fused, false), VS_OK);
        ck_assert_int_eq(vs_grad(1, &lc, NULL, 2, ins, composed, false), VS_OK);
        for (int k = 0; k < 2; k++)
            for (int64_t i = 0; i < x->size; i++)
                if (memcmp(&fused[k]->data[i], &composed[k]->data[i], sizeof(float)) != 0)
                    ck_abort_msg("input %d, element %lld: fused %a, composed %a", k, (long long)i, fused[k]->data[i],
                                 composed[k]->data[i]);
        vs_scope_end();
    }
}
END_TEST

/* Cross entropy with labels is one fused node: its loss and, on a backward without a graph, its
 * gradient must be the bits of the composed ops, soft_nll(log_softmax(x), one_hot) (which
 * vs_cross_entropy_soft still runs), for an upstream gradient of 3, of 0 and of -0. */
START_TEST(test_cross_entropy_fused)
{
    const int64_t n = 37, c = 11;
    int64_t labels[37];
    vs_scope_begin();
    vs_tensor *x = rnd(2, (int64_t[]){n, c}, -20, 20), *p = vs_tensor_zeros(2, (int64_t[]){n, c});
    for (int64_t i = 0; i < n; i++) {
        labels[i] = (i * 7) % c;
        p->data[i * c + labels[i]] = 1.0f;
    }
    x->data[5] = 80.0f; /* a row whose softmax is all but one-hot */
    vs_set_requires_grad(x, true);
    const float scales[3] = {3.0f, 0.0f, -0.0f};
    for (int k = 0; k < 3; k++) {
        vs_tensor *lf = vs_mul_scalar(vs_cross_entropy(x, labels), scales[k]);
        vs_tensor *lc = vs_mul_scalar(vs_cross_entropy_soft(x, p), scales[k]);
        ck_assert_int_eq(memcmp(lf->data, lc->data, sizeof(float)), 0);
        vs_tensor *gf, *gc;
        ck_assert_int_eq(vs_grad(1, &lf, NULL, 1, &x, &gf, false), VS_OK);
        ck_assert_int_eq(vs_grad(1, &lc, NULL, 1, &x, &gc, false), VS_OK);
        for (int64_t i = 0; i < x->size; i++)
            if (memcmp(&gf->data[i], &gc->data[i], sizeof(float)) != 0)
                ck_abort_msg("scale %g, element %lld: fused %a, composed %a", scales[k], (long long)i, gf->data[i],
                             gc->data[i]);
    }
    vs_scope_end();
}
END_TEST

static Suite *ops_suite(void)
{
    vs_rng_seed(&R, 99);
    Suite *s = suite_create("ops");
    TCase *tc = vs_tcase(s, "elementwise", 60);
    tcase_add_test(tc, test_add_bcast);
    tcase_add_test(tc, test_sum_rows_in_order);
    tcase_add_test(tc, test_sub_bcast);
    tcase_add_test(tc, test_mul_bcast);
    tcase_add_test(tc, test_div);
    tcase_add_test(tc, test_pow_tt);
    tcase_add_test(tc, test_minimum);
    tcase_add_test(tc, test_maximum);
    tcase_add_test(tc, test_add_scalar);
    tcase_add_test(tc, test_mul_scalar);
    tcase_add_test(tc, test_pow_scalar);
    tcase_add_test(tc, test_neg);
    tcase_add_test(tc, test_exp);
    tcase_add_test(tc, test_log);
    tcase_add_test(tc, test_sqrt);
    tcase_add_test(tc, test_abs);
    tcase_add_test(tc, test_clamp);
    tcase_add_test(tc, test_relu);
    tcase_add_test(tc, test_leaky_relu);
    tcase_add_test(tc, test_elu);
    tcase_add_test(tc, test_sigmoid);
    tcase_add_test(tc, test_tanh);
    tcase_add_test(tc, test_softplus);
    tcase_add_test(tc, test_log_sigmoid);
    tcase_add_test(tc, test_unary_fused_backward);
    tcase_add_test(tc, test_accumulate_in_place_keeps_visible_tensors);
    tcase_add_test(tc, test_where);
    tc = vs_tcase(s, "reductions", 60);
    tcase_add_test(tc, test_sum_all);
    tcase_add_test(tc, test_sum_axes);
    tcase_add_test(tc, test_sum_keep);
    tcase_add_test(tc, test_mean_axes);
    tcase_add_test(tc, test_max_axis);
    tcase_add_test(tc, test_min_all);
    tcase_add_test(tc, test_logsumexp);
    tcase_add_test(tc, test_logsumexp0);
    tcase_add_test(tc, test_softmax);
    tcase_add_test(tc, test_softmax_mid);
    tcase_add_test(tc, test_log_softmax);
    tcase_add_test(tc, test_expand);
    tcase_add_test(tc, test_sum_to);
    tc = vs_tcase(s, "linear_algebra_and_shape", 60);
    tcase_add_test(tc, test_matmul);
    tcase_add_test(tc, test_matmul_batched);
    tcase_add_test(tc, test_matmul_bcast);
    tcase_add_test(tc, test_matmul_tt);
    tcase_add_test(tc, test_matmul_ta);
    tcase_add_test(tc, test_linear);
    tcase_add_test(tc, test_reshape);
    tcase_add_test(tc, test_permute);
    tcase_add_test(tc, test_transpose);
    tcase_add_test(tc, test_concat);
    tcase_add_test(tc, test_slice);
    tcase_add_test(tc, test_pad);
    tcase_add_test(tc, test_index_select);
    tcase_add_test(tc, test_scatter_add);
    tc = vs_tcase(s, "norms_and_losses", 60);
    tcase_add_test(tc, test_batch_norm_train);
    tcase_add_test(tc, test_batch_norm1d);
    tcase_add_test(tc, test_instance_norm);
    tcase_add_test(tc, test_layer_norm);
    tcase_add_test(tc, test_mse);
    tcase_add_test(tc, test_l1);
    tcase_add_test(tc, test_smooth_l1);
    tcase_add_test(tc, test_bce_logits);
    tcase_add_test(tc, test_bce_logits_fused);
    tcase_add_test(tc, test_cross_entropy);
    tcase_add_test(tc, test_cross_entropy_fused);
    tcase_add_test(tc, test_cross_entropy_soft);
    tcase_add_test(tc, test_nll);
    tcase_add_test(tc, test_kl);
    tcase_add_test(tc, test_cosine);
    tcase_add_test(tc, test_cosine_bcast);
    tcase_add_test(tc, test_dropout);
    tc = vs_tcase(s, "engine", 120);
    tcase_add_test(tc, test_forward_values);
    tcase_add_test(tc, test_known_derivatives);
    tcase_add_test(tc, test_grad_of_intermediate_and_unused);
    tcase_add_test(tc, test_no_grad_mode);
    tcase_add_test(tc, test_shape_errors);
    tcase_add_test(tc, test_empty_and_size1);
    tcase_add_test(tc, test_scopes_reclaim_memory);
    tcase_add_test(tc, test_rescale_rule);
    return s;
}

VS_TEST_MAIN(ops_suite)
