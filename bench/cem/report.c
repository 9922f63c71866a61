/* bench/cem/report.c - the report of the CEM-MAF experiment: Table 6 (#PP features, PP accuracy,
 * PP correlation per method), the PNs (validity, attribute violations, proximity), the DIP-VAE
 * (accuracy of the classifier, ELBO, off-diagonal covariance mass), a bar figure of #PP features,
 * and the raw numbers ("versus-bench-cem/1"). */
#include "bench/cem/cem_bench.h"
#include "versus/versus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_key[VS_CEM_N_METHODS] = {"cemmaf", "lime", "gradcam", "lime_matched", "gradcam_matched"};
static const char *const method_name[VS_CEM_N_METHODS] = {"CEM-MAF", "LIME", "Grad-CAM", "LIME (top k of the PP)", "Grad-CAM (top k of the PP)"};

static vs_json *num(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    return isfinite(v) ? vs_json_new_number(strtod(buf, NULL)) : vs_json_new_null();
}

typedef struct stat2 {
    double mean, std;
    int64_t n;
} stat2;

/* Mean and standard deviation of the finite values of field f of method m over the images. */
static stat2 method_stat(const vs_cem_run *r, int m, int f)
{
    stat2 s = {0, 0, 0};
    for (int64_t i = 0; i < r->n; i++) {
        const vs_cem_method_row *row = &r->img[i].m[m];
        double v = f == 0 ? row->features : f == 1 ? row->accuracy : row->correlation;
        if (isfinite(v)) s.mean += v, s.n++;
    }
    if (s.n == 0) return (stat2){NAN, NAN, 0};
    s.mean /= (double)s.n;
    for (int64_t i = 0; i < r->n; i++) {
        const vs_cem_method_row *row = &r->img[i].m[m];
        double v = f == 0 ? row->features : f == 1 ? row->accuracy : row->correlation;
        if (isfinite(v)) s.std += (v - s.mean) * (v - s.mean);
    }
    s.std = s.n > 1 ? sqrt(s.std / (double)(s.n - 1)) : NAN;
    return s;
}

static double mean_of(const vs_cem_run *r, double (*get)(const vs_cem_image *))
{
    double s = 0;
    for (int64_t i = 0; i < r->n; i++) s += get(&r->img[i]);
    return r->n ? s / (double)r->n : NAN;
}
static double get_found(const vs_cem_image *im) { return im->pn_found; }
static double get_viol(const vs_cem_image *im) { return im->violations > 0; }
static double get_nviol(const vs_cem_image *im) { return im->violations; }
static double get_added(const vs_cem_image *im) { return im->added; }
static double get_ldist(const vs_cem_image *im) { return im->latent_dist; }
static double get_xdist(const vs_cem_image *im) { return im->input_dist; }
static double get_flip(const vs_cem_image *im) { return im->recon_flips; }

static vs_json *per_method(const vs_cem_run *r, int f)
{
    vs_json *o = vs_json_new_object();
    for (int m = 0; o && m < VS_CEM_N_METHODS; m++) vs_json_set(o, method_key[m], num(method_stat(r, m, f).mean));
    return o;
}

static vs_json *images_json(const vs_cem_run *r)
{
    vs_json *a = vs_json_new_array();
    for (int64_t i = 0; a && i < r->n; i++) {
        const vs_cem_image *im = &r->img[i];
        vs_json *o = vs_json_new_object();
        vs_json_set(o, "label", vs_json_new_int(im->label));
        vs_json_set(o, "predicted", vs_json_new_int(im->t0));
        vs_json_set(o, "pn_found", vs_json_new_bool(im->pn_found));
        vs_json_set(o, "pn_class", vs_json_new_int(im->pn_cls));
        vs_json_set(o, "pn_text", vs_json_new_string(im->text));
        vs_json_set(o, "pn_violations", vs_json_new_int(im->violations));
        vs_json_set(o, "pn_latent_distance", num(im->latent_dist));
        vs_json_set(o, "reconstruction_changes_class", vs_json_new_bool(im->recon_flips));
        vs_json *pf = vs_json_new_object(), *pa = vs_json_new_object();
        for (int m = 0; m < VS_CEM_N_METHODS; m++) {
            vs_json_set(pf, method_key[m], num(im->m[m].features));
            vs_json_set(pa, method_key[m], num(im->m[m].accuracy));
        }
        vs_json_set(o, "pp_features", pf);
        vs_json_set(o, "pp_accuracy", pa);
        vs_json_push(a, o);
    }
    return a;
}

