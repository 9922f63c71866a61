/* test_pool_modes.c - the window options PyTorch models use beyond the basic ones: pooling with
 * dilation and ceil_mode, conv_transpose2d with an output_padding at or above the stride (allowed
 * below the dilation).  Forward values against a naive double-precision reference and against
 * PyTorch itself (/usr/bin/python3 with torch; skipped with a reason without it), first- and
 * second-order gradient checks, and the model.json fields that reach them. */
#include "gradcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static vs_rng R;

/* Values spaced 0.1 apart in a scrambled order (no near ties for max pooling). */
static vs_tensor *spaced(int ndim, const int64_t *shape)
{
    vs_tensor *t = vs_tensor_new(ndim, shape);
    int64_t n = t->size;
    for (int64_t i = 0; i < n; i++) t->data[i] = (float)((i * 7919) % n) * 0.1f - 0.05f * (float)n;
    return t;
}

static vs_tensor *sq(vs_tensor *y) { return vs_mul(y, y); }

/* kernel, stride, padding, dilation, ceil_mode: the max pooling cases (avg: dilation 1 only). */
static const vs_pool_opts max_cases[] = {{3, 2, 1, 2, true}, {3, 2, 1, 1, true}, {2, 2, 1, 1, true}, {3, 3, 1, 2, false},
                                         {2, 2, 0, 3, true}, {4, 3, 2, 2, true}, {3, 1, 0, 2, false}, {2, 0, 0, 2, true}};
static const vs_pool_opts avg_cases[] = {{3, 2, 1, 1, true}, {2, 2, 1, 1, true}, {3, 3, 0, 1, true},
                                         {4, 3, 2, 1, true}, {2, 2, 0, 1, true}, {3, 2, 1, 1, false}};
#define N_MAX (sizeof max_cases / sizeof max_cases[0])
#define N_AVG (sizeof avg_cases / sizeof avg_cases[0])
/* stride, padding, dilation, output_padding, kernel of conv_transpose2d (output_padding >= stride
 * in all but the last, which takes the direct path) */
static const int ct_cases[][5] = {{1, 1, 2, 1, 3}, {2, 1, 3, 2, 3}, {1, 0, 3, 2, 2}, {2, 2, 3, 2, 3}, {2, 1, 1, 1, 3}};
#define N_CT (sizeof ct_cases / sizeof ct_cases[0])

/* PyTorch's output side (torch/nn/functional pooling_output_shape). */
static int64_t ref_out(int64_t n, const vs_pool_opts *o)
{
    int64_t s = o->stride ? o->stride : o->kernel, d = o->dilation ? o->dilation : 1;
    int64_t num = n + 2 * o->padding - d * (o->kernel - 1) - 1 + (o->ceil_mode ? s - 1 : 0);
    int64_t out = num / s + 1;
    if (o->ceil_mode && (out - 1) * s >= n + o->padding) out--;
    return out;
}

/* Naive pooling of plane pl of x [.., h, w] at output (i, j), in double. */
static double ref_pool(const vs_tensor *x, int64_t pl, int64_t i, int64_t j, const vs_pool_opts *o, bool max)
{
    int64_t h = x->shape[2], w = x->shape[3], s = o->stride ? o->stride : o->kernel, d = o->dilation ? o->dilation : 1;
    int64_t r0 = i * s - o->padding, c0 = j * s - o->padding;
    double m = -INFINITY, sum = 0;
    for (int64_t a = 0; a < o->kernel; a++)
        for (int64_t b = 0; b < o->kernel; b++) {
            int64_t r = r0 + a * d, c = c0 + b * d;
            if (r < 0 || r >= h || c < 0 || c >= w) continue;
            double v = x->data[(pl * h + r) * w + c];
            m = fmax(m, v);
            sum += v;
        }
    if (max) return m;
    /* count_include_pad: the window up to the far padding edge */
    int64_t he = r0 + o->kernel < h + o->padding ? r0 + o->kernel : h + o->padding;
    int64_t we = c0 + o->kernel < w + o->padding ? c0 + o->kernel : w + o->padding;
    return sum / (double)((he - r0) * (we - c0));
}

