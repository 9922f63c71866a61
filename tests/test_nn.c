/* test_nn.c - the module tree and layers: PyTorch parameter names and order, default
 * initialisation, every layer's forward against double-precision references, train/eval mode,
 * batch-norm running statistics, specs and their error messages, loading state, Siamese models,
 * graph batches and graph layers (with edge weights), and gradient checks through layers. */
#include "gradcheck.h"
#include "versus/arch.h"
#include "versus/gnn.h"
#include "versus/nn.h"

#include <math.h>
#include <string.h>

static vs_rng R;

static void set_data(vs_tensor *t, const float *v) { memcpy(t->data, v, (size_t)t->size * sizeof(float)); }

/* Deterministic values in [-1, 1] without ties. */
static void fill_pattern(vs_tensor *t, float scale)
{
    for (int64_t i = 0; i < t->size; i++) t->data[i] = scale * (float)(((i * 37) % 101) - 50) / 50.0f;
}

static void expect_close(const vs_tensor *y, const double *want, int64_t n, double tol)
{
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->size, n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(y->data[i] - want[i]) <= tol * (1 + fabs(want[i])), "element %lld: got %.7g want %.7g", (long long)i,
                      (double)y->data[i], want[i]);
}

static void expect_names(const vs_module *m, unsigned what, const char *const *names, int n)
{
    vs_named_tensors l = {0};
    ck_assert_int_eq(vs_module_named_tensors(m, what, &l), VS_OK);
    ck_assert_int_eq(l.n, n);
    for (int i = 0; i < n; i++) ck_assert_str_eq(l.items[i].name, names[i]);
    vs_named_tensors_clear(&l);
}

static void expect_shape(const vs_tensor *t, int ndim, const int64_t *shape)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, ndim);
    for (int i = 0; i < ndim; i++) ck_assert_int_eq(t->shape[i], shape[i]);
}

static void expect_error(const char *needle)
{
    const char *msg = vs_last_error()->msg;
    ck_assert_msg(strstr(msg, needle) != NULL, "error \"%s\" does not contain \"%s\"", msg, needle);
}

static void expect_err(const vs_error *err, const char *needle)
{
    ck_assert_int_ne(err->code, VS_OK);
    ck_assert_msg(strstr(err->msg, needle) != NULL, "error \"%s\" does not contain \"%s\"", err->msg, needle);
}

static vs_module *seq_of(int n, vs_module **layers)
{
    vs_module *s = vs_sequential_new();
    for (int i = 0; i < n; i++) ck_assert_int_eq(vs_sequential_add(s, layers[i]), VS_OK);
    return s;
}

/* ---- names and initialisation ------------------------------------------------------------------- */

