/* test_composite.c - composite models: building from model.json, evaluation from given values
 * (inputs or intermediates), messages for bad programs, save/load round trips, gradients through the
 * wiring ops, instance norm's running statistics, the zoo's composites (names and shapes), and a
 * two-input composite with a learned head as a pair model (forward, explained on both sides). */
#include "gradcheck.h"
#include "io_check.h"
#include "versus/versus.h"
#include "vs_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static vs_rng R;

/* A small VAE: encoder sequential, split, reparameterize, one-layer decoder. */
static const char *VAE =
    "{\"format\": \"versus-model/1\",\n"
    " \"composite\": {\n"
    "  \"inputs\": {\"x\": [6]},\n"
    "  \"models\": {\"enc\": {\"sequential\": [{\"op\": \"linear\", \"in\": 6, \"out\": 8}, {\"op\": \"relu\"},\n"
    "                                       {\"op\": \"linear\", \"in\": 8, \"out\": 4}]},\n"
    "             \"dec\": {\"op\": \"linear\", \"in\": 2, \"out\": 6}},\n"
    "  \"graph\": [\n"
    "   {\"call\": \"enc\", \"in\": \"x\", \"out\": \"h\"},\n"
    "   {\"op\": \"split\", \"in\": \"h\", \"axis\": 1, \"sizes\": [2, 2], \"out\": [\"mu\", \"logvar\"]},\n"
    "   {\"op\": \"reparameterize\", \"in\": [\"mu\", \"logvar\"], \"out\": \"z\"},\n"
    "   {\"call\": \"dec\", \"in\": \"z\", \"out\": \"x_logits\"}],\n"
    "  \"outputs\": [\"mu\", \"logvar\", \"x_logits\"],\n"
    "  \"task\": \"vae\"}}\n";

static vs_module *from_text(const char *text, vs_error *err)
{
    vs_json *doc = NULL;
    vs_model_spec s = {0};
    vs_module *m = NULL;
    if (vs_json_parse(text, strlen(text), "model.json", NULL, &doc, err) == VS_OK && vs_model_spec_from_json(doc, &s, err) == VS_OK)
        m = vs_model_from_spec(&s, &R, err);
    vs_model_spec_clear(&s);
    vs_json_free(doc);
    return m;
}

