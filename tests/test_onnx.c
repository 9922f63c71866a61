/* test_onnx.c - ONNX files: the committed fixtures PyTorch exported (tests/onnx/, read and run against
 * PyTorch's outputs without torch installed), an import that saves and loads bit for bit, and hostile
 * files built here byte by byte - truncated varints, lengths past the end, negative or overflowing dims,
 * a graph with a cycle, an input of unknown rank, an unsupported op - each refused with a message
 * naming the file and the problem, with nothing left allocated. */
#include "vs_check.h"
#include "versus/versus.h"
#include "versus/onnx.h"

#include <math.h>
#include <stdint.h>
#include <unistd.h>

static const char *fixture(char *buf, size_t n, const char *name)
{
    const char *src = getenv("VERSUS_SRCDIR");
    snprintf(buf, n, "%s/tests/onnx/%s", src && *src ? src : ".", name);
    return buf;
}

START_TEST(test_read_fixture)
{
    char p[1024];
    vs_onnx_model *m = NULL;
    vs_error e;
    ck_assert_msg(vs_onnx_read_file(fixture(p, sizeof p, "small_cnn.onnx"), &m, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(m->opset, 13);
    ck_assert_int_eq(m->n_inputs, 1);
    ck_assert_str_eq(m->inputs[0].name, "x");
    ck_assert_int_eq(m->inputs[0].ndim, 4);
    ck_assert_int_eq(m->inputs[0].dims[1], 3);
    ck_assert_int_eq(m->inputs[0].dims[3], 8);
    ck_assert_int_eq(m->n_outputs, 1);
    int convs = 0;
    for (int i = 0; i < m->n_nodes; i++) convs += !strcmp(m->nodes[i].op_type, "Conv");
    ck_assert_int_eq(convs, 3);
    const vs_onnx_tensor *w = NULL;
    for (int i = 0; i < m->n_init && !w; i++)
        if (m->init[i].ndim == 2) w = &m->init[i];
    ck_assert_ptr_nonnull(w); /* fc.weight [3, 16] */
    ck_assert_int_eq(w->dims[0], 3);
    ck_assert_int_eq(w->dims[1], 16);
    ck_assert_ptr_nonnull(w->f);
    vs_onnx_free(m);
}
END_TEST

/* Load the fixture as a model, run its input, compare with PyTorch's output. */
static void run_fixture(const char *name)
{
    char p[1024], xp[1024], yp[1024], stem[64];
    snprintf(stem, sizeof stem, "%s.onnx", name);
    fixture(p, sizeof p, stem);
    snprintf(stem, sizeof stem, "%s_x.npy", name);
    fixture(xp, sizeof xp, stem);
    snprintf(stem, sizeof stem, "%s_y.npy", name);
    fixture(yp, sizeof yp, stem);
    int64_t live = vs_live_tensors();
    vs_error e;
    vs_module *m = vs_model_load(p, NULL, &e);
    ck_assert_msg(m != NULL, "%s", e.msg);
    vs_tensor *x = NULL, *want = NULL;
    ck_assert_msg(vs_npy_read(xp, &x, &e) == VS_OK, "%s", e.msg);
    ck_assert_msg(vs_npy_read(yp, &want, &e) == VS_OK, "%s", e.msg);
    vs_tensor *y = vs_module_forward(m, x, NULL);
    ck_assert_msg(y != NULL, "%s", vs_last_error()->msg);
    ck_assert_int_eq(y->size, want->size);
    double scale = 0, err = 0;
    for (int64_t i = 0; i < y->size; i++) {
        scale = fmax(scale, fabs(want->data[i]));
        err = fmax(err, fabs(y->data[i] - want->data[i]));
    }
    ck_assert_msg(err <= 1e-5 * scale, "%s: max error %g, scale %g", name, err, scale);
    vs_tensor_free(y);
    vs_tensor_free(x);
    vs_tensor_free(want);
    vs_module_free(m);
    ck_assert_int_eq(vs_live_tensors(), live);
}

START_TEST(test_fixtures_match_torch)
{
    run_fixture("small_cnn");
    run_fixture("mlp");
}
END_TEST

START_TEST(test_save_loads_same_bits)
{
    char p[1024], dir[1024], xp[1024];
    fixture(p, sizeof p, "small_cnn.onnx");
    fixture(xp, sizeof xp, "small_cnn_x.npy");
    snprintf(dir, sizeof dir, "%s/versus_onnx_%d", vs_test_tmpdir(), (int)getpid());
    vs_error e;
    vs_module *a = vs_model_load(p, NULL, &e);
    ck_assert_msg(a != NULL, "%s", e.msg);
    ck_assert_msg(vs_model_save(a, 0, NULL, dir, &e) == VS_OK, "%s", e.msg);
    vs_module *b = vs_model_load(dir, NULL, &e);
    ck_assert_msg(b != NULL, "%s", e.msg);
    /* the node and tensor names stay as aliases of the values they became, in the saved directory too */
    ck_assert_int_gt(vs_composite_n_aliases(a), 20);
    ck_assert_int_eq(vs_composite_n_aliases(b), vs_composite_n_aliases(a));
    const char *dw = vs_composite_alias_value(a, "/dw/Conv");
    ck_assert_ptr_nonnull(dw);
    ck_assert_str_eq(dw, vs_composite_alias_value(a, "/dw/Conv_output_0"));
    ck_assert_str_eq(dw, vs_composite_alias_value(b, "/dw/Conv"));
    ck_assert_str_eq(vs_composite_alias(a, 0, NULL), "/c1/Conv"); /* node names first */
    vs_tensor *x = NULL;
    ck_assert(vs_npy_read(xp, &x, &e) == VS_OK);
    vs_tensor *ya = vs_module_forward(a, x, NULL), *yb = vs_module_forward(b, x, NULL);
    ck_assert_ptr_nonnull(ya);
    ck_assert_ptr_nonnull(yb);
    ck_assert_int_eq(memcmp(ya->data, yb->data, (size_t)ya->size * sizeof *ya->data), 0);
    vs_tensor_free(ya), vs_tensor_free(yb), vs_tensor_free(x);
    vs_module_free(a), vs_module_free(b);
    char f[1100];
    snprintf(f, sizeof f, "%s/model.json", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/model.safetensors", dir);
    unlink(f);
    rmdir(dir);
}
END_TEST

/* ---- a protobuf writer for hostile files ---------------------------------------------------------- */

typedef struct buf {
    unsigned char b[4096];
    size_t n;
} buf;

static void varint(buf *o, uint64_t v)
{
    do {
        o->b[o->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void key(buf *o, int field, int wire) { varint(o, (uint64_t)field << 3 | (uint64_t)wire); }
static void bytes(buf *o, int field, const void *p, size_t n)
{
    key(o, field, 2);
    varint(o, n);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void str(buf *o, int field, const char *s) { bytes(o, field, s, strlen(s)); }
static void sub(buf *o, int field, const buf *m) { bytes(o, field, m->b, m->n); }
static void ival(buf *o, int field, int64_t v)
{
    key(o, field, 0);
    varint(o, (uint64_t)v);
}

static void node(buf *g, const char *op, const char *in, const char *out)
{
    buf n = {0};
    if (in) str(&n, 1, in);
    str(&n, 2, out);
    str(&n, 3, out);
    str(&n, 4, op);
    sub(g, 1, &n);
}

/* An input value "x" of float [1, 4] (rank -1: no shape at all). */
static void input(buf *g, int field, const char *name, int rank)
{
    buf v = {0}, t = {0}, tt = {0}, shape = {0};
    for (int d = 0; d < rank; d++) {
        buf dim = {0};
        ival(&dim, 1, d == 0 ? 1 : 4);
        sub(&shape, 1, &dim);
    }
    ival(&tt, 1, 1);
    if (rank >= 0) sub(&tt, 2, &shape);
    sub(&t, 1, &tt);
    str(&v, 1, name);
    sub(&v, 2, &t);
    sub(g, field, &v);
}

static void model(buf *out, const buf *g, int opset)
{
    buf op = {0};
    ival(&op, 2, opset);
    ival(out, 1, 8);
    sub(out, 8, &op);
    sub(out, 7, g);
}

/* f must be refused by the reader (or the import when import is set) with a message holding want. */
static void refused(const buf *f, bool import, const char *want)
{
    char path[512];
    snprintf(path, sizeof path, "%s/versus_hostile_%d.onnx", vs_test_tmpdir(), (int)getpid());
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    fwrite(f->b, 1, f->n, fp);
    fclose(fp);
    int64_t live = vs_live_tensors();
    vs_error e;
    vs_error_clear(&e);
    vs_onnx_model *m = NULL;
    if (!import) {
        ck_assert_int_ne(vs_onnx_read_file(path, &m, &e), VS_OK);
        ck_assert_ptr_null(m);
    } else {
        vs_module *mod = vs_model_load(path, NULL, &e);
        ck_assert_ptr_null(mod);
    }
    ck_assert_msg(strstr(e.msg, path) != NULL, "message without the file: %s", e.msg);
    ck_assert_msg(strstr(e.msg, want) != NULL, "expected \"%s\" in: %s", want, e.msg);
    ck_assert_int_eq(vs_live_tensors(), live);
    unlink(path);
}

START_TEST(test_hostile)
{
    buf f = {0}, g = {0};
    /* a truncated varint, a length past the end */
    f.b[0] = 0x08, f.b[1] = 0x80, f.n = 2;
    refused(&f, false, "truncated varint");
    f.n = 0;
    key(&f, 7, 2);
    varint(&f, 1000);
    refused(&f, false, "past the end");
    /* negative and overflowing dims of an initializer */
    for (int k = 0; k < 2; k++) {
        buf t = {0};
        ival(&t, 1, k == 0 ? -3 : (int64_t)1 << 30);
        ival(&t, 1, k == 0 ? 2 : (int64_t)1 << 30);
        ival(&t, 2, 1);
        str(&t, 8, "w");
        g.n = f.n = 0;
        sub(&g, 5, &t);
        input(&g, 11, "x", 2);
        node(&g, "Relu", "x", "y");
        input(&g, 12, "y", 2);
        model(&f, &g, 13);
        refused(&f, false, "negative dim or more than 2^40");
    }
    /* data shorter than the dims say */
    {
        buf t = {0};
        float v[3] = {1, 2, 3};
        ival(&t, 1, 4);
        ival(&t, 2, 1);
        str(&t, 8, "w");
        bytes(&t, 9, v, sizeof v);
        g.n = f.n = 0;
        sub(&g, 5, &t);
        input(&g, 11, "x", 2);
        node(&g, "Relu", "x", "y");
        input(&g, 12, "y", 2);
        model(&f, &g, 13);
        refused(&f, false, "holds 3 elements, its dims say 4");
    }
    /* a cycle: a reads b, b reads a */
    g.n = f.n = 0;
    input(&g, 11, "x", 2);
    node(&g, "Relu", "b", "a");
    node(&g, "Relu", "a", "b");
    input(&g, 12, "b", 2);
    model(&f, &g, 13);
    refused(&f, false, "a cycle");
    /* an input of unknown rank */
    g.n = f.n = 0;
    input(&g, 11, "x", -1);
    node(&g, "Relu", "x", "y");
    input(&g, 12, "y", 2);
    model(&f, &g, 13);
    refused(&f, true, "unknown rank");
    /* an unsupported op names itself, the node and the opset */
    g.n = f.n = 0;
    input(&g, 11, "x", 2);
    node(&g, "Erf", "x", "y");
    input(&g, 12, "y", 2);
    model(&f, &g, 13);
    refused(&f, true, "node 0 (Erf \"y\", opset 13): op Erf is not supported; supported: Conv");
    /* an opset outside 11-18 */
    g.n = f.n = 0;
    input(&g, 11, "x", 2);
    node(&g, "Relu", "x", "y");
    input(&g, 12, "y", 2);
    model(&f, &g, 7);
    refused(&f, true, "opset 7 is not supported");
}
END_TEST

/* Cut the fixture at every length: each prefix is refused or read, never a crash or a leak. */
START_TEST(test_truncations)
{
    char p[1024];
    FILE *fp = fopen(fixture(p, sizeof p, "small_cnn.onnx"), "rb");
    ck_assert_ptr_nonnull(fp);
    static unsigned char b[1 << 14];
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    int read_ok = 0;
    for (size_t k = 0; k < n; k++) {
        vs_onnx_model *m = NULL;
        vs_error e;
        if (vs_onnx_read_buffer(b, k, "cut.onnx", &m, &e) == VS_OK) read_ok++, vs_onnx_free(m);
        else ck_assert_msg(strncmp(e.msg, "cut.onnx", 8) == 0, "%s", e.msg);
    }
    ck_assert_int_lt(read_ok, (int)n / 2);
}
END_TEST

static Suite *onnx_suite(void)
{
    Suite *s = suite_create("onnx");
    TCase *tc = vs_tcase(s, "read", 60);
    tcase_add_test(tc, test_read_fixture);
    tcase_add_test(tc, test_fixtures_match_torch);
    tcase_add_test(tc, test_save_loads_same_bits);
    tcase_add_test(tc, test_hostile);
    tcase_add_test(tc, test_truncations);
    return s;
}

VS_TEST_MAIN(onnx_suite)