START_TEST(test_mnist_classifier_names)
{
    int64_t live = vs_live_tensors();
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const char *names[] = {"0.weight", "0.bias", "2.weight", "2.bias", "5.weight", "5.bias", "8.weight", "8.bias"};
    expect_names(m, VS_STATE_ALL, names, 8);
    expect_shape(vs_module_param(m->children[0], "weight"), VS_SHAPE(32, 1, 6, 6));
    expect_shape(vs_module_param(m->children[2], "weight"), VS_SHAPE(64, 32, 6, 6));
    expect_shape(vs_module_param(m->children[5], "weight"), VS_SHAPE(256, 3136));
    expect_shape(vs_module_param(m->children[8], "weight"), VS_SHAPE(10, 256));
    expect_shape(vs_module_param(m->children[8], "bias"), VS_SHAPE(10));
    ck_assert_int_eq(vs_module_param_count(m), 880618);
    ck_assert_int_eq(m->n_children, 9);
    ck_assert_int_eq(m->children[7]->kind, VS_MODULE_DROPOUT);
    ck_assert_float_eq(m->children[7]->spec.p, 0.5);
    ck_assert_int_eq(m->children[2]->spec.stride, 2);
    ck_assert_int_eq(m->children[2]->spec.padding, 2);
    vs_module_free(m);
    /* SVHN: same network on 3x32x32 inputs, 4096 features into the first linear layer */
    m = vs_arch_ganmex_mnist(3, 32, 10, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    expect_shape(vs_module_param(m->children[5], "weight"), VS_SHAPE(256, 4096));
    vs_module_free(m);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

START_TEST(test_siamese_mlp_names)
{
    vs_error err;
    vs_module *m = vs_arch_siamese_mlp(12, 8, 4, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(m->kind, VS_MODULE_SIAMESE);
    const char *names[] = {"encoder.0.weight", "encoder.0.bias", "encoder.2.weight", "encoder.2.bias"};
    expect_names(m, VS_STATE_PARAMS, names, 4);
    expect_shape(vs_module_param(vs_module_child(m, "encoder")->children[0], "weight"), VS_SHAPE(8, 12));
    expect_shape(vs_module_param(vs_module_child(m, "encoder")->children[2], "weight"), VS_SHAPE(4, 8));
    vs_module_free(m);
}
END_TEST

START_TEST(test_state_dict_order_with_buffers)
{
    vs_module *block = seq_of(2, (vs_module *[]){vs_linear_new(4, 4, true, &R), vs_batch_norm1d_new(4, 1e-5f, 0.1f)});
    vs_module *m = seq_of(4, (vs_module *[]){vs_linear_new(3, 4, true, &R), vs_batch_norm1d_new(4, 1e-5f, 0.1f),
                                             vs_activation_new(VS_MODULE_RELU, 0), vs_residual_new(block)});
    const char *all[] = {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                         "3.block.0.weight", "3.block.0.bias", "3.block.1.weight", "3.block.1.bias",
                         "3.block.1.running_mean", "3.block.1.running_var"};
    expect_names(m, VS_STATE_ALL, all, 12);
    const char *params[] = {"0.weight", "0.bias", "1.weight", "1.bias", "3.block.0.weight", "3.block.0.bias",
                            "3.block.1.weight", "3.block.1.bias"};
    expect_names(m, VS_STATE_PARAMS, params, 8);
    const char *bufs[] = {"1.running_mean", "1.running_var", "3.block.1.running_mean", "3.block.1.running_var"};
    expect_names(m, VS_STATE_BUFFERS, bufs, 4);
    vs_named_tensors l = {0};
    vs_module_named_tensors(m, VS_STATE_ALL, &l);
    for (int64_t i = 0; i < l.n; i++) ck_assert_int_eq(l.items[i].tensor->requires_grad, !l.items[i].is_buffer);
    vs_named_tensors_clear(&l);
    ck_assert_int_eq(vs_module_param_count(m), 16 + 8 + 20 + 8);
    vs_module_free(m);
}
END_TEST

START_TEST(test_graph_layer_names)
{
    vs_module *gcn = vs_gcn_conv_new(3, 5, &R);
    expect_names(gcn, VS_STATE_ALL, (const char *[]){"bias", "lin.weight"}, 2);
    expect_shape(vs_module_param(vs_module_child(gcn, "lin"), "weight"), VS_SHAPE(5, 3));
    vs_module *gin = vs_gin_conv_new(3, 7, 5, 0.0f, false, &R);
    expect_names(gin, VS_STATE_ALL, (const char *[]){"eps", "nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"}, 5);
    expect_names(gin, VS_STATE_PARAMS, (const char *[]){"nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"}, 4);
    expect_shape(vs_module_param(vs_module_child(gin, "nn")->children[0], "weight"), VS_SHAPE(7, 3));
    vs_module *gin2 = vs_gin_conv_new(3, 7, 5, 0.25f, true, &R);
    expect_names(gin2, VS_STATE_PARAMS, (const char *[]){"eps", "nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"}, 5);
    ck_assert_float_eq(vs_module_param(gin2, "eps")->data[0], 0.25f);
    vs_error err;
    vs_module *sg = vs_arch_siamese_gnn(VS_MODULE_GCN_CONV, 3, 6, 2, 4, &R, &err);
    ck_assert_msg(sg != NULL, "%s", err.msg);
    expect_names(sg, VS_STATE_ALL, (const char *[]){"encoder.0.bias", "encoder.0.lin.weight", "encoder.2.bias", "encoder.2.lin.weight"}, 4);
    ck_assert_int_eq(vs_module_child(sg, "encoder")->children[3]->kind, VS_MODULE_MEAN_READOUT);
    vs_module_free(gcn);
    vs_module_free(gin);
    vs_module_free(gin2);
    vs_module_free(sg);
}
END_TEST

static void expect_bounded(const vs_tensor *t, double bound)
{
    double mx = 0;
    for (int64_t i = 0; i < t->size; i++) mx = fmax(mx, fabs(t->data[i]));
    ck_assert_msg(mx <= bound, "max |w| %g above the bound %g", mx, bound);
    ck_assert_msg(mx >= (t->size >= 50 ? 0.9 : 0.5) * bound, "max |w| %g far below the bound %g", mx, bound);
}

START_TEST(test_default_initialisation)
{
    vs_module *lin = vs_linear_new(50, 20, true, &R);
    expect_bounded(vs_module_param(lin, "weight"), 1 / sqrt(50.0));
    expect_bounded(vs_module_param(lin, "bias"), 1 / sqrt(50.0));
    /* variance of U(-b, b) is b^2 / 3 */
    const vs_tensor *w = vs_module_param(lin, "weight");
    double s2 = 0;
    for (int64_t i = 0; i < w->size; i++) s2 += (double)w->data[i] * w->data[i];
    ck_assert_float_near(s2 / (double)w->size, 1.0 / 150.0, 0.15 / 150.0);
    vs_module *conv = vs_conv2d_new(3, 8, 3, 1, 1, true, &R);
    expect_bounded(vs_module_param(conv, "weight"), 1 / sqrt(27.0));
    expect_bounded(vs_module_param(conv, "bias"), 1 / sqrt(27.0));
    /* ConvTranspose2d weight is [in,out,k,k]; PyTorch's fan_in is its dim 1 times k*k */
    vs_module *convt = vs_conv_transpose2d_new(4, 6, 3, 2, 1, 1, true, &R);
    expect_shape(vs_module_param(convt, "weight"), VS_SHAPE(4, 6, 3, 3));
    expect_bounded(vs_module_param(convt, "weight"), 1 / sqrt(54.0));
    vs_module *bn = vs_batch_norm2d_new(3, 1e-5f, 0.1f);
    for (int i = 0; i < 3; i++) {
        ck_assert_float_eq(vs_module_param(bn, "weight")->data[i], 1.0f);
        ck_assert_float_eq(vs_module_param(bn, "bias")->data[i], 0.0f);
        ck_assert_float_eq(vs_module_param(bn, "running_mean")->data[i], 0.0f);
        ck_assert_float_eq(vs_module_param(bn, "running_var")->data[i], 1.0f);
    }
    vs_module *gcn = vs_gcn_conv_new(30, 20, &R);
    expect_bounded(vs_module_param(vs_module_child(gcn, "lin"), "weight"), sqrt(6.0 / 50.0));
    for (int i = 0; i < 20; i++) ck_assert_float_eq(vs_module_param(gcn, "bias")->data[i], 0.0f);

    /* same seed, same weights; another seed, other weights */
    vs_rng a, b;
    vs_rng_seed(&a, 7);
    vs_rng_seed(&b, 7);
    vs_module *l1 = vs_linear_new(5, 3, true, &a), *l2 = vs_linear_new(5, 3, true, &b);
    ck_assert_mem_eq(l1->params[0]->data, l2->params[0]->data, 15 * sizeof(float));
    vs_rng_seed(&b, 8);
    vs_module *l3 = vs_linear_new(5, 3, true, &b);
    ck_assert_int_ne(memcmp(l1->params[0]->data, l3->params[0]->data, 15 * sizeof(float)), 0);
    /* layers with random weights refuse to start without a generator */
    ck_assert_ptr_null(vs_linear_new(5, 3, true, NULL));
    expect_error("random generator");
    vs_module *all[] = {lin, conv, convt, bn, gcn, l1, l2, l3};
    for (int i = 0; i < 8; i++) vs_module_free(all[i]);
}
END_TEST

START_TEST(test_initialisers)
{
    int64_t fi, fo;
    vs_tensor *t = vs_tensor_new(VS_SHAPE(4, 6, 3, 3));
    vs_fan_in_out(t, &fi, &fo);
    ck_assert_int_eq(fi, 54);
    ck_assert_int_eq(fo, 36);
    vs_tensor_free(t);

    t = vs_tensor_new(VS_SHAPE(30, 20));
    vs_init_xavier_uniform(t, &R, 2.0f);
    expect_bounded(t, 2 * sqrt(6.0 / 50.0));
    vs_init_kaiming_uniform(t, &R, 0.0f, VS_FAN_IN);
    expect_bounded(t, sqrt(6.0 / 20.0));
    vs_init_kaiming_uniform(t, &R, 0.0f, VS_FAN_OUT);
    expect_bounded(t, sqrt(6.0 / 30.0));
    vs_tensor_free(t);

    /* normal initialisers: sample standard deviation within 10% (3600 draws) */
    t = vs_tensor_new(VS_SHAPE(40, 10, 3, 3));
    const double want[2] = {sqrt(2.0 / 360.0), 0.5 * sqrt(2.0 / 450.0)};
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            vs_init_kaiming_normal(t, &R, 0.0f, VS_FAN_OUT);
        else
            vs_init_xavier_normal(t, &R, 0.5f);
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < t->size; i++) {
            s += t->data[i];
            s2 += (double)t->data[i] * t->data[i];
        }
        double mean = s / (double)t->size, sd = sqrt(s2 / (double)t->size - mean * mean);
        ck_assert_float_near(sd, want[k], 0.1 * want[k]);
        ck_assert_float_near(mean, 0, 0.1 * want[k]);
    }
    vs_init_constant(t, 0.25f);
    ck_assert_float_eq(t->data[t->size - 1], 0.25f);
    vs_tensor_free(t);
}
END_TEST

/* ---- forward passes ------------------------------------------------------------------------------ */

START_TEST(test_linear_forward)
{
    vs_module *m = vs_linear_new(3, 2, true, &R);
    set_data(m->params[0], (float[]){0.1f, 0.2f, 0.3f, -0.5f, 0.4f, 0.0f});
    set_data(m->params[1], (float[]){0.5f, -1.0f});
    vs_scope_begin();
    const float xv[6] = {1, 2, 3, -1, 0, 2};
    const double want[4] = {1.9, -0.7, 1.0, -0.5};
    expect_close(vs_module_forward(m, vs_tensor_from(VS_SHAPE(2, 3), xv), NULL), want, 4, 1e-6);
    vs_tensor *y3 = vs_module_forward(m, vs_tensor_from(VS_SHAPE(2, 1, 3), xv), NULL); /* leading dims kept */
    expect_shape(y3, VS_SHAPE(2, 1, 2));
    expect_close(y3, want, 4, 1e-6);
    ck_assert_ptr_null(vs_module_forward(m, vs_tensor_zeros(VS_SHAPE(2, 4)), NULL));
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* Direct double-precision convolution (and its transpose) for the layer references. */
static void conv_ref(const vs_tensor *x, const vs_tensor *w, const vs_tensor *b, int s, int p, double *y, int64_t oh, int64_t ow)
{
    int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3], o = w->shape[0], k = w->shape[2];
    for (int64_t in = 0; in < n; in++)
        for (int64_t oc = 0; oc < o; oc++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = b->data[oc];
                    for (int64_t ic = 0; ic < c; ic++)
                        for (int64_t ki = 0; ki < k; ki++)
                            for (int64_t kj = 0; kj < k; kj++) {
                                int64_t r = i * s - p + ki, q = j * s - p + kj;
                                if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                                acc += (double)w->data[((oc * c + ic) * k + ki) * k + kj] * x->data[((in * c + ic) * h + r) * wd + q];
                            }
                    y[((in * o + oc) * oh + i) * ow + j] = acc;
                }
}

START_TEST(test_conv2d_forward)
{
    vs_module *m = vs_conv2d_new(2, 3, 3, 2, 1, true, &R);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_new(VS_SHAPE(2, 2, 5, 5));
    fill_pattern(x, 1.0f);
    vs_tensor *y = vs_module_forward(m, x, NULL);
    expect_shape(y, VS_SHAPE(2, 3, 3, 3));
    double want[54];
    conv_ref(x, m->params[0], m->params[1], 2, 1, want, 3, 3);
    expect_close(y, want, 54, 1e-5);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

START_TEST(test_conv_transpose2d_forward)
{
    /* in 2 -> out 3, k3 s2 p1 output_padding 1: side 3 -> (3-1)*2 - 2 + 3 + 1 = 6 */
    vs_module *m = vs_conv_transpose2d_new(2, 3, 3, 2, 1, 1, true, &R);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_new(VS_SHAPE(1, 2, 3, 3));
    fill_pattern(x, 1.0f);
    vs_tensor *y = vs_module_forward(m, x, NULL);
    expect_shape(y, VS_SHAPE(1, 3, 6, 6));
    const vs_tensor *w = m->params[0], *b = m->params[1];
    double want[108];
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 36; i++) want[o * 36 + i] = b->data[o];
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                for (int o = 0; o < 3; o++)
                    for (int ki = 0; ki < 3; ki++)
                        for (int kj = 0; kj < 3; kj++) {
                            int r = i * 2 - 1 + ki, q = j * 2 - 1 + kj;
                            if (r < 0 || r >= 6 || q < 0 || q >= 6) continue;
                            want[(o * 6 + r) * 6 + q] += (double)x->data[(c * 3 + i) * 3 + j] * w->data[((c * 3 + o) * 3 + ki) * 3 + kj];
                        }
    expect_close(y, want, 108, 1e-5);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

START_TEST(test_pooling_forward)
{
    vs_scope_begin();
    vs_tensor *x = vs_tensor_new(VS_SHAPE(1, 1, 4, 4));
    for (int i = 0; i < 16; i++) x->data[i] = (float)i;
    vs_module *mods[4] = {vs_max_pool2d_new(2, 0, 0), vs_avg_pool2d_new(2, 0, 0), vs_max_pool2d_new(3, 2, 1),
                          vs_avg_pool2d_new(3, 2, 1)};
    ck_assert_int_eq(mods[0]->spec.stride, 2); /* stride defaults to the kernel */
    expect_close(vs_module_forward(mods[0], x, NULL), (double[]){5, 7, 13, 15}, 4, 0);
    expect_close(vs_module_forward(mods[1], x, NULL), (double[]){2.5, 4.5, 10.5, 12.5}, 4, 1e-7);
    expect_close(vs_module_forward(mods[2], x, NULL), (double[]){5, 7, 13, 15}, 4, 0);
    /* padding counts in the average: window rows/cols {-1,0,1} holds 0+1+4+5 */
    expect_close(vs_module_forward(mods[3], x, NULL),
                 (double[]){10 / 9.0, (1 + 2 + 3 + 5 + 6 + 7) / 9.0, (4 + 5 + 8 + 9 + 12 + 13) / 9.0,
                            (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) / 9.0},
                 4, 1e-6);
    vs_module *gap = vs_global_avg_pool_new();
    vs_tensor *x2 = vs_tensor_new(VS_SHAPE(2, 3, 2, 2));
    for (int i = 0; i < 24; i++) x2->data[i] = (float)(i * i % 7);
    vs_tensor *g = vs_module_forward(gap, x2, NULL);
    expect_shape(g, VS_SHAPE(2, 3));
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = (x2->data[4 * i] + x2->data[4 * i + 1] + x2->data[4 * i + 2] + x2->data[4 * i + 3]) / 4.0;
    expect_close(g, want, 6, 1e-6);
    ck_assert_ptr_null(vs_max_pool2d_new(2, 1, 2)); /* padding above half the kernel */
    vs_scope_end();
    for (int i = 0; i < 4; i++) vs_module_free(mods[i]);
    vs_module_free(gap);
}
END_TEST

/* Batch norm on data whose two channels have means 4, 3 and biased variances 5, 5. */
static void check_batch_norm(vs_module *m, vs_tensor *x, const double *xc0, const double *xc1)
{
    set_data(vs_module_param(m, "weight"), (float[]){2.0f, 0.5f});
    set_data(vs_module_param(m, "bias"), (float[]){0.0f, 1.0f});
    vs_scope_begin();
    vs_tensor *y = vs_module_forward(m, x, NULL);
    ck_assert_ptr_nonnull(y);
    /* y = (x - mean) / sqrt(var + eps) * gamma + beta, batch statistics */
    double s = sqrt(5.0 + 1e-5);
    int64_t n = x->shape[0], inner = x->size / (n * 2);
    for (int64_t b = 0; b < n; b++)
        for (int c = 0; c < 2; c++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t at = (b * 2 + c) * inner + i;
                double xv = c == 0 ? xc0[b * inner + i] : xc1[b * inner + i];
                double want = c == 0 ? (xv - 4) / s * 2 : (xv - 3) / s * 0.5 + 1;
                ck_assert_float_near(y->data[at], want, 1e-5);
            }
    /* running = 0.9 running + 0.1 batch, variance unbiased: 5 * 4/3 */
    ck_assert_float_near(vs_module_param(m, "running_mean")->data[0], 0.4, 1e-6);
    ck_assert_float_near(vs_module_param(m, "running_mean")->data[1], 0.3, 1e-6);
    ck_assert_float_near(vs_module_param(m, "running_var")->data[0], 0.9 + 0.1 * 20.0 / 3.0, 1e-6);
    ck_assert_float_near(vs_module_param(m, "running_var")->data[1], 0.9 + 0.1 * 20.0 / 3.0, 1e-6);
    /* evaluation: running statistics, which stay put */
    vs_module_train(m, false);
    y = vs_module_forward(m, x, NULL);
    double rv = sqrt(0.9 + 0.1 * 20.0 / 3.0 + 1e-5);
    ck_assert_float_near(y->data[0], (xc0[0] - 0.4) / rv * 2, 1e-5);
    ck_assert_float_near(y->data[inner], (xc1[0] - 0.3) / rv * 0.5 + 1, 1e-5);
    ck_assert_float_near(vs_module_param(m, "running_mean")->data[0], 0.4, 1e-6);
    vs_module_train(m, true);
    vs_scope_end();
}

START_TEST(test_batch_norm)
{
    const double c0[4] = {1, 3, 5, 7}, c1[4] = {2, 6, 4, 0};
    vs_module *bn1 = vs_batch_norm1d_new(2, 1e-5f, 0.1f);
    vs_tensor *x1 = vs_tensor_from(VS_SHAPE(4, 2), (float[]){1, 2, 3, 6, 5, 4, 7, 0});
    check_batch_norm(bn1, x1, c0, c1);
    vs_module *bn2 = vs_batch_norm2d_new(2, 1e-5f, 0.1f);
    /* [n=2, c=2, h=1, w=2]: channel 0 holds {1,3 | 5,7}, channel 1 {2,6 | 4,0} */
    vs_tensor *x2 = vs_tensor_from(VS_SHAPE(2, 2, 1, 2), (float[]){1, 3, 2, 6, 5, 7, 4, 0});
    check_batch_norm(bn2, x2, c0, c1);
    /* the wrong layout is refused with the layer's name */
    vs_scope_begin();
    ck_assert_ptr_null(vs_module_forward(bn2, x1, NULL));
    expect_error("batch_norm2d");
    vs_scope_end();
    vs_tensor_free(x1);
    vs_tensor_free(x2);
    vs_module_free(bn1);
    vs_module_free(bn2);
}
END_TEST

START_TEST(test_instance_and_layer_norm)
{
    vs_module *in = vs_instance_norm2d_new(2, 1e-5f);
    expect_names(in, VS_STATE_ALL, (const char *[]){"weight", "bias"}, 2);
    set_data(vs_module_param(in, "weight"), (float[]){2.0f, 1.0f});
    set_data(vs_module_param(in, "bias"), (float[]){0.0f, 0.5f});
    vs_scope_begin();
    /* channel 0: 1,2,3,4 (mean 2.5, var 1.25); channel 1: 0,0,4,4 (mean 2, var 4) */
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 2, 2, 2), (float[]){1, 2, 3, 4, 0, 0, 4, 4});
    double s0 = sqrt(1.25 + 1e-5), s1 = sqrt(4 + 1e-5);
    expect_close(vs_module_forward(in, x, NULL),
                 (double[]){-1.5 / s0 * 2, -0.5 / s0 * 2, 0.5 / s0 * 2, 1.5 / s0 * 2, -2 / s1 + 0.5, -2 / s1 + 0.5, 2 / s1 + 0.5,
                            2 / s1 + 0.5},
                 8, 1e-5);
    vs_module *ln = vs_layer_norm_new(4, 1e-5f);
    set_data(vs_module_param(ln, "weight"), (float[]){1, 2, 1, 1});
    set_data(vs_module_param(ln, "bias"), (float[]){0, 0, 0, 1});
    vs_tensor *x2 = vs_tensor_from(VS_SHAPE(2, 4), (float[]){1, 2, 3, 4, 2, 2, 2, 6});
    double t0 = sqrt(1.25 + 1e-5), t1 = sqrt(3 + 1e-5);
    expect_close(vs_module_forward(ln, x2, NULL),
                 (double[]){-1.5 / t0, -0.5 / t0 * 2, 0.5 / t0, 1.5 / t0 + 1, -1 / t1, -1 / t1 * 2, -1 / t1, 3 / t1 + 1}, 8, 1e-5);
    vs_scope_end();
    vs_module_free(in);
    vs_module_free(ln);
}
END_TEST

