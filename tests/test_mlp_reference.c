/* test_mlp_reference.c - a two-layer MLP trained with the engine follows the loss curve of the same
 * network computed by hand in double precision (forward and backward written out below). */
#include "vs_check.h"
#include "versus/versus.h"

#include <math.h>

enum { N = 32, IN = 4, HID = 8, STEPS = 100 };

/* Reference: y = W2 tanh(W1 x + b1) + b2, loss = mean (y - t)^2, plain SGD. */
static void reference_curve(const float *x, const float *t, const float *w1f, const float *b1f, const float *w2f, float b2f,
                            double lr, double *curve)
{
    double w1[HID * IN], b1[HID], w2[HID], b2 = b2f;
    for (int i = 0; i < HID * IN; i++) w1[i] = w1f[i];
    for (int i = 0; i < HID; i++) {
        b1[i] = b1f[i];
        w2[i] = w2f[i];
    }
    for (int step = 0; step < STEPS; step++) {
        double gw1[HID * IN] = {0}, gb1[HID] = {0}, gw2[HID] = {0}, gb2 = 0, loss = 0;
        for (int n = 0; n < N; n++) {
            double h[HID], y = b2;
            for (int j = 0; j < HID; j++) {
                double a = b1[j];
                for (int k = 0; k < IN; k++) a += w1[j * IN + k] * x[n * IN + k];
                h[j] = tanh(a);
                y += w2[j] * h[j];
            }
            double d = y - t[n];
            loss += d * d / N;
            double gy = 2 * d / N;
            gb2 += gy;
            for (int j = 0; j < HID; j++) {
                gw2[j] += gy * h[j];
                double ga = gy * w2[j] * (1 - h[j] * h[j]);
                gb1[j] += ga;
                for (int k = 0; k < IN; k++) gw1[j * IN + k] += ga * x[n * IN + k];
            }
        }
        curve[step] = loss;
        for (int i = 0; i < HID * IN; i++) w1[i] -= lr * gw1[i];
        for (int j = 0; j < HID; j++) {
            b1[j] -= lr * gb1[j];
            w2[j] -= lr * gw2[j];
        }
        b2 -= lr * gb2;
    }
}

START_TEST(test_mlp_matches_double_reference)
{
    vs_rng r;
    vs_rng_seed(&r, 2024);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(N, IN), &r, 0, 1);
    vs_tensor *t = vs_tensor_new(VS_SHAPE(N, 1));
    for (int n = 0; n < N; n++) /* a smooth target the network can fit */
        t->data[n] = sinf(x->data[n * IN]) + 0.5f * x->data[n * IN + 1] * x->data[n * IN + 2];
    vs_tensor *w1 = vs_tensor_randn(VS_SHAPE(HID, IN), &r, 0, 0.5f), *b1 = vs_tensor_randn(VS_SHAPE(HID), &r, 0, 0.1f);
    vs_tensor *w2 = vs_tensor_randn(VS_SHAPE(1, HID), &r, 0, 0.5f), *b2 = vs_tensor_zeros(VS_SHAPE(1));
    double ref[STEPS];
    reference_curve(x->data, t->data, w1->data, b1->data, w2->data, b2->data[0], 0.1, ref);

    vs_tensor *params[4] = {w1, b1, w2, b2};
    for (int i = 0; i < 4; i++) vs_set_requires_grad(params[i], true);
    for (int step = 0; step < STEPS; step++) {
        vs_scope_begin();
        vs_tensor *y = vs_linear(vs_tanh(vs_linear(x, w1, b1)), w2, b2);
        vs_tensor *loss = vs_mse_loss(y, t);
        ck_assert_ptr_nonnull(loss);
        ck_assert_msg(fabs(vs_item(loss) - ref[step]) <= 1e-4 * fmax(1.0, ref[step]), "step %d: loss %.8f, reference %.8f", step,
                      (double)vs_item(loss), ref[step]);
        for (int i = 0; i < 4; i++) vs_zero_grad(params[i]);
        ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
        for (int i = 0; i < 4; i++)
            for (int64_t k = 0; k < params[i]->size; k++) params[i]->data[k] -= 0.1f * params[i]->grad->data[k];
        vs_scope_end();
    }
    ck_assert_msg(ref[STEPS - 1] < 0.5 * ref[0], "the reference itself must learn (%.4f -> %.4f)", ref[0], ref[STEPS - 1]);
    for (int i = 0; i < 4; i++) vs_tensor_free(params[i]);
    vs_tensor_free(x);
    vs_tensor_free(t);
}
END_TEST

static Suite *mlp_suite(void)
{
    Suite *s = suite_create("mlp_reference");
    TCase *tc = vs_tcase(s, "training", 60);
    tcase_add_test(tc, test_mlp_matches_double_reference);
    return s;
}

VS_TEST_MAIN(mlp_suite)