static vs_module *must(const char *text)
{
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = from_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

static void expect_close(const vs_tensor *a, const vs_tensor *b, double tol)
{
    ck_assert_msg(vs_same_shape(a, b), "shapes differ");
    for (int64_t i = 0; i < a->size; i++)
        ck_assert_msg(fabs((double)a->data[i] - b->data[i]) <= tol, "element %lld: %.9g vs %.9g", (long long)i, a->data[i], b->data[i]);
}

/* Evaluate one value of m from one given value. */
static vs_tensor *eval1(vs_module *m, const char *given, vs_tensor *t, const char *want, const vs_forward_ctx *ctx)
{
    vs_named_tensors g = {0};
    vs_named_tensors_push(&g, given, t, false);
    vs_tensor *y = NULL;
    vs_status st = vs_composite_eval(m, &g, 1, &want, &y, ctx);
    vs_named_tensors_clear(&g);
    return st == VS_OK ? y : NULL;
}

START_TEST(test_eval)
{
    vs_module *m = must(VAE);
    ck_assert_int_eq(m->kind, VS_MODULE_COMPOSITE);
    ck_assert_str_eq(vs_composite_task(m), "vae");
    ck_assert_int_eq(vs_composite_n_inputs(m), 1);
    ck_assert_str_eq(vs_composite_input_name(m, 0), "x");
    int64_t shape[VS_MAX_DIMS];
    ck_assert_int_eq(vs_composite_input_shape(m, 0, shape), 1);
    ck_assert_int_eq(shape[0], 6);
    ck_assert_int_eq(vs_composite_n_outputs(m), 3);
    ck_assert_str_eq(vs_composite_output_name(m, 2), "x_logits");
    ck_assert(vs_composite_defines(m, "z") && !vs_composite_defines(m, "w"));
    vs_scope_begin();
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(3, 6), &R, 0, 1);
    vs_tensor *h = vs_module_forward(vs_module_child(m, "enc"), x, NULL);
    /* all outputs at once, no generator: z = mu */
    vs_named_tensors g = {0};
    vs_named_tensors_push(&g, "x", x, false);
    const char *want[] = {"mu", "logvar", "x_logits", "mu", "x"};
    vs_tensor *y[5];
    ck_assert_int_eq(vs_composite_eval(m, &g, 5, want, y, NULL), VS_OK);
    expect_close(y[0], vs_slice(h, 1, 0, 2), 0);
    expect_close(y[1], vs_slice(h, 1, 2, 4), 0);
    expect_close(y[2], vs_module_forward(vs_module_child(m, "dec"), y[0], NULL), 0);
    ck_assert_ptr_ne(y[3], y[0]); /* a value wanted twice comes back as two tensors */
    expect_close(y[3], y[0], 0);
    expect_close(y[4], x, 0);
    /* vs_module_forward: first input to first output */
    expect_close(vs_module_forward(m, x, NULL), y[0], 0);
    /* with a generator: z = mu + eps exp(logvar / 2), eps drawn from the stream */
    vs_rng a, b;
    vs_rng_seed(&a, 9);
    vs_rng_seed(&b, 9);
    vs_forward_ctx ctx = {.rng = &a};
    vs_tensor *z = eval1(m, "x", x, "z", &ctx);
    vs_tensor *eps = vs_tensor_randn(VS_SHAPE(3, 2), &b, 0, 1);
    expect_close(z, vs_add(y[0], vs_mul(eps, vs_exp(vs_mul_scalar(y[1], 0.5f)))), 1e-6);
    /* an intermediate given: the decoder alone (x is not needed) */
    vs_tensor *zz = vs_tensor_randn(VS_SHAPE(4, 2), &R, 0, 1);
    vs_tensor *xl = eval1(m, "z", zz, "x_logits", NULL);
    ck_assert_ptr_nonnull(xl);
    expect_close(xl, vs_module_forward(vs_module_child(m, "dec"), zz, NULL), 0);
    /* wanted values that need a missing input, or that do not exist */
    ck_assert_ptr_null(eval1(m, "z", zz, "mu", NULL));
    ck_assert_str_eq(vs_last_error()->msg, "input \"x\" is needed but not given");
    ck_assert_ptr_null(eval1(m, "z", zz, "nope", NULL));
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "wanted value \"nope\" is not defined"));
    ck_assert_ptr_null(eval1(m, "q", zz, "mu", NULL));
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "given value \"q\" is not defined"));
    /* an input of the wrong shape */
    ck_assert_ptr_null(eval1(m, "x", vs_tensor_zeros(VS_SHAPE(3, 5)), "mu", NULL));
    ck_assert_str_eq(vs_last_error()->msg, "input \"x\" is [3,5], expected [n,6]");
    vs_named_tensors_clear(&g);
    vs_scope_end();
    ck_assert_str_eq(vs_module_named_tensors(m, VS_STATE_ALL, &g) == VS_OK ? g.items[0].name : "", "enc.0.weight");
    ck_assert_str_eq(g.items[g.n - 1].name, "dec.bias");
    vs_named_tensors_clear(&g);
    vs_module_free(m);
}
END_TEST

/* ---- errors ----------------------------------------------------------------------------------- */

/* The composite text with graph nodes `graph` (and models, outputs) fails with a message containing needle. */
static void expect_error(const char *models, const char *graph, const char *outputs, const char *needle)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [4], \"c\": [2]},\n"
             " \"models\": {%s},\n \"graph\": [%s],\n \"outputs\": [%s]}}",
             models, graph, outputs);
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = from_text(text, &err);
    ck_assert_msg(m == NULL, "accepted: %s", text);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "error \"%s\" does not contain \"%s\"", err.msg, needle);
}

#define LIN "\"f\": {\"op\": \"linear\", \"in\": 4, \"out\": 4}"