START_TEST(test_dropout_modes)
{
    vs_module *d = vs_dropout_new(0.3f);
    vs_rng r;
    vs_rng_seed(&r, 3);
    vs_forward_ctx ctx = {.rng = &r};
    vs_scope_begin();
    vs_tensor *x = vs_tensor_full(VS_SHAPE(2000), 1.0f);
    vs_tensor *y = vs_module_forward(d, x, &ctx);
    int zeros = 0;
    for (int i = 0; i < 2000; i++) {
        if (y->data[i] == 0.0f)
            zeros++;
        else
            ck_assert_float_near(y->data[i], 1 / 0.7, 1e-6);
    }
    ck_assert_msg(zeros > 520 && zeros < 680, "%d of 2000 dropped with p = 0.3", zeros);
    ck_assert_ptr_null(vs_module_forward(d, x, NULL));
    expect_error("random generator");
    vs_module_train(d, false);
    y = vs_module_forward(d, x, NULL);
    for (int i = 0; i < 2000; i++) ck_assert_float_eq(y->data[i], 1.0f);
    vs_scope_end();
    vs_module_free(d);
}
END_TEST

START_TEST(test_activations_and_flatten)
{
    const float xv[5] = {-2.0f, -0.5f, 0.0f, 0.3f, 1.7f};
    struct {
        vs_module_kind kind;
        float param;
    } acts[6] = {{VS_MODULE_RELU, 0},    {VS_MODULE_LEAKY_RELU, 0.2f}, {VS_MODULE_ELU, 1.5f},
                 {VS_MODULE_TANH, 0},    {VS_MODULE_SIGMOID, 0},       {VS_MODULE_SOFTPLUS, 0}};
    vs_scope_begin();
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 5), xv);
    for (int a = 0; a < 6; a++) {
        vs_module *m = vs_activation_new(acts[a].kind, acts[a].param);
        ck_assert_ptr_nonnull(m);
        double want[5];
        for (int i = 0; i < 5; i++) {
            double v = xv[i];
            switch (acts[a].kind) {
            case VS_MODULE_RELU: want[i] = v > 0 ? v : 0; break;
            case VS_MODULE_LEAKY_RELU: want[i] = v > 0 ? v : 0.2 * v; break;
            case VS_MODULE_ELU: want[i] = v > 0 ? v : 1.5 * (exp(v) - 1); break;
            case VS_MODULE_TANH: want[i] = tanh(v); break;
            case VS_MODULE_SIGMOID: want[i] = 1 / (1 + exp(-v)); break;
            default: want[i] = log1p(exp(v)); break;
            }
        }
        expect_close(vs_module_forward(m, x, NULL), want, 5, 1e-6);
        vs_module_free(m);
    }
    ck_assert_ptr_null(vs_activation_new(VS_MODULE_LINEAR, 0));
    vs_module *f = vs_flatten_new();
    vs_tensor *x3 = vs_tensor_new(VS_SHAPE(2, 3, 2));
    fill_pattern(x3, 1);
    vs_tensor *y = vs_module_forward(f, x3, NULL);
    expect_shape(y, VS_SHAPE(2, 6));
    ck_assert_mem_eq(y->data, x3->data, 12 * sizeof(float));
    vs_scope_end();
    vs_module_free(f);
}
END_TEST

