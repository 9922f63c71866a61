/* test_explain_module.c - explainers on the papers' nn architectures: the module adapter, Grad-CAM
 * through a real conv layer, DeepLIFT and IG axioms on the GANMEX MNIST classifier, Siamese scores,
 * and the baselines. */
#include "vs_check.h"
#include "explain_call.h"
#include "versus/versus.h"

#include <math.h>

static vs_module *mnist_classifier(uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_module_train(m, false);
    return m;
}

START_TEST(test_ganmex_classifier_axioms)
{
    vs_module *m = mnist_classifier(3);
    vs_module_explainee e = {m, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(1, 1, 28, 28), &r, 0, 1);
    vs_explain_request o = explain_req(3, 5);
    vs_attr_report rep;
    vs_tensor *a;
    vs_error err;
    /* DeepLIFT: summation to delta on conv/ReLU/linear/dropout(eval) */
    ck_assert_msg(explain_with(&fn, x, "deeplift", NULL, &o, &a, &rep, &err) == VS_OK, "%s", err.msg);
    ck_assert_msg(fabs(rep.delta) <= 1e-5 * fmax(1, fabs(rep.score - rep.baseline_score)), "deeplift gap %g", rep.delta);
    vs_tensor_free(a);
    /* Grad-CAM through the last conv layer: non-negative, repeated over the channel, same shape */
    o = explain_req(3, -1);
    ck_assert_msg(explain_with(&fn, x, "gradcam", NULL, &o, &a, &rep, &err) == VS_OK, "%s", err.msg);
    ck_assert_int_eq(a->size, 784);
    double s = 0;
    for (int i = 0; i < 784; i++) {
        ck_assert(a->data[i] >= 0);
        s += a->data[i];
    }
    ck_assert(s > 0 || rep.score <= 0);
    vs_tensor_free(a);
    /* a ReLU after the first conv: also an activation [1,C,h,w] */
    ck_assert_int_eq(explain_with(&fn, x, "gradcam", "layer=1", &o, &a, &rep, &err), VS_OK);
    vs_tensor_free(a);
    ck_assert_int_eq(explain_with(&fn, x, "gradcam", "layer=99", &o, &a, &rep, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "layer 99") != NULL);
    vs_tensor_free(x);
    vs_module_free(m);
}
END_TEST

START_TEST(test_siamese_reference)
{
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_error err;
    vs_module *m = vs_arch_siamese_mlp(12, 16, 8, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_module_train(m, false);
    vs_tensor *q = vs_tensor_rand(VS_SHAPE(2, 12), &r, 0, 1), *ref = vs_tensor_rand(VS_SHAPE(1, 12), &r, 0, 1);
    vs_module_explainee e = {m, ref};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    ck_assert_ptr_null(fn.sequential);
    vs_tensor *s = vs_explained_score(&fn, q, 0, -1);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->size, 2);
    for (int i = 0; i < 2; i++) ck_assert(s->data[i] >= -1.0001f && s->data[i] <= 1.0001f);
    /* the query compared with itself has similarity 1 */
    vs_module_explainee self = {m, vs_tensor_from(VS_SHAPE(1, 12), q->data)};
    vs_model_fn fs = vs_model_fn_from_module(&self);
    vs_tensor *q0 = vs_tensor_from(VS_SHAPE(1, 12), q->data);
    vs_tensor *s0 = vs_explained_score(&fs, q0, 0, -1);
    ck_assert_float_near(s0->data[0], 1.0, 1e-5);
    /* IG on the similarity: completeness */
    vs_explain_request o = explain_req(-1, -1);
    vs_tensor *a;
    vs_attr_report rep;
    ck_assert_msg(explain_with(&fn, q, "integrated_gradients", "steps=128", &o, &a, &rep, &err) == VS_OK, "%s", err.msg);
    /* a ReLU encoder: the gap is reported, and small against the score change */
    ck_assert_msg(fabs(rep.delta) < 0.02 * fabs(rep.score - rep.baseline_score), "IG gap %g for a change of %g", rep.delta,
                  rep.score - rep.baseline_score);
    o.contrast = 1;
    vs_tensor *bad;
    ck_assert_int_eq(explain_with(&fn, q, "integrated_gradients", NULL, &o, &bad, NULL, &err), VS_ERR_ARG);
    vs_module_explainee noref = {m, NULL};
    vs_model_fn fn2 = vs_model_fn_from_module(&noref);
    ck_assert_ptr_null(vs_explained_score(&fn2, q, 0, -1));
    vs_tensor_free(a);
    vs_tensor_free(s);
    vs_tensor_free(s0);
    vs_tensor_free(q0);
    vs_tensor_free(self.reference);
    vs_tensor_free(q);
    vs_tensor_free(ref);
    vs_module_free(m);
}
END_TEST