START_TEST(test_errors)
{
    expect_error(LIN, "{\"call\": \"g\", \"in\": \"x\", \"out\": \"y\"}", "\"y\"",
                 "model.json:3:21: graph[0] (call g): field \"call\": unknown model \"g\"");
    expect_error(LIN, "{\"call\": \"f\", \"in\": \"w\", \"out\": \"y\"}", "\"y\"",
                 "graph[0] (call f): field \"in\": unknown value \"w\" (not an input nor an earlier node's output)");
    expect_error(LIN, "{\"call\": \"f\", \"in\": \"x\", \"out\": \"x\"}", "\"x\"",
                 "graph[0] (call f): field \"out\": value \"x\" is already defined");
    expect_error(LIN, "{\"call\": \"f\", \"in\": \"x\", \"out\": \"y\"}, {\"op\": \"relu\", \"in\": \"y\", \"out\": \"y\"}", "\"y\"",
                 "graph[1] (relu): field \"out\": value \"y\" is already defined");
    expect_error(LIN, "{\"call\": \"f\", \"in\": [\"x\", \"c\"], \"out\": \"y\"}", "\"y\"",
                 "graph[0] (call f): field \"in\": takes 1 value, got 2");
    expect_error(LIN, "{\"op\": \"concat\", \"in\": [\"x\", \"c\"], \"axis\": \"1\", \"out\": \"y\"}", "\"y\"",
                 "graph[0] (concat): field \"axis\": expected an integer axis");
    expect_error(LIN, "{\"op\": \"concat\", \"in\": [\"x\", \"c\"], \"axes\": 1, \"out\": \"y\"}", "\"y\"",
                 "graph[0] (concat): field \"axes\": unknown field for this node");
    expect_error(LIN, "{\"op\": \"split\", \"in\": \"x\", \"sizes\": [2, 1, 1], \"out\": [\"a\", \"b\"]}", "\"a\"",
                 "graph[0] (split): field \"sizes\": expected an array of 2 sizes, one per output");
    expect_error(LIN, "{\"op\": \"reshape\", \"in\": \"x\", \"shape\": [-1, -1], \"out\": \"y\"}", "\"y\"",
                 "graph[0] (reshape): field \"shape\": at most one size may be -1");
    expect_error(LIN, "{\"op\": \"linear\", \"in\": \"x\", \"out\": \"y\"}", "\"y\"",
                 "graph[0] (linear): field \"op\": \"linear\" has parameters or children: declare it under \"models\"");
    expect_error(LIN, "{\"op\": \"frobnicate\", \"in\": \"x\", \"out\": \"y\"}", "\"y\"", "field \"op\": unknown op \"frobnicate\"");
    expect_error(LIN, "{\"op\": \"leaky_relu\", \"slope\": \"a\", \"in\": \"x\", \"out\": \"y\"}", "\"y\"",
                 "model.json:3:42: graph[0] (leaky_relu): expected a number for \"slope\"");
    expect_error(LIN, "{\"op\": \"relu\", \"call\": \"f\", \"in\": \"x\", \"out\": \"y\"}", "\"y\"",
                 "graph[0]: a node needs exactly one of \"call\" (a model) and \"op\"");
    expect_error(LIN, "{\"op\": \"relu\", \"in\": \"x\"}", "\"y\"", "graph[0] (relu): field \"out\": missing");
    expect_error(LIN, "{\"op\": \"relu\", \"in\": \"x\", \"out\": \"9y\"}", "\"y\"", "field \"out\": \"9y\" is not a name");
    expect_error(LIN, "{\"op\": \"relu\", \"in\": \"x\", \"out\": \"y\"}", "\"z\"", "output \"z\" is not an input or a node's output");
    expect_error(LIN, "{\"op\": \"relu\", \"in\": \"x\", \"out\": \"y\"}", "\"y\", \"y\"", "output \"y\" is listed twice");
    expect_error("\"f\": {\"op\": \"linear\", \"in\": 4}", "", "\"x\"", "model \"f\": linear: field \"out\" is required");
    expect_error("\"f\": {\"sequential\": [], \"extra\": 1}", "", "\"x\"", "unknown key \"extra\" in a model");
    expect_error("\"f\": {\"op\": \"residual\", \"name\": \"1x\", \"sequential\": [{\"op\": \"relu\"}]}", "", "\"x\"",
                 "\"name\" must be a name of letters, digits and _");
    /* unknown keys of the composite itself, "input" beside a composite */
    vs_error err;
    ck_assert_ptr_null(from_text("{\"format\": \"versus-model/1\", \"composite\": {\"input\": {}}}", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown key \"input\" in a composite"));
    ck_assert_ptr_null(from_text("{\"format\": \"versus-model/1\", \"input\": [2], \"composite\": {}}", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "\"input\" does not apply to a composite"));
    ck_assert_ptr_null(from_text("{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [0]}}}", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "input \"x\": dimension 0: expected a positive size"));
    /* duplicate model names through the API */
    vs_module *m = vs_composite_new();
    ck_assert_int_eq(vs_composite_add_model(m, "f", vs_linear_new(2, 2, true, &R)), VS_OK);
    ck_assert_int_eq(vs_composite_add_model(m, "f", vs_linear_new(2, 2, true, &R)), VS_ERR_FORMAT);
    ck_assert_str_eq(vs_last_error()->msg, "model \"f\" is already defined");
    ck_assert_int_eq(vs_composite_add_input(m, "x", 1, (int64_t[]){2}), VS_OK);
    ck_assert_int_eq(vs_composite_add_input(m, "x", 1, (int64_t[]){2}), VS_ERR_FORMAT);
    ck_assert_int_eq(vs_composite_add_output(m, "x"), VS_OK);
    vs_scope_begin();
    ck_assert_ptr_nonnull(vs_module_forward(m, vs_tensor_zeros(VS_SHAPE(1, 2)), NULL)); /* an input may be an output */
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* Shapes that only meet at run time: the message names the node. */
START_TEST(test_runtime_shapes)
{
    vs_module *m = must("{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [4], \"c\": null},\n"
                        " \"graph\": [{\"op\": \"concat\", \"in\": [\"x\", \"c\"], \"out\": \"y\"},\n"
                        "  {\"op\": \"split\", \"in\": \"y\", \"sizes\": [3, 3], \"out\": [\"a\", \"b\"]},\n"
                        "  {\"op\": \"broadcast_planes\", \"in\": [\"c\", \"x\"], \"out\": \"p\"}],\n"
                        " \"outputs\": [\"y\", \"a\", \"p\"]}}");
    vs_scope_begin();
    vs_named_tensors g = {0};
    vs_named_tensors_push(&g, "x", vs_tensor_zeros(VS_SHAPE(2, 4)), false);
    vs_named_tensors_push(&g, "c", vs_tensor_zeros(VS_SHAPE(3, 2)), false);
    const char *want[] = {"y", "a", "p"};
    vs_tensor *y[3];
    ck_assert_int_ne(vs_composite_eval(m, &g, 1, want, y, NULL), VS_OK);
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "graph[0] (concat): "));
    g.items[1].tensor = vs_tensor_zeros(VS_SHAPE(2, 3));
    ck_assert_int_ne(vs_composite_eval(m, &g, 2, want, y, NULL), VS_OK);
    ck_assert_str_eq(vs_last_error()->msg, "graph[1] (split): \"sizes\" add up to 6, the value has 7 along axis 1");
    ck_assert_int_ne(vs_composite_eval(m, &g, 1, want + 2, y, NULL), VS_OK);
    ck_assert_ptr_nonnull(strstr(vs_last_error()->msg, "graph[2] (broadcast_planes): expects a vector per example"));
    vs_named_tensors_clear(&g);
    vs_scope_end();
    vs_module_free(m);
}
END_TEST