START_TEST(test_residual_forward)
{
    vs_module *lin = vs_linear_new(2, 2, true, &R);
    set_data(lin->params[0], (float[]){1, 2, 0, -1});
    set_data(lin->params[1], (float[]){0.5f, 0.25f});
    vs_module *res = vs_residual_new(seq_of(1, (vs_module *[]){lin}));
    vs_scope_begin();
    /* x + W x + b: [1,3] -> [1 + 7.5, 3 - 2.75] */
    expect_close(vs_module_forward(res, vs_tensor_from(VS_SHAPE(1, 2), (float[]){1, 3}), NULL), (double[]){8.5, 0.25}, 2, 1e-6);
    vs_scope_end();
    expect_names(res, VS_STATE_ALL, (const char *[]){"block.0.weight", "block.0.bias"}, 2);
    vs_module_free(res);
}
END_TEST

START_TEST(test_forward_errors_name_the_layer)
{
    vs_module *m = seq_of(3, (vs_module *[]){vs_linear_new(3, 4, true, &R), vs_activation_new(VS_MODULE_RELU, 0),
                                             vs_linear_new(5, 2, true, &R)});
    vs_module *outer = seq_of(2, (vs_module *[]){vs_activation_new(VS_MODULE_TANH, 0), vs_residual_new(m)});
    vs_scope_begin();
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, 3));
    ck_assert_ptr_null(vs_module_forward(outer, x, NULL));
    expect_error("layer 1 (residual): layer 2 (linear): linear: x has 4 features");
    vs_scope_end();
    vs_module_free(outer);
    vs_module *empty = vs_sequential_new();
    ck_assert_int_eq(vs_sequential_add(empty, NULL), VS_ERR_ARG);
    ck_assert_int_eq(empty->n_children, 0);
    vs_module_free(empty);
}
END_TEST

/* The MNIST classifier in eval mode: activations of every layer, ranges that compose, and the
 * gradient of a class score with respect to an inner activation (what Grad-CAM needs). */
START_TEST(test_forward_range_and_activations)
{
    int64_t live = vs_live_tensors();
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &R, NULL);
    vs_module_train(m, false);
    ck_assert_int_eq(m->children[7]->training, false);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 1, 28, 28), &R, 0, 1);
    vs_tensor *outs[9];
    vs_tensor *y = vs_sequential_forward_range(m, x, NULL, 0, 9, outs);
    expect_shape(y, VS_SHAPE(2, 10));
    ck_assert_ptr_eq(outs[8], y);
    expect_shape(outs[0], VS_SHAPE(2, 32, 14, 14));
    expect_shape(outs[3], VS_SHAPE(2, 64, 7, 7));
    expect_shape(outs[4], VS_SHAPE(2, 3136));
    expect_shape(outs[7], VS_SHAPE(2, 256));
    vs_tensor *full = vs_module_forward(m, x, NULL);
    vs_tensor *part = vs_sequential_forward_range(m, vs_sequential_forward_range(m, x, NULL, 0, 4, NULL), NULL, 4, 9, NULL);
    for (int i = 0; i < 20; i++) {
        ck_assert_float_eq(full->data[i], y->data[i]);
        ck_assert_float_eq(part->data[i], y->data[i]);
    }
    /* d y[:, 3] / d A with A the last conv activation: same shape as A, not all zero */
    vs_tensor *score = vs_sum(vs_slice(y, 1, 3, 4), VS_ALL_AXES, false);
    vs_tensor *g;
    ck_assert_int_eq(vs_grad(1, &score, NULL, 1, &outs[3], &g, false), VS_OK);
    expect_shape(g, VS_SHAPE(2, 64, 7, 7));
    double s = 0;
    for (int64_t i = 0; i < g->size; i++) s += fabs(g->data[i]);
    ck_assert(s > 0);
    ck_assert_ptr_null(vs_sequential_forward_range(m, x, NULL, 3, 12, NULL));
    expect_error("outside [0, 9)");
    vs_scope_end();
    vs_module_free(m);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

START_TEST(test_train_and_eval_mode)
{
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &R, NULL);
    ck_assert(m->training && m->children[7]->training);
    vs_rng r;
    vs_rng_seed(&r, 11);
    vs_forward_ctx ctx = {.rng = &r};
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &R, 0, 1);
    vs_tensor *a = vs_module_forward(m, x, &ctx), *b = vs_module_forward(m, x, &ctx);
    ck_assert_int_ne(memcmp(a->data, b->data, 10 * sizeof(float)), 0); /* fresh dropout masks */
    vs_module_train(m, false);
    a = vs_module_forward(m, x, NULL);
    b = vs_module_forward(m, x, &ctx);
    ck_assert_mem_eq(a->data, b->data, 10 * sizeof(float));
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

START_TEST(test_paper_architectures_run)
{
    vs_error err;
    vs_module *c10 = vs_arch_ganmex_cifar10(32, 10, &R, &err);
    ck_assert_msg(c10 != NULL, "%s", err.msg);
    ck_assert_int_eq(vs_module_param_count(c10), 1183466);
    ck_assert_int_eq(c10->n_children, 30);
    ck_assert_ptr_null(vs_module_param(c10->children[0], "bias")); /* conv before batch norm: no bias */
    expect_shape(vs_module_param(c10->children[29], "weight"), VS_SHAPE(10, 1024));
    vs_module_free(c10);
    c10 = vs_arch_ganmex_cifar10(4, 10, &R, &err);
    vs_module *clothes = vs_arch_cem_fashion(6, &R, &err), *shoes = vs_arch_cem_fashion(3, &R, &err);
    ck_assert_int_eq(vs_module_param_count(clothes), 3270534);
    ck_assert_int_eq(shoes->children[3]->spec.padding, 2);
    vs_module_train(c10, false);
    vs_module_train(shoes, false);
    vs_scope_begin();
    vs_tensor *y = vs_module_forward(c10, vs_tensor_rand(VS_SHAPE(2, 3, 32, 32), &R, 0, 1), NULL);
    expect_shape(y, VS_SHAPE(2, 10));
    y = vs_module_forward(shoes, vs_tensor_rand(VS_SHAPE(2, 1, 28, 28), &R, 0, 1), NULL);
    expect_shape(y, VS_SHAPE(2, 3));
    vs_scope_end();
    vs_module_free(c10);
    vs_module_free(clothes);
    vs_module_free(shoes);
    ck_assert_ptr_null(vs_arch_siamese_gnn(VS_MODULE_LINEAR, 3, 4, 2, 4, &R, &err));
    expect_err(&err, "gcn_conv or gin_conv");
}
END_TEST

