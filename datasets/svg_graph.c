/* svg_graph.c - node-link drawings of a graph as SVG: a stress-majorisation layout and one panel per
 * edge weighting (explanation masks on the graph, the planted motif highlighted). */
#include "versus/plot.h"

#include "datasets/sbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 5000 /* the layout keeps n x n distances */
#define PANEL 300.0    /* panel side in pixels */
#define GAP 16.0

/* Hop distances from every node (BFS over the undirected edges) into d [n*n]; -1 unreachable. */
static int hop_distances(int64_t n, int64_t ne, const int64_t *src, const int64_t *dst, double *d)
{
    int64_t *deg = calloc((size_t)n + 1, sizeof *deg), *adj = malloc((size_t)(2 * ne + 1) * sizeof *adj);
    int64_t *fill = malloc((size_t)(n + 1) * sizeof *fill), *queue = malloc((size_t)n * sizeof *queue);
    int ok = deg && adj && fill && queue;
    for (int64_t e = 0; ok && e < ne; e++) deg[src[e] + 1]++, deg[dst[e] + 1]++;
    for (int64_t i = 0; ok && i < n; i++) deg[i + 1] += deg[i];
    for (int64_t i = 0; ok && i <= n; i++) fill[i] = deg[i];
    for (int64_t e = 0; ok && e < ne; e++) adj[fill[src[e]]++] = dst[e], adj[fill[dst[e]]++] = src[e];
    for (int64_t s = 0; ok && s < n; s++) {
        double *row = d + s * n;
        for (int64_t i = 0; i < n; i++) row[i] = -1;
        row[s] = 0;
        int64_t head = 0, tail = 0;
        queue[tail++] = s;
        while (head < tail) {
            int64_t u = queue[head++];
            for (int64_t k = deg[u]; k < deg[u + 1]; k++)
                if (row[adj[k]] < 0) row[adj[k]] = row[u] + 1, queue[tail++] = adj[k];
        }
    }
    free(deg);
    free(adj);
    free(fill);
    free(queue);
    return ok;
}

/* Classical MDS start: the top two eigenvectors of B = -1/2 J D^2 J by power iteration with
 * deflation (fixed start vectors), scaled by the square roots of their eigenvalues. */
static void mds_start(int64_t n, const double *d, double *xy, double *b, double *v, double *w)
{
    double mean_all = 0, *rmean = w + n;
    for (int64_t i = 0; i < n; i++) {
        rmean[i] = 0;
        for (int64_t j = 0; j < n; j++) rmean[i] += d[i * n + j] * d[i * n + j] / (double)n;
        mean_all += rmean[i] / (double)n;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) b[i * n + j] = -0.5 * (d[i * n + j] * d[i * n + j] - rmean[i] - rmean[j] + mean_all);
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < n; i++) v[i] = k ? sin(1.0 + (double)i) : cos(1.0 + 0.5 * (double)i);
        double lambda = 0;
        for (int it = 0; it < 300; it++) {
            double norm = 0;
            for (int64_t i = 0; i < n; i++) {
                double s = 0;
                for (int64_t j = 0; j < n; j++) s += b[i * n + j] * v[j];
                w[i] = s;
                norm += s * s;
            }
            norm = sqrt(norm);
            if (norm < 1e-12) break;
            lambda = norm;
            for (int64_t i = 0; i < n; i++) v[i] = w[i] / norm;
        }
        double s = sqrt(lambda > 0 ? lambda : 0);
        for (int64_t i = 0; i < n; i++) xy[2 * i + k] = v[i] * s;
        for (int64_t i = 0; i < n; i++) /* deflate */
            for (int64_t j = 0; j < n; j++) b[i * n + j] -= lambda * v[i] * v[j];
    }
    /* break exact coincidences (symmetric graphs) the same way every time */
    for (int64_t i = 0; i < n; i++) xy[2 * i] += 1e-3 * cos((double)i), xy[2 * i + 1] += 1e-3 * sin((double)i);
}

