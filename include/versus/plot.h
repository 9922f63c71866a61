/* versus/plot.h - line and bar plots written as standalone SVG files.
 *
 * Used for perturbation curves (AOPC), convergence traces (GDA) and sensitivity curves.  A vs_plot
 * owns copies of everything given to it; free it with vs_plot_free().  Axes get "nice" ticks
 * ({1,2,5} x 10^k), tick labels, axis titles, a title and a legend; series take distinct colours
 * (10 colours, then dashed variants).  Points whose x or y is NaN (or y <= 0 on a log axis) are
 * skipped and break a line.  Text is XML-escaped.  SVG files are written atomically. */
#ifndef VERSUS_PLOT_H
#define VERSUS_PLOT_H

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif
#endif