/* ---- specs --------------------------------------------------------------------------------------- */

/* model.json's MNIST example (docs/formats/model.md), entered field by field as a JSON reader would. */
static vs_model_spec mnist_json_spec(void)
{
    static const struct {
        const char *op;
        const char *keys[5];
        double vals[5];
    } rows[9] = {
        {"conv2d", {"in", "out", "kernel", "stride", "padding"}, {1, 32, 6, 2, 2}},
        {"relu", {0}, {0}},
        {"conv2d", {"in", "out", "kernel", "stride", "padding"}, {32, 64, 6, 2, 2}},
        {"relu", {0}, {0}},
        {"flatten", {0}, {0}},
        {"linear", {"in", "out"}, {3136, 256}},
        {"relu", {0}, {0}},
        {"dropout", {"p"}, {0.5}},
        {"linear", {"in", "out"}, {256, 10}},
    };
    vs_model_spec s = {.input_ndim = 3, .input = {1, 28, 28}, .n_layers = 9};
    s.layers = calloc(9, sizeof *s.layers);
    for (int i = 0; i < 9; i++) {
        vs_module_kind k;
        ck_assert(vs_module_kind_from_name(rows[i].op, &k));
        vs_layer_spec_init(&s.layers[i], k);
        for (int j = 0; j < 5 && rows[i].keys[j]; j++)
            ck_assert_int_eq(vs_layer_spec_set(&s.layers[i], rows[i].keys[j], rows[i].vals[j], NULL), VS_OK);
    }
    return s;
}

