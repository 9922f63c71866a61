/* bench/ganmex/report.c - the report of a GANMEX run: the settings, Table 1 (baseline
 * distances), Table 2 (attribution metrics per method and baseline), the perturbation curves, the
 * cascading randomisation (Fig. 3G), the raw numbers ("versus-bench-ganmex/1") and the Fig. 2 PNG
 * grids of inputs, baselines and saliency maps. */
#include "bench/ganmex/ganmex_bench.h"
#include "versus/versus.h"
#include "versus/json.h"
#include "versus/picture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZOOM 3
#define PERCENTILE 99.0

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* ---- the raw numbers ---------------------------------------------------------------------------------- */

static vs_json *results_json(const gx_run *run)
{
    const vs_ganmex_experiment_opts *o = run->o;
    vs_json *j = vs_json_new_object(), *dist = vs_json_new_object(), *aopc = vs_json_new_object(), *t2 = vs_json_new_object();
    vs_json *secs = vs_json_new_object(), *casc = vs_json_new_object(), *color = o->colored ? vs_json_new_object() : vs_json_new_null();
    vs_json *edge = vs_json_new_object();
    bool ok = j && dist && aopc && t2 && secs && casc && color && edge;
    static const char *const dist_names[GX_N_BASELINES + 1] = {"zero", "mdts", "ganmex", "random"};
    for (int k = 0; ok && k <= GX_N_BASELINES; k++)
        ok = vs_json_set(dist, dist_names[k], num(run->dist[k])) == VS_OK && vs_json_set(edge, dist_names[k], num(run->diff_invloc[k])) == VS_OK;
    ok = ok && vs_json_set(dist, "intra_class", num(run->d_intra)) == VS_OK && vs_json_set(dist, "inter_class", num(run->d_inter)) == VS_OK;
    static const char *const metric_names[6] = {"aopc_l", "aopc_all", "gini", "faithfulness", "monotonicity", "inverse_localization"};
    for (int m = 0; ok && m < GX_N_METHODS; m++) {
        vs_json *a = vs_json_new_object(), *t = vs_json_new_object();
        for (int b = 0; a && t && b < GX_N_BASELINES; b++) {
            const gx_cell *c = &run->cell[m][b];
            if (!c->done) continue;
            const char *bn = m == GX_EG ? "target_class_samples" : dist_names[b];
            vs_json *cell = vs_json_new_object(), *curve = vs_json_new_array();
            double v[6] = {c->aopc_l, c->aopc_all, c->gini, c->faith, c->mono, c->invloc};
            for (int k = 0; cell && k < 6; k++) vs_json_set(cell, metric_names[k], num(v[k]));
            for (int64_t k = 0; curve && k < c->n_points; k++) vs_json_push(curve, num(c->curve[k]));
            vs_json_set(cell, "curve", curve);
            vs_json_set(cell, "n", vs_json_new_int(c->n));
            vs_json_set(cell, "n_faithfulness", vs_json_new_int(c->n_faith));
            ok = vs_json_set(a, bn, vs_json_new_number(c->aopc_l)) == VS_OK && vs_json_set(t, bn, cell) == VS_OK && ok;
        }
        ok = vs_json_set(aopc, vs_gx_method_names[m], a) == VS_OK && vs_json_set(t2, vs_gx_method_names[m], t) == VS_OK && ok;
    }
    static const char *const model_names[4] = {"classifier", "ganmex", "standalone", "nosim"};
    for (int k = 0; ok && k < 4; k++) ok = vs_json_set(secs, model_names[k], num(run->train_seconds[k])) == VS_OK;
    static const char *const cascade_names[GX_N_CASCADE] = {"zero", "ganmex", "ganmex_retrained", "standalone"};
    for (int c = 0; ok && c < GX_N_CASCADE + 2; c++) { /* then the re-trained generator's target-class rate and S's collapse */
        vs_json *a = vs_json_new_array();
        const double *v = c < GX_N_CASCADE ? run->cascade[c] : c == GX_N_CASCADE ? run->cascade_target : run->cascade_mode;
        for (int l = 0; a && l < GX_N_LAYERS; l++) vs_json_push(a, num(v[l]));
        ok = vs_json_set(casc, c < GX_N_CASCADE ? cascade_names[c] : c == GX_N_CASCADE ? "ganmex_retrained_target_rate" : "randomised_top_class_share",
                         a) == VS_OK;
    }
    if (ok && o->colored)
        ok = vs_json_set(color, "with_sim", num(run->color_with_sim)) == VS_OK &&
             vs_json_set(color, "without_sim", num(run->color_without_sim)) == VS_OK &&
             vs_json_set(color, "rows", vs_json_new_int(run->color_rows)) == VS_OK &&
             vs_json_set(color, "only_with_sim", vs_json_new_int(run->color_only[0])) == VS_OK &&
             vs_json_set(color, "only_without_sim", vs_json_new_int(run->color_only[1])) == VS_OK &&
             vs_json_set(color, "mcnemar_p", num(run->color_p)) == VS_OK;
    for (int w = 0; ok && o->colored && w < 2; w++) { /* the colours the generators draw */
        vs_json *a = vs_json_new_array();
        for (int k = 0; a && k < 3; k++) vs_json_push(a, num(run->color_drawn[w][k]));
        ok = vs_json_set(color, w ? "drawn_rgb_without_sim" : "drawn_rgb_with_sim", a) == VS_OK;
    }
    ok = ok && vs_json_set(j, "format", vs_json_new_string("versus-bench-ganmex/1")) == VS_OK;
    ok = ok && vs_json_set(j, "data", vs_json_new_string(o->spec)) == VS_OK;
    ok = ok && vs_json_set(j, "command", o->command ? vs_json_new_string(o->command) : vs_json_new_null()) == VS_OK;
    ok = ok && vs_json_set(j, "commit", vs_json_new_string(vs_build_commit())) == VS_OK;
    ok = ok && vs_json_set(j, "seed", vs_json_new_int(o->seed)) == VS_OK;
    ok = ok && vs_json_set(j, "n_explain", vs_json_new_int(run->n_explain)) == VS_OK;
    ok = ok && vs_json_set(j, "classifier_accuracy", num(run->clf_accuracy)) == VS_OK;
    ok = ok && vs_json_set(j, "target_class_rate", num(run->target_rate)) == VS_OK;
    ok = ok && vs_json_set(j, "target_class_rate_standalone", num(run->target_rate_standalone)) == VS_OK;
    ok = ok && vs_json_set(j, "target_class_rate_nosim", num(run->target_rate_nosim)) == VS_OK;
    ok = ok && vs_json_set(j, "distance", dist) == VS_OK;
    dist = NULL;
    ok = ok && vs_json_set(j, "difference_inverse_localization", edge) == VS_OK;
    edge = NULL;
    ok = ok && vs_json_set(j, "aopc", aopc) == VS_OK;
    aopc = NULL;
    ok = ok && vs_json_set(j, "table2", t2) == VS_OK;
    t2 = NULL;
    ok = ok && vs_json_set(j, "cascade_rank", casc) == VS_OK;
    casc = NULL;
    ok = ok && vs_json_set(j, "color_kept", color) == VS_OK;
    color = NULL;
    ok = ok && vs_json_set(j, "train_seconds", secs) == VS_OK;
    secs = NULL;
    vs_json_free(dist), vs_json_free(aopc), vs_json_free(t2), vs_json_free(casc), vs_json_free(color), vs_json_free(secs), vs_json_free(edge);
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

/* ---- Fig. 2 --------------------------------------------------------------------------------------------- */

/* The tile of an image [c,h,w] in [0,1]. */
static vs_image *image_tile(const gx_run *run, const float *x) { return vs_image_from_float(x, (int)run->c, (int)run->h, (int)run->w); }

/* The heatmap of a map [c,h,w] summed over channels, scaled by its 99th percentile. */
static vs_image *map_tile(const gx_run *run, const float *a)
{
    int h = (int)run->h, w = (int)run->w;
    float *s = malloc((size_t)(h * w) * sizeof *s), scale = 0;
    if (!s) return NULL;
    vs_attr_channel_sum(a, (int)run->c, h, w, s);
    vs_error err;
    vs_image *im = vs_attr_scale(s, (size_t)(h * w), PERCENTILE, &scale, &err) == VS_OK ? vs_heatmap_rgb(s, h, w, scale) : NULL;
    free(s);
    return im;
}

static vs_status put(vs_grid *g, int row, int col, vs_image *tile, const char *caption, vs_error *err)
{
    vs_status st = tile ? vs_grid_put(g, row, col, tile, err) : vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (st == VS_OK && caption) st = vs_grid_caption(g, row, col, caption, err);
    vs_image_free(tile);
    return st;
}

/* Fig. 2A: per row the input, its three baselines and IG, DeepLIFT, Occlusion with each baseline. */
static vs_status grid_pairs(const gx_run *run, const char *path, vs_error *err)
{
    int64_t dim = run->c * run->h * run->w;
    int cols = 1 + GX_N_BASELINES + 3 * GX_N_BASELINES;
    vs_grid *g = vs_grid_new(run->n_grid, cols, (int)run->w, (int)run->h, ZOOM, 4, 2);
    if (!g) return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    vs_status st = VS_OK;
    char cap[64];
    for (int i = 0; i < run->n_grid && st == VS_OK; i++) {
        snprintf(cap, sizeof cap, "%lld->%lld", (long long)run->grid_from[i], (long long)run->grid_to[i]);
        st = put(g, i, 0, image_tile(run, run->grid_x + i * dim), cap, err);
        for (int b = 0; b < GX_N_BASELINES && st == VS_OK; b++)
            st = put(g, i, 1 + b, image_tile(run, run->grid_b + (i * GX_N_BASELINES + b) * dim), vs_gx_baseline_labels[b], err);
        for (int m = 0; m < 3 && st == VS_OK; m++)
            for (int b = 0; b < GX_N_BASELINES && st == VS_OK; b++) {
                snprintf(cap, sizeof cap, "%s %s", m == 0 ? "IG" : m == 1 ? "DL" : "Occ", vs_gx_baseline_labels[b]);
                st = put(g, i, 1 + GX_N_BASELINES + m * GX_N_BASELINES + b, map_tile(run, run->grid_a + ((i * 3 + m) * GX_N_BASELINES + b) * dim),
                         cap, err);
            }
    }
    if (st == VS_OK) st = vs_png_write(vs_grid_image(g), path, err);
    vs_grid_free(g);
    return st;
}

/* Fig. 2B: misclassified images, the GANMEX baseline of the true class, and the maps of "why the
 * predicted class and not the true one". */
static vs_status grid_misclassified(const gx_run *run, const char *path, vs_error *err)
{
    int64_t dim = run->c * run->h * run->w;
    vs_grid *g = vs_grid_new(run->n_mis, 5, (int)run->w, (int)run->h, ZOOM, 4, 2);
    if (!g) return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    vs_status st = VS_OK;
    char cap[64];
    for (int i = 0; i < run->n_mis && st == VS_OK; i++) {
        snprintf(cap, sizeof cap, "pred %lld true %lld", (long long)run->grid_from[GX_GRID_ROWS + i], (long long)run->grid_to[GX_GRID_ROWS + i]);
        st = put(g, i, 0, image_tile(run, run->mis_x + i * dim), cap, err);
        if (st == VS_OK) st = put(g, i, 1, image_tile(run, run->mis_b + i * dim), "GANMEX", err);
        for (int m = 0; m < 3 && st == VS_OK; m++) st = put(g, i, 2 + m, map_tile(run, run->mis_a + (i * 3 + m) * dim), m == 0 ? "IG" : m == 1 ? "DL" : "Occ", err);
    }
    if (st == VS_OK) st = vs_png_write(vs_grid_image(g), path, err);
    vs_grid_free(g);
    return st;
}

/* ---- the page ------------------------------------------------------------------------------------------ */

static void settings(const gx_run *run, vs_report *r)
{
    const vs_ganmex_experiment_opts *o = run->o;
    vs_report_heading(r, 1, "GANMEX on %s", o->spec);
    vs_report_paragraph(r, "Shih et al., *GANMEX: one-vs-one attributions guided by GAN-generated counterfactual explanation "
                           "baselines*.  Each of the first %lld test images is explained one-vs-one: why S's predicted class c0 and "
                           "not its runner-up ct, the score S_c0 - S_ct, with the zero baseline, MDTS (the nearest training image "
                           "of class ct) and the GANMEX baseline G(x, ct).",
                        (long long)run->n_explain);
    vs_report_item(r, "classifier S: `ganmex-mnist` (GANMEX A.1), test accuracy **%.4f** (the paper: 99.3%% on MNIST after 50 "
                      "epochs on 60k images)", run->clf_accuracy);
    vs_report_item(r, "GANMEX: StarGAN generator 16 wide with 2 residual blocks and a PatchGAN critic (StarGAN: 64 wide, 6 blocks), "
                      "WGAN-GP, %lld epochs of batch %lld, Adam lr G %g / D %g (beta1 0.5); task options `%s`; the authors "
                      "train 100k steps with G 2e-5, D 1e-4: scaled to minutes of 2 shared CPU cores",
                   (long long)o->gan_epochs, (long long)o->gan_batch, o->g_lr, o->d_lr, o->gan_opts ? o->gan_opts : "defaults");
    vs_report_item(r, "target-class rate (S assigns G(x, c) to c, every c but the label, over the explained images): **%.3f**; "
                      "stand-alone GAN (D_cls trained jointly): %.3f",
                   run->target_rate, run->target_rate_standalone);
    vs_report_item(r, "IG and expected gradients with %d points (the paper: 200), Occlusion-1, DeepSHAP with the single baseline; "
                      "perturbation curves flip %lld features per point to 1 - x, AOPC_L over the first %lld features; "
                      "faithfulness and monotonicity on the first %lld images, cascading randomisation on the first %lld",
                   o->ig_steps, (long long)o->per_step, (long long)o->aopc_features, (long long)o->n_faith, (long long)o->n_cascade);
    if (isfinite(run->cascade[GX_CASCADE_RETRAINED][0]))
        vs_report_item(r, "cascading randomisation, GANMEX re-trained %lld steps against each randomised S: share of its baselines "
                          "the randomised S assigns to the target class %.2f, %.2f, %.2f, %.2f (output, FC, CNN2, CNN1 randomised); "
                          "share of the explained inputs in the randomised S's most frequent class %.2f, %.2f, %.2f, %.2f",
                       (long long)o->cascade_steps, run->cascade_target[0], run->cascade_target[1], run->cascade_target[2],
                       run->cascade_target[3], run->cascade_mode[0], run->cascade_mode[1], run->cascade_mode[2], run->cascade_mode[3]);
    if (o->colored)
        vs_report_item(r, "colour kept (dominant channel of G(x, ct) equals x's, ct = S's runner-up, over all %lld test rows): "
                          "with L_sim **%.3f**, without L_sim **%.3f**; rows where only one keeps it: with %lld, without %lld "
                          "(McNemar's exact test, two-sided p = %.2g); target-class rate without L_sim %.3f (explained rows); "
                          "baselines drawn red/green/blue with L_sim %.2f/%.2f/%.2f, without %.2f/%.2f/%.2f",
                       (long long)run->color_rows, run->color_with_sim, run->color_without_sim, (long long)run->color_only[0],
                       (long long)run->color_only[1], run->color_p, run->target_rate_nosim, run->color_drawn[0][0], run->color_drawn[0][1],
                       run->color_drawn[0][2], run->color_drawn[1][0], run->color_drawn[1][1], run->color_drawn[1][2]);
    char secs[4][32]; /* a model loaded without a record of its training has no time: said in words, never "nan" */
    for (int k = 0; k < 4; k++)
        if (isfinite(run->train_seconds[k])) snprintf(secs[k], sizeof secs[k], "%.0f", run->train_seconds[k]);
        else snprintf(secs[k], sizeof secs[k], "not recorded");
    vs_report_item(r, "training seconds as recorded when trained (2 cores shared with other jobs): classifier %s, GANMEX %s, "
                      "stand-alone GAN %s, GAN without L_sim %s",
                   secs[0], secs[1], secs[2], secs[3]);
    if (o->command) vs_report_item(r, "command: `%s`", o->command);
    vs_report_item(r, "commit: `%s`", vs_build_commit());
}

static void table1(const gx_run *run, vs_report *r)
{
    static const char *const head[] = {"D_intra", "D_inter", "GANMEX", "MDTS", "random", "zero"};
    vs_report_table *t = vs_report_table_new(r, "Table 1: mean L2 distance of the input to each baseline, and sampled intra- and "
                                                "inter-class distances (pixels in [0,1]); the paper on MNIST: 8.96, 10.32, 7.17, 7.18, "
                                                "10.32, 9.28",
                                             6, head, (vs_better[]){VS_BETTER_NONE, VS_BETTER_NONE, VS_BETTER_LOWER, VS_BETTER_LOWER,
                                                                    VS_BETTER_LOWER, VS_BETTER_LOWER});
    if (!t) return;
    int row = vs_report_table_row(t);
    double v[6] = {run->d_intra, run->d_inter, run->dist[GX_GANMEX], run->dist[GX_MDTS], run->dist[GX_N_BASELINES], run->dist[GX_ZERO]};
    for (int k = 0; k < 6; k++) vs_report_number(t, row, k, v[k], NAN, 2);
    vs_report_paragraph(r, "Where x - b lies (path methods multiply it by the gradient): inverse localisation of x - b, mean |x - b| in "
                           "the %lld edge columns on each side over the centre's, GANMEX %.3f, MDTS %.3f, random %.3f, zero %.3f.  "
                           "With digits in the centre and empty edges the zero baseline's x - b is x itself and vanishes at the edges, "
                           "so Table 2's inverse localisation favours it by construction (the paper measures it on SVHN, whose edges "
                           "hold neighbouring digits and background).",
                        (long long)(run->w / GX_EDGE_FRAC), run->diff_invloc[GX_GANMEX], run->diff_invloc[GX_MDTS],
                        run->diff_invloc[GX_N_BASELINES], run->diff_invloc[GX_ZERO]);
}

static void table2(const gx_run *run, vs_report *r)
{
    static const char *const head[] = {"method", "baseline", "AOPC_L", "AOPC_all", "Gini", "faithfulness", "monotonicity", "inv. localisation"};
    vs_report_table *t = vs_report_table_new(r, "Table 2: attribution metrics per method and baseline (means over the explained images)", 8,
                                             head,
                                             (vs_better[]){VS_BETTER_NONE, VS_BETTER_NONE, VS_BETTER_HIGHER, VS_BETTER_HIGHER, VS_BETTER_HIGHER,
                                                           VS_BETTER_HIGHER, VS_BETTER_HIGHER, VS_BETTER_LOWER});
    if (!t) return;
    for (int m = 0; m < GX_N_METHODS; m++)
        for (int b = 0; b < GX_N_BASELINES; b++) {
            const gx_cell *c = &run->cell[m][b];
            if (!c->done) continue;
            int row = vs_report_table_row(t);
            vs_report_text(t, row, 0, vs_gx_method_labels[m]);
            vs_report_text(t, row, 1, m == GX_EG ? "target-class samples" : vs_gx_baseline_labels[b]);
            double v[6] = {c->aopc_l, c->aopc_all, c->gini, c->faith, c->mono, c->invloc};
            for (int k = 0; k < 6; k++) vs_report_number(t, row, 2 + k, v[k], NAN, 3);
        }
    for (int k = 2; k < 8; k++) vs_report_rank(t, k, NULL);
}

static void figures(const gx_run *run, vs_report *r)
{
    for (int m = 0; m < GX_N_METHODS; m++) {
        char name[64], title[128];
        snprintf(name, sizeof name, "curve_%s", vs_gx_method_names[m]);
        snprintf(title, sizeof title, "Perturbation curves: %s", vs_gx_method_labels[m]);
        vs_report_figure *f = vs_report_figure_new(r, VS_FIGURE_LINE, name, title, "features flipped", "S_c0 - S_ct",
                                                   "Mean explained score as the most-attributed features are flipped (Fig. 3A); "
                                                   "a faster drop is a better map.");
        for (int b = 0; f && b < GX_N_BASELINES; b++) {
            const gx_cell *c = &run->cell[m][b];
            if (!c->done) continue;
            float *x = malloc((size_t)c->n_points * sizeof *x), *y = malloc((size_t)c->n_points * sizeof *y);
            for (int64_t k = 0; x && y && k < c->n_points; k++) x[k] = (float)(k * run->o->per_step), y[k] = (float)c->curve[k];
            if (x && y) vs_report_series(f, m == GX_EG ? "target-class samples" : vs_gx_baseline_labels[b], (size_t)c->n_points, x, y, NULL);
            free(x), free(y);
        }
    }
    vs_report_figure *f = vs_report_figure_new(r, VS_FIGURE_LINE, "cascade", "Cascading randomisation (Fig. 3G)",
                                               "layers randomised (output, FC, CNN2, CNN1)", "Spearman rank of |IG| with the original",
                                               "IG maps of the first images (ranked together) as S's layers are redrawn from the output "
                                               "down, the same draws for every series; zero, GANMEX and stand-alone GAN: baselines fixed "
                                               "before the randomisation; GANMEX re-trained: the generator re-trained against each "
                                               "randomised S and its baselines regenerated (appendix D).  Lower: the map depends more "
                                               "on the weights.");
    static const char *const names[GX_N_CASCADE] = {"zero", "GANMEX (fixed)", "GANMEX re-trained", "stand-alone GAN"};
    for (int c = 0; f && c < GX_N_CASCADE; c++) {
        if (!isfinite(run->cascade[c][0])) continue;
        float x[GX_N_LAYERS], y[GX_N_LAYERS];
        for (int l = 0; l < GX_N_LAYERS; l++) x[l] = (float)(l + 1), y[l] = (float)run->cascade[c][l];
        vs_report_series(f, names[c], GX_N_LAYERS, x, y, NULL);
    }
}

vs_status vs_gx_report(const gx_run *run, vs_report **out, vs_error *err)
{
    vs_report *r = vs_report_new();
    if (!r) return vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    settings(run, r);
    vs_report_heading(r, 2, "Baseline distances (appendix B)");
    table1(run, r);
    vs_report_heading(r, 2, "Attribution metrics (appendix C)");
    table2(run, r);
    figures(run, r);
    vs_status st = VS_OK;
    if (run->o->figures_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/fig2_pairs.png", run->o->figures_dir);
        st = run->n_grid > 0 ? grid_pairs(run, path, err) : VS_OK;
        snprintf(path, sizeof path, "%s/fig2_misclassified.png", run->o->figures_dir);
        if (st == VS_OK && run->n_mis > 0) st = grid_misclassified(run, path, err);
        vs_report_heading(r, 2, "Saliency maps (Fig. 2)");
        vs_report_paragraph(r, "`fig2_pairs.png`: per row the input (c0->ct), its zero, MDTS and GANMEX baselines, then IG, DeepLIFT "
                               "and Occlusion-1 with each baseline (red positive, blue negative).  `fig2_misclassified.png`: "
                               "misclassified test images, the GANMEX baseline of the true class and the maps of why S predicts "
                               "its class and not the true one.");
    }
    vs_json *data = results_json(run);
    if (!data && st == VS_OK) st = vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    if (data) vs_gx_claims(run, r, data);
    vs_report_set_data(r, data);
    if (st != VS_OK) {
        vs_report_free(r);
        return st;
    }
    *out = r;
    return VS_OK;
}
