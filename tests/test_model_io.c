/* test_model_io.c - model.json <-> modules and model directories: the outside contract's example,
 * round trips (weights, buffers, Siamese graph models, residual blocks), and messages for bad files. */
#include "versus/arch.h"
#include "versus/gnn.h"
#include "versus/model.h"
#include "versus/safetensors.h"
#include "io_check.h"
#include "vs_check.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* docs/formats/model.md's MNIST classifier, verbatim. */
static const char *MNIST_JSON =
    "{\"format\": \"versus-model/1\",\n"
    " \"input\": [1, 28, 28],\n"
    " \"sequential\": [\n"
    "   {\"op\": \"conv2d\", \"in\": 1, \"out\": 32, \"kernel\": 6, \"stride\": 2, \"padding\": 2},\n"
    "   {\"op\": \"relu\"},\n"
    "   {\"op\": \"conv2d\", \"in\": 32, \"out\": 64, \"kernel\": 6, \"stride\": 2, \"padding\": 2},\n"
    "   {\"op\": \"relu\"},\n"
    "   {\"op\": \"flatten\"},\n"
    "   {\"op\": \"linear\", \"in\": 3136, \"out\": 256},\n"
    "   {\"op\": \"relu\"},\n"
    "   {\"op\": \"dropout\", \"p\": 0.5},\n"
    "   {\"op\": \"linear\", \"in\": 256, \"out\": 10}]}\n";

static char DIR_[512];

static void make_dir_name(const char *tag)
{
    snprintf(DIR_, sizeof DIR_, "%s/versus_test_model_%ld_%s", vs_test_tmpdir(), (long)getpid(), tag);
}

static void remove_dir(void) { io_remove_model_dir(DIR_); }

static void write_text(const char *file, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", DIR_, file);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *file)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", DIR_, file);
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static vs_status spec_of(const char *text, vs_model_spec *s, vs_error *err)
{
    vs_json *doc = NULL;
    vs_status st = vs_json_parse(text, strlen(text), "model.json", NULL, &doc, err);
    if (st == VS_OK) st = vs_model_spec_from_json(doc, s, err);
    vs_json_free(doc);
    return st;
}

static void expect_spec_error(const char *text, const char *needle)
{
    vs_model_spec s;
    vs_error err;
    vs_error_clear(&err);
    ck_assert_int_ne(spec_of(text, &s, &err), VS_OK);
    vs_model_spec_clear(&s);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "error \"%s\" does not contain \"%s\"", err.msg, needle);
}

/* Every parameter and buffer of a and b equal bit for bit, under the same names. */
static void expect_same_state(const vs_module *a, const vs_module *b)
{
    vs_named_tensors la = {0}, lb = {0};
    vs_module_named_tensors(a, VS_STATE_ALL, &la);
    vs_module_named_tensors(b, VS_STATE_ALL, &lb);
    ck_assert_int_eq(la.n, lb.n);
    for (int64_t i = 0; i < la.n; i++) {
        ck_assert_str_eq(la.items[i].name, lb.items[i].name);
        ck_assert_int_eq(la.items[i].tensor->size, lb.items[i].tensor->size);
        ck_assert_mem_eq(la.items[i].tensor->data, lb.items[i].tensor->data, (size_t)la.items[i].tensor->size * sizeof(float));
    }
    vs_named_tensors_clear(&la);
    vs_named_tensors_clear(&lb);
}