vs_status vs_graph_layout(int64_t n, int64_t ne, const int64_t *src, const int64_t *dst, double *xy, vs_error *err)
{
    if (n < 0 || n > MAX_NODES) return vs_error_set(err, VS_ERR_ARG, "graph drawing: %lld nodes (at most %d)", (long long)n, MAX_NODES);
    if (ne < 0 || (ne && (!src || !dst)) || (n && !xy)) return vs_error_set(err, VS_ERR_ARG, "graph drawing: no edges or positions");
    for (int64_t e = 0; e < ne; e++)
        if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
            return vs_error_set(err, VS_ERR_ARG, "graph drawing: edge %lld joins %lld and %lld, outside 0..%lld", (long long)e,
                                (long long)src[e], (long long)dst[e], (long long)n - 1);
    if (n <= 1) {
        if (n == 1) xy[0] = xy[1] = 0.5;
        return VS_OK;
    }
    double *d = malloc((size_t)(n * n) * sizeof *d), *b = malloc((size_t)(n * n) * sizeof *b);
    double *v = malloc((size_t)n * sizeof *v), *w = malloc((size_t)(2 * n) * sizeof *w);
    if (!d || !b || !v || !w || !hop_distances(n, ne, src, dst, d)) {
        free(d), free(b), free(v), free(w);
        return vs_error_set(err, VS_ERR_NOMEM, "graph drawing: out of memory for %lld nodes", (long long)n);
    }
    double longest = 0;
    for (int64_t i = 0; i < n * n; i++) longest = fmax(longest, d[i]);
    for (int64_t i = 0; i < n * n; i++)
        if (d[i] < 0) d[i] = longest + 1;
    mds_start(n, d, xy, b, v, w);
    /* SMACOF, one node at a time (Gansner, Koren and North, "Graph drawing by stress majorization", 2004) */
    for (int it = 0; it < 200; it++)
        for (int64_t i = 0; i < n; i++) {
            double sx = 0, sy = 0, sw = 0;
            for (int64_t j = 0; j < n; j++) {
                if (j == i) continue;
                double dij = d[i * n + j], wij = 1 / (dij * dij);
                double dx = xy[2 * i] - xy[2 * j], dy = xy[2 * i + 1] - xy[2 * j + 1], len = sqrt(dx * dx + dy * dy);
                double s = len > 1e-9 ? dij / len : 0;
                sx += wij * (xy[2 * j] + s * dx);
                sy += wij * (xy[2 * j + 1] + s * dy);
                sw += wij;
            }
            xy[2 * i] = sx / sw;
            xy[2 * i + 1] = sy / sw;
        }
    /* into [0,1]^2, centred, one scale for both axes */
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) lo[k] = fmin(lo[k], xy[2 * i + k]), hi[k] = fmax(hi[k], xy[2 * i + k]);
    double span = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), 1e-9);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) xy[2 * i + k] = 0.5 + (xy[2 * i + k] - (lo[k] + hi[k]) / 2) / span;
    free(d), free(b), free(v), free(w);
    return VS_OK;
}

/* A sequential, colour-blind-safe scale (light yellow to dark blue, viridis-like without green-red
 * contrasts): u in [0, 1] -> "#rrggbb". */
static void sequential_color(double u, char out[8])
{
    static const unsigned char stops[5][3] = {{0xfd, 0xe7, 0x25}, {0x5e, 0xc9, 0x62}, {0x21, 0x91, 0x8c}, {0x3b, 0x52, 0x8b}, {0x44, 0x01, 0x54}};
    u = !(u > 0) ? 0 : u > 1 ? 1 : u;
    double t = u * 4;
    int k = t >= 4 ? 3 : (int)t;
    double f = t - k;
    int c[3];
    for (int i = 0; i < 3; i++) c[i] = (int)(stops[k][i] + f * (stops[k + 1][i] - stops[k][i]) + 0.5);
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* Whether node i ends a planted edge. */
static bool hot_node(const vs_graph_drawing *g, int64_t i)
{
    for (int64_t e = 0; g->hot && e < g->n_edges; e++)
        if (g->hot[e] && (g->src[e] == i || g->dst[e] == i)) return true;
    return false;
}

static void draw_panel(vs_sbuf *b, const vs_graph_drawing *g, int k, const double *xy, double ox, double oy)
{
    const double inner = PANEL - 56;
#define PX(i) (ox + 28 + inner * xy[2 * (i)])
#define PY(i) (oy + 28 + inner * xy[2 * (i) + 1])
    vs_sb_printf(b, "<g class=\"panel\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#ddd\"/>\n", ox, oy,
                 PANEL, PANEL);
    if (g->panel_names && g->panel_names[k]) {
        vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">", ox + PANEL / 2, oy - 8);
        vs_sb_text_cut(b, g->panel_names[k], 40);
        vs_sb_printf(b, "</text>\n");
    }
    for (int64_t e = 0; g->hot && e < g->n_edges; e++)
        if (g->hot[e])
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#D55E00\" stroke-opacity=\"0.3\" stroke-width=\"12\" "
                            "stroke-linecap=\"round\"/>\n",
                         PX(g->src[e]), PY(g->src[e]), PX(g->dst[e]), PY(g->dst[e]));
    const float *w = g->weights[k];
    for (int64_t e = 0; e < g->n_edges; e++) /* the bare structure, so that weight-0 edges still show */
        vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c8c8c8\"/>\n", PX(g->src[e]), PY(g->src[e]),
                     PX(g->dst[e]), PY(g->dst[e]));
    /* each panel on its own scale: masks often differ only within a narrow band (0.45 to 0.6), which one
     * absolute scale draws as one pale colour everywhere; the panel's range is printed under it */
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t e = 0; e < g->n_edges; e++)
        if (isfinite(w[e])) lo = fmin(lo, w[e]), hi = fmax(hi, w[e]);
    for (int64_t e = 0; e < g->n_edges; e++) {
        double v = w[e];
        if (!isfinite(v)) {
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"3 3\"/>\n", PX(g->src[e]),
                         PY(g->src[e]), PX(g->dst[e]), PY(g->dst[e]));
            continue;
        }
        double u = hi - lo > 1e-9 ? (v - lo) / (hi - lo) : 0.5;
        char color[8];
        sequential_color(u, color);
        vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\" "
                        "stroke-linecap=\"round\"><title>%lld-%lld: %.3f</title></line>\n",
                     PX(g->src[e]), PY(g->src[e]), PX(g->dst[e]), PY(g->dst[e]), color, 1.5 + 4.5 * u, (long long)g->src[e],
                     (long long)g->dst[e], v);
    }
    if (lo <= hi)
        vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">weights %.3g to %.3g</text>\n",
                     ox + PANEL / 2, oy + PANEL - 8, lo, hi);
    for (int64_t i = 0; i < g->n_nodes; i++) {
        bool hot = hot_node(g, i);
        vs_sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>\n", PX(i), PY(i),
                     hot ? "#FBE3D6" : "white", hot ? "#D55E00" : "#444", hot ? "2" : "1");
        const char *lab = g->node_labels ? g->node_labels[i] : NULL;
        if (lab && vs_utf8_chars(lab) <= 2) {
            vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">", PX(i), PY(i) + 3);
            vs_sb_text(b, lab);
            vs_sb_printf(b, "</text>\n");
        }
    }
    vs_sb_printf(b, "</g>\n");