static void check_pool(const vs_tensor *x, const vs_tensor *y, const vs_pool_opts *o, bool max, const char *what)
{
    ck_assert_msg(y != NULL, "%s: %s", what, vs_last_error()->msg);
    int64_t oh = ref_out(x->shape[2], o), ow = ref_out(x->shape[3], o), planes = x->shape[0] * x->shape[1];
    ck_assert_msg(y->shape[2] == oh && y->shape[3] == ow, "%s: %lld x %lld, want %lld x %lld", what, (long long)y->shape[2],
                  (long long)y->shape[3], (long long)oh, (long long)ow);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double want = ref_pool(x, pl, i, j, o, max), got = y->data[(pl * oh + i) * ow + j];
                ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "%s: (%lld,%lld,%lld) %g, want %g", what,
                              (long long)pl, (long long)i, (long long)j, got, want);
            }
}

START_TEST(test_pool_forward_modes)
{
    vs_scope_begin();
    const int64_t sizes[][2] = {{9, 8}, {7, 7}, {5, 11}};
    for (size_t z = 0; z < 3; z++) {
        vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 3, sizes[z][0], sizes[z][1]), &R, -2, 1);
        char what[96];
        for (size_t k = 0; k < N_MAX; k++) {
            snprintf(what, sizeof what, "max case %zu on %lldx%lld", k, (long long)sizes[z][0], (long long)sizes[z][1]);
            check_pool(x, vs_max_pool2d_ex(x, &max_cases[k]), &max_cases[k], true, what);
        }
        for (size_t k = 0; k < N_AVG; k++) {
            snprintf(what, sizeof what, "avg case %zu on %lldx%lld", k, (long long)sizes[z][0], (long long)sizes[z][1]);
            check_pool(x, vs_avg_pool2d_ex(x, &avg_cases[k]), &avg_cases[k], false, what);
        }
    }
    /* the plain calls are the options with dilation 1 and floor sizes */
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 2, 8, 8), &R, -1, 1);
    vs_tensor *a = vs_max_pool2d(x, 2, 2, 0), *b = vs_max_pool2d_ex(x, &(vs_pool_opts){2, 2, 0, 0, false});
    ck_assert_mem_eq(a->data, b->data, (size_t)a->size * sizeof(float));
    /* refused: dilation for the average, padding over half the kernel, windows of padding only */
    ck_assert_ptr_null(vs_avg_pool2d_ex(x, &(vs_pool_opts){3, 1, 1, 2, false}));
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "dilation"));
    ck_assert_ptr_null(vs_max_pool2d_ex(x, &(vs_pool_opts){3, 1, 2, 2, false}));
    ck_assert_ptr_null(vs_max_pool2d_ex(x, &(vs_pool_opts){3, 1, 1, -1, false}));
    ck_assert_ptr_null(vs_max_pool2d_ex(vs_tensor_rand(VS_SHAPE(1, 1, 1, 1), &R, 0, 1), &(vs_pool_opts){3, 1, 1, 4, false}));
    vs_scope_end();
}
END_TEST

static vs_tensor *fn_max(vs_tensor **x, void *c) { return sq(vs_max_pool2d_ex(x[0], c)); }
static vs_tensor *fn_avg(vs_tensor **x, void *c) { return sq(vs_avg_pool2d_ex(x[0], c)); }

START_TEST(test_pool_grad_modes)
{
    for (size_t k = 0; k < N_MAX; k++) {
        vs_tensor *x[1] = {spaced(VS_SHAPE(1, 2, 7, 6))};
        gradcheck("max_pool2d dilation/ceil_mode", fn_max, (void *)&max_cases[k], 1, x);
        vs_tensor_free(x[0]);
    }
    for (size_t k = 0; k < N_AVG; k++) {
        vs_tensor *x[1] = {vs_tensor_rand(VS_SHAPE(1, 2, 7, 6), &R, -1, 1)};
        gradcheck("avg_pool2d ceil_mode", fn_avg, (void *)&avg_cases[k], 1, x);
        vs_tensor_free(x[0]);
    }
}
END_TEST

static vs_conv_opts ct_opts(size_t k)
{
    const int *c = ct_cases[k];
    return (vs_conv_opts){{c[0], c[0]}, {c[1], c[1]}, {c[2], c[2]}, {c[3], c[3]}, 1};
}

static vs_tensor *fn_ct(vs_tensor **x, void *c) { return vs_conv_transpose2d(x[0], x[1], x[2], c); }

/* conv_transpose2d is conv2d's adjoint in its input whatever the output_padding: <conv2d(z, w), x> =
 * <z, conv_transpose2d(x, w)> for every z of the output's size. */