START_TEST(test_interfaces_example)
{
    vs_model_spec s;
    vs_error err;
    ck_assert_int_eq(spec_of(MNIST_JSON, &s, &err), VS_OK);
    ck_assert_int_eq(s.input_ndim, 3);
    ck_assert_int_eq(s.input[2], 28);
    ck_assert_int_eq(s.n_layers, 9);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_module *m = vs_model_from_spec(&s, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_model_spec_clear(&s);
    /* the same architecture as the coded one */
    vs_module *coded = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    vs_named_tensors a = {0}, b = {0};
    vs_module_named_tensors(m, VS_STATE_ALL, &a);
    vs_module_named_tensors(coded, VS_STATE_ALL, &b);
    ck_assert_int_eq(a.n, 8);
    ck_assert_int_eq(a.n, b.n);
    for (int64_t i = 0; i < a.n; i++) {
        ck_assert_str_eq(a.items[i].name, b.items[i].name);
        ck_assert(vs_same_shape(a.items[i].tensor, b.items[i].tensor));
    }
    vs_named_tensors_clear(&a);
    vs_named_tensors_clear(&b);
    vs_module_free(m);
    vs_module_free(coded);
}
END_TEST

START_TEST(test_directory_round_trip)
{
    make_dir_name("mnist");
    vs_rng r;
    vs_rng_seed(&r, 2);
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    ck_assert_int_eq(vs_model_save(m, 3, (int64_t[]){1, 28, 28}, DIR_, &err), VS_OK);
    const char *text = read_text("model.json");
    ck_assert_ptr_nonnull(strstr(text, "{\"op\": \"conv2d\", \"in\": 1, \"out\": 32, \"kernel\": 6, \"stride\": 2, \"padding\": 2, \"bias\": true}"));
    ck_assert_ptr_nonnull(strstr(text, "{\"op\": \"dropout\", \"p\": 0.5}"));
    ck_assert_ptr_nonnull(strstr(text, "\"input\": [1, 28, 28]"));
    char *first = strdup(text);

    vs_model_spec spec;
    vs_module *back = vs_model_load(DIR_, &spec, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_int_eq(spec.input_ndim, 3);
    ck_assert(!back->training && !back->children[7]->training);
    expect_same_state(m, back);
    /* the same outputs (evaluation mode) */
    vs_module_train(m, false);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 1, 28, 28), &r, 0, 1);
    vs_tensor *y1 = vs_module_forward(m, x, NULL), *y2 = vs_module_forward(back, x, NULL);
    ck_assert_mem_eq(y1->data, y2->data, 20 * sizeof(float));
    vs_scope_end();
    /* saving what was loaded writes the same text */
    ck_assert_int_eq(vs_model_save(back, spec.input_ndim, spec.input, DIR_, &err), VS_OK);
    ck_assert_str_eq(read_text("model.json"), first);
    free(first);
    vs_model_spec_clear(&spec);
    vs_module_free(m);
    vs_module_free(back);
    remove_dir();
}
END_TEST