#undef PX
#undef PY
}

vs_status vs_graph_svg(const vs_graph_drawing *g, char **out, size_t *len, vs_error *err)
{
    if (!g || !out) return vs_error_set(err, VS_ERR_ARG, "graph drawing: no drawing or output");
    *out = NULL;
    if (g->n_panels < 1 || !g->weights) return vs_error_set(err, VS_ERR_ARG, "graph drawing: no panel");
    for (int k = 0; k < g->n_panels; k++)
        if (!g->weights[k] && g->n_edges) return vs_error_set(err, VS_ERR_ARG, "graph drawing: panel %d has no weights", k);
    double *xy = malloc((size_t)(g->n_nodes > 0 ? 2 * g->n_nodes : 2) * sizeof *xy);
    if (!xy) return vs_error_set(err, VS_ERR_NOMEM, "graph drawing: out of memory");
    vs_status st = vs_graph_layout(g->n_nodes, g->n_edges, g->src, g->dst, xy, err);
    if (st != VS_OK) {
        free(xy);
        return st;
    }
    double top = (g->title ? 34 : 0) + 28, W = fmax(g->n_panels * (PANEL + GAP) + GAP, 540), H = top + PANEL + 46;
    vs_sbuf b = {0};
    vs_sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    vs_sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" fill=\"#222\">\n",
                 W, H, W, H);
    vs_sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (g->title) {
        vs_sb_printf(&b, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
        vs_sb_text(&b, g->title);
        vs_sb_printf(&b, "</text>\n");
    }
    for (int k = 0; k < g->n_panels; k++) draw_panel(&b, g, k, xy, GAP + k * (PANEL + GAP), top);
    /* legend: the weight scale, and the planted motif when there is one */
    double ly = top + PANEL + 28, lx = GAP;
    vs_sb_printf(&b, "<g class=\"legend\" font-size=\"12\">\n");
    for (int i = 0; i <= 4; i++) {
        double v = i / 4.0;
        char color[8];
        sequential_color(v, color);
        vs_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"/>\n", lx + 28 * i,
                     ly - 4, lx + 28 * i + 22, ly - 4, color, 1.5 + 4.5 * v);
    }
    vs_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">edge weight, lowest to highest of each panel</text>\n", lx + 148, ly);
    if (g->hot) {
        lx += 440;
        vs_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#D55E00\" stroke-opacity=\"0.3\" stroke-width=\"12\" "
                         "stroke-linecap=\"round\"/>\n",
                     lx, ly - 4, lx + 24, ly - 4);
        vs_sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#FBE3D6\" stroke=\"#D55E00\" stroke-width=\"2\"/>\n", lx + 40, ly - 4);
        vs_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">planted motif</text>\n", lx + 54, ly);
    }
    vs_sb_printf(&b, "</g>\n</svg>\n");
    free(xy);
    if (b.oom) {
        free(b.p);
        return vs_error_set(err, VS_ERR_NOMEM, "graph drawing: out of memory rendering the SVG");
    }
    *out = b.p;
    if (len) *len = b.len;
    return VS_OK;
}