static vs_json *settings_json(const vs_cem_experiment_opts *o, const vs_cem_run *r)
{
    vs_json *s = vs_json_new_object();
    const vs_cem_opts *c = &o->cem;
    vs_json_set(s, "attributes", vs_json_new_string(r->attr_spec));
    vs_json_set(s, "train_rows", vs_json_new_int(r->train->n));
    vs_json_set(s, "classifier", o->model_dir ? vs_json_new_string(o->model_dir) : vs_json_new_string("trained here"));
    vs_json_set(s, "vae", o->vae_dir ? vs_json_new_string(o->vae_dir) : vs_json_new_string("trained here"));
    vs_json_set(s, "clf_epochs", vs_json_new_int(o->clf_epochs));
    vs_json_set(s, "vae_epochs", vs_json_new_int(o->vae_epochs));
    vs_json_set(s, "dip", vs_json_new_string(o->dip == 2 ? "ii" : "i"));
    vs_json_set(s, "superpixels", vs_json_new_int(o->superpixels));
    vs_json_set(s, "lime_samples", vs_json_new_int(o->lime_samples));
    vs_json_set(s, "kappa", num(c->kappa));
    vs_json_set(s, "gamma", num(c->gamma));
    vs_json_set(s, "beta_pn", num(c->beta_pn));
    vs_json_set(s, "beta_pp", num(c->beta_pp));
    vs_json_set(s, "eta", num(c->eta));
    vs_json_set(s, "nu", num(c->nu));
    vs_json_set(s, "c0", num(c->c0));
    vs_json_set(s, "searches", vs_json_new_int(c->searches));
    vs_json_set(s, "pn_iters", vs_json_new_int(c->pn_iters));
    vs_json_set(s, "pp_iters", vs_json_new_int(c->pp_iters));
    vs_json_set(s, "pn_step", num(c->pn_step));
    vs_json_set(s, "pp_step", num(c->pp_step));
    vs_json_set(s, "fista", vs_json_new_bool(c->fista));
    vs_json_set(s, "seed", vs_json_new_int((int64_t)o->seed));
    return s;
}

/* Table 6's claims and PN validity against this run (CEM-MAF supplement Section 4).  The paper's figures
 * are for Fashion-MNIST's shoes and clothes; on synthetic data only the orderings are claimed. */