/* A Siamese GIN encoder with a residual block, and batch-norm buffers, survive a round trip. */
START_TEST(test_siamese_graph_round_trip)
{
    make_dir_name("gin");
    const char *text = "{\"format\": \"versus-model/1\", \"input\": [2],\n"
                       " \"siamese\": {\"encoder\": {\"sequential\": [\n"
                       "   {\"op\": \"gin_conv\", \"in\": 2, \"out\": 4, \"hidden\": 8, \"eps\": 0.25, \"train_eps\": true},\n"
                       "   {\"op\": \"relu\"},\n"
                       "   {\"op\": \"residual\", \"sequential\": [{\"op\": \"linear\", \"in\": 4, \"out\": 4, \"bias\": false},\n"
                       "                                        {\"op\": \"batch_norm1d\", \"features\": 4, \"momentum\": 0.2}]},\n"
                       "   {\"op\": \"gcn_conv\", \"in\": 4, \"out\": 3},\n"
                       "   {\"op\": \"max_readout\"}]},\n"
                       "  \"similarity\": \"cosine\"}}";
    vs_model_spec s;
    vs_error err;
    ck_assert_int_eq(spec_of(text, &s, &err), VS_OK);
    ck_assert(s.siamese);
    vs_rng r;
    vs_rng_seed(&r, 3);
    vs_module *m = vs_model_from_spec(&s, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_model_spec_clear(&s);
    const char *names[] = {"encoder.0.eps", "encoder.0.nn.0.weight", "encoder.0.nn.0.bias", "encoder.0.nn.2.weight",
                           "encoder.0.nn.2.bias", "encoder.2.block.0.weight", "encoder.2.block.1.weight",
                           "encoder.2.block.1.bias", "encoder.2.block.1.running_mean", "encoder.2.block.1.running_var",
                           "encoder.3.bias", "encoder.3.lin.weight"};
    vs_named_tensors l = {0};
    vs_module_named_tensors(m, VS_STATE_ALL, &l);
    ck_assert_int_eq(l.n, 12);
    for (int i = 0; i < 12; i++) ck_assert_str_eq(l.items[i].name, names[i]);
    ck_assert_float_eq(l.items[0].tensor->data[0], 0.25f);
    l.items[9].tensor->data[1] = 3.5f; /* a running variance that is not the initial 1 */
    vs_named_tensors_clear(&l);

    ck_assert_int_eq(vs_model_save(m, 1, (int64_t[]){2}, DIR_, &err), VS_OK);
    const char *out = read_text("model.json");
    ck_assert_ptr_nonnull(strstr(out, "\"train_eps\": true"));
    ck_assert_ptr_nonnull(strstr(out, "\"momentum\": 0.2}"));
    ck_assert_ptr_nonnull(strstr(out, "\"similarity\": \"cosine\""));
    vs_module *back = vs_model_load(DIR_, NULL, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    expect_same_state(m, back);
    ck_assert_float_eq(vs_module_child(back, "encoder")->children[2]->children[0]->children[1]->spec.momentum, 0.2);

    /* identical similarities on a pair of graph batches */
    static int64_t s0[4] = {0, 1, 1, 2}, d0[4] = {1, 0, 2, 1}, s1[2] = {0, 1}, d1[2] = {1, 0};
    static float x0[6] = {1, 0, 0, 1, 1, 1}, x1[4] = {0, 1, 1, 0};
    vs_graph g[2] = {{.n_nodes = 3, .n_edges = 4, .src = s0, .dst = d0, .x = x0}, {.n_nodes = 2, .n_edges = 2, .src = s1, .dst = d1, .x = x1}};
    vs_graph_batch ba, bb;
    ck_assert_int_eq(vs_graph_batch_init(&ba, g, (int64_t[]){0, 1}, 2, 2, NULL), VS_OK);
    ck_assert_int_eq(vs_graph_batch_init(&bb, g, (int64_t[]){1, 0}, 2, 2, NULL), VS_OK);
    vs_module_train(m, false);
    vs_scope_begin();
    vs_forward_ctx ca = {.graph = &ba}, cb = {.graph = &bb};
    vs_tensor *xa = vs_graph_batch_features(&ba), *xb = vs_graph_batch_features(&bb);
    vs_tensor *s1v = vs_siamese_forward(m, xa, &ca, xb, &cb), *s2v = vs_siamese_forward(back, xa, &ca, xb, &cb);
    ck_assert_msg(s1v && s2v, "%s", vs_last_error()->msg);
    ck_assert_mem_eq(s1v->data, s2v->data, 2 * sizeof(float));
    vs_scope_end();
    vs_graph_batch_clear(&ba);
    vs_graph_batch_clear(&bb);
    vs_module_free(m);
    vs_module_free(back);
    remove_dir();
}
END_TEST

START_TEST(test_bad_json)
{
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"conv3d\"}]}",
                      "model.json:1:52: unknown op \"conv3d\"");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"linear\", \"in\": 3, \"outt\": 2}]}",
                      "unknown field \"outt\"");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"dropout\", \"p\": \"0.5\"}]}",
                      "model.json:1:68: expected a number for \"p\"");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"relu\", \"kernel\": 3}]}",
                      "field \"kernel\" does not apply to relu");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"conv2d\", \"in\": 1, \"out\": 2, \"kernel\": 2.5}]}",
                      "\"kernel\" must be an integer, got 2.5");
    expect_spec_error("{\"format\": \"versus-model/2\", \"sequential\": [{\"op\": \"relu\"}]}", "unsupported format \"versus-model/2\"");
    expect_spec_error("{\"sequential\": [{\"op\": \"relu\"}]}", "format");
    expect_spec_error("{\"format\": \"versus-model/1\"}", "exactly one of \"sequential\", \"siamese\" and \"composite\"");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": []}", "non-empty array");
    expect_spec_error("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"residual\"}]}", "needs \"sequential\"");
    expect_spec_error("{\"format\": \"versus-model/1\", \"input\": [1, 0], \"sequential\": [{\"op\": \"relu\"}]}", "model.json:1:43");
    expect_spec_error("{\"format\": \"versus-model/1\", \"siamese\": {\"encoder\": {\"sequential\": [{\"op\": \"relu\"}]}, "
                      "\"similarity\": \"euclid\"}}",
                      "unknown similarity \"euclid\"");
    /* bias may be a boolean; other values are checked */
    vs_model_spec s;
    vs_error err;
    ck_assert_int_eq(spec_of("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"linear\", \"in\": 3, \"out\": 2, \"bias\": false}]}",
                             &s, &err),
                     VS_OK);
    vs_rng r;
    vs_rng_seed(&r, 4);
    vs_module *m = vs_model_from_spec(&s, &r, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->children[0]->n_params, 1);
    vs_module_free(m);
    vs_model_spec_clear(&s);
    ck_assert_int_eq(spec_of("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"linear\", \"in\": 3, \"out\": 2, \"bias\": 2}]}",
                             &s, &err),
                     VS_OK);
    ck_assert_ptr_null(vs_model_from_spec(&s, &r, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "layer 0 (linear): \"bias\" is 2, expected an integer in [0, 1]"));
    vs_model_spec_clear(&s);
}
END_TEST