START_TEST(test_baselines)
{
    float x[2 * 3 * 3];
    for (int i = 0; i < 18; i++) x[i] = (float)i / 17.0f;
    float b[18];
    int64_t shape[3] = {2, 3, 3};
    vs_error err;
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_MAX, x, 3, shape, 1, NULL, NULL, 0, b, &err), VS_OK);
    ck_assert_float_eq(b[5], 1.0f);
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_MEAN, x, 3, shape, 1, NULL, NULL, 0, b, &err), VS_OK);
    ck_assert_float_near(b[0], 0.5, 1e-6);
    /* blur preserves a constant image and the mean of each plane (edges clamped, symmetric kernel on a ramp) */
    float c[18];
    for (int i = 0; i < 18; i++) c[i] = 0.25f;
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_BLUR, c, 3, shape, 2, NULL, NULL, 0, b, &err), VS_OK);
    for (int i = 0; i < 18; i++) ck_assert_float_near(b[i], 0.25, 1e-6);
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_BLUR, x, 3, shape, 1.5f, NULL, NULL, 0, b, &err), VS_OK);
    ck_assert(b[0] > x[0] && b[8] < x[8]); /* corners pulled toward the plane's centre */
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_BLUR, x, 1, (int64_t[]){18}, 1, NULL, NULL, 0, b, &err), VS_ERR_ARG);
    vs_rng r;
    vs_rng_seed(&r, 1);
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_UNIFORM, x, 3, shape, 1, &r, NULL, 0, b, &err), VS_OK);
    for (int i = 0; i < 18; i++) ck_assert(b[i] >= 0 && b[i] <= 1);
    /* MDTS: the nearest training example of the target class */
    vs_dataset *d = vs_dataset_new(VS_DATA_TABULAR, "t");
    d->n = 3;
    d->ndim = 1;
    d->shape[0] = d->dim = 2;
    d->n_classes = 2;
    d->X = malloc(6 * sizeof(float));
    d->y = malloc(3 * sizeof(int64_t));
    float X[6] = {0, 0, 5, 5, 1, 1};
    int64_t y[3] = {1, 1, 0};
    memcpy(d->X, X, sizeof X);
    memcpy(d->y, y, sizeof y);
    float q[2] = {0.9f, 0.9f};
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_MDTS, q, 1, (int64_t[]){2}, 0, NULL, d, 1, b, &err), VS_OK);
    ck_assert_float_eq(b[0], 0); /* class 1: (0,0) is nearer than (5,5); (1,1) is class 0 */
    ck_assert_int_eq(vs_make_baseline(VS_BASELINE_MDTS, q, 1, (int64_t[]){2}, 0, NULL, NULL, 1, b, &err), VS_ERR_ARG);
    vs_tensor *set;
    ck_assert_int_eq(vs_class_baselines(d, 1, 5, &r, &set, &err), VS_OK);
    ck_assert_int_eq(set->shape[0], 2);
    vs_tensor_free(set);
    ck_assert_int_eq(vs_class_baselines(d, 7, 5, &r, &set, &err), VS_ERR_ARG);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_baseline_from_name("blur"), VS_BASELINE_BLUR);
    ck_assert_int_eq(vs_baseline_from_name("fuzzy"), -1);
}
END_TEST

/* The SNX adapter of nn Siamese modules: rows, one graph with edge weights, node embeddings. */
START_TEST(test_snx_adapter)
{
    vs_rng r;
    vs_rng_seed(&r, 9);
    vs_error err;
    vs_synth_graph_opts go;
    vs_synth_graph_defaults(&go);
    go.n = 4;
    vs_dataset *d = NULL;
    ck_assert_int_eq(vs_synth_graphs(&go, &d, &err), VS_OK);
    vs_module *m = vs_arch_siamese_gnn(VS_MODULE_GCN_CONV, d->n_node_features, 8, 2, 4, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    vs_siamese_module sm = {m, d->n_node_features};
    vs_siamese f = vs_siamese_from_module(&sm);
    vs_scope_begin();
    const vs_graph *g = &d->graphs[0];
    vs_tensor *e1 = f.embed_graph(f.ctx, g, NULL);
    ck_assert_msg(e1 != NULL, "%s", vs_last_error()->msg);
    ck_assert_int_eq(e1->shape[0], 1);
    vs_tensor *w = vs_tensor_full(VS_SHAPE(g->n_edges), 1.0f);
    vs_set_requires_grad(w, true);
    vs_tensor *e2 = f.embed_graph(f.ctx, g, w);
    for (int64_t i = 0; i < e1->size; i++) ck_assert_float_near(e1->data[i], e2->data[i], 1e-6); /* weight 1 = no weights */
    vs_tensor *gw;
    ck_assert_int_eq(vs_grad(1, &e2, (vs_tensor *const[]){vs_ones_like(e2)}, 1, &w, &gw, false), VS_OK);
    double gn = 0;
    for (int64_t i = 0; i < gw->size; i++) gn += fabs(gw->data[i]);
    ck_assert(gn > 0); /* gradients reach the edge weights */
    vs_tensor *nodes = f.embed_nodes(f.ctx, g, NULL);
    ck_assert_msg(nodes != NULL, "%s", vs_last_error()->msg);
    ck_assert_int_eq(nodes->shape[0], g->n_nodes);
    vs_scope_end();
    vs_module_free(m);
    vs_dataset_free(d);
    /* tabular rows */
    vs_module *mlp = vs_arch_siamese_mlp(6, 8, 4, &r, &err);
    vs_siamese_module sm2 = {mlp, 0};
    vs_siamese f2 = vs_siamese_from_module(&sm2);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(3, 6), &r, 0, 1);
    vs_tensor *e = f2.embed(f2.ctx, x);
    ck_assert_int_eq(e->shape[0], 3);
    ck_assert_int_eq(e->shape[1], 4);
    vs_scope_end();
    vs_module_free(mlp);
}
END_TEST

static Suite *explain_module_suite(void)
{
    Suite *s = suite_create("explain_module");
    TCase *tc = vs_tcase(s, "modules", 120);
    tcase_add_test(tc, test_ganmex_classifier_axioms);
    tcase_add_test(tc, test_siamese_reference);
    tcase_add_test(tc, test_baselines);
    tcase_add_test(tc, test_snx_adapter);
    return s;
}

VS_TEST_MAIN(explain_module_suite)
