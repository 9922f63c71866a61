/* test_cem.c - CEM-MAF and CEM on small models with known answers: attribute parsing and evaluation,
 * the class margin, PNs that change the class (checked by running the classifier on them), PPs that
 * keep it by construction, the pixel CEM's one-sided changes, the PP correlation, the DIP-VAE probes
 * (scores, traversal grid), the conv DIP-VAE's shapes, and the registry methods. */
#include "tests/vs_check.h"
#include "versus/arch.h"
#include "versus/cem.h"
#include "versus/composite.h"
#include "versus/dataset.h"
#include "versus/method.h"
#include "versus/ops.h"
#include "versus/task.h"
#include "versus/vae.h"

#include <math.h>
#include <sys/stat.h>

static const int64_t img[3] = {1, 4, 4};

/* Every parameter of m times scale. */
static void scale_params(vs_module *m, float scale)
{
    vs_named_tensors p = {0};
    vs_module_named_tensors(m, VS_STATE_PARAMS, &p);
    for (int64_t i = 0; i < p.n; i++)
        for (int64_t k = 0; k < p.items[i].tensor->size; k++) p.items[i].tensor->data[k] *= scale;
    vs_named_tensors_clear(&p);
}

/* flatten, linear 16 -> 3 with weights scaled by `scale` (a sharp classifier). */
static vs_module *classifier(float scale, uint64_t seed)
{
    vs_layer_spec l[2];
    vs_layer_spec_init(&l[0], VS_MODULE_FLATTEN);
    vs_layer_spec_init(&l[1], VS_MODULE_LINEAR);
    l[1].in = 16, l[1].out = 3;
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_sequential_from_spec(l, 2, 3, img, &r, &err);
    ck_assert_ptr_nonnull(m);
    scale_params(m, scale);
    vs_module_train(m, false);
    return m;
}

static vs_module *small_vae(uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *v = vs_arch_dip_vae_mlp(3, img, 12, 3, &r, &err);
    ck_assert_ptr_nonnull(v);
    vs_module_train(v, false);
    return v;
}

static vs_tensor *images(int64_t n, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    return vs_tensor_rand(VS_SHAPE(n, 1, 4, 4), &r, 0, 1);
}

static int64_t predict(vs_module *m, const float *x)
{
    vs_scope_begin();
    vs_tensor *out = vs_module_forward(m, vs_tensor_from(VS_SHAPE(1, 1, 4, 4), x), &(vs_forward_ctx){0});
    int64_t best = 0;
    for (int64_t c = 1; c < 3; c++)
        if (out->data[c] > out->data[best]) best = c;
    vs_scope_end();
    return best;
}