static void claims(vs_report *rep, vs_json *d, const vs_cem_experiment_opts *o, const vs_cem_run *r)
{
    const bool shoes = strcmp(o->data, "fashion-mnist-shoes") == 0, clothes = strcmp(o->data, "fashion-mnist-clothes") == 0;
    const stat2 acc = method_stat(r, VS_CEM_M_CEMMAF, 1), fc = method_stat(r, VS_CEM_M_CEMMAF, 0), fl = method_stat(r, VS_CEM_M_LIME, 0);
    const double cc = method_stat(r, VS_CEM_M_CEMMAF, 2).mean, cl = method_stat(r, VS_CEM_M_LIME, 2).mean, valid = mean_of(r, get_found);
    char m[4][160];
    snprintf(m[0], sizeof m[0], "CEM-MAF %.2f over %lld images", acc.mean, (long long)r->n);
    snprintf(m[1], sizeof m[1], "CEM-MAF %.1f, LIME %.1f", fc.mean, fl.mean);
    snprintf(m[2], sizeof m[2], "%.2f", valid);
    snprintf(m[3], sizeof m[3], "CEM-MAF %.3f, LIME %.3f", cc, cl);
    vs_report_table *t = vs_report_claims_table(rep, "Luss et al. 2022, CEM-MAF");
    vs_json *c = vs_json_new_array();
    vs_report_claim(t, c, "a pertinent positive keeps the class (PP accuracy, Table 6)", "100%", m[0],
                    acc.mean >= 1 ? VS_CLAIM_REPRODUCED : VS_CLAIM_NOT_REPRODUCED,
                    acc.mean >= 1 ? "by construction: segments are added until the class is back" : "some PPs did not bring the class back");
    vs_report_claim(t, c, "CEM-MAF's PPs keep far fewer features than LIME's (# PP features, Table 6)",
                    shoes ? "15.7 vs 194.1" : clothes ? "62.7 vs 226.2" : "fewer (no figure for this data)", m[1],
                    fc.mean * 2 < fl.mean ? VS_CLAIM_REPRODUCED : fc.mean < fl.mean ? VS_CLAIM_DIRECTION : VS_CLAIM_NOT_REPRODUCED,
                    fc.mean * 2 < fl.mean ? "fewer than half of LIME's positive features" : fc.mean < fl.mean ? "fewer, but not half" : "not fewer");
    vs_report_claim(t, c, "a pertinent negative changes the class (PN validity)", "not reported (the search's aim)", m[2],
                    valid >= 0.95 ? VS_CLAIM_REPRODUCED : VS_CLAIM_NOT_REPRODUCED,
                    "share of images whose PN is classified otherwise (here: >= 0.95); part of it can be the VAE's own reconstruction "
                    "already changing the class (reconstruction_flip_rate)");
    /* the correlation with the classifier's score drop: the more negative the better, on par within 0.05 */
    vs_report_claim(t, c, "CEM-MAF's PP order is best or on par with LIME's (PP correlation, Table 6)", shoes ? "-0.947 vs -0.800" : "best or on par", m[3],
                    isnan(cc) || isnan(cl) ? VS_CLAIM_NOT_MEASURED : cc <= cl + 0.05 ? VS_CLAIM_REPRODUCED : VS_CLAIM_NOT_REPRODUCED,
                    cc <= cl + 0.05 ? "CEM-MAF's correlation is within 0.05 of LIME's or better"
                                    : "LIME's order correlates better: its weights rank every pixel, CEM-MAF's PP is a short list");
    if (vs_json_set(d, "claims", c) != VS_OK) rep->oom = true;
}