/* ---- save and load ------------------------------------------------------------------------------ */

static char DIR_[512];

/* The text of a file (malloc'd). */
static char *slurp(const char *path)
{
    size_t n;
    unsigned char *b = io_slurp(path, &n);
    ck_assert_ptr_nonnull(b);
    char *s = realloc(b, n + 1);
    s[n] = 0;
    return s;
}

/* Save m, load it back, save again: same outputs (for inputs xs) and the same model.json. */
static void round_trip(vs_module *m, int n_in, vs_tensor **xs)
{
    snprintf(DIR_, sizeof DIR_, "%s/versus_test_composite_%ld", vs_test_tmpdir(), (long)getpid());
    vs_error err;
    vs_module_train(m, false);
    ck_assert_msg(vs_model_save(m, 0, NULL, DIR_, &err) == VS_OK, "%s", err.msg);
    char jpath[600];
    snprintf(jpath, sizeof jpath, "%s/model.json", DIR_);
    char *first = slurp(jpath);
    vs_module *back = vs_model_load(DIR_, NULL, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_int_eq(vs_model_save(back, 0, NULL, DIR_, &err), VS_OK);
    char *second = slurp(jpath);
    ck_assert_str_eq(second, first);
    free(first);
    free(second);
    vs_scope_begin();
    vs_named_tensors g = {0};
    for (int i = 0; i < n_in; i++) vs_named_tensors_push(&g, vs_composite_input_name(m, i), xs[i], false);
    int64_t no = vs_composite_n_outputs(m);
    const char *want[8];
    vs_tensor *a[8], *b[8];
    for (int64_t i = 0; i < no; i++) want[i] = vs_composite_output_name(m, i);
    ck_assert_int_eq(vs_composite_eval(m, &g, (int)no, want, a, NULL), VS_OK);
    ck_assert_int_eq(vs_composite_eval(back, &g, (int)no, want, b, NULL), VS_OK);
    for (int64_t i = 0; i < no; i++) expect_close(a[i], b[i], 0);
    vs_named_tensors_clear(&g);
    vs_scope_end();
    vs_module_free(back);
    io_remove_model_dir(DIR_);
}

START_TEST(test_save_load)
{
    vs_module *m = must(VAE);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(3, 6), &R, 0, 1);
    round_trip(m, 1, &x);
    vs_tensor_free(x);
    vs_module_free(m);
    /* nested: a composite child called with two inputs, a Siamese child, wiring ops of every kind */
    m = must("{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [2, 3, 3], \"c\": [2]},\n"
             " \"models\": {\"inner\": {\"composite\": {\"inputs\": {\"a\": null, \"b\": null},\n"
             "    \"graph\": [{\"op\": \"mul\", \"in\": [\"a\", \"b\"], \"out\": \"p\"}], \"outputs\": [\"p\"]}},\n"
             "  \"siam\": {\"siamese\": {\"encoder\": {\"sequential\": [{\"op\": \"linear\", \"in\": 18, \"out\": 3}]}}},\n"
             "  \"main\": {\"sequential\": [{\"op\": \"residual\", \"name\": \"main\", \"sequential\": [\n"
             "     {\"op\": \"conv2d\", \"in\": 4, \"out\": 4, \"kernel\": 3, \"padding\": 1, \"bias\": false},\n"
             "     {\"op\": \"instance_norm2d\", \"features\": 4, \"track_running_stats\": true}]}]}},\n"
             " \"graph\": [{\"op\": \"broadcast_planes\", \"in\": [\"c\", \"x\"], \"out\": \"cm\"},\n"
             "  {\"op\": \"concat\", \"in\": [\"x\", \"cm\"], \"axis\": 1, \"out\": \"xc\"},\n"
             "  {\"call\": \"main\", \"in\": \"xc\", \"out\": \"h\"},\n"
             "  {\"op\": \"split\", \"in\": \"h\", \"axis\": -3, \"sizes\": [2, 2], \"out\": [\"h1\", \"h2\"]},\n"
             "  {\"call\": \"inner\", \"in\": [\"h1\", \"h2\"], \"out\": \"q\"},\n"
             "  {\"op\": \"add\", \"in\": [\"q\", \"x\", \"h1\"], \"out\": \"s\"},\n"
             "  {\"op\": \"leaky_relu\", \"slope\": 0.2, \"in\": \"s\", \"out\": \"t\"},\n"
             "  {\"op\": \"reshape\", \"in\": \"t\", \"shape\": [-1], \"out\": \"v\"},\n"
             "  {\"op\": \"flatten\", \"in\": \"x\", \"out\": \"xf\"},\n"
             "  {\"call\": \"siam\", \"in\": [\"v\", \"xf\"], \"out\": \"sim\"}],\n"
             " \"outputs\": [\"sim\", \"v\"], \"task\": \"demo\"}}");
    vs_named_tensors names = {0};
    ck_assert_int_eq(vs_module_named_tensors(m, VS_STATE_ALL, &names), VS_OK);
    const char *expect[] = {"siam.encoder.0.weight", "siam.encoder.0.bias", "main.0.main.0.weight", "main.0.main.1.weight",
                            "main.0.main.1.bias", "main.0.main.1.running_mean", "main.0.main.1.running_var"};
    ck_assert_int_eq(names.n, 7);
    for (int i = 0; i < 7; i++) ck_assert_str_eq(names.items[i].name, expect[i]);
    vs_named_tensors_clear(&names);
    vs_tensor *xs[2] = {vs_tensor_randn(VS_SHAPE(2, 2, 3, 3), &R, 0, 1), vs_tensor_rand(VS_SHAPE(2, 2), &R, 0, 1)};
    round_trip(m, 2, xs);
    vs_tensor_free(xs[0]);
    vs_tensor_free(xs[1]);
    vs_module_free(m);
}
END_TEST