START_TEST(test_spec_builds_mnist)
{
    vs_model_spec s = mnist_json_spec();
    vs_error err;
    vs_module *m = vs_model_from_spec(&s, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    expect_names(m, VS_STATE_ALL, (const char *[]){"0.weight", "0.bias", "2.weight", "2.bias", "5.weight", "5.bias", "8.weight", "8.bias"}, 8);
    /* a writer reads the fields back by name; defaults are filled, inapplicable fields absent */
    double v;
    ck_assert(vs_layer_spec_get(&m->children[0]->spec, "kernel", &v) && v == 6);
    ck_assert(vs_layer_spec_get(&m->children[0]->spec, "bias", &v) && v == 1);
    ck_assert(!vs_layer_spec_get(&m->children[0]->spec, "p", &v));
    ck_assert(vs_layer_spec_get(&m->children[7]->spec, "p", &v) && v == 0.5);
    vs_module_free(m);
    s.siamese = true;
    m = vs_model_from_spec(&s, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    expect_names(m, VS_STATE_PARAMS, (const char *[]){"encoder.0.weight", "encoder.0.bias", "encoder.2.weight", "encoder.2.bias",
                                                      "encoder.5.weight", "encoder.5.bias", "encoder.8.weight", "encoder.8.bias"}, 8);
    vs_module_free(m);
    vs_model_spec_clear(&s);
    ck_assert_ptr_null(s.layers);
    for (int k = 0; k < VS_MODULE_KIND_COUNT; k++) {
        vs_module_kind back;
        ck_assert(vs_module_kind_from_name(vs_module_kind_name((vs_module_kind)k), &back));
        ck_assert_int_eq(back, k);
    }
    ck_assert(!vs_module_kind_from_name("conv3d", &(vs_module_kind){0}));
}
END_TEST

/* Build a one-off list and expect its error message. */
static void expect_spec_error(vs_layer_spec *layers, int n, int input_ndim, const int64_t *input, const char *needle)
{
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = vs_sequential_from_spec(layers, n, input_ndim, input, &R, &err);
    if (m) vs_module_free(m);
    ck_assert_ptr_null(m);
    expect_err(&err, needle);
}

START_TEST(test_spec_errors)
{
    vs_model_spec s = mnist_json_spec();
    s.layers[5].in = 3000;
    expect_spec_error(s.layers, 9, 3, s.input, "layer 5 (linear): \"in\" is 3000 but its input [3136] has 3136 features");
    s.layers[5].in = 3136;
    s.layers[0].in = 3;
    expect_spec_error(s.layers, 9, 3, s.input, "layer 0 (conv2d): \"in\" is 3 but its input [1,28,28] has 1 channels");
    s.layers[0].in = 1;
    s.layers[2].kernel = VS_SPEC_ABSENT;
    expect_spec_error(s.layers, 9, 3, s.input, "layer 2 (conv2d): field \"kernel\" is required");
    s.layers[2].kernel = 6;
    s.layers[1].kernel = 3;
    expect_spec_error(s.layers, 9, 3, s.input, "layer 1 (relu): field \"kernel\" does not apply to relu");
    s.layers[1].kernel = VS_SPEC_ABSENT;
    s.layers[7].p = 1.5;
    expect_spec_error(s.layers, 9, 3, s.input, "layer 7 (dropout): \"p\" is 1.5, expected a number in [0, 1)");
    s.layers[7].p = 0.5;
    /* a 2x2 input is too small for two k6 s2 p2 convolutions (2 -> 1 -> nothing) */
    expect_spec_error(s.layers, 9, 3, (int64_t[]){1, 2, 2}, "layer 2 (conv2d): input side 1 is too small for kernel 6 with padding 2");
    /* a 4x4 input goes through both (4 -> 2 -> 1) and then feeds 64 features to the linear layer */
    expect_spec_error(s.layers, 9, 3, (int64_t[]){1, 4, 4}, "layer 5 (linear): \"in\" is 3136 but its input [64] has 64 features");
    /* without an input shape consecutive layers are still checked */
    vs_layer_spec l[2];
    vs_layer_spec_init(&l[0], VS_MODULE_LINEAR);
    l[0].in = 4, l[0].out = 8;
    vs_layer_spec_init(&l[1], VS_MODULE_LINEAR);
    l[1].in = 5, l[1].out = 2;
    expect_spec_error(l, 2, 0, NULL, "layer 1 (linear): \"in\" is 5 but its input [8] has 8 features");
    vs_layer_spec_init(&l[1], VS_MODULE_SIAMESE);
    expect_spec_error(l, 2, 0, NULL, "layer 1 (siamese): op \"siamese\" cannot be a layer");
    /* residual blocks: nested messages and shape preservation */
    vs_layer_spec res;
    vs_layer_spec_init(&res, VS_MODULE_RESIDUAL);
    res.n_block = 1;
    res.block = calloc(1, sizeof *res.block);
    vs_layer_spec_init(&res.block[0], VS_MODULE_LINEAR);
    res.block[0].in = 8, res.block[0].out = 3;
    l[1] = res;
    expect_spec_error(l, 2, 0, NULL, "layer 1 (residual): the block changes the shape");
    res.block[0].in = 7;
    l[1] = res;
    expect_spec_error(l, 2, 0, NULL, "layer 1 (residual): layer 0 (linear): \"in\" is 7 but its input [8] has 8 features");
    res.block[0].in = 8, res.block[0].out = 8;
    l[1] = res;
    vs_error err;
    vs_module *m = vs_sequential_from_spec(l, 2, 0, NULL, &R, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    expect_names(m, VS_STATE_ALL, (const char *[]){"0.weight", "0.bias", "1.block.0.weight", "1.block.0.bias"}, 4);
    vs_module_free(m);
    vs_layer_spec_clear(&res);
    /* field setters check names, applicability and integers */
    vs_layer_spec c;
    vs_layer_spec_init(&c, VS_MODULE_CONV2D);
    ck_assert_int_eq(vs_layer_spec_set(&c, "kernel", 2.5, &err), VS_ERR_FORMAT);
    expect_err(&err, "\"kernel\" must be an integer, got 2.5");
    ck_assert_int_eq(vs_layer_spec_set(&c, "kernal", 3, &err), VS_ERR_FORMAT);
    expect_err(&err, "unknown field \"kernal\"");
    ck_assert_int_eq(vs_layer_spec_set(&c, "momentum", 0.1, &err), VS_ERR_FORMAT);
    expect_err(&err, "field \"momentum\" does not apply to conv2d");
    ck_assert(vs_spec_field_applies(VS_MODULE_BATCH_NORM2D, "momentum"));
    ck_assert_str_eq(vs_spec_field_name(VS_SPEC_N_FIELDS - 1), "ceil_mode");
    ck_assert_ptr_null(vs_spec_field_name(VS_SPEC_N_FIELDS));
    vs_model_spec_clear(&s);
}
END_TEST

/* ---- loading state ------------------------------------------------------------------------------- */

START_TEST(test_load_state)
{
    vs_module *a = vs_arch_siamese_mlp(6, 5, 4, &R, NULL), *b = vs_arch_siamese_mlp(6, 5, 4, &R, NULL);
    vs_named_tensors src = {0};
    ck_assert_int_eq(vs_module_named_tensors(a, VS_STATE_ALL, &src), VS_OK);
    vs_tensor *extra = vs_tensor_zeros(VS_SHAPE(1));
    ck_assert_int_eq(vs_named_tensors_push(&src, "encoder.1.num_batches_tracked", extra, true), VS_OK);
    vs_error err;
    ck_assert_int_eq(vs_module_load_state(b, &src, &err), VS_OK);
    vs_named_tensors got = {0};
    vs_module_named_tensors(b, VS_STATE_ALL, &got);
    for (int64_t i = 0; i < got.n; i++) {
        vs_tensor *want = vs_named_tensors_find(&src, got.items[i].name);
        ck_assert_ptr_ne(want, got.items[i].tensor);
        ck_assert_mem_eq(want->data, got.items[i].tensor->data, (size_t)want->size * sizeof(float));
    }
    /* a mismatch anywhere leaves the model untouched */
    vs_module *c = vs_arch_siamese_mlp(6, 5, 4, &R, NULL);
    float before = vs_module_child(c, "encoder")->children[0]->params[0]->data[0];
    vs_named_tensors bad = {0};
    vs_module *wrong = vs_arch_siamese_mlp(7, 5, 4, &R, NULL);
    vs_module_named_tensors(wrong, VS_STATE_ALL, &bad);
    ck_assert_int_eq(vs_module_load_state(c, &bad, &err), VS_ERR_SHAPE);
    expect_err(&err, "tensor encoder.0.weight has shape [5,7], the model expects [5,6]");
    ck_assert_float_eq(vs_module_child(c, "encoder")->children[0]->params[0]->data[0], before);
    src.n--; /* drop num_batches_tracked */
    src.n--; /* and encoder.2.bias */
    ck_assert_int_eq(vs_module_load_state(c, &src, &err), VS_ERR_FORMAT);
    expect_err(&err, "tensor encoder.2.bias is missing");
    src.n += 2;
    ck_assert_int_eq(vs_named_tensors_push(&src, "decoder.0.weight", extra, false), VS_OK);
    ck_assert_int_eq(vs_module_load_state(c, &src, &err), VS_ERR_FORMAT);
    expect_err(&err, "tensor decoder.0.weight is not part of the model");
    vs_named_tensors_clear(&src);
    vs_named_tensors_clear(&got);
    vs_named_tensors_clear(&bad);
    vs_tensor_free(extra);
    vs_module_free(a);
    vs_module_free(b);
    vs_module_free(c);
    vs_module_free(wrong);
}
END_TEST

START_TEST(test_siamese_mlp_similarity)
{
    vs_module *m = vs_arch_siamese_mlp(6, 5, 4, &R, NULL);
    vs_module *enc = vs_module_child(m, "encoder");
    const vs_tensor *w0 = enc->children[0]->params[0], *b0 = enc->children[0]->params[1];
    const vs_tensor *w2 = enc->children[2]->params[0], *b2 = enc->children[2]->params[1];
    vs_scope_begin();
    vs_tensor *a = vs_tensor_rand(VS_SHAPE(3, 6), &R, -1, 1), *b = vs_tensor_rand(VS_SHAPE(3, 6), &R, -1, 1);
    vs_tensor *s = vs_siamese_forward(m, a, NULL, b, NULL);
    expect_shape(s, VS_SHAPE(3));
    for (int i = 0; i < 3; i++) {
        double e[2][4];
        const vs_tensor *in[2] = {a, b};
        for (int side = 0; side < 2; side++) {
            double h[5];
            for (int j = 0; j < 5; j++) {
                h[j] = b0->data[j];
                for (int k = 0; k < 6; k++) h[j] += (double)w0->data[j * 6 + k] * in[side]->data[i * 6 + k];
                h[j] = h[j] > 0 ? h[j] : 0;
            }
            for (int j = 0; j < 4; j++) {
                e[side][j] = b2->data[j];
                for (int k = 0; k < 5; k++) e[side][j] += (double)w2->data[j * 5 + k] * h[k];
            }
        }
        double dot = 0, na = 0, nb = 0;
        for (int j = 0; j < 4; j++) {
            dot += e[0][j] * e[1][j];
            na += e[0][j] * e[0][j];
            nb += e[1][j] * e[1][j];
        }
        ck_assert_float_near(s->data[i], dot / sqrt(na * nb), 1e-5);
    }
    vs_tensor *self = vs_siamese_forward(m, a, NULL, a, NULL);
    for (int i = 0; i < 3; i++) ck_assert_float_near(self->data[i], 1.0, 1e-6);
    expect_shape(vs_module_forward(m, a, NULL), VS_SHAPE(3, 4)); /* the embedding */
    ck_assert_ptr_null(vs_siamese_forward(enc, a, NULL, b, NULL));
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* ---- graphs -------------------------------------------------------------------------------------- */

/* Three graphs: a path 0-1-2, an edge 0-1, a single node; two features per node. */
static vs_graph G[3];
static float GX[6][2] = {{1, 0}, {0.5f, 2}, {-1, 1}, {2, -1}, {0.25f, 0.5f}, {3, 3}};

static void make_graphs(void)
{
    static int64_t s0[4] = {0, 1, 1, 2}, d0[4] = {1, 0, 2, 1}, s1[2] = {0, 1}, d1[2] = {1, 0};
    G[0] = (vs_graph){.n_nodes = 3, .n_edges = 4, .src = s0, .dst = d0, .x = &GX[0][0]};
    G[1] = (vs_graph){.n_nodes = 2, .n_edges = 2, .src = s1, .dst = d1, .x = &GX[3][0]};
    G[2] = (vs_graph){.n_nodes = 1, .n_edges = 0, .x = &GX[5][0]};
}

static const float EW[6] = {0.5f, 1.0f, 1.5f, 0.2f, 0.7f, 1.2f};

START_TEST(test_graph_batch)
{
    make_graphs();
    vs_graph_batch b;
    vs_error err;
    ck_assert_int_eq(vs_graph_batch_init(&b, G, NULL, 3, 2, &err), VS_OK);
    ck_assert_int_eq(b.n_nodes, 6);
    ck_assert_int_eq(b.n_edges, 6);
    const int64_t np[4] = {0, 3, 5, 6}, ep[4] = {0, 4, 6, 6}, ng[6] = {0, 0, 0, 1, 1, 2};
    ck_assert_mem_eq(b.node_ptr, np, sizeof np);
    ck_assert_mem_eq(b.edge_ptr, ep, sizeof ep);
    ck_assert_mem_eq(b.node_graph, ng, sizeof ng);
    ck_assert_int_eq(b.src[4], 3);
    ck_assert_int_eq(b.dst[4], 4);
    vs_tensor *x = vs_graph_batch_features(&b);
    expect_shape(x, VS_SHAPE(6, 2));
    ck_assert_mem_eq(x->data, GX, sizeof GX);
    vs_tensor_free(x);
    vs_graph_batch_clear(&b);
    /* a selection, in its order */
    ck_assert_int_eq(vs_graph_batch_init(&b, G, (int64_t[]){2, 1}, 2, 2, &err), VS_OK);
    ck_assert_int_eq(b.n_nodes, 3);
    ck_assert_int_eq(b.src[0], 1);
    ck_assert_float_eq(b.x[0], 3.0f);
    vs_graph_batch_clear(&b);
    /* an edge pointing outside its graph */
    int64_t bad_dst[2] = {1, 2};
    vs_graph g = G[1];
    g.dst = bad_dst;
    ck_assert_int_eq(vs_graph_batch_init(&b, &g, NULL, 1, 2, &err), VS_ERR_FORMAT);
    expect_err(&err, "graph 0: edge 1 (1 -> 2) outside its 2 nodes");
}
END_TEST

/* Reference GCN propagation in double: y_i = x_i / d_i + sum_{e: j->i} w_e x_j / sqrt(d_j d_i). */
static void gcn_ref(const vs_graph_batch *b, const float *x, int64_t f, const float *w, double *y)
{
    double d[16];
    for (int64_t i = 0; i < b->n_nodes; i++) d[i] = 1;
    for (int64_t e = 0; e < b->n_edges; e++) d[b->dst[e]] += w ? w[e] : 1;
    for (int64_t i = 0; i < b->n_nodes; i++)
        for (int64_t k = 0; k < f; k++) y[i * f + k] = x[i * f + k] / d[i];
    for (int64_t e = 0; e < b->n_edges; e++)
        for (int64_t k = 0; k < f; k++)
            y[b->dst[e] * f + k] += (w ? w[e] : 1) * x[b->src[e] * f + k] / sqrt(d[b->src[e]] * d[b->dst[e]]);
}

START_TEST(test_gcn_forward)
{
    make_graphs();
    vs_graph_batch b;
    ck_assert_int_eq(vs_graph_batch_init(&b, G, NULL, 3, 2, NULL), VS_OK);
    vs_scope_begin();
    vs_tensor *x = vs_graph_batch_features(&b), *w = vs_tensor_from(VS_SHAPE(6), EW);
    double want[12];
    gcn_ref(&b, &GX[0][0], 2, EW, want);
    expect_close(vs_gcn_propagate(x, &b, w), want, 12, 1e-6);
    gcn_ref(&b, &GX[0][0], 2, NULL, want);
    expect_close(vs_gcn_propagate(x, &b, NULL), want, 12, 1e-6);
    /* the layer: propagate(x W^T) + b */
    vs_module *gcn = vs_gcn_conv_new(2, 3, &R);
    vs_tensor *W = vs_module_param(vs_module_child(gcn, "lin"), "weight"), *bias = vs_module_param(gcn, "bias");
    set_data(bias, (float[]){0.1f, -0.2f, 0.3f});
    float h[18];
    for (int i = 0; i < 6; i++)
        for (int o = 0; o < 3; o++) h[i * 3 + o] = W->data[o * 2] * GX[i][0] + W->data[o * 2 + 1] * GX[i][1];
    double want3[18];
    gcn_ref(&b, h, 3, EW, want3);
    for (int i = 0; i < 18; i++) want3[i] += bias->data[i % 3];
    vs_forward_ctx ctx = {.graph = &b, .edge_weight = w};
    expect_close(vs_module_forward(gcn, x, &ctx), want3, 18, 1e-5);
    /* no graph, or edge weights of the wrong size: refused */
    ck_assert_ptr_null(vs_module_forward(gcn, x, NULL));
    expect_error("no graph batch");
    ctx.edge_weight = vs_tensor_zeros(VS_SHAPE(5));
    ck_assert_ptr_null(vs_module_forward(gcn, x, &ctx));
    expect_error("edge weights [5] must be [6]");
    vs_scope_end();
    vs_module_free(gcn);
    vs_graph_batch_clear(&b);
}
END_TEST

START_TEST(test_gin_forward)
{
    make_graphs();
    vs_graph_batch b;
    ck_assert_int_eq(vs_graph_batch_init(&b, G, NULL, 3, 2, NULL), VS_OK);
    vs_module *gin = vs_gin_conv_new(2, 3, 2, 0.3f, true, &R);
    vs_module *mlp = vs_module_child(gin, "nn");
    const vs_tensor *w0 = mlp->children[0]->params[0], *b0 = mlp->children[0]->params[1];
    const vs_tensor *w2 = mlp->children[2]->params[0], *b2 = mlp->children[2]->params[1];
    vs_scope_begin();
    vs_tensor *x = vs_graph_batch_features(&b), *w = vs_tensor_from(VS_SHAPE(6), EW);
    /* h_i = 1.3 x_i + sum_{e: j->i} w_e x_j, then Linear, ReLU, Linear in double */
    double h[6][2], want[12];
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 2; k++) h[i][k] = 1.3 * GX[i][k];
    for (int64_t e = 0; e < b.n_edges; e++)
        for (int k = 0; k < 2; k++) h[b.dst[e]][k] += EW[e] * GX[b.src[e]][k];
    /* node 0 hears node 1 (w 1), node 1 hears 0 (w 0.5) and 2 (w 0.2), node 2 hears 1 (w 1.5), ... */
    expect_close(vs_graph_aggregate(x, &b, w), (double[]){0.5, 2, 0.5 - 0.2, 0.2, 0.75, 3, 1.2 * 0.25, 1.2 * 0.5, 0.7 * 2, -0.7, 0, 0},
                 12, 1e-6);
    for (int i = 0; i < 6; i++) {
        double z[3];
        for (int j = 0; j < 3; j++) {
            z[j] = b0->data[j] + w0->data[j * 2] * h[i][0] + w0->data[j * 2 + 1] * h[i][1];
            z[j] = z[j] > 0 ? z[j] : 0;
        }
        for (int o = 0; o < 2; o++) {
            want[i * 2 + o] = b2->data[o];
            for (int j = 0; j < 3; j++) want[i * 2 + o] += w2->data[o * 3 + j] * z[j];
        }
    }
    vs_forward_ctx ctx = {.graph = &b, .edge_weight = w};
    expect_close(vs_module_forward(gin, x, &ctx), want, 12, 1e-5);
    vs_scope_end();
    vs_module_free(gin);
    vs_graph_batch_clear(&b);
}
END_TEST

START_TEST(test_readouts)
{
    make_graphs();
    vs_graph empty = {.n_nodes = 0};
    vs_graph four[4] = {G[0], G[1], empty, G[2]};
    vs_graph_batch b;
    ck_assert_int_eq(vs_graph_batch_init(&b, four, NULL, 4, 2, NULL), VS_OK);
    vs_scope_begin();
    vs_tensor *x = vs_graph_batch_features(&b);
    vs_module *mods[3] = {vs_readout_new(VS_MODULE_SUM_READOUT), vs_readout_new(VS_MODULE_MEAN_READOUT),
                          vs_readout_new(VS_MODULE_MAX_READOUT)};
    vs_forward_ctx ctx = {.graph = &b};
    const double sum[8] = {0.5, 3, 2.25, -0.5, 0, 0, 3, 3};
    const double mean[8] = {0.5 / 3, 1, 1.125, -0.25, 0, 0, 3, 3};
    const double max[8] = {1, 2, 2, 0.5, 0, 0, 3, 3};
    expect_close(vs_module_forward(mods[0], x, &ctx), sum, 8, 1e-6);
    expect_close(vs_module_forward(mods[1], x, &ctx), mean, 8, 1e-6);
    vs_tensor *y = vs_module_forward(mods[2], x, &ctx);
    expect_shape(y, VS_SHAPE(4, 2));
    expect_close(y, max, 8, 0);
    ck_assert_ptr_null(vs_readout_new(VS_MODULE_RELU));
    vs_scope_end();
    for (int i = 0; i < 3; i++) vs_module_free(mods[i]);
    vs_graph_batch_clear(&b);
}
END_TEST

/* ---- gradient checks through layers --------------------------------------------------------------- */

typedef struct mod_ctx {
    vs_module *m;
    vs_forward_ctx fc;
    bool edge_input; /* x[1] is the edge-weight tensor */
} mod_ctx;

static vs_tensor *mod_fn(vs_tensor **x, void *c)
{
    mod_ctx *mc = c;
    vs_forward_ctx fc = mc->fc;
    if (mc->edge_input) fc.edge_weight = x[1];
    return vs_module_forward(mc->m, x[0], &fc);
}

/* Gradcheck m with respect to its input x and up to `np` of its parameters (in state_dict order). */
static void check_module(const char *name, vs_module *m, vs_tensor *x, int np, bool second)
{
    mod_ctx mc = {.m = m};
    vs_tensor *in[GC_MAX_IN] = {x};
    vs_named_tensors l = {0};
    vs_module_named_tensors(m, VS_STATE_PARAMS, &l);
    int n = 1;
    for (int64_t i = 0; i < l.n && n < GC_MAX_IN && n <= np; i++) in[n++] = l.items[i].tensor;
    vs_named_tensors_clear(&l);
    gradcheck_full(name, mod_fn, &mc, n, in, 1e-2, 2e-2, second);
}

START_TEST(test_gradcheck_dense_layers)
{
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(3, 4), &R, -1, 1);
    vs_module *lin = vs_linear_new(4, 3, true, &R);
    vs_module *mlp = seq_of(3, (vs_module *[]){vs_linear_new(4, 5, true, &R), vs_activation_new(VS_MODULE_TANH, 0),
                                               vs_linear_new(5, 2, true, &R)});
    vs_module *ln = vs_layer_norm_new(4, 1e-5f);
    vs_module *bn = vs_batch_norm1d_new(4, 1e-5f, 0.1f);
    fill_pattern(vs_module_param(ln, "weight"), 1.5f);
    fill_pattern(vs_module_param(bn, "weight"), 1.5f);
    check_module("linear", lin, x, 2, true);
    check_module("mlp", mlp, x, 3, true);
    check_module("layer_norm", ln, x, 2, true);
    check_module("batch_norm1d (training)", bn, x, 2, true);
    vs_module_train(bn, false);
    check_module("batch_norm1d (eval)", bn, x, 2, true);
    vs_module *acts[4] = {vs_activation_new(VS_MODULE_ELU, 0.7f), vs_activation_new(VS_MODULE_SOFTPLUS, 0),
                          vs_activation_new(VS_MODULE_SIGMOID, 0), vs_residual_new(seq_of(2, (vs_module *[]){
                                                                       vs_linear_new(4, 4, true, &R), vs_activation_new(VS_MODULE_TANH, 0)}))};
    for (int i = 0; i < 4; i++) check_module(vs_module_kind_name(acts[i]->kind), acts[i], x, 0, true);
    vs_module *all[] = {lin, mlp, ln, bn, acts[0], acts[1], acts[2], acts[3]};
    for (int i = 0; i < 8; i++) vs_module_free(all[i]);
    vs_tensor_free(x);
}
END_TEST

START_TEST(test_gradcheck_conv_layers)
{
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 2, 4, 4), &R, -1, 1);
    vs_module *conv = vs_conv2d_new(2, 2, 3, 2, 1, true, &R);
    vs_module *convt = vs_conv_transpose2d_new(2, 2, 3, 2, 1, 1, true, &R);
    vs_module *bn = vs_batch_norm2d_new(2, 1e-5f, 0.1f);
    vs_module *in = vs_instance_norm2d_new(2, 1e-5f);
    vs_module *avg = vs_avg_pool2d_new(2, 2, 0), *gap = vs_global_avg_pool_new();
    fill_pattern(vs_module_param(in, "weight"), 1.5f);
    check_module("conv2d", conv, x, 2, true);
    check_module("conv_transpose2d", convt, x, 2, true);
    check_module("batch_norm2d", bn, x, 2, true);
    check_module("instance_norm2d", in, x, 2, true);
    check_module("avg_pool2d", avg, x, 0, true);
    check_module("global_avg_pool", gap, x, 0, true);
    /* max pooling away from ties */
    vs_tensor *xs = vs_tensor_new(VS_SHAPE(1, 2, 4, 4));
    for (int64_t i = 0; i < xs->size; i++) xs->data[i] = (float)((i * 11) % 32) * 0.1f;
    vs_module *mp = vs_max_pool2d_new(2, 2, 0);
    check_module("max_pool2d", mp, xs, 0, true);
    vs_module *all[] = {conv, convt, bn, in, avg, gap, mp};
    for (int i = 0; i < 7; i++) vs_module_free(all[i]);
    vs_tensor_free(x);
    vs_tensor_free(xs);
}
END_TEST