vs_status vs_cem_report_build(const vs_cem_experiment_opts *o, const vs_cem_run *r, double wall, vs_report **out, vs_error *err)
{
    vs_report *rep = vs_report_new();
    if (!rep) return vs_error_set(err, VS_ERR_NOMEM, "cem: out of memory for the report");
    vs_report_heading(rep, 1, "CEM-MAF on %s", o->data);
    vs_report_paragraph(rep, "%lld test images explained (the first of the subset), %s features; wall time %.0f s of which %.0f s training.",
                        (long long)r->n, o->superpixels > 0 ? "SLIC superpixel" : "pixel", wall, r->train_seconds);
    if (o->command) vs_report_paragraph(rep, "Command: `%s`, commit `%s`", o->command, vs_build_commit());

    static const char *const h6[] = {"method", "# PP feat", "PP acc", "PP corr", "seconds"};
    static const vs_better b6[] = {VS_BETTER_NONE, VS_BETTER_LOWER, VS_BETTER_HIGHER, VS_BETTER_LOWER, VS_BETTER_NONE};
    vs_report_table *t = vs_report_table_new(rep, "Table 6: pertinent positives against LIME and Grad-CAM (mean (std) over the images; "
                                                  "PP corr: Spearman correlation of the t0 probability's rank with the number of features kept, -1 best)",
                                             5, h6, b6);
    for (int m = 0; t && m < VS_CEM_N_METHODS; m++) {
        int row = vs_report_table_row(t);
        vs_report_text(t, row, 0, method_name[m]);
        stat2 f = method_stat(r, m, 0), a = method_stat(r, m, 1), c = method_stat(r, m, 2);
        vs_report_number(t, row, 1, f.mean, f.std, 1);
        vs_report_number(t, row, 2, a.mean, NAN, 2);
        if (c.n) vs_report_number(t, row, 3, c.mean, c.std, 3);
        else vs_report_missing(t, row, 3, "fewer than 3 features on every image");
        if (m <= VS_CEM_M_GRADCAM) vs_report_number(t, row, 4, r->explain_seconds[m], NAN, 0);
        else vs_report_missing(t, row, 4, "the full run's order, cut to CEM-MAF's count");
    }
    if (t) {
        bool skip[VS_CEM_N_METHODS] = {false, false, false, true, true};
        vs_report_rank(t, 1, skip);
        vs_report_rank(t, 3, skip);
    }
    vs_report_paragraph(rep, "The paper's Table 6: clothes CEM-MAF 62.7 / 100 / -.766, LIME 226.2 / 90 / -.787, Grad-CAM 344.0 / 100 / .077; "
                             "shoes CEM-MAF 15.7 / 100 / -.947, LIME 194.1 / 100 / -.800, Grad-CAM 202.3 / 100 / -.500 (# PP feat / PP acc %% / PP corr).");

    static const char *const hp[] = {"PN validity", "with violations", "attributes added", "latent |z-z0|", "input |x-x0|", "D(z0) changes class"};
    static const vs_better bp[] = {VS_BETTER_HIGHER, VS_BETTER_LOWER, VS_BETTER_NONE, VS_BETTER_LOWER, VS_BETTER_LOWER, VS_BETTER_NONE};
    vs_report_table *tp = vs_report_table_new(rep, "Pertinent negatives (Eq. 1): share of images whose PN changes the class, share with an attribute "
                                                   "decreased, mean attributes increased, mean distances, share whose reconstruction alone changes the class",
                                              6, hp, bp);
    if (tp) {
        int row = vs_report_table_row(tp);
        vs_report_number(tp, row, 0, mean_of(r, get_found), NAN, 2);
        vs_report_number(tp, row, 1, mean_of(r, get_viol), NAN, 2);
        vs_report_number(tp, row, 2, mean_of(r, get_added), NAN, 2);
        vs_report_number(tp, row, 3, mean_of(r, get_ldist), NAN, 3);
        vs_report_number(tp, row, 4, mean_of(r, get_xdist), NAN, 3);
        vs_report_number(tp, row, 5, mean_of(r, get_flip), NAN, 2);
    }
    static const char *const hv[] = {"classifier test accuracy", "DIP-VAE test ELBO (nats)", "off-diagonal covariance mass", "active latents"};
    static const vs_better bv[] = {VS_BETTER_HIGHER, VS_BETTER_HIGHER, VS_BETTER_LOWER, VS_BETTER_NONE};
    vs_report_table *tv = vs_report_table_new(rep, "The models: Table 5 classifier, Table 4 DIP-VAE (off-diagonal mass: sum_{i!=j} C_ij^2 / sum C_ij^2 of "
                                                   "C = Cov[mu] over the test images; active: Var[mu_j] > 0.01)",
                                              4, hv, bv);
    if (tv) {
        int row = vs_report_table_row(tv);
        vs_report_number(tv, row, 0, r->clf_accuracy, NAN, 4);
        if (isfinite(r->vae_elbo)) vs_report_number(tv, row, 1, r->vae_elbo, NAN, 1);
        else vs_report_missing(tv, row, 1, "VAE loaded from a directory");
        vs_report_number(tv, row, 2, r->offdiag, NAN, 4);
        vs_report_number(tv, row, 3, (double)r->n_active, NAN, 0);
    }
    if (r->factors) {
        static const char *const hf[] = {"factor", "latent", "correlation"};
        vs_report_table *tf = vs_report_table_new(rep, "Known factors (synthetic data): the latent most correlated with each; supervised score = mean gap "
                                                       "between the largest and the second largest |correlation|",
                                                  3, hf, NULL);
        for (int a = 0; tf && a < VS_CEM_SYNTH_FACTORS; a++) {
            int row = vs_report_table_row(tf);
            char l[32];
            snprintf(l, sizeof l, "z%lld", (long long)r->factor_latent[a]);
            vs_report_text(tf, row, 0, vs_cem_synth_factor_names[a]);
            vs_report_text(tf, row, 1, l);
            vs_report_number(tf, row, 2, r->factor_corr[a], NAN, 3);
        }
        vs_report_paragraph(rep, "Supervised disentanglement (correlation gap): %.3f.", r->factor_gap);
    }
    vs_report_item(rep, "Attributes g_i: %s (latent J, + identity, - negated).", r->attr_spec);
    if (o->out_dir) {
        vs_report_item(rep, "traversal.png: the VAE decoder's output varying the most active latents from -3 to 3 (Figs. 5-6).");
        vs_report_item(rep, "figure7.png: original, CEM-MAF PN (class and attributes added) and PP, the pixel CEM's PN and PP, LIME and Grad-CAM "
                            "(features with positive weight), as in Fig. 7.");
    }
    vs_report_figure *fg = vs_report_figure_new(rep, VS_FIGURE_BAR, "pp_features", "# PP features", "method", "features kept",
                                                "Mean features of the pertinent positive per method (Table 6)");
    if (fg) {
        static const char *const cats[3] = {"CEM-MAF", "LIME", "Grad-CAM"};
        float y[3];
        for (int m = 0; m < 3; m++) y[m] = (float)method_stat(r, m, 0).mean;
        vs_report_categories(fg, 3, cats);
        vs_report_series(fg, o->data, 3, NULL, y, NULL);
    }

    vs_json *d = vs_json_new_object();
    vs_json_set(d, "format", vs_json_new_string("versus-bench-cem/1"));
    vs_json_set(d, "data", vs_json_new_string(o->data));
    vs_json_set(d, "n_images", vs_json_new_int(r->n));
    vs_json_set(d, "wall_seconds", num(wall));
    vs_json_set(d, "train_seconds", num(r->train_seconds));
    vs_json_set(d, "command", o->command ? vs_json_new_string(o->command) : vs_json_new_null());
    vs_json_set(d, "commit", vs_json_new_string(vs_build_commit()));
    vs_json_set(d, "pp_features", per_method(r, 0));
    vs_json_set(d, "pp_accuracy", per_method(r, 1));
    vs_json_set(d, "pp_correlation", per_method(r, 2));
    vs_json_set(d, "pn_validity", num(mean_of(r, get_found)));
    vs_json_set(d, "pn_violation_rate", num(mean_of(r, get_viol)));
    vs_json_set(d, "pn_violations_mean", num(mean_of(r, get_nviol)));
    vs_json_set(d, "pn_attributes_added", num(mean_of(r, get_added)));
    vs_json_set(d, "pn_latent_distance", num(mean_of(r, get_ldist)));
    vs_json_set(d, "pn_input_distance", num(mean_of(r, get_xdist)));
    vs_json_set(d, "reconstruction_flip_rate", num(mean_of(r, get_flip)));
    vs_json_set(d, "classifier_test_accuracy", num(r->clf_accuracy));
    vs_json_set(d, "vae_test_elbo", num(r->vae_elbo));
    vs_json_set(d, "vae_offdiag", num(r->offdiag));
    vs_json_set(d, "vae_active_latents", vs_json_new_int(r->n_active));
    vs_json_set(d, "vae_factor_gap", num(r->factor_gap));
    vs_json *sec = vs_json_new_object();
    for (int m = 0; m <= VS_CEM_M_GRADCAM; m++) vs_json_set(sec, method_key[m], num(r->explain_seconds[m]));
    vs_json_set(d, "explain_seconds", sec);
    vs_json_set(d, "settings", settings_json(o, r));
    vs_json_set(d, "images", images_json(r));
    claims(rep, d, o, r);
    vs_report_set_data(rep, d);
    *out = rep;
    return VS_OK;
}
