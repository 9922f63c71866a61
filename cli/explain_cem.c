/* explain_cem.c - `versus explain cem`: CEM-MAF pertinent negatives and positives of the images of an
 * .npy file for a trained classifier and a trained VAE (the data manifold), printed as text
 * ("+heel +shoe mass") and written as OUT/pn.npy, OUT/pp.npy, OUT/explanation.json, OUT/cem.png. */
#include "cli/cem_cli.h"
#include "versus/versus.h"
#include "versus/cem.h"
#include "versus/superpixel.h"
#include "versus/vae.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt cem_opts[] = {
    {"model", 1, "trained classifier directory (versus train --arch cem-fashion --classes 5,7,9 ...)"},
    {"vae", 1, "trained VAE directory, the data manifold (versus train --arch dip-vae ...)"},
    {"input", 1, "images to explain: .npy [N,C,H,W], [C,H,W] or [H,W] in [0,1]"},
    {"attrs", 1, "attribute functions NAME:+J[:LO:HI] (latent J, + identity, - negated) or NAME@DIR (classifier), comma-separated (default: every latent, z0..)"},
    {"superpixels", 1, "PP over N SLIC superpixels (default 0: pixels)"},
    {"class-names", 1, "names of the classifier's classes, comma-separated"},
    {"out", 1, "output directory (pn.npy, pp.npy, explanation.json, cem.png)"},
    VS_CEM_CLI_OPTS,
    {NULL, 0, NULL},
};

/* The name of class k from "a,b,c" (or its number) into buf. */
static const char *class_name(const char *names, int64_t k, char *buf, size_t n)
{
    snprintf(buf, n, "%lld", (long long)k);
    for (int64_t i = 0; names && *names; i++) {
        const char *comma = strchr(names, ',');
        size_t len = comma ? (size_t)(comma - names) : strlen(names);
        if (i == k) {
            snprintf(buf, n, "%.*s", (int)(len < n - 1 ? len : n - 1), names);
            break;
        }
        if (!comma) break;
        names = comma + 1;
    }
    return buf;
}

/* Images of path as [N,C,H,W]. */
static vs_status read_images(const char *path, vs_tensor **x, vs_error *err)
{
    vs_tensor *t;
    vs_status st = vs_npy_read_finite(path, &t, err);
    if (st != VS_OK) return st;
    int64_t s[4];
    if (t->ndim == 2) s[0] = 1, s[1] = 1, s[2] = t->shape[0], s[3] = t->shape[1];
    else if (t->ndim == 3) s[0] = 1, s[1] = t->shape[0], s[2] = t->shape[1], s[3] = t->shape[2];
    else if (t->ndim == 4) memcpy(s, t->shape, sizeof s);
    else return vs_error_set(err, VS_ERR_SHAPE, "%s: expected images [N,C,H,W], [C,H,W] or [H,W], got %d dimensions", path, t->ndim);
    if (s[0] < 1 || t->size == 0) return vs_error_set(err, VS_ERR_SHAPE, "%s: no images (an empty array)", path);
    if (s[1] != 1 && s[1] != 3) return vs_error_set(err, VS_ERR_SHAPE, "%s: expected 1 or 3 channels, got %lld", path, (long long)s[1]);
    for (int64_t i = 0; i < t->size; i++)
        if (!(t->data[i] >= 0 && t->data[i] <= 1))
            return vs_error_set(err, VS_ERR_FORMAT, "%s: element %lld is %g; images must lie in [0,1]", path, (long long)i, (double)t->data[i]);
    *x = vs_reshape(t, 4, s);
    return VS_OK;
}

/* SLIC labels of every image of x into seg [N*dim] (NULL when n_sp == 0). */
static vs_status segment(const vs_tensor *x, int n_sp, int32_t **seg, vs_error *err)
{
    *seg = NULL;
    if (n_sp <= 0) return VS_OK;
    int64_t N = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], dim = c * h * w;
    *seg = malloc((size_t)(N * dim) * sizeof **seg);
    int32_t *lab = malloc((size_t)(h * w) * sizeof *lab);
    vs_status st = *seg && lab ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    vs_slic_options so = vs_slic_defaults();
    so.n_segments = n_sp;
    for (int64_t b = 0; b < N && st == VS_OK; b++) {
        int nl;
        st = vs_slic(x->data + b * dim, (int)c, (int)h, (int)w, &so, lab, &nl, err);
        for (int64_t ch = 0; st == VS_OK && ch < c; ch++) memcpy(*seg + b * dim + ch * h * w, lab, (size_t)(h * w) * sizeof *lab);
    }
    free(lab);
    if (st != VS_OK) free(*seg), *seg = NULL;
    return st;
}

/* The attribute spec of every latent of a k-dimensional code: "z0:+0,z1:+1,...". */
static void every_latent(int64_t k, char *spec, size_t n)
{
    spec[0] = '\0';
    for (int64_t j = 0; j < k && j < VS_CEM_MAX_ATTRS; j++) {
        size_t len = strlen(spec);
        snprintf(spec + len, n - len, "%sz%lld:+%lld", j ? "," : "", (long long)j, (long long)j);
    }
}

