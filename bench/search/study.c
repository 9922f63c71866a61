/* bench/search/study.c - the convergence study of the search experiment (Hamilton et al. 2022,
 * Figs. 5 and 10; bench/search/search_bench.h): the MSE curves of every order-2 Shapley-Taylor
 * estimator on random 15-player games, and evals_ratio_15, the evaluations Sundararajan et al.'s
 * per-pair permutation estimator needs over Kernel-Direct's for the same MSE, per kernel budget and
 * as their geometric mean, into the report and results.json. */
#include "bench/search/search_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The kernels' budgets (of the 32768 coalitions of 15 players) and the permutation estimators'
 * (up to 2.56M evaluations: the per-pair estimator's MSE falls as 1 / evaluations, so it reaches the
 * kernels' MSE at their largest budget only near a million). */
static const int64_t kernel_budgets[] = {250, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10000, 15000, 20000};
static const int64_t perm_budgets[] = {500, 1000, 2000, 5000, 10000, 20000, 40000, 80000, 160000, 320000, 640000, 1280000, 2560000};
enum {
    NK = sizeof kernel_budgets / sizeof kernel_budgets[0],
    NP = sizeof perm_budgets / sizeof perm_budgets[0],
    NB = NK > NP ? NK : NP,
    E = VS_STUDY_ESTIMATORS
};

/* The curves of one kind of game: every estimator on `games` games in two halves (seeds seed and
 * seed + 1, so the halves are different games); all = the mean over every game, half[h] over each
 * half, game[(e * games + g) * NB + b] each game's own point. */
typedef struct curves {
    int64_t games;
    vs_study_point all[E][NB], half[2][E][NB];
    vs_study_point *game;
} curves;

/* The estimators a reading of the networks needs: the per-pair baseline and the two kernels. */
static bool in_readings(int e) { return e == VS_STUDY_KERNEL_DIRECT || e == VS_STUDY_KERNEL_LEVERAGE || e == VS_STUDY_PERMUTATION_UNCACHED; }

static vs_status curves_run(vs_study_game kind, int64_t games, uint64_t seed, bool every_estimator, curves *c, vs_error *err)
{
    const int64_t g0 = (games + 1) / 2, g1 = games - g0;
    c->games = games;
    free(c->game);
    c->game = calloc((size_t)(E * games * NB), sizeof *c->game);
    if (!c->game) return vs_error_set(err, VS_ERR_NOMEM, "search study: out of memory");
    vs_status st = VS_OK;
    for (int e = 0; e < E && st == VS_OK; e++) {
        if (!every_estimator && !in_readings(e)) continue;
        const bool kernel = e < VS_STUDY_PERMUTATION;
        const int64_t *b = kernel ? kernel_budgets : perm_budgets;
        const int nb = kernel ? NK : NP;
        vs_study_point *pg = malloc((size_t)(games * nb) * sizeof *pg);
        if (!pg) {
            st = vs_error_set(err, VS_ERR_NOMEM, "search study: out of memory");
            break;
        }
        st = vs_st2_convergence(kind, 15, (int)g0, seed, (vs_study_estimator)e, b, nb, c->half[0][e], pg, err);
        if (st == VS_OK && g1 > 0) st = vs_st2_convergence(kind, 15, (int)g1, seed + 1, (vs_study_estimator)e, b, nb, c->half[1][e], pg + g0 * nb, err);
        for (int k = 0; k < nb && st == VS_OK; k++) {
            if (g1 == 0) c->half[1][e][k] = c->half[0][e][k];
            double w0 = (double)g0 / (double)games, w1 = 1 - w0;
            c->all[e][k].evaluations = w0 * c->half[0][e][k].evaluations + w1 * c->half[1][e][k].evaluations;
            c->all[e][k].mse = w0 * c->half[0][e][k].mse + w1 * c->half[1][e][k].mse;
        }
        for (int64_t g = 0; g < games && st == VS_OK; g++)
            for (int k = 0; k < nb; k++) c->game[(e * games + g) * NB + k] = pg[g * nb + k];
        free(pg);
    }
    return st;
}

static const vs_study_point *game_curve(const curves *c, int e, int64_t g) { return c->game + (e * c->games + g) * NB; }

/* Per-game ratio of slow over fast at the fast estimator's budget k (k < 0: every budget): the
 * geometric mean over the games (and budgets) of each game's own ratio at equal MSE, extrapolation
 * allowed; *extrapolated counts the points read off an extrapolated end. */
static double per_game_ratio(const curves *c, int slow, int ns, int fast, int k, int *extrapolated)
{
    double s = 0;
    int n = 0, x = 0;
    for (int64_t g = 0; g < c->games; g++) {
        const vs_study_point *f = game_curve(c, fast, g);
        int ex = 0;
        double r = k < 0 ? vs_evals_ratio(game_curve(c, slow, g), ns, f, NK, true, &ex) : vs_evals_ratio(game_curve(c, slow, g), ns, f + k, 1, true, &ex);
        if (isnan(r)) continue;
        s += log(r) * (k < 0 ? NK : 1);
        n += k < 0 ? NK : 1;
        x += ex;
    }
    if (extrapolated) *extrapolated = x;
    return n ? exp(s / n) : NAN;
}

/* One row per kernel budget of one kind of game into the report and json (an array). */
static void per_budget_rows(vs_report *rep, const char *game, const curves *c, vs_json *json)
{
    const int U = VS_STUDY_PERMUTATION_UNCACHED, D = VS_STUDY_KERNEL_DIRECT, L = VS_STUDY_KERNEL_LEVERAGE;
    static const char *const header[] = {"kernel budget", "Kernel-Direct evaluations", "its MSE", "per-pair evaluations for that MSE", "ratio",
                                         "read off", "per-game ratio (geometric mean)", "ratio, leverage kernel"};
    char caption[200];
    snprintf(caption, sizeof caption,
             "%s: evaluations the per-pair permutation estimator (uncached) needs for Kernel-Direct's MSE at each of its budgets, and "
             "their ratio (> 1: the kernel needs fewer)",
             game);
    vs_report_table *t = vs_report_table_new(rep, caption, 8, header, NULL);
    for (int k = 0; k < NK; k++) {
        bool ex = false, exl = false;
        const vs_study_point *p = &c->all[D][k];
        double need = vs_study_evals_at(c->all[U], NP, p->mse, &ex), needl = vs_study_evals_at(c->all[U], NP, c->all[L][k].mse, &exl);
        int gx = 0;
        double rg = per_game_ratio(c, U, NP, D, k, &gx);
        char how[64];
        snprintf(how, sizeof how, "%s; per game: %d of %lld extrapolated", ex ? "extrapolated" : "interpolated", gx, (long long)c->games);
        int r = t ? vs_report_table_row(t) : -1;
        if (r >= 0) {
            vs_report_number(t, r, 0, (double)kernel_budgets[k], NAN, 0);
            vs_report_number(t, r, 1, p->evaluations, NAN, 0);
            vs_report_number(t, r, 2, p->mse, NAN, -2);
            vs_report_number(t, r, 3, need, NAN, 0);
            vs_report_number(t, r, 4, need / p->evaluations, NAN, 2);
            vs_report_text(t, r, 5, how);
            vs_report_number(t, r, 6, rg, NAN, 2);
            vs_report_number(t, r, 7, needl / c->all[L][k].evaluations, NAN, 2);
        }
        vs_json *o = vs_json_new_object();
        if (!o) continue;
        vs_json_set(o, "budget", vs_json_new_int(kernel_budgets[k]));
        vs_json_set(o, "evaluations", vs_search_number_or_null(p->evaluations));
        vs_json_set(o, "mse", vs_search_number_or_null(p->mse));
        vs_json_set(o, "permutation_evaluations", vs_search_number_or_null(need));
        vs_json_set(o, "ratio", vs_search_number_or_null(need / p->evaluations));
        vs_json_set(o, "extrapolated", vs_json_new_bool(ex));
        vs_json_set(o, "ratio_per_game", vs_search_number_or_null(rg));
        vs_json_set(o, "per_game_extrapolated", vs_json_new_int(gx));
        vs_json_set(o, "ratio_leverage", vs_search_number_or_null(needl / c->all[L][k].evaluations));
        vs_json_set(o, "ratio_leverage_extrapolated", vs_json_new_bool(exl));
        if (json) vs_json_push(json, o);
        else vs_json_free(o);
    }
}

/* The MSE curves of one kind of game as a figure and as json. */
static vs_json *curve_figure(vs_report *rep, const char *game, const char *title, const curves *c)
{
    char name[64];
    snprintf(name, sizeof name, "convergence_%s", game);
    vs_report_figure *f = vs_report_figure_new(rep, VS_FIGURE_LINE, name, title, "log10 evaluations of v", "MSE of the pair indices",
                                               "Mean squared error against the exact indices as the evaluations grow (lower is better); "
                                               "the paper's claim is that the kernel curves lie left of the permutation curves.");
    if (f) f->log_y = true;
    vs_json *g = vs_json_new_object();
    for (int e = 0; e < E; e++) {
        int nb = e < VS_STUDY_PERMUTATION ? NK : NP;
        float x[NB], y[NB];
        vs_json *ex = vs_json_new_array(), *ey = vs_json_new_array();
        for (int b = 0; b < nb; b++) {
            x[b] = (float)log10(c->all[e][b].evaluations);
            y[b] = (float)c->all[e][b].mse;
            if (ex) vs_json_push(ex, vs_json_new_number(c->all[e][b].evaluations));
            if (ey) vs_json_push(ey, vs_search_number_or_null(c->all[e][b].mse));
        }
        if (f) vs_report_series(f, vs_study_estimator_name((vs_study_estimator)e), (size_t)nb, x, y, NULL);
        vs_json *curve = vs_json_new_object();
        if (curve) {
            vs_json_set(curve, "evaluations", ex);
            vs_json_set(curve, "mse", ey);
        } else {
            vs_json_free(ex);
            vs_json_free(ey);
        }
        if (g) vs_json_set(g, vs_study_estimator_name((vs_study_estimator)e), curve);
        else vs_json_free(curve);
    }
    return g;
}

/* The other readings of A.2's networks, one change each: their ratios into the report and json. */
static vs_status readings(vs_report *rep, int64_t games, uint64_t seed, const vs_search_study_ratios *r0, curves *c, vs_json *json,
                          vs_search_study_ratios *out, vs_error *err)
{
    static const char *const header[] = {"reading of the networks", "per pair, uncached / kernel", "per-game ratios",
                                         "points extrapolated", "per pair, uncached / leverage kernel"};
    static const struct {
        vs_study_game kind;
        const char *key, *name;
    } rows[4] = {
        {VS_STUDY_MLP_BIASED, "biased", "biases uniform in +-1/sqrt(fan_in) (PyTorch's nn.Linear default)"},
        {VS_STUDY_MLP_NORMAL, "glorot_normal", "Glorot-normal weights"},
        {VS_STUDY_MLP_BOOLEAN, "boolean_input", "x = 1: v(S) = f(indicator of S)"},
        {VS_STUDY_MLP_SHALLOW, "one_hidden_layer", "one hidden layer, 15-20-1"},
    };
    const int U = VS_STUDY_PERMUTATION_UNCACHED, D = VS_STUDY_KERNEL_DIRECT, L = VS_STUDY_KERNEL_LEVERAGE;
    vs_report_table *t = vs_report_table_new(rep, "evals_ratio_15 under other readings of the ReLU networks, one change each from the "
                                                  "reading above (same games otherwise, same budgets, every kernel point covered)",
                                             5, header, NULL);
    int r = t ? vs_report_table_row(t) : -1;
    if (r >= 0) {
        vs_report_text(t, r, 0, "the reading above: zero biases, Glorot-uniform, x ~ N(0, I), 15-20-20-1");
        vs_report_number(t, r, 1, r0->mlp, NAN, 2);
        vs_report_number(t, r, 2, r0->mlp_per_game, NAN, 2);
        vs_report_text(t, r, 3, "see above");
        vs_report_number(t, r, 4, r0->mlp_leverage, NAN, 2);
    }
    vs_status st = VS_OK;
    for (int k = 0; k < 4 && st == VS_OK; k++) {
        st = curves_run(rows[k].kind, games, seed, false, c, err);
        if (st != VS_OK) break;
        int x = 0;
        double ratio = vs_evals_ratio(c->all[U], NP, c->all[D], NK, true, &x), pg = per_game_ratio(c, U, NP, D, -1, NULL),
               lev = vs_evals_ratio(c->all[U], NP, c->all[L], NK, true, NULL);
        out->readings[k] = ratio;
        r = t ? vs_report_table_row(t) : -1;
        if (r >= 0) {
            vs_report_text(t, r, 0, rows[k].name);
            vs_report_number(t, r, 1, ratio, NAN, 2);
            vs_report_number(t, r, 2, pg, NAN, 2);
            vs_report_number(t, r, 3, x, NAN, 0);
            vs_report_number(t, r, 4, lev, NAN, 2);
        }
        vs_json *o = vs_json_new_object();
        if (!o) continue;
        vs_json_set(o, "reading", vs_json_new_string(rows[k].name));
        vs_json_set(o, "ratio_per_pair_uncached", vs_search_number_or_null(ratio));
        vs_json_set(o, "ratio_per_pair_uncached_extrapolated_points", vs_json_new_int(x));
        vs_json_set(o, "ratio_per_pair_uncached_per_game", vs_search_number_or_null(pg));
        vs_json_set(o, "ratio_leverage_per_pair_uncached", vs_search_number_or_null(lev));
        vs_json *mse[4] = {vs_json_new_array(), vs_json_new_array(), vs_json_new_array(), vs_json_new_array()};
        for (int b = 0; b < NK; b++) {
            if (mse[0]) vs_json_push(mse[0], vs_search_number_or_null(c->all[D][b].mse));
            if (mse[1]) vs_json_push(mse[1], vs_search_number_or_null(c->all[L][b].mse));
        }
        for (int b = 0; b < NP; b++) {
            if (mse[2]) vs_json_push(mse[2], vs_search_number_or_null(c->all[U][b].mse));
            if (mse[3]) vs_json_push(mse[3], vs_search_number_or_null(c->all[U][b].evaluations));
        }
        vs_json_set(o, "mse_kernel_direct", mse[0]);
        vs_json_set(o, "mse_kernel_leverage", mse[1]);
        vs_json_set(o, "mse_permutation_uncached", mse[2]);
        vs_json_set(o, "evaluations_permutation_uncached", mse[3]);
        if (json) vs_json_set(json, rows[k].key, o);
        else vs_json_free(o);
    }
    return st;
}

vs_status vs_search_study(vs_report *rep, int64_t games, uint64_t seed, vs_json *obj, vs_search_study_ratios *out, vs_error *err)
{
    static const char *const names[2] = {"mlp", "product"};
    static const char *const titles[2] = {"random 3-layer ReLU networks (Fig. 5)", "random Boolean product games (Fig. 10)"};
    const int U = VS_STUDY_PERMUTATION_UNCACHED, D = VS_STUDY_KERNEL_DIRECT, L = VS_STUDY_KERNEL_LEVERAGE;
    *out = (vs_search_study_ratios){NAN, NAN, NAN, NAN, NAN, {NAN, NAN, NAN, NAN}};
    vs_report_heading(rep, 2, "Convergence of the Shapley-Taylor estimators (Figs. 5, 10)");
    vs_report_paragraph(
        rep,
        "%lld random games of each kind, 15 players (A.2: ReLU networks with Glorot initialization and 20-wide hidden layers; "
        "Boolean product games, every product of the inputs weighted U(0, 10)); MSE of the 105 pair indices against exact values "
        "from all 2^15 coalitions (the 15 singletons are exact in every estimator here, v({i}) - v(empty), so the MSE over all 120 "
        "order-2 indices is this one times 105/120 for every estimator and no ratio changes); the x axis is log10 of the "
        "evaluations.  The kernels and the memoised permutation estimators count distinct coalitions; `permutation-uncached` "
        "estimates every pair on its own and pays four evaluations per draw, the baseline as the paper describes it "
        "(Sundararajan et al.'s estimator, \"estimating each interaction term separately\"; evals_ratio_15 is measured against "
        "it); `permutation-per-pair` is the same with a memo, `permutation` shares each permutation's prefixes among all pairs.  "
        "Kernel-Direct enumerates the sizes its budget covers and gives each other size its share of the rest (drawn without "
        "replacement); `kernel-leverage` takes the sizes' shares from the leverage scores (n + 1 - s for size s; an addition to "
        "the paper, after Musco & Witter 2024).",
        (long long)games);
    vs_report_paragraph(
        rep,
        "Protocol, fixed before measuring: the kernels' 14 budgets 250-20000 (the paper states neither Fig. 5's budgets nor its x "
        "range; these are the budgets of the earlier runs, kept); the permutation estimators run to 2.56M evaluations, so that "
        "their curves reach the kernels' smallest MSE; every Kernel-Direct point counts.  The per-pair estimator's evaluations for "
        "a given MSE are read off its curve on the log-log line between neighbouring points; where the kernel's MSE lies above "
        "the curve's first point (436 evaluations, one draw per pair: it cannot run on less), on the line through its first two "
        "points, marked `extrapolated` (on the product games the kernel's small budgets lie far above it: that line is followed "
        "down to a few dozen evaluations, which is why those rows and the halves of the games differ most).  The MSE is averaged over the games (the mean of the games' MSEs: Fig. 5 draws one MSE "
        "curve per estimator, and the ratio read off such a figure is the horizontal distance between those curves); the mean is "
        "dominated by the games where the kernel's MSE is largest, so the geometric mean of each game's own ratio (read off its "
        "own curves, scale-free) is shown beside it.  The games are one reading of A.2, which leaves open the biases, uniform or "
        "normal weights, the input and the depth: zero biases (Glorot and Bengio's scheme sets them to zero), Glorot-uniform, "
        "v(S) = f(x masked by S, zeros elsewhere) at x ~ N(0, I), three weight layers 15-20-20-1; the other readings are measured "
        "below, one change each.");
    static const char *const header[] = {"game", "per pair, uncached / kernel", "first half of the games", "second half",
                                         "per-game ratios", "earlier measure: points outside the permutation curve left out",
                                         "per pair, memoised / kernel", "shared permutations / kernel", "kernel-weighting / kernel",
                                         "per pair, uncached / leverage kernel"};
    vs_report_table *t = vs_report_table_new(rep, "Evaluations needed for equal MSE of the order-2 Shapley-Taylor indices, 15 players: the "
                                                  "geometric mean over all 14 Kernel-Direct budgets (250-20000) of the ratios in the "
                                                  "tables below, mean MSE over the games (all of them, each half), the same over each "
                                                  "game's own ratios, and the earlier measure (ratio > 1: the kernel needs fewer)",
                                             10, header, NULL);
    vs_json *conv = vs_json_new_object();
    vs_status st = VS_OK;
    curves *c = calloc(1, sizeof *c);
    if (!c) return vs_error_set(err, VS_ERR_NOMEM, "search study: out of memory");
    for (int kind = 0; kind < 2 && st == VS_OK; kind++) {
        st = curves_run((vs_study_game)kind, games, seed, true, c, err);
        if (st != VS_OK) break;
        int x = 0, xg = 0;
        double ratios[9] = {vs_evals_ratio(c->all[U], NP, c->all[D], NK, true, &x),
                            vs_evals_ratio(c->half[0][U], NP, c->half[0][D], NK, true, NULL),
                            vs_evals_ratio(c->half[1][U], NP, c->half[1][D], NK, true, NULL),
                            per_game_ratio(c, U, NP, D, -1, &xg),
                            vs_evals_ratio(c->all[U], NP, c->all[D], NK, false, NULL),
                            vs_evals_ratio(c->all[VS_STUDY_PERMUTATION_PER_PAIR], NP, c->all[D], NK, true, NULL),
                            vs_evals_ratio(c->all[VS_STUDY_PERMUTATION], NP, c->all[D], NK, true, NULL),
                            vs_evals_ratio(c->all[VS_STUDY_KERNEL_WEIGHTING], NK, c->all[D], NK, true, NULL),
                            vs_evals_ratio(c->all[U], NP, c->all[L], NK, true, NULL)};
        int r = t ? vs_report_table_row(t) : -1;
        if (r >= 0) vs_report_text(t, r, 0, names[kind]);
        for (int k = 0; k < 9 && r >= 0; k++)
            if (isnan(ratios[k])) vs_report_missing(t, r, k + 1, "the curves' MSE ranges do not meet");
            else vs_report_number(t, r, k + 1, ratios[k], NAN, 2);
        vs_json *g = curve_figure(rep, names[kind], titles[kind], c);
        vs_json *rows = vs_json_new_array();
        per_budget_rows(rep, names[kind], c, rows);
        vs_json *halves = vs_json_new_array();
        if (halves) {
            vs_json_push(halves, vs_search_number_or_null(ratios[1]));
            vs_json_push(halves, vs_search_number_or_null(ratios[2]));
        }
        if (g) {
            vs_json_set(g, "ratio_per_pair_uncached", vs_search_number_or_null(ratios[0]));
            vs_json_set(g, "ratio_per_pair_uncached_extrapolated_points", vs_json_new_int(x));
            vs_json_set(g, "ratio_per_pair_uncached_halves", halves);
            vs_json_set(g, "ratio_per_pair_uncached_per_game", vs_search_number_or_null(ratios[3]));
            vs_json_set(g, "ratio_per_pair_uncached_per_game_extrapolated_points", vs_json_new_int(xg));
            vs_json_set(g, "ratio_per_pair_uncached_inside_only", vs_search_number_or_null(ratios[4]));
            vs_json_set(g, "ratio_per_pair", vs_search_number_or_null(ratios[5]));
            vs_json_set(g, "ratio_shared", vs_search_number_or_null(ratios[6]));
            vs_json_set(g, "ratio_weighting", vs_search_number_or_null(ratios[7]));
            vs_json_set(g, "ratio_leverage_per_pair_uncached", vs_search_number_or_null(ratios[8]));
            vs_json_set(g, "per_budget", rows);
        } else {
            vs_json_free(halves);
            vs_json_free(rows);
        }
        if (conv) vs_json_set(conv, names[kind], g);
        else vs_json_free(g);
        static const char *const key[2][3] = {{"evals_ratio_15", "evals_ratio_15_per_game", "evals_ratio_15_inside_only"},
                                              {"evals_ratio_15_product", "evals_ratio_15_product_per_game", "evals_ratio_15_product_inside_only"}};
        vs_json_set(obj, key[kind][0], vs_search_number_or_null(ratios[0]));
        vs_json_set(obj, key[kind][1], vs_search_number_or_null(ratios[3]));
        vs_json_set(obj, key[kind][2], vs_search_number_or_null(ratios[4]));
        if (kind == 0) {
            out->mlp = ratios[0];
            out->mlp_per_game = ratios[3];
            out->mlp_leverage = ratios[8];
            vs_json_set(obj, "evals_ratio_15_memoised", vs_search_number_or_null(ratios[5]));
            vs_json_set(obj, "evals_ratio_15_shared", vs_search_number_or_null(ratios[6]));
            vs_json_set(obj, "evals_ratio_15_leverage", vs_search_number_or_null(ratios[8]));
        } else {
            out->product = ratios[0];
            out->product_leverage = ratios[8];
        }
    }
    vs_json *rd = vs_json_new_object();
    if (st == VS_OK) st = readings(rep, games, seed, out, c, rd, out, err);
    if (conv) vs_json_set(conv, "readings", rd);
    else vs_json_free(rd);
    free(c->game);
    free(c);
    vs_json_set(obj, "convergence", conv);
    return st;
}