START_TEST(test_attrs_parse)
{
    vs_module *v = small_vae(1);
    vs_cem_attrs a;
    vs_error err;
    ck_assert_int_eq(vs_cem_attrs_parse("sleeve:+0,heel:-2:-1:1.5", v, 3, &a, &err), VS_OK);
    ck_assert_int_eq(a.n, 2);
    ck_assert_str_eq(a.a[0].name, "sleeve");
    ck_assert_int_eq(a.a[1].dim, 2);
    ck_assert_float_eq(a.a[1].sign, -1);
    ck_assert_float_eq(a.a[1].lo, -1);
    ck_assert_float_eq(a.a[1].hi, 1.5f);
    /* with codes given, latent attributes read them: sign clamp(z) */
    vs_scope_begin();
    vs_tensor *z = vs_tensor_from(VS_SHAPE(2, 3), (float[]){0.5f, 0, 3, -2, 0, -0.25f});
    vs_tensor *g = vs_cem_attrs_eval(&a, images(2, 3), z, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_float_eq_tol(g->data[0], 0.5f, 1e-6);
    ck_assert_float_eq_tol(g->data[1], -1.5f, 1e-6); /* -clamp(3, -1, 1.5) */
    ck_assert_float_eq_tol(g->data[2], -2, 1e-6);
    ck_assert_float_eq_tol(g->data[3], 0.25f, 1e-6);
    vs_scope_end();
    vs_cem_attrs_clear(&a);
    const char *bad[] = {"x", ":+1", "a:1", "a:+3", "a:+0:1", "a:+0:2:1", "a:+0:1:2:3", "a@/nonexistent/dir"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_ne(vs_cem_attrs_parse(bad[i], v, 3, &a, &err), VS_OK);
        ck_assert_int_eq(a.n, 0);
        ck_assert(strstr(err.msg, "attributes") != NULL);
    }
    vs_module_free(v);
}
END_TEST

START_TEST(test_pn_changes_class)
{
    vs_module *f = classifier(30, 2), *v = small_vae(3);
    scale_params(v, 3); /* a decoder whose images vary over the latent box */
    vs_module_explainee e = {f, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_cem_attrs a;
    vs_error err;
    ck_assert_int_eq(vs_cem_attrs_parse("a:+0,b:-1", v, 3, &a, &err), VS_OK);
    vs_cem_opts o;
    vs_cem_opts_init(&o);
    o.searches = 4, o.pn_iters = 100, o.pn_step = 0.5f, o.gamma = 1, o.beta_pn = 0.1f, o.eta = 0.1f, o.nu = 0.1f;
    vs_scope_begin();
    vs_tensor *x = images(4, 4);
    vs_cem_pn pn[4];
    ck_assert_int_eq(vs_cem_maf_pn(&fn, &a, x, &o, pn, &err), VS_OK);
    int found = 0;
    for (int b = 0; b < 4; b++) {
        ck_assert_int_eq(pn[b].t0, predict(f, x->data + b * 16));
        if (!pn[b].found) continue;
        found++;
        ck_assert_int_ne(pn[b].cls, pn[b].t0);
        ck_assert_int_eq(predict(f, pn[b].x), pn[b].cls); /* the PN is of another class */
        double d = 0;
        vs_tensor *mu = vs_vae_encode(v, vs_slice(x, 0, b, b + 1), &err);
        for (int j = 0; j < 3; j++) {
            ck_assert(fabsf(pn[b].z[j]) <= o.latent_box + 1e-6f);
            d += (pn[b].z[j] - mu->data[j]) * (pn[b].z[j] - mu->data[j]);
        }
        ck_assert_float_eq_tol(pn[b].latent_dist, sqrt(d), 1e-4);
        ck_assert_float_eq_tol(pn[b].g[0], pn[b].z[0], 1e-6);
        ck_assert_float_eq_tol(pn[b].g[1], -pn[b].z[1], 1e-6);
        char text[128];
        vs_cem_pn_text(&a, &pn[b], 0.0f, text, sizeof text);
        ck_assert(strlen(text) > 0);
    }
    ck_assert_int_gt(found, 0);
    for (int b = 0; b < 4; b++) vs_cem_pn_clear(&pn[b]);
    vs_scope_end();
    vs_cem_attrs_clear(&a);
    vs_module_free(f);
    vs_module_free(v);
}
END_TEST

START_TEST(test_pp_keeps_class)
{
    vs_module *f = classifier(5, 5);
    vs_module_explainee e = {f, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_cem_opts o;
    vs_cem_opts_init(&o);
    o.searches = 3, o.pp_iters = 40, o.pp_step = 0.05f;
    vs_error err;
    int32_t seg[3 * 16];
    for (int b = 0; b < 3; b++)
        for (int p = 0; p < 16; p++) seg[b * 16 + p] = (p / 4) / 2 * 2 + (p % 4) / 2; /* four 2x2 quadrants */
    for (int with_seg = 0; with_seg < 2; with_seg++) {
        vs_scope_begin();
        vs_tensor *x = images(3, 6);
        vs_cem_pp pp[3];
        ck_assert_int_eq(vs_cem_maf_pp(&fn, NULL, x, with_seg ? seg : NULL, &o, pp, &err), VS_OK);
        for (int b = 0; b < 3; b++) {
            ck_assert_int_eq(pp[b].n_segments, with_seg ? 4 : 16);
            ck_assert_int_ge(pp[b].n_features, 1);
            ck_assert_int_le(pp[b].n_features, pp[b].n_segments);
            ck_assert_int_eq(predict(f, pp[b].x), pp[b].t0); /* PP accuracy 1 by construction */
            uint8_t kept[16] = {0};
            for (int64_t k = 0; k < pp[b].n_features; k++) kept[pp[b].order[k]] = 1;
            for (int p = 0; p < 16; p++) ck_assert_float_eq(pp[b].x[p], kept[with_seg ? seg[p] : p] ? x->data[b * 16 + p] : 0);
            for (int64_t k = 1; k < pp[b].n_segments; k++) ck_assert(pp[b].mask[pp[b].order[k - 1]] >= pp[b].mask[pp[b].order[k]]);
            vs_cem_pp_clear(&pp[b]);
        }
        vs_scope_end();
    }
    /* bad segments are refused with a message */
    int32_t bad[16] = {0};
    bad[3] = 99;
    vs_scope_begin();
    vs_cem_pp pp1[1];
    ck_assert_int_eq(vs_cem_maf_pp(&fn, NULL, images(1, 7), bad, &o, pp1, &err), VS_ERR_ARG);
    ck_assert(strstr(err.msg, "segment") != NULL);
    vs_scope_end();
    vs_module_free(f);
}
END_TEST

START_TEST(test_pixel_cem_one_sided)
{
    vs_module *f = classifier(20, 8);
    vs_module_explainee e = {f, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_cem_opts o;
    vs_cem_opts_init(&o);
    o.searches = 4, o.pp_iters = 50, o.pp_step = 0.05f;
    vs_error err;
    vs_scope_begin();
    vs_rng r;
    vs_rng_seed(&r, 9);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(4, 1, 4, 4), &r, 0, 0.5f);
    float out[64];
    int64_t cls[4], t0[4];
    for (int b = 0; b < 4; b++) t0[b] = predict(f, x->data + b * 16);
    ck_assert_int_eq(vs_cem_pixel(&fn, x, true, &o, out, cls, &err), VS_OK);
    for (int i = 0; i < 64; i++) ck_assert(out[i] >= x->data[i] - 1e-6f && out[i] <= 1 + 1e-6f); /* only additions */
    int changed = 0;
    for (int b = 0; b < 4; b++)
        if (cls[b] != t0[b]) {
            changed++;
            ck_assert_int_eq(predict(f, out + b * 16), cls[b]);
        }
    ck_assert_int_gt(changed, 0);
    ck_assert_int_eq(vs_cem_pixel(&fn, x, false, &o, out, cls, &err), VS_OK);
    for (int i = 0; i < 64; i++) ck_assert(out[i] <= x->data[i] + 1e-6f && out[i] >= -1e-6f); /* only removals */
    for (int b = 0; b < 4; b++) ck_assert_int_eq(predict(f, out + b * 16), t0[b]);
    vs_scope_end();
    vs_module_free(f);
}
END_TEST

START_TEST(test_correlation_and_margin)
{
    float up[5] = {0.1f, 0.2f, 0.3f, 0.5f, 0.9f}, down[5] = {0.9f, 0.5f, 0.3f, 0.2f, 0.1f}, flat[4] = {1, 1, 1, 1};
    ck_assert_float_eq_tol(vs_cem_pp_correlation(up, 5), -1, 1e-9);
    ck_assert_float_eq_tol(vs_cem_pp_correlation(down, 5), 1, 1e-9);
    ck_assert(isnan(vs_cem_pp_correlation(up, 2)));
    ck_assert(isnan(vs_cem_pp_correlation(flat, 4)));
    vs_cem_opts o;
    vs_cem_opts_init(&o);
    ck_assert_float_eq(o.kappa, 5);
    ck_assert_float_eq(o.gamma, 100);
    ck_assert_int_eq(o.searches, 9);
    ck_assert_int_eq(o.pn_iters, 1000);
    ck_assert_int_eq(o.pp_iters, 100);
}
END_TEST

START_TEST(test_vae_probes)
{
    vs_module *v = small_vae(11);
    vs_dataset *d = vs_dataset_new(VS_DATA_IMAGES, "probe");
    d->n = 40, d->n_classes = 1, d->ndim = 3, d->dim = 16;
    memcpy(d->shape, img, sizeof img);
    d->X = malloc(40 * 16 * sizeof(float));
    d->y = calloc(40, sizeof(int64_t));
    vs_rng r;
    vs_rng_seed(&r, 12);
    for (int i = 0; i < 40 * 16; i++) d->X[i] = (float)vs_rng_uniform(&r);
    double off, gap;
    float active[3];
    vs_error err;
    ck_assert_int_eq(vs_vae_offdiag_score(v, d, NULL, 40, &off, active, &err), VS_OK);
    ck_assert(off >= 0 && off <= 1);
    for (int j = 0; j < 3; j++) ck_assert(active[j] >= 0);
    /* factors equal to latent 1's mean: found as latent 1, with a positive gap */
    float fac[40];
    vs_scope_begin();
    vs_tensor *mu = vs_vae_encode(v, vs_tensor_from(VS_SHAPE(40, 1, 4, 4), d->X), &err);
    for (int i = 0; i < 40; i++) fac[i] = mu->data[i * 3 + 1];
    vs_scope_end();
    int64_t best;
    float corr;
    ck_assert_int_eq(vs_vae_factor_score(v, d, NULL, 40, fac, 1, &gap, &best, &corr, &err), VS_OK);
    ck_assert_int_eq(best, 1);
    ck_assert_float_eq_tol(corr, 1, 1e-5);
    ck_assert(gap > 0 && gap <= 1);
    char path[512];
    snprintf(path, sizeof path, "%s/versus_test_cem_traversal.png", vs_test_tmpdir());
    ck_assert_int_eq(vs_vae_traversal_png(v, NULL, 3, img, (int64_t[]){2, 0}, 2, 5, 3.0f, 2, path, &err), VS_OK);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_gt(sb.st_size, 50);
    remove(path);
    ck_assert_int_eq(vs_vae_traversal_png(v, NULL, 3, img, (int64_t[]){7}, 1, 5, 3.0f, 2, path, &err), VS_ERR_ARG);
    vs_dataset_free(d);
    vs_module_free(v);
}
END_TEST

START_TEST(test_dip_vae_conv_shapes)
{
    vs_rng r;
    vs_rng_seed(&r, 13);
    vs_error err;
    vs_module *v = vs_arch_dip_vae_conv(3, 32, 16, 5, &r, &err);
    ck_assert_ptr_nonnull(v);
    vs_module_train(v, false);
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 3, 32, 32), &r, 0, 1);
    const char *in = "x", *want[3] = {"mu", "logvar", "x_logits"};
    vs_tensor *outs[3];
    ck_assert_int_eq(vs_module_eval(v, 1, &in, &x, 3, want, outs, NULL, &err), VS_OK);
    ck_assert_int_eq(outs[0]->shape[1], 5);
    ck_assert_int_eq(outs[2]->ndim, 4);
    ck_assert_int_eq(outs[2]->shape[1], 3);
    ck_assert_int_eq(outs[2]->shape[3], 32);
    vs_tensor *d = vs_vae_decode(v, outs[0], 3, (int64_t[]){3, 32, 32}, &err);
    ck_assert_ptr_nonnull(d);
    for (int64_t i = 0; i < d->size; i++) ck_assert(d->data[i] > 0 && d->data[i] < 1);
    vs_scope_end();
    vs_module_free(v);
    ck_assert_ptr_null(vs_arch_dip_vae_conv(3, 28, 16, 5, &r, &err));
    ck_assert(strstr(err.msg, "multiple of 16") != NULL);
}
END_TEST

START_TEST(test_registry_methods)
{
    const vs_method *pn = vs_method_find("cem_pn"), *pp = vs_method_find("cem_pp");
    ck_assert_ptr_nonnull(pn);
    ck_assert_ptr_nonnull(pp);
    ck_assert_int_eq(pn->output, VS_OUTPUT_CONTRASTIVE);
    ck_assert_int_eq(pp->output, VS_OUTPUT_MASK);
    vs_module *f = classifier(5, 14);
    vs_module_explainee e = {f, NULL};
    vs_model_fn fn = vs_model_fn_from_module(&e);
    vs_method_opts *o = vs_method_opts_new(pp);
    vs_error err;
    ck_assert_int_eq(vs_method_opts_set(o, "iters", "20", &err), VS_OK);
    ck_assert_int_eq(vs_method_opts_set(o, "searches", "0", &err), VS_ERR_ARG);
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    vs_scope_begin();
    vs_tensor *x = images(2, 15), *m = NULL;
    ck_assert_int_eq(vs_explain(&fn, x, pp, o, &rq, &m, NULL, &err), VS_OK);
    for (int b = 0; b < 2; b++) {
        float kept[16];
        for (int p = 0; p < 16; p++) {
            ck_assert(m->data[b * 16 + p] == 0 || m->data[b * 16 + p] == 1);
            kept[p] = m->data[b * 16 + p] * x->data[b * 16 + p];
        }
        ck_assert_int_eq(predict(f, kept), predict(f, x->data + b * 16));
    }
    vs_scope_end();
    vs_method_opts_free(o);
    vs_module_free(f);
}
END_TEST

START_TEST(test_grid_png)
{
    float a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = (float)i / 16, b[i] = 1 - a[i];
    const float *cells[4] = {a, b, NULL, a};
    const char *titles[2] = {"original", "PN"}, *caps[4] = {"boot", "+heel", NULL, "x"};
    char path[512];
    snprintf(path, sizeof path, "%s/versus_test_cem_grid.png", vs_test_tmpdir());
    vs_error err;
    ck_assert_int_eq(vs_cem_grid_png(cells, 2, 2, 1, 4, 4, 3, titles, caps, path, &err), VS_OK);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    remove(path);
    ck_assert_int_eq(vs_cem_grid_png(cells, 0, 2, 1, 4, 4, 3, NULL, NULL, path, &err), VS_ERR_ARG);
}
END_TEST

static Suite *cem_suite(void)
{
    Suite *s = suite_create("cem");
    TCase *tc = vs_tcase(s, "cem", 120);
    tcase_add_test(tc, test_attrs_parse);
    tcase_add_test(tc, test_pn_changes_class);
    tcase_add_test(tc, test_pp_keeps_class);
    tcase_add_test(tc, test_pixel_cem_one_sided);
    tcase_add_test(tc, test_correlation_and_margin);
    tcase_add_test(tc, test_vae_probes);
    tcase_add_test(tc, test_dip_vae_conv_shapes);
    tcase_add_test(tc, test_registry_methods);
    tcase_add_test(tc, test_grid_png);
    return s;
}

VS_TEST_MAIN(cem_suite)