/* One image's entry of explanation.json. */
static vs_json *explanation_item(const vs_cem_attrs *attrs, const vs_cem_pn *pn, const vs_cem_pp *pp, const char *c0, const char *c1,
                                 const char *text)
{
    vs_json *it = vs_json_new_object();
    vs_json_set(it, "class", vs_json_new_string(c0));
    vs_json_set(it, "pn_found", vs_json_new_bool(pn->found));
    vs_json_set(it, "pn_class", vs_json_new_string(c1));
    vs_json_set(it, "pn_text", vs_json_new_string(text));
    vs_json_set(it, "pn_latent_distance", vs_json_new_number(pn->latent_dist));
    vs_json_set(it, "pn_violations", vs_json_new_number(pn->violations));
    vs_json_set(it, "pn_c", vs_json_new_number(pn->c));
    vs_json_set(it, "reconstruction_changes_class", vs_json_new_bool(pn->recon_flips));
    vs_json_set(it, "pp_features", vs_json_new_number((double)pp->n_features));
    vs_json_set(it, "pp_segments", vs_json_new_number((double)pp->n_segments));
    vs_json_set(it, "pp_relaxed_valid", vs_json_new_bool(pp->relaxed_valid));
    vs_json *ga = vs_json_new_array(), *g0 = vs_json_new_array();
    for (int i = 0; i < attrs->n; i++) vs_json_push(g0, vs_json_new_number(pn->g0[i])), vs_json_push(ga, vs_json_new_number(pn->g[i]));
    vs_json_set(it, "attributes_x0", g0);
    vs_json_set(it, "attributes_pn", ga);
    return it;
}

/* OUT/explanation.json, pn.npy, pp.npy and cem.png (originals, PNs and PPs of x's images); 0 or 1. */
static int write_outputs(const char *out, const vs_json *doc, const vs_tensor *pn_t, const vs_tensor *pp_t, const float **cells,
                         const char *const *caps, const vs_tensor *x)
{
    static const char *const titles[3] = {"original", "PN", "PP"};
    char path[4096];
    vs_error err;
    snprintf(path, sizeof path, "%s/explanation.json", out);
    if (vs_json_write_file(path, doc, &err) != VS_OK) return vs_fail("%s", err.msg);
    snprintf(path, sizeof path, "%s/pn.npy", out);
    if (vs_npy_write(path, pn_t, &err) != VS_OK) return vs_fail("%s", err.msg);
    snprintf(path, sizeof path, "%s/pp.npy", out);
    if (vs_npy_write(path, pp_t, &err) != VS_OK) return vs_fail("%s", err.msg);
    snprintf(path, sizeof path, "%s/cem.png", out);
    if (vs_cem_grid_png(cells, (int)x->shape[0], 3, (int)x->shape[1], (int)x->shape[2], (int)x->shape[3], 3, titles, caps, path, &err) !=
        VS_OK)
        return vs_fail("%s", err.msg);
    printf("wrote %s: explanation.json, pn.npy, pp.npy, cem.png\n", out);
    return 0;
}

