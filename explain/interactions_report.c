/* interactions_report.c - the report of interaction matrices [N, F, F] (Integrated Hessians, the
 * Shapley-Taylor methods): a table per row (completeness gap, main-effect share, query-reference share)
 * and the matrices of the first rows as heatmap figures.  `versus evaluate --report DIR` writes it. */
#include "versus/experiment.h"
#include "versus/json.h"

#include <math.h>
#include <stdio.h>

#define REPORT_ROWS 4   /* matrices drawn */
#define REPORT_SIDE 40  /* features shown per matrix at most */

/* Feature u's label: x<u>, or q<u> / r<u> for the two sides of a pair. */
static void feature_label(int64_t u, int64_t dim, vs_side side, char *buf, size_t n)
{
    if (side == VS_SIDE_BOTH) snprintf(buf, n, "%s%lld", u < dim ? "q" : "r", (long long)(u < dim ? u : u - dim));
    else snprintf(buf, n, "%s%lld", side == VS_SIDE_REFERENCE ? "r" : "x", (long long)u);
}

/* The matrix of row i as a figure: every feature when F <= REPORT_SIDE, else at most REPORT_SIDE features
 * with the largest non-zero |G[u,:]| + |G[:,u]|, in index order (the same for rows and columns: the
 * diagonal stays). */
static void matrix_figure(vs_report *r, const float *G, int64_t F, int64_t dim, vs_side side, int64_t i, double gap)
{
    int64_t k = F < REPORT_SIDE ? F : REPORT_SIDE, keep[REPORT_SIDE];
    double mass[REPORT_SIDE];
    int64_t m = 0;
    for (int64_t u = 0; u < F; u++) {
        double w = 0;
        for (int64_t v = 0; v < F; v++) w += fabs(G[u * F + v]) + fabs(G[v * F + u]);
        if (F > REPORT_SIDE && w == 0) continue; /* a feature without interactions is not worth a place */
        /* insertion into the top k by mass (first wins ties) */
        int64_t at = m < k ? m++ : k;
        while (at > 0 && mass[at - 1] < w) {
            if (at < k) mass[at] = mass[at - 1], keep[at] = keep[at - 1];
            at--;
        }
        if (at < k) mass[at] = w, keep[at] = u;
    }
    if (F > REPORT_SIDE) k = m;
    for (int64_t u = 0; k == 0 && u < REPORT_SIDE; u++) keep[u] = u; /* all zero: the first features */
    if (k == 0) k = REPORT_SIDE;
    for (int64_t a = 1; a < k; a++) /* back to index order */
        for (int64_t b = a; b > 0 && keep[b - 1] > keep[b]; b--) {
            int64_t t = keep[b];
            keep[b] = keep[b - 1], keep[b - 1] = t;
        }
    char names[REPORT_SIDE][32], stem[64], title[96], caption[512];
    const char *labels[REPORT_SIDE];
    float vals[REPORT_SIDE * REPORT_SIDE];
    for (int64_t a = 0; a < k; a++) {
        feature_label(keep[a], dim, side, names[a], sizeof names[a]);
        labels[a] = names[a];
        for (int64_t b = 0; b < k; b++) vals[a * k + b] = G[keep[a] * F + keep[b]];
    }
    snprintf(stem, sizeof stem, "interactions_row_%lld", (long long)i);
    snprintf(title, sizeof title, "Row %lld: interactions", (long long)i);
    snprintf(caption, sizeof caption,
             "Row %lld: entry (u, v) is the interaction of features u and v (the diagonal: main effects); red adds to the explained "
             "score, blue takes from it, white is none.%s The matrix sums to S(x) - S(x') up to a completeness gap of %.3g.%s",
             (long long)i,
             F > k ? " Shown: the features with the largest interactions (row plus column |sum|), none without." : "", gap,
             side == VS_SIDE_BOTH ? " q: features of the query, r: of the reference; the off-diagonal blocks pair the two sides." : "");
    vs_report_figure *fig = vs_report_figure_new(r, VS_FIGURE_MATRIX, stem, title, "feature v", "feature u", caption);
    vs_report_matrix(fig, (size_t)k, (size_t)k, labels, labels, vals);
}

vs_status vs_interactions_report(const char *apath, const vs_tensor *attr, int64_t dim, vs_side side, const double *gap, const double *diag,
                                 const double *cross, vs_report **out, vs_error *err)
{
    int64_t n = attr->shape[0], F = attr->shape[1];
    vs_report *r = vs_report_new();
    *out = NULL;
    if (!r) return vs_error_set(err, VS_ERR_NOMEM, "interactions report: out of memory");
    vs_report_heading(r, 1, "Interactions: %s", apath);
    vs_report_paragraph(r, "%lld rows, %lld x %lld features (%s side%s). `versus evaluate` judges interactions by completeness: the "
                           "matrix of a row sums to S(x) - S(x').",
                        (long long)n, (long long)F, (long long)F, vs_side_name(side), side == VS_SIDE_BOTH ? "s" : "");
    static const char *const head[4] = {"row", "completeness gap", "main-effect share", "query-reference share"};
    static const vs_better better[4] = {VS_BETTER_NONE, VS_BETTER_NONE, VS_BETTER_NONE, VS_BETTER_NONE};
    vs_report_table *t = vs_report_table_new(r, "Per row: the gap sum G - (S(x) - S(x')) (0 is exact), the share of |G| on the diagonal, "
                                                "and (both sides) the share between query and reference features.",
                                             4, head, better);
    for (int64_t i = 0; i < n; i++) {
        int row = vs_report_table_row(t);
        char name[32];
        snprintf(name, sizeof name, "%lld", (long long)i);
        vs_report_text(t, row, 0, name);
        vs_report_number(t, row, 1, gap[i], NAN, -2);
        vs_report_number(t, row, 2, diag[i], NAN, 3);
        if (side == VS_SIDE_BOTH) vs_report_number(t, row, 3, cross[i], NAN, 3);
        else vs_report_missing(t, row, 3, "one side explained");
    }
    for (int64_t i = 0; i < n && i < REPORT_ROWS; i++) matrix_figure(r, attr->data + i * F * F, F, dim, side, i, gap[i]);
    vs_json *data = vs_json_new_object();
    if (data) {
        vs_json_set(data, "output", vs_json_new_string("interactions"));
        vs_json_set(data, "attributions", vs_json_new_string(apath));
        vs_json_set(data, "rows", vs_json_new_int(n));
        vs_json_set(data, "features", vs_json_new_int(F));
        vs_json_set(data, "side", vs_json_new_string(vs_side_name(side)));
    }
    vs_report_set_data(r, data);
    *out = r;
    return VS_OK;
}