/* ---- gradients through the wiring -------------------------------------------------------------- */

static vs_module *GM;

/* x0 [2,2,3,3] image, x1 [2,2] class vector: every wiring op, a sample drawn from a fixed stream. */
static vs_tensor *wiring_fn(vs_tensor **x, void *ctx)
{
    (void)ctx;
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_forward_ctx fc = {.rng = &r};
    vs_named_tensors g = {0};
    vs_named_tensors_push(&g, "x", x[0], false);
    vs_named_tensors_push(&g, "c", x[1], false);
    const char *want = "out";
    vs_tensor *y = NULL;
    vs_composite_eval(GM, &g, 1, &want, &y, &fc);
    vs_named_tensors_clear(&g);
    return y;
}

START_TEST(test_gradients)
{
    GM = must("{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"x\": [2, 3, 3], \"c\": [2]},\n"
              " \"graph\": [{\"op\": \"broadcast_planes\", \"in\": [\"c\", \"x\"], \"out\": \"cm\"},\n"
              "  {\"op\": \"concat\", \"in\": [\"x\", \"cm\"], \"axis\": 1, \"out\": \"xc\"},\n"
              "  {\"op\": \"split\", \"in\": \"xc\", \"axis\": 1, \"sizes\": [1, 3], \"out\": [\"a\", \"b\"]},\n"
              "  {\"op\": \"reshape\", \"in\": \"b\", \"shape\": [-1], \"out\": \"bv\"},\n"
              "  {\"op\": \"split\", \"in\": \"bv\", \"sizes\": [13, 14], \"out\": [\"mu\", \"lv\"]},\n"
              "  {\"op\": \"reshape\", \"in\": \"a\", \"shape\": [9], \"out\": \"av\"},\n"
              "  {\"op\": \"split\", \"in\": \"lv\", \"sizes\": [13, 1], \"out\": [\"lv13\", \"rest\"]},\n"
              "  {\"op\": \"reparameterize\", \"in\": [\"mu\", \"lv13\"], \"out\": \"z\"},\n"
              "  {\"op\": \"tanh\", \"in\": \"z\", \"out\": \"tz\"},\n"
              "  {\"op\": \"mul\", \"in\": [\"tz\", \"mu\"], \"out\": \"m\"},\n"
              "  {\"op\": \"split\", \"in\": \"m\", \"sizes\": [9, 4], \"out\": [\"m9\", \"m4\"]},\n"
              "  {\"op\": \"add\", \"in\": [\"m9\", \"av\", \"av\"], \"out\": \"out\"}],\n"
              " \"outputs\": [\"out\"]}}");
    vs_tensor *x[2] = {vs_tensor_randn(VS_SHAPE(2, 2, 3, 3), &R, 0, 0.5f), vs_tensor_randn(VS_SHAPE(2, 2), &R, 0, 0.5f)};
    gradcheck_full("composite wiring", wiring_fn, NULL, 2, x, 1e-2, 1e-2, true);
    vs_tensor_free(x[0]);
    vs_tensor_free(x[1]);
    vs_module_free(GM);
}
END_TEST