START_TEST(test_transpose_wide_output_padding)
{
    vs_scope_begin();
    for (size_t k = 0; k < N_CT; k++) {
        const int *c = ct_cases[k];
        vs_conv_opts o = ct_opts(k), f = o;
        f.output_padding[0] = f.output_padding[1] = 0;
        vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 3, 4, 5), &R, -1, 1), *w = vs_tensor_rand(VS_SHAPE(3, 2, c[4], c[4]), &R, -1, 1);
        vs_tensor *y = vs_conv_transpose2d(x, w, NULL, &o);
        ck_assert_msg(y != NULL, "case %zu: %s", k, vs_last_error()->msg);
        int64_t want_h = (4 - 1) * c[0] - 2 * c[1] + c[2] * (c[4] - 1) + c[3] + 1;
        ck_assert_int_eq(y->shape[2], want_h);
        vs_tensor *z = vs_tensor_rand(4, y->shape, &R, -1, 1), *cz = vs_conv2d(z, w, NULL, &f);
        ck_assert_msg(cz && cz->shape[2] >= 4, "case %zu: %s", k, cz ? "short" : vs_last_error()->msg);
        /* conv2d over the larger image has more positions; the adjoint pairs the first 4 x 5 */
        cz = vs_slice(vs_slice(cz, 2, 0, 4), 3, 0, 5);
        double lhs = 0, rhs = 0;
        for (int64_t i = 0; i < x->size; i++) lhs += (double)cz->data[i] * x->data[i];
        for (int64_t i = 0; i < y->size; i++) rhs += (double)z->data[i] * y->data[i];
        ck_assert_msg(fabs(lhs - rhs) <= 1e-4 * (1 + fabs(lhs)), "case %zu: <conv2d(z,w),x> %g, <z,y> %g", k, lhs, rhs);
        vs_tensor *in[3] = {vs_tensor_rand(VS_SHAPE(1, 2, 3, 3), &R, -1, 1), vs_tensor_rand(VS_SHAPE(2, 2, c[4], c[4]), &R, -1, 1),
                            vs_tensor_rand(VS_SHAPE(2), &R, -1, 1)};
        for (int i = 0; i < 3; i++) vs_keep(in[i]);
        vs_scope_end();
        gradcheck("conv_transpose2d output_padding >= stride", fn_ct, &o, 3, in);
        for (int i = 0; i < 3; i++) vs_tensor_free(in[i]);
        vs_scope_begin();
    }
    vs_conv_opts bad = {{1, 1}, {0, 0}, {2, 2}, {2, 2}, 1}; /* below neither the stride nor the dilation */
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 3, 3), &R, -1, 1), *w = vs_tensor_rand(VS_SHAPE(1, 1, 3, 3), &R, -1, 1);
    ck_assert_ptr_null(vs_conv_transpose2d(x, w, NULL, &bad));
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "or the dilation"));
    vs_scope_end();
}
END_TEST

/* ---- against PyTorch -------------------------------------------------------------------------------- */

static const char torch_script[] =
    "import sys, numpy as np, torch, torch.nn.functional as F\n"
    "d = sys.argv[1]\n"
    "x = torch.from_numpy(np.load(d + '/x.npy'))\n"
    "for i, (k, s, p, dil, c) in enumerate(eval(sys.argv[2])):\n"
    "    np.save(d + '/max%d.npy' % i, F.max_pool2d(x, k, s or k, p, dil, ceil_mode=bool(c)).numpy())\n"
    "for i, (k, s, p, dil, c) in enumerate(eval(sys.argv[3])):\n"
    "    np.save(d + '/avg%d.npy' % i, F.avg_pool2d(x, k, s or k, p, ceil_mode=bool(c)).numpy())\n"
    "for i, (s, p, dil, op, k) in enumerate(eval(sys.argv[4])):\n"
    "    w = torch.from_numpy(np.load(d + '/w%d.npy' % i)); b = torch.from_numpy(np.load(d + '/b.npy'))\n"
    "    ct = torch.nn.ConvTranspose2d(3, 2, k, s, p, op, dilation=dil)\n"
    "    ct.weight.data, ct.bias.data = w, b\n"
    "    np.save(d + '/ct%d.npy' % i, ct(x[:, :3]).detach().numpy())\n";

