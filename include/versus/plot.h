/* versus/plot.h - line and bar plots, and node-link drawings of graphs, as standalone SVG.
 *
 * Used for perturbation curves (AOPC), convergence traces (GDA), sensitivity curves and graph
 * explanations (edge masks drawn on the graph itself).  A vs_plot
 * owns copies of everything given to it; free it with vs_plot_free().  Axes get "nice" ticks
 * ({1,2,5} x 10^k), tick labels, axis titles, a title and a legend; series take distinct colours
 * (the 8 colours of the colour-blind-safe Okabe-Ito palette, then dashed variants); category labels
 * too wide for their slots run at 45 degrees, and labels over 22 characters are cut with an
 * ellipsis (the full text in a tooltip).  Points whose x or y is NaN (or y <= 0 on a log axis) are
 * skipped and break a line.  Text is XML-escaped.  SVG files are written atomically. */
#ifndef VERSUS_PLOT_H
#define VERSUS_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_plot_kind {
    VS_PLOT_LINE = 0,   /* y against x, one polyline (with markers when short) per series */
    VS_PLOT_BAR = 1     /* grouped bars: value i of every series stands in category i */
} vs_plot_kind;

typedef struct vs_plot vs_plot;

/* A nice axis: ticks lo, lo + step, ..., hi (n of them); step = {1,2,5} x 10^k; lo <= data lo and
 * hi >= data hi, both multiples of step. */
typedef struct vs_axis_ticks {
    double lo, hi, step;
    int n;
} vs_axis_ticks;

/* Nice ticks covering [lo, hi] with about `target` intervals: step = m x 10^k with m in {1,2,5,10}
 * nearest to (hi - lo) / target (mantissa cut points 1.5, 3, 7), so there are between about
 * target/1.5 and 1.5 target + 2 intervals.  lo == hi is widened around the value; non-finite input
 * gives [0,1]. */
vs_axis_ticks vs_nice_ticks(double lo, double hi, int target);

/* New empty plot; any text may be NULL.  NULL when out of memory. */
vs_plot *vs_plot_new(vs_plot_kind kind, const char *title, const char *xlabel, const char *ylabel);
void vs_plot_free(vs_plot *p);
/* Add a series of n points (copied).  x may be NULL: x = 0..n-1 (bar plots use x only as category
 * labels when no categories were set).  yerr may be NULL; otherwise error bars y +- yerr[i]. */
vs_status vs_plot_add_series(vs_plot *p, const char *name, size_t n, const float *x, const float *y,
                             const float *yerr, vs_error *err);
/* Category labels of a bar plot's x axis (copied); category i is value i of every series. */
vs_status vs_plot_set_categories(vs_plot *p, size_t n, const char *const *labels, vs_error *err);
/* Logarithmic y axis (decades); points with y <= 0 are skipped. */
void vs_plot_set_log_y(vs_plot *p, int on);
/* Canvas size in pixels (default 640 x 400, legend added on the right). */
void vs_plot_set_size(vs_plot *p, int width, int height);
/* The SVG document as a new NUL-terminated malloc'd string (*len bytes without the NUL). */
vs_status vs_plot_svg(const vs_plot *p, char **out, size_t *len, vs_error *err);
/* Write the SVG document to path.  Errors name the path. */
vs_status vs_plot_write_svg(const vs_plot *p, const char *path, vs_error *err);

/* ---- node-link drawings ---------------------------------------------------------------------------- */

/* One graph drawn once per edge weighting (a panel each, side by side, the same layout): an edge's
 * width and opacity grow with its weight in [0,1] (NaN: grey, dashed), planted edges (hot) get a
 * wide vermillion halo and their nodes a vermillion ring.  Everything is borrowed for the call. */
typedef struct vs_graph_drawing {
    const char *title;                /* may be NULL */
    int64_t n_nodes, n_edges;
    const int64_t *src, *dst;         /* undirected edges, node ids in [0, n_nodes) */
    const char *const *node_labels;   /* may be NULL; short labels are drawn inside the nodes */
    const bool *hot;                  /* may be NULL: the planted edges */
    int n_panels;
    const char *const *panel_names;   /* [n_panels] */
    const float *const *weights;      /* [n_panels][n_edges] */
} vs_graph_drawing;

/* Node positions xy [n_nodes * 2] in [0,1]^2: stress majorisation (SMACOF) over shortest-path
 * distances, weights d^-2, from a classical-MDS start; unreachable pairs count as one more than the
 * longest path.  Deterministic. */
vs_status vs_graph_layout(int64_t n_nodes, int64_t n_edges, const int64_t *src, const int64_t *dst, double *xy,
                          vs_error *err);
/* The SVG document of the drawing (a new malloc'd string, *len bytes). */
vs_status vs_graph_svg(const vs_graph_drawing *g, char **out, size_t *len, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