/* ---- instance norm ------------------------------------------------------------------------------ */

START_TEST(test_instance_norm_options)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_INSTANCE_NORM2D);
    s.features = 2, s.affine = 0, s.track_running_stats = 1, s.momentum = 0.5;
    vs_error err;
    vs_module *m = vs_layer_new(&s, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(m->n_params, 0);
    ck_assert_int_eq(m->n_buffers, 2);
    vs_scope_begin();
    float xv[2 * 2 * 4] = {1, 2, 3, 4, 0, 0, 2, 2, 5, 5, 5, 9, -1, 1, -1, 1};
    vs_tensor *x = vs_tensor_from(VS_SHAPE(2, 2, 2, 2), xv);
    vs_tensor *y = vs_module_forward(m, x, NULL); /* training: each example's statistics */
    expect_close(y, vs_instance_norm(x, NULL, NULL, 1e-5f), 1e-6);
    /* running = 0.5 running + 0.5 mean over examples (means 2.5, 6 / 1, 0; unbiased variances 5/3, 4 / 4/3, 4/3) */
    vs_tensor *rm = vs_module_param(m, "running_mean"), *rv = vs_module_param(m, "running_var");
    ck_assert_float_near(rm->data[0], 0.5 * (2.5 + 6) / 2, 1e-6);
    ck_assert_float_near(rm->data[1], 0.5 * (1 + 0) / 2, 1e-6);
    ck_assert_float_near(rv->data[0], 0.5 + 0.5 * (5.0 / 3 + 4) / 2, 1e-6);
    ck_assert_float_near(rv->data[1], 0.5 + 0.5 * (4.0 / 3 + 4.0 / 3) / 2, 1e-6);
    /* evaluation: the running statistics */
    vs_module_train(m, false);
    y = vs_module_forward(m, x, NULL);
    ck_assert_float_near(y->data[0], (1 - rm->data[0]) / sqrt(rv->data[0] + 1e-5), 1e-5);
    vs_scope_end();
    vs_module_free(m);
    /* seven and thirteen examples: the running statistics are the batch means of the planes' own
     * statistics (the ones the normalisation used, kept in float), summed in example order */
    s.momentum = 0.1;
    vs_rng r;
    vs_rng_seed(&r, 4);
    static const int64_t counts[2] = {7, 13};
    for (int c = 0; c < 2; c++) {
        const int64_t n = counts[c];
        m = vs_layer_new(&s, NULL, &err);
        vs_scope_begin();
        x = vs_tensor_randn(VS_SHAPE(n, 2, 3, 5), &r, 1, 2);
        vs_module_forward(m, x, NULL);
        for (int j = 0; j < 2; j++) {
            double sm = 0, sv = 0;
            for (int64_t i = 0; i < n; i++) {
                const float *p = x->data + (i * 2 + j) * 15;
                double t = 0, ss = 0;
                for (int k = 0; k < 15; k++) t += p[k];
                const double mean = t / 15;
                for (int k = 0; k < 15; k++) ss += (p[k] - mean) * (p[k] - mean);
                sm += mean, sv += ss / 14;
            }
            const double mom = s.momentum;
            ck_assert_float_eq_tol(vs_module_param(m, "running_mean")->data[j], (1 - mom) * 0.0 + mom * sm / (double)n, 4e-6);
            ck_assert_float_eq_tol(vs_module_param(m, "running_var")->data[j], (1 - mom) * 1.0 + mom * sv / (double)n, 4e-6);
        }
        vs_scope_end();
        vs_module_free(m);
    }
    /* versus's default keeps weight and bias; "affine": false and the flags read from model.json */
    m = vs_instance_norm2d_new(3, 1e-5f);
    ck_assert_int_eq(m->n_params, 2);
    ck_assert_int_eq(m->n_buffers, 0);
    vs_module_free(m);
    m = must("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"instance_norm2d\", \"features\": 3, \"affine\": false}]}");
    ck_assert_int_eq(m->children[0]->n_params, 0);
    vs_module_free(m);
    vs_error_clear(&err);
    ck_assert_ptr_null(from_text("{\"format\": \"versus-model/1\", \"sequential\": [{\"op\": \"instance_norm2d\", \"features\": 3, \"affine\": 2}]}", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "\"affine\" is 2, expected an integer in [0, 1]"));
}
END_TEST