START_TEST(test_bad_directories)
{
    make_dir_name("bad");
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_error err;
    vs_module *m = vs_arch_siamese_mlp(6, 5, 4, &r, &err);
    ck_assert_int_eq(vs_model_save(m, 1, (int64_t[]){6}, DIR_, &err), VS_OK);
    /* an architecture whose first layer takes 7 features: the weights no longer fit */
    write_text("model.json", "{\"format\": \"versus-model/1\", \"siamese\": {\"encoder\": {\"sequential\": ["
                             "{\"op\": \"linear\", \"in\": 7, \"out\": 5}, {\"op\": \"relu\"}, {\"op\": \"linear\", \"in\": 5, \"out\": 4}]}}}");
    ck_assert_ptr_null(vs_model_load(DIR_, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "model.safetensors: tensor encoder.0.weight has shape [5,6], the model expects [5,7]"));
    /* layers that do not fit together */
    write_text("model.json", "{\"format\": \"versus-model/1\", \"sequential\": ["
                             "{\"op\": \"linear\", \"in\": 6, \"out\": 5}, {\"op\": \"linear\", \"in\": 4, \"out\": 4}]}");
    ck_assert_ptr_null(vs_model_load(DIR_, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "model.json: layer 1 (linear): \"in\" is 4 but its input [5] has 5 features"));
    /* a model.json that is not JSON */
    write_text("model.json", "{\"format\": ");
    ck_assert_ptr_null(vs_model_load(DIR_, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "model.json"));
    remove_dir();
    /* no directory at all */
    ck_assert_ptr_null(vs_model_load(DIR_, NULL, &err));
    ck_assert_int_eq(err.code, VS_ERR_IO);
    vs_module_free(m);
}
END_TEST

static Suite *model_io_suite(void)
{
    Suite *s = suite_create("model_io");
    TCase *tc = vs_tcase(s, "model directories", 60);
    tcase_add_test(tc, test_interfaces_example);
    tcase_add_test(tc, test_directory_round_trip);
    tcase_add_test(tc, test_siamese_graph_round_trip);
    tcase_add_test(tc, test_bad_json);
    tcase_add_test(tc, test_bad_directories);
    return s;
}

VS_TEST_MAIN(model_io_suite)