static int explain_run(vs_module *clf, vs_module *vae, vs_tensor *x, const vs_args *a, const vs_cem_opts *o)
{
    const char *out = vs_args_get(a, "out"), *names = vs_args_get(a, "class-names");
    int64_t n_sp;
    int rc = vs_args_int(a, "superpixels", 0, 0, 100000, &n_sp);
    if (rc) return rc;
    if (n_sp > x->shape[2] * x->shape[3])
        return vs_usage_error("explain", "--superpixels %lld: the images have only %lld pixels", (long long)n_sp,
                              (long long)(x->shape[2] * x->shape[3]));
    vs_error err;
    vs_module_explainee e = {clf, NULL};
    vs_model_fn f = vs_model_fn_from_module(&e);
    vs_tensor *mu = vs_vae_encode(vae, vs_slice(x, 0, 0, 1), &err);
    if (!mu) return vs_fail("%s", err.msg);
    int64_t k = mu->shape[1];
    char spec_all[VS_CEM_MAX_ATTRS * 16];
    every_latent(k, spec_all, sizeof spec_all);
    const char *spec = vs_args_get(a, "attrs");
    vs_cem_attrs attrs;
    if (vs_cem_attrs_parse(spec ? spec : spec_all, vae, k, &attrs, &err) != VS_OK) return vs_usage_error("explain", "%s", err.msg);
    int64_t N = x->shape[0], dim = x->size / N;
    vs_cem_pn *pn = calloc((size_t)N, sizeof *pn);
    vs_cem_pp *pp = calloc((size_t)N, sizeof *pp);
    int32_t *seg = NULL;
    rc = !pn || !pp ? vs_fail("out of memory") : 0;
    if (!rc && segment(x, (int)n_sp, &seg, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (!rc && vs_cem_maf_pn(&f, &attrs, x, o, pn, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (!rc && vs_cem_maf_pp(&f, &attrs, x, seg, o, pp, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    struct stat sb;
    if (!rc && mkdir(out, 0777) != 0 && (stat(out, &sb) != 0 || !S_ISDIR(sb.st_mode))) rc = vs_fail("cannot create the directory %s", out);
    vs_json *doc = rc ? NULL : vs_json_new_object(), *items = rc ? NULL : vs_json_new_array();
    vs_tensor *pn_t = rc ? NULL : vs_tensor_new(x->ndim, x->shape), *pp_t = rc ? NULL : vs_tensor_new(x->ndim, x->shape);
    const float **cells = rc ? NULL : calloc((size_t)(3 * N), sizeof *cells);
    char **caps = rc ? NULL : calloc((size_t)(3 * N), sizeof *caps);
    if (!rc && (!doc || !items || !pn_t || !pp_t || !cells || !caps)) rc = vs_fail("out of memory");
    for (int64_t b = 0; !rc && b < N; b++) {
        char text[512], c0[64], c1[64];
        vs_cem_pn_text(&attrs, &pn[b], o->attr_tol, text, sizeof text);
        class_name(names, pn[b].t0, c0, sizeof c0);
        class_name(names, pn[b].cls, c1, sizeof c1);
        printf("image %lld: %s; PN %s: %s (latent distance %.3f%s); PP keeps %lld of %lld %s\n", (long long)b, c0, pn[b].found ? c1 : "not found",
               text, (double)pn[b].latent_dist, pn[b].violations ? ", attributes decreased" : "", (long long)pp[b].n_features,
               (long long)pp[b].n_segments, seg ? "superpixels" : "pixels");
        memcpy(pn_t->data + b * dim, pn[b].x, (size_t)dim * sizeof(float));
        memcpy(pp_t->data + b * dim, pp[b].x, (size_t)dim * sizeof(float));
        vs_json_push(items, explanation_item(&attrs, &pn[b], &pp[b], c0, c1, text));
        cells[3 * b] = x->data + b * dim, cells[3 * b + 1] = pn[b].x, cells[3 * b + 2] = pp[b].x;
        caps[3 * b] = strdup(c0), caps[3 * b + 1] = strdup(pn[b].found ? c1 : "-"), caps[3 * b + 2] = strdup(c0);
    }
    if (!rc) {
        vs_json *an = vs_json_new_array();
        for (int i = 0; i < attrs.n; i++) vs_json_push(an, vs_json_new_string(attrs.a[i].name));
        vs_json_set(doc, "attributes", an);
        vs_json_set(doc, "explanations", items), items = NULL;
        rc = write_outputs(out, doc, pn_t, pp_t, cells, (const char *const *)caps, x);
    }
    for (int64_t i = 0; caps && i < 3 * N; i++) free(caps[i]);
    free(caps);
    free(cells);
    vs_json_free(doc);
    vs_json_free(items);
    for (int64_t b = 0; b < N; b++) {
        if (pn) vs_cem_pn_clear(&pn[b]);
        if (pp) vs_cem_pp_clear(&pp[b]);
    }
    free(pn);
    free(pp);
    free(seg);
    vs_cem_attrs_clear(&attrs);
    return rc;
}

int vs_explain_cem(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("explain", cem_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos != 1) return vs_usage_error("explain", "unexpected argument '%s'", a.pos[1]);
    const char *model = vs_args_get(&a, "model"), *vae_dir = vs_args_get(&a, "vae"), *input = vs_args_get(&a, "input");
    if (!model || !vae_dir || !input || !vs_args_get(&a, "out")) return vs_usage_error("explain", "--model, --vae, --input and --out are required");
    vs_cem_opts o;
    if ((rc = vs_cli_cem_opts(&a, &o))) return rc;
    vs_error err;
    vs_scope_begin();
    vs_tensor *x = NULL;
    vs_module *clf = vs_model_load(model, NULL, &err), *vae = NULL;
    if (!clf) rc = vs_fail("%s", err.msg);
    if (!rc && clf->kind == VS_MODULE_COMPOSITE && vs_composite_task(clf) && strcmp(vs_composite_task(clf), "classifier") != 0)
        rc = vs_fail("%s: a %s model, not a classifier (--model is the classifier CEM explains; the VAE goes to --vae)", model,
                     vs_composite_task(clf));
    if (!rc && !(vae = vs_model_load(vae_dir, NULL, &err))) rc = vs_fail("%s", err.msg);
    if (!rc && vs_composite_task(vae) && strcmp(vs_composite_task(vae), "vae") != 0) rc = vs_fail("%s: not a VAE (task %s)", vae_dir, vs_composite_task(vae));
    if (!rc && read_images(input, &x, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (!rc) rc = explain_run(clf, vae, x, &a, &o);
    vs_scope_end();
    vs_module_free(clf);
    vs_module_free(vae);
    return rc;
}