/* ---- the zoo -------------------------------------------------------------------------------------- */

static bool has_name(const vs_module *m, const char *name)
{
    vs_named_tensors l = {0};
    vs_module_named_tensors(m, VS_STATE_ALL, &l);
    bool found = vs_named_tensors_find(&l, name) != NULL;
    vs_named_tensors_clear(&l);
    return found;
}

START_TEST(test_zoo)
{
    vs_error err;
    vs_module *g = vs_arch_stargan_generator(1, 28, 10, 8, 2, &R, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert(has_name(g, "main.0.weight") && has_name(g, "main.1.running_var") && has_name(g, "main.9.main.0.weight") &&
              has_name(g, "main.10.main.4.bias") && has_name(g, "main.17.weight"));
    ck_assert(!has_name(g, "main.0.bias"));
    vs_module *c = vs_arch_stargan_critic(1, 28, 10, 8, 3, &R, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ck_assert(has_name(c, "main.4.bias") && has_name(c, "conv1.weight") && has_name(c, "conv2.weight"));
    ck_assert_int_eq(vs_module_param(vs_module_child(c, "conv2"), "weight")->shape[3], 3); /* int(28 / 8) */
    vs_scope_begin();
    vs_named_tensors in = {0};
    vs_named_tensors_push(&in, "x", vs_tensor_rand(VS_SHAPE(2, 1, 28, 28), &R, -1, 1), false);
    vs_named_tensors_push(&in, "c", vs_tensor_zeros(VS_SHAPE(2, 10)), false);
    const char *want[] = {"y", "src", "cls"};
    vs_tensor *out[3];
    ck_assert_int_eq(vs_composite_eval(g, &in, 1, want, out, NULL), VS_OK);
    ck_assert_int_eq(out[0]->ndim, 4);
    ck_assert_int_eq(out[0]->shape[3], 28);
    in.items[0].tensor = out[0];
    in.n = 1;
    ck_assert_int_eq(vs_composite_eval(c, &in, 2, want + 1, out + 1, NULL), VS_OK);
    ck_assert_int_eq(out[1]->shape[2], 3);
    ck_assert_int_eq(out[2]->ndim, 2);
    ck_assert_int_eq(out[2]->shape[1], 10);
    in.n = 2;
    vs_named_tensors_clear(&in);
    vs_scope_end();
    vs_module *gan = vs_arch_gan(g, c, &err);
    ck_assert_ptr_nonnull(gan);
    ck_assert_str_eq(vs_composite_task(gan), "gan");
    ck_assert(has_name(gan, "generator.main.9.main.1.running_mean") && has_name(gan, "critic.conv1.weight"));
    vs_tensor *x32[2] = {vs_tensor_rand(VS_SHAPE(2, 3, 32, 32), &R, -1, 1), vs_tensor_zeros(VS_SHAPE(2, 5))};
    vs_module *g32 = vs_arch_stargan_generator(3, 32, 5, 4, 1, &R, &err);
    round_trip(g32, 2, x32);
    vs_module *c32 = vs_arch_stargan_critic(3, 32, 5, 4, 3, &R, &err);
    round_trip(c32, 1, x32);
    round_trip(gan, 0, NULL);
    ck_assert_ptr_null(vs_arch_stargan_generator(1, 30, 10, 8, 2, &R, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "side 30 must be a positive multiple of 4"));
    vs_module *v = vs_arch_vae_mlp(3, (int64_t[]){1, 28, 28}, 400, 20, &R, &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_str_eq(vs_composite_task(v), "vae");
    ck_assert(has_name(v, "fc1.weight") && has_name(v, "fc22.bias") && has_name(v, "fc4.weight"));
    ck_assert_int_eq(vs_module_param_count(v), 784 * 400 + 400 + 2 * (400 * 20 + 20) + 20 * 400 + 400 + 400 * 784 + 784);
    vs_module *d = vs_arch_dip_vae_mlp(3, (int64_t[]){1, 28, 28}, 1200, 16, &R, &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    ck_assert(has_name(d, "encoder.4.weight") && has_name(d, "decoder.6.bias"));
    ck_assert_int_eq(vs_module_param(vs_module_child(vs_module_child(d, "encoder"), "4"), "weight")->shape[0], 32);
    vs_tensor *img = vs_tensor_rand(VS_SHAPE(2, 1, 28, 28), &R, 0, 1);
    round_trip(v, 1, &img);
    round_trip(d, 1, &img);
    vs_scope_begin();
    vs_tensor *xl = eval1(d, "z", vs_tensor_zeros(VS_SHAPE(3, 16)), "x_logits", NULL); /* the decoder alone */
    ck_assert_ptr_nonnull(xl);
    ck_assert_int_eq(xl->ndim, 4);
    vs_scope_end();
    vs_tensor_free(img);
    vs_tensor_free(x32[0]);
    vs_tensor_free(x32[1]);
    vs_module_free(g32);
    vs_module_free(c32);
    vs_module_free(gan);
    vs_module_free(v);
    vs_module_free(d);
}
END_TEST

/* ---- a pair model whose head is learned: a shared encoder, concat, linear ----------------------- */

static const char *PAIR_HEAD =
    "{\"format\": \"versus-model/1\", \"composite\": {\"inputs\": {\"q\": [5], \"r\": [5]},\n"
    " \"models\": {\"enc\": {\"sequential\": [{\"op\": \"linear\", \"in\": 5, \"out\": 4}, {\"op\": \"tanh\"}]},\n"
    "            \"head\": {\"op\": \"linear\", \"in\": 8, \"out\": 1}},\n"
    " \"graph\": [{\"call\": \"enc\", \"in\": \"q\", \"out\": \"eq\"}, {\"call\": \"enc\", \"in\": \"r\", \"out\": \"er\"},\n"
    "           {\"op\": \"concat\", \"in\": [\"eq\", \"er\"], \"axis\": 1, \"out\": \"h\"}, {\"call\": \"head\", \"in\": \"h\", \"out\": \"y\"}],\n"
    " \"outputs\": [\"y\"]}}";

START_TEST(test_pair_head)
{
    vs_module *m = must(PAIR_HEAD), *one = must(VAE);
    vs_module_train(m, false);
    ck_assert(vs_module_compares_pairs(m));
    ck_assert(!vs_module_compares_pairs(one));
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(3, 5), &R, 0, 1), *r = vs_tensor_randn(VS_SHAPE(3, 5), &R, 0, 1);
    vs_scope_begin();
    vs_tensor *y = vs_pair_forward(m, x, r, NULL);
    ck_assert_msg(y != NULL, "%s", vs_last_error()->msg);
    ck_assert_int_eq(y->ndim, 2);
    vs_named_tensors g = {0};
    vs_named_tensors_push(&g, "q", x, false);
    vs_named_tensors_push(&g, "r", r, false);
    const char *want = "y";
    vs_tensor *y2 = NULL;
    ck_assert_int_eq(vs_composite_eval(m, &g, 1, &want, &y2, NULL), VS_OK);
    vs_named_tensors_clear(&g);
    expect_close(y, y2, 0);
    ck_assert_ptr_null(vs_pair_forward(one, x, r, NULL));
    ck_assert(strstr(vs_last_error()->msg, "does not compare pairs"));
    vs_scope_end();

    /* explained as a pair: IG over both sides sums to f(x, r) - f(0, 0) */
    vs_module_explainee e = {.module = m};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    ck_assert_ptr_nonnull(fn.forward_pair);
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.reference = r;
    rq.side = VS_SIDE_BOTH;
    vs_tensor *A = NULL;
    vs_attr_report rep;
    vs_error err;
    ck_assert_int_eq(vs_explain(&fn, x, vs_method_find("integrated_gradients"), NULL, &rq, &A, &rep, &err), VS_OK);
    ck_assert_int_eq(A->ndim, 3);
    ck_assert_int_eq(A->shape[1], 2);
    ck_assert_msg(fabs(rep.delta) < 1e-4, "completeness gap %g", rep.delta);
    vs_tensor_free(A);
    /* the fixed-reference view: one reference row for every query */
    vs_tensor *r1 = vs_tensor_from(VS_SHAPE(1, 5), r->data);
    e.reference = r1;
    vs_scope_begin();
    vs_tensor *yf = fn.forward(fn.ctx, x);
    ck_assert_msg(yf != NULL, "%s", vs_last_error()->msg);
    ck_assert_int_eq(yf->shape[0], 3);
    vs_scope_end();
    vs_tensor_free(r1);
    vs_tensor_free(x);
    vs_tensor_free(r);
    vs_module_free(m);
    vs_module_free(one);
}
END_TEST

static Suite *composite_suite(void)
{
    vs_rng_seed(&R, 42);
    Suite *s = suite_create("composite");
    TCase *tc = vs_tcase(s, "composite", 120);
    tcase_add_test(tc, test_eval);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_runtime_shapes);
    tcase_add_test(tc, test_save_load);
    tcase_add_test(tc, test_gradients);
    tcase_add_test(tc, test_instance_norm_options);
    tcase_add_test(tc, test_zoo);
    tcase_add_test(tc, test_pair_head);
    return s;
}

VS_TEST_MAIN(composite_suite)