static void cases_arg(char *buf, size_t n, const vs_pool_opts *c, size_t k)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < k; i++)
        o += (size_t)snprintf(buf + o, n - o, "(%d,%d,%d,%d,%d),", c[i].kernel, c[i].stride, c[i].padding,
                              c[i].dilation ? c[i].dilation : 1, c[i].ceil_mode);
    snprintf(buf + o, n - o, "]");
}

static void expect_same(const char *dir, const char *name, const vs_tensor *y)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    vs_tensor *t = NULL;
    vs_error err;
    ck_assert_msg(vs_npy_read(path, &t, &err) == VS_OK, "%s", err.msg);
    ck_assert_msg(t->ndim == 4 && memcmp(t->shape, y->shape, 4 * sizeof *t->shape) == 0, "%s: shapes differ", name);
    for (int64_t i = 0; i < t->size; i++)
        ck_assert_msg(fabsf(t->data[i] - y->data[i]) <= 1e-5f * (1 + fabsf(t->data[i])), "%s[%lld]: %g, torch %g", name,
                      (long long)i, y->data[i], t->data[i]);
    vs_tensor_free(t);
}

START_TEST(test_against_torch)
{
    if (system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0) {
        printf("SKIP: /usr/bin/python3 with torch and numpy not found; the PyTorch comparison is not run\n");
        return;
    }
    char dir[256], path[512], cmd[2048], a[256], b[256], c[256];
    snprintf(dir, sizeof dir, "%s/vs_pool_modes_XXXXXX", vs_test_tmpdir());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    vs_error err;
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 4, 9, 8), &R, -2, 1), *bias = vs_tensor_rand(VS_SHAPE(2), &R, -1, 1);
    snprintf(path, sizeof path, "%s/x.npy", dir);
    ck_assert_int_eq(vs_npy_write(path, x, &err), VS_OK);
    snprintf(path, sizeof path, "%s/b.npy", dir);
    ck_assert_int_eq(vs_npy_write(path, bias, &err), VS_OK);
    vs_tensor *w[N_CT];
    size_t o = (size_t)snprintf(c, sizeof c, "[");
    for (size_t k = 0; k < N_CT; k++) {
        w[k] = vs_tensor_rand(VS_SHAPE(3, 2, ct_cases[k][4], ct_cases[k][4]), &R, -1, 1);
        snprintf(path, sizeof path, "%s/w%zu.npy", dir, k);
        ck_assert_int_eq(vs_npy_write(path, w[k], &err), VS_OK);
        o += (size_t)snprintf(c + o, sizeof c - o, "(%d,%d,%d,%d,%d),", ct_cases[k][0], ct_cases[k][1], ct_cases[k][2],
                              ct_cases[k][3], ct_cases[k][4]);
    }
    snprintf(c + o, sizeof c - o, "]");
    snprintf(path, sizeof path, "%s/run.py", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(torch_script, f);
    fclose(f);
    cases_arg(a, sizeof a, max_cases, N_MAX);
    cases_arg(b, sizeof b, avg_cases, N_AVG);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s '%s' '%s' '%s'", path, dir, a, b, c);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    char name[32];
    for (size_t k = 0; k < N_MAX; k++) {
        snprintf(name, sizeof name, "max%zu", k);
        expect_same(dir, name, vs_max_pool2d_ex(x, &max_cases[k]));
    }
    for (size_t k = 0; k < N_AVG; k++) {
        snprintf(name, sizeof name, "avg%zu", k);
        expect_same(dir, name, vs_avg_pool2d_ex(x, &avg_cases[k]));
    }
    vs_tensor *x3 = vs_slice(x, 1, 0, 3);
    for (size_t k = 0; k < N_CT; k++) {
        snprintf(name, sizeof name, "ct%zu", k);
        vs_conv_opts co = ct_opts(k);
        expect_same(dir, name, vs_conv_transpose2d(x3, w[k], bias, &co));
    }
    vs_scope_end();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- model.json fields ------------------------------------------------------------------------------ */

static vs_module *from_json(const char *text, vs_error *err)
{
    vs_json *root = NULL;
    vs_model_spec spec = {0};
    vs_module *m = NULL;
    if (vs_json_parse(text, strlen(text), "model.json", NULL, &root, err) == VS_OK &&
        vs_model_spec_from_json(root, &spec, err) == VS_OK)
        m = vs_sequential_from_spec(spec.layers, spec.n_layers, spec.input_ndim, spec.input, &R, err);
    vs_model_spec_clear(&spec);
    vs_json_free(root);
    return m;
}

START_TEST(test_spec_fields)
{
    vs_error err;
    vs_module *m = from_json("{\"format\": \"versus-model/1\", \"input\": [2, 9, 8], \"sequential\": ["
                             "{\"op\": \"conv_transpose2d\", \"in\": 2, \"out\": 3, \"kernel\": 3, \"stride\": 2,"
                             " \"padding\": 1, \"dilation\": 3, \"output_padding\": 2},"
                             "{\"op\": \"max_pool2d\", \"kernel\": 3, \"stride\": 2, \"padding\": 1, \"dilation\": 2, \"ceil_mode\": true},"
                             "{\"op\": \"avg_pool2d\", \"kernel\": 2, \"padding\": 1, \"ceil_mode\": true},"
                             "{\"op\": \"conv2d\", \"in\": 3, \"out\": 2, \"kernel\": 2, \"dilation\": 2}, {\"op\": \"flatten\"}]}",
                             &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 2, 9, 8), &R, -1, 1);
    vs_tensor *y = vs_module_forward(m, x, NULL);
    ck_assert_msg(y != NULL, "%s", vs_last_error()->msg);
    /* the same ops by hand */
    vs_conv_opts ct = {{2, 2}, {1, 1}, {3, 3}, {2, 2}, 1}, cv = {{1, 1}, {0, 0}, {2, 2}, {0, 0}, 1};
    vs_tensor *h = vs_conv_transpose2d(x, m->children[0]->params[0], vs_module_param(m->children[0], "bias"), &ct);
    h = vs_max_pool2d_ex(h, &(vs_pool_opts){3, 2, 1, 2, true});
    h = vs_avg_pool2d_ex(h, &(vs_pool_opts){2, 0, 1, 1, true});
    h = vs_flatten(vs_conv2d(h, m->children[3]->params[0], vs_module_param(m->children[3], "bias"), &cv));
    ck_assert_int_eq(h->size, y->size);
    ck_assert_mem_eq(h->data, y->data, (size_t)h->size * sizeof(float));
    /* written back with the non-default fields only */
    vs_json *j = NULL;
    ck_assert_int_eq(vs_model_to_json(m, 3, (int64_t[]){2, 9, 8}, &j, &err), VS_OK);
    char *text = NULL;
    size_t len;
    ck_assert_int_eq(vs_json_write(j, 0, &text, &len, &err), VS_OK);
    ck_assert_ptr_nonnull(strstr(text, "\"ceil_mode\":true"));
    ck_assert_ptr_nonnull(strstr(text, "\"dilation\":3"));
    ck_assert_ptr_null(strstr(text, "\"ceil_mode\":false"));
    free(text);
    vs_json_free(j);
    vs_scope_end();
    vs_module_free(m);
    /* refused with the field named */
    const char *bad[][2] = {
        {"{\"op\": \"max_pool2d\", \"kernel\": 2, \"dilation\": 0}", "\"dilation\" is 0"},
        {"{\"op\": \"avg_pool2d\", \"kernel\": 2, \"dilation\": 2}", "field \"dilation\" does not apply to avg_pool2d"},
        {"{\"op\": \"max_pool2d\", \"kernel\": 2, \"ceil_mode\": 2}", "\"ceil_mode\" is 2"},
        {"{\"op\": \"conv_transpose2d\", \"in\": 2, \"out\": 2, \"kernel\": 3, \"dilation\": 2, \"output_padding\": 2}",
         "\"output_padding\" is 2, expected an integer in [0, 1]"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text2[512];
        snprintf(text2, sizeof text2, "{\"format\": \"versus-model/1\", \"sequential\": [%s]}", bad[k][0]);
        ck_assert_ptr_null(from_json(text2, &err));
        ck_assert_msg(strstr(err.msg, bad[k][1]), "case %zu: %s", k, err.msg);
    }
}
END_TEST

static Suite *pool_modes_suite(void)
{
    vs_rng_seed(&R, 2024);
    Suite *s = suite_create("pool_modes");
    TCase *tc = vs_tcase(s, "modes", 60);
    tcase_add_test(tc, test_pool_forward_modes);
    tcase_add_test(tc, test_pool_grad_modes);
    tcase_add_test(tc, test_transpose_wide_output_padding);
    tcase_add_test(tc, test_spec_fields);
    tc = vs_tcase(s, "torch", 120);
    tcase_add_test(tc, test_against_torch);
    return s;
}

VS_TEST_MAIN(pool_modes_suite)