/* Graph layers with respect to node features, edge weights and a weight matrix, first and second order. */
START_TEST(test_gradcheck_graph_layers)
{
    make_graphs();
    vs_graph_batch b;
    ck_assert_int_eq(vs_graph_batch_init(&b, G, NULL, 3, 2, NULL), VS_OK);
    vs_tensor *x = vs_graph_batch_features(&b), *w = vs_tensor_from(VS_SHAPE(6), EW);
    vs_module *gcn = vs_gcn_conv_new(2, 3, &R);
    mod_ctx mc = {.m = gcn, .fc = {.graph = &b}, .edge_input = true};
    vs_tensor *in[3] = {x, w, vs_module_param(vs_module_child(gcn, "lin"), "weight")};
    gradcheck_full("gcn_conv", mod_fn, &mc, 3, in, 1e-2, 2e-2, true);
    /* GIN: its MLP ends in relu-free linear; keep the hidden pre-activations away from the kink */
    vs_module *gin = vs_gin_conv_new(2, 4, 2, 0.1f, true, &R);
    vs_init_constant(vs_module_param(vs_module_child(gin, "nn")->children[0], "bias"), 3.0f);
    mc.m = gin;
    vs_tensor *in2[3] = {x, w, vs_module_param(gin, "eps")};
    gradcheck_full("gin_conv", mod_fn, &mc, 3, in2, 1e-2, 2e-2, true);
    /* a GCN encoder with a mean readout: similarity-style output per graph */
    vs_module *enc = seq_of(4, (vs_module *[]){vs_gcn_conv_new(2, 3, &R), vs_activation_new(VS_MODULE_TANH, 0),
                                               vs_gcn_conv_new(3, 2, &R), vs_readout_new(VS_MODULE_MEAN_READOUT)});
    mc.m = enc;
    gradcheck_full("gcn encoder", mod_fn, &mc, 2, (vs_tensor *[]){x, w}, 1e-2, 2e-2, true);
    vs_module *mx = vs_readout_new(VS_MODULE_MAX_READOUT);
    mc.m = mx;
    mc.edge_input = false;
    gradcheck_full("max_readout", mod_fn, &mc, 1, (vs_tensor *[]){x}, 1e-2, 2e-2, true);
    vs_module_free(gcn);
    vs_module_free(gin);
    vs_module_free(enc);
    vs_module_free(mx);
    vs_tensor_free(x);
    vs_tensor_free(w);
    vs_graph_batch_clear(&b);
}
END_TEST

START_TEST(test_siamese_gnn)
{
    int64_t live = vs_live_tensors();
    make_graphs();
    vs_graph_batch a, b;
    ck_assert_int_eq(vs_graph_batch_init(&a, G, (int64_t[]){0, 1}, 2, 2, NULL), VS_OK);
    ck_assert_int_eq(vs_graph_batch_init(&b, G, (int64_t[]){1, 1}, 2, 2, NULL), VS_OK);
    vs_module_kind kinds[2] = {VS_MODULE_GCN_CONV, VS_MODULE_GIN_CONV};
    for (int k = 0; k < 2; k++) {
        vs_error err;
        vs_module *m = vs_arch_siamese_gnn(kinds[k], 2, 6, 3, 4, &R, &err);
        ck_assert_msg(m != NULL, "%s", err.msg);
        vs_module_train(m, false);
        vs_scope_begin();
        vs_tensor *wa = vs_tensor_full(VS_SHAPE(a.n_edges), 1.0f);
        vs_set_requires_grad(wa, true);
        vs_forward_ctx ca = {.graph = &a, .edge_weight = wa}, cb = {.graph = &b};
        vs_tensor *s = vs_siamese_forward(m, vs_graph_batch_features(&a), &ca, vs_graph_batch_features(&b), &cb);
        ck_assert_msg(s != NULL, "%s", vs_last_error()->msg);
        expect_shape(s, VS_SHAPE(2));
        ck_assert_float_near(s->data[1], 1.0, 1e-5); /* graph 1 against itself */
        ck_assert(fabsf(s->data[0]) <= 1.0f + 1e-6f);
        /* the similarity responds to the edge mask of the first graph's edges only */
        vs_tensor *g;
        ck_assert_int_eq(vs_grad(1, &s, (vs_tensor *[]){vs_tensor_from(VS_SHAPE(2), (float[]){1, 0})}, 1, &wa, &g, false), VS_OK);
        double g0 = 0, g1 = 0;
        for (int64_t e = 0; e < a.n_edges; e++) *(e < a.edge_ptr[1] ? &g0 : &g1) += fabs(g->data[e]);
        ck_assert_msg(g0 > 0 && g1 == 0, "edge gradients %g (graph 0) %g (graph 1)", g0, g1);
        vs_scope_end();
        vs_module_free(m);
    }
    vs_graph_batch_clear(&a);
    vs_graph_batch_clear(&b);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

static Suite *nn_suite(void)
{
    vs_rng_seed(&R, 20240601);
    Suite *s = suite_create("nn");
    TCase *tc = vs_tcase(s, "modules", 60);
    tcase_add_test(tc, test_mnist_classifier_names);
    tcase_add_test(tc, test_siamese_mlp_names);
    tcase_add_test(tc, test_state_dict_order_with_buffers);
    tcase_add_test(tc, test_graph_layer_names);
    tcase_add_test(tc, test_default_initialisation);
    tcase_add_test(tc, test_initialisers);
    tcase_add_test(tc, test_load_state);
    tc = vs_tcase(s, "forward", 60);
    tcase_add_test(tc, test_linear_forward);
    tcase_add_test(tc, test_conv2d_forward);
    tcase_add_test(tc, test_conv_transpose2d_forward);
    tcase_add_test(tc, test_pooling_forward);
    tcase_add_test(tc, test_batch_norm);
    tcase_add_test(tc, test_instance_and_layer_norm);
    tcase_add_test(tc, test_dropout_modes);
    tcase_add_test(tc, test_activations_and_flatten);
    tcase_add_test(tc, test_residual_forward);
    tcase_add_test(tc, test_forward_errors_name_the_layer);
    tcase_add_test(tc, test_forward_range_and_activations);
    tcase_add_test(tc, test_train_and_eval_mode);
    tcase_add_test(tc, test_paper_architectures_run);
    tcase_add_test(tc, test_siamese_mlp_similarity);
    tc = vs_tcase(s, "specs", 30);
    tcase_add_test(tc, test_spec_builds_mnist);
    tcase_add_test(tc, test_spec_errors);
    tc = vs_tcase(s, "graphs", 60);
    tcase_add_test(tc, test_graph_batch);
    tcase_add_test(tc, test_gcn_forward);
    tcase_add_test(tc, test_gin_forward);
    tcase_add_test(tc, test_readouts);
    tcase_add_test(tc, test_siamese_gnn);
    tc = vs_tcase(s, "gradients", 120);
    tcase_add_test(tc, test_gradcheck_dense_layers);
    tcase_add_test(tc, test_gradcheck_conv_layers);
    tcase_add_test(tc, test_gradcheck_graph_layers);
    return s;
}

VS_TEST_MAIN(nn_suite)
