/* svg.c - line and bar plots as standalone SVG: nice ticks, labels, legend, error bars, log y. */
#include "versus/plot.h"

#include "datasets/sbuf.h"
#include "datasets/io/write_atomic.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    char *name;
    size_t n;
    float *x, *y, *err; /* x and err may be NULL */
} series;

struct vs_plot {
    vs_plot_kind kind;
    char *title, *xlabel, *ylabel;
    series *s;
    size_t ns;
    char **categories;
    size_t ncat;
    int log_y;
    int width, height;
};

/* Okabe-Ito: eight hues told apart with every common colour-vision deficiency (Okabe and Ito,
 * "Color Universal Design", 2008), darkest first; yellow last, being faint on white.  Series beyond 8
 * reuse them dashed. */
#define N_PALETTE 8
static const char *const palette[N_PALETTE] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                               "#E69F00", "#56B4E9", "#000000", "#F0E442"};

/* Category labels longer than this many characters are cut with an ellipsis (full text in a <title>). */
#define MAX_LABEL_CHARS 22
#define TICK_PX 12.0

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---------------------------------------------------------------- ticks */

vs_axis_ticks vs_nice_ticks(double lo, double hi, int target)
{
    if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (target < 1) target = 1;
    if (hi - lo <= 1e-12 * fmax(fabs(lo), fabs(hi))) { /* a single value: widen around it */
        double d = lo == 0 ? 1 : fabs(lo) * 0.1;
        lo -= d;
        hi += d;
    }
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double m = raw / mag;
    /* The nearest of 1, 2, 5, 10 (x mag), judged on a log scale (Heckbert, "Nice numbers for graph
     * labels", Graphics Gems 1990): fewer wasted intervals than always rounding up. */
    double step = (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * mag;
    /* Data often arrives as float: 0.3f is 0.30000001, which must not cost an extra tick. */
    double klo = floor(lo / step + 1e-6), khi = ceil(hi / step - 1e-6);
    vs_axis_ticks t = {klo * step, khi * step, step, (int)(khi - klo) + 1};
    return t;
}

/* Tick label of v on an axis with the given step: just enough decimals, no "-0". */
static void format_tick(char *buf, size_t n, double v, double step)
{
    if (fabs(v) < step * 1e-6) v = 0;
    double a = fabs(v);
    if (v != 0 && (a >= 1e6 || a < 1e-4)) {
        snprintf(buf, n, "%g", v);
        return;
    }
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, n, "%.*f", dec, v);
}

/* <text> element at (x,y) with extra attributes and escaped content. */
static void sb_label(vs_sbuf *b, double x, double y, const char *attrs, const char *text)
{
    vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, attrs);
    vs_sb_text(b, text);
    vs_sb_printf(b, "</text>\n");
}

/* ---------------------------------------------------------------- plot object */

vs_plot *vs_plot_new(vs_plot_kind kind, const char *title, const char *xlabel, const char *ylabel)
{
    vs_plot *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->kind = kind;
    p->width = 640;
    p->height = 400;
    p->title = dup_or_null(title);
    p->xlabel = dup_or_null(xlabel);
    p->ylabel = dup_or_null(ylabel);
    if ((title && !p->title) || (xlabel && !p->xlabel) || (ylabel && !p->ylabel)) {
        vs_plot_free(p);
        return NULL;
    }
    return p;
}

static void free_categories(vs_plot *p)
{
    for (size_t i = 0; i < p->ncat; i++) free(p->categories[i]);
    free(p->categories);
    p->categories = NULL;
    p->ncat = 0;
}

void vs_plot_free(vs_plot *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->ns; i++) {
        free(p->s[i].name);
        free(p->s[i].x);
        free(p->s[i].y);
        free(p->s[i].err);
    }
    free(p->s);
    free_categories(p);
    free(p->title);
    free(p->xlabel);
    free(p->ylabel);
    free(p);
}

static float *copy_floats(const float *v, size_t n, int *fail)
{
    if (!v || n == 0) return NULL;
    float *c = malloc(n * sizeof *c);
    if (!c) *fail = 1;
    else memcpy(c, v, n * sizeof *c);
    return c;
}

vs_status vs_plot_add_series(vs_plot *p, const char *name, size_t n, const float *x, const float *y,
                             const float *yerr, vs_error *err)
{
    if (!p || (!y && n > 0)) return vs_error_set(err, VS_ERR_ARG, "plot: add_series needs a plot and y values");
    size_t bytes;
    if (!vs_size_mul(n, sizeof(float), &bytes)) return vs_error_set(err, VS_ERR_NOMEM, "plot: series of %zu points too long", n);
    series *ns = realloc(p->s, (p->ns + 1) * sizeof *ns);
    if (!ns) return vs_error_set(err, VS_ERR_NOMEM, "plot: out of memory");
    p->s = ns;
    int fail = 0;
    series s = {dup_or_null(name), n, copy_floats(x, n, &fail), copy_floats(y, n, &fail), copy_floats(yerr, n, &fail)};
    if (fail || (name && !s.name)) {
        free(s.name), free(s.x), free(s.y), free(s.err);
        return vs_error_set(err, VS_ERR_NOMEM, "plot: out of memory for series '%s'", name ? name : "");
    }
    p->s[p->ns++] = s;
    return VS_OK;
}

vs_status vs_plot_set_categories(vs_plot *p, size_t n, const char *const *labels, vs_error *err)
{
    if (!p || (!labels && n > 0)) return vs_error_set(err, VS_ERR_ARG, "plot: set_categories needs labels");
    free_categories(p);
    if (n == 0) return VS_OK;
    p->categories = calloc(n, sizeof *p->categories);
    if (!p->categories) return vs_error_set(err, VS_ERR_NOMEM, "plot: out of memory");
    p->ncat = n;
    for (size_t i = 0; i < n; i++)
        if (!(p->categories[i] = strdup(labels[i] ? labels[i] : ""))) {
            free_categories(p);
            return vs_error_set(err, VS_ERR_NOMEM, "plot: out of memory");
        }
    return VS_OK;
}

void vs_plot_set_log_y(vs_plot *p, int on)
{
    if (p) p->log_y = on != 0;
}

void vs_plot_set_size(vs_plot *p, int width, int height)
{
    if (!p) return;
    p->width = width < 200 ? 200 : width;
    p->height = height < 150 ? 150 : height;
}

/* ---------------------------------------------------------------- rendering */

/* x of point i: its index on a bar plot or when the series has no x values. */
static double sx(const vs_plot *p, const series *s, size_t i)
{
    return p->kind == VS_PLOT_BAR || !s->x ? (double)i : s->x[i];
}

/* Whether a point can be drawn: finite, and positive on a log axis. */
static int usable(const vs_plot *p, double x, double y)
{
    return isfinite(x) && isfinite(y) && (!p->log_y || y > 0);
}

/* Mapping of data to pixels: linear in x; linear or log10 in y. */
typedef struct frame {
    double x0, x1, y0, y1;      /* plot area in pixels (y0 top) */
    vs_axis_ticks xt, yt;       /* yt is in log10 units on a log axis */
    int log_y;
    double label_y;             /* baseline of the x axis title */
    int rotate;                 /* category labels run at -45 degrees (too wide for their slots) */
} frame;

static double px_x(const frame *f, double x)
{
    return f->x0 + (x - f->xt.lo) / (f->xt.hi - f->xt.lo) * (f->x1 - f->x0);
}

static double px_y(const frame *f, double y)
{
    double v = f->log_y ? log10(y) : y;
    double t = (v - f->yt.lo) / (f->yt.hi - f->yt.lo);
    t = t < -0.05 ? -0.05 : t > 1.05 ? 1.05 : t; /* keep stray error bars near the frame */
    return f->y1 - t * (f->y1 - f->y0);
}

static size_t max_points(const vs_plot *p)
{
    size_t m = p->ncat;
    for (size_t k = 0; k < p->ns; k++)
        if (p->s[k].n > m) m = p->s[k].n;
    return m;
}

/* Data ranges over the usable points (y including error bars); returns 0 when nothing is usable. */
static int data_range(const vs_plot *p, double *xmin, double *xmax, double *ymin, double *ymax)
{
    int any = 0;
    *xmin = *ymin = INFINITY;
    *xmax = *ymax = -INFINITY;
    for (size_t k = 0; k < p->ns; k++) {
        const series *s = &p->s[k];
        for (size_t i = 0; i < s->n; i++) {
            double x = sx(p, s, i), y = s->y[i];
            if (!usable(p, x, y)) continue;
            double e = s->err && isfinite(s->err[i]) ? fabs(s->err[i]) : 0;
            double lo = y - e, hi = y + e;
            if (p->log_y && !(lo > 0)) lo = y;
            any = 1;
            *xmin = fmin(*xmin, x), *xmax = fmax(*xmax, x);
            *ymin = fmin(*ymin, lo), *ymax = fmax(*ymax, hi);
        }
    }
    return any;
}

/* Whether every plotted x of a line plot is a whole number (layers, epochs, steps, counts): then the x
 * axis is ticked at whole numbers only (no tick at 1.5 layers). */
static bool integer_x(const vs_plot *p)
{
    if (p->kind == VS_PLOT_BAR) return false;
    bool any = false;
    for (size_t k = 0; k < p->ns; k++)
        for (size_t i = 0; i < p->s[k].n; i++) {
            double x = sx(p, &p->s[k], i);
            if (!usable(p, x, p->s[k].y[i])) continue;
            if (x != floor(x) || fabs(x) > 1e15) return false;
            any = true;
        }
    return any;
}

/* Label text of category i of a bar plot (lab is scratch). */
static const char *category_text(const vs_plot *p, size_t i, char *lab, size_t n)
{
    if (i < p->ncat) return p->categories[i];
    if (p->ns && p->s[0].x && i < p->s[0].n) snprintf(lab, n, "%g", p->s[0].x[i]);
    else snprintf(lab, n, "%zu", i);
    return lab;
}

/* Width in pixels of the widest category label as drawn (cut at MAX_LABEL_CHARS). */
static double widest_category(const vs_plot *p)
{
    char lab[64], cut[4 * MAX_LABEL_CHARS + 8];
    double w = 0;
    for (size_t i = 0, nc = max_points(p); i < nc; i++) {
        const char *t = category_text(p, i, lab, sizeof lab);
        vs_sbuf sb = {0};
        vs_sb_text_cut(&sb, t, MAX_LABEL_CHARS);
        snprintf(cut, sizeof cut, "%s", sb.p ? sb.p : "");
        free(sb.p);
        double tw = vs_text_width(cut, TICK_PX);
        if (tw > w) w = tw;
    }
    return w;
}

/* One category label under the x axis at x: centred, or turned by -45 degrees and ending at the
 * tick when the labels do not fit their slots; a cut label keeps its full text as a tooltip. */
static void category_label(vs_sbuf *b, const frame *f, double x, const char *text)
{
    if (f->rotate)
        vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-45 %.1f %.1f)\">", x + 4, f->y1 + 14, x + 4,
                     f->y1 + 14);
    else
        vs_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, f->y1 + 18);
    if (vs_utf8_chars(text) > MAX_LABEL_CHARS) {
        vs_sb_printf(b, "<title>");
        vs_sb_text(b, text);
        vs_sb_printf(b, "</title>");
    }
    vs_sb_text_cut(b, text, MAX_LABEL_CHARS);
    vs_sb_printf(b, "</text>\n");
}

static void draw_axes(vs_sbuf *b, const vs_plot *p, const frame *f)
{
    char lab[64];
    vs_sb_printf(b, "<g class=\"axes\" font-size=\"12\" fill=\"#222\">\n");
    /* y ticks, grid lines and labels */
    for (int i = 0; i < f->yt.n; i++) {
        double v = f->yt.lo + i * f->yt.step;
        double y = f->y1 - (v - f->yt.lo) / (f->yt.hi - f->yt.lo) * (f->y1 - f->y0);
        vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", f->x0, y, f->x1, y);
        vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>\n", f->x0 - 5, y, f->x0, y);
        if (f->log_y) {
            double e = round(v);
            if (e >= -3 && e <= 4) format_tick(lab, sizeof lab, pow(10, e), pow(10, e));
            else snprintf(lab, sizeof lab, "1e%d", (int)e);
        } else {
            format_tick(lab, sizeof lab, v, f->yt.step);
        }
        sb_label(b, f->x0 - 8, y + 4, "text-anchor=\"end\"", lab);
    }
    /* x ticks: numbers on a line plot, categories on a bar plot */
    if (p->kind == VS_PLOT_BAR) {
        size_t nc = max_points(p);
        double slot = (f->x1 - f->x0) / (double)(nc ? nc : 1);
        for (size_t i = 0; i < nc; i++) {
            double x = f->x0 + (i + 0.5) * slot;
            const char *text = category_text(p, i, lab, sizeof lab);
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>\n", x, f->y1, x, f->y1 + 5);
            category_label(b, f, x, text);
        }
    } else {
        for (int i = 0; i < f->xt.n; i++) {
            double v = f->xt.lo + i * f->xt.step, x = px_x(f, v);
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", x, f->y0, x, f->y1);
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>\n", x, f->y1, x, f->y1 + 5);
            format_tick(lab, sizeof lab, v, f->xt.step);
            sb_label(b, x, f->y1 + 18, "text-anchor=\"middle\"", lab);
        }
    }
    vs_sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#222\"/>\n", f->x0, f->y0,
              f->x1 - f->x0, f->y1 - f->y0);
    vs_sb_printf(b, "</g>\n");
    if (p->xlabel) sb_label(b, (f->x0 + f->x1) / 2, f->label_y, "text-anchor=\"middle\" font-size=\"13\"", p->xlabel);
    if (p->ylabel) {
        double cx = f->x0 - 58, cy = (f->y0 + f->y1) / 2;
        char attrs[128];
        snprintf(attrs, sizeof attrs, "text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 %.1f %.1f)\"", cx, cy);
        sb_label(b, cx, cy, attrs, p->ylabel);
    }
}

static void draw_err(vs_sbuf *b, const frame *f, double x, double y, double e, double half, const char *color)
{
    if (!(e > 0) || !isfinite(e)) return;
    double lo = y - e, hi = y + e;
    double plo = f->log_y && !(lo > 0) ? f->y1 : px_y(f, lo), phi = px_y(f, hi);
    vs_sb_printf(b, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" fill=\"none\"/>\n", x, plo, phi,
              x - half, plo, x + half, x - half, phi, x + half, color);
}

static void draw_lines(vs_sbuf *b, const vs_plot *p, const frame *f)
{
    for (size_t k = 0; k < p->ns; k++) {
        const series *s = &p->s[k];
        const char *color = palette[k % N_PALETTE];
        const char *dash = k >= N_PALETTE ? " stroke-dasharray=\"6 3\"" : "";
        vs_sb_printf(b, "<g class=\"series\">\n<path d=\"");
        int pen_down = 0; /* a skipped point lifts the pen, so the line shows the gap */
        for (size_t i = 0; i < s->n; i++) {
            double x = sx(p, s, i), y = s->y[i];
            if (!usable(p, x, y)) {
                pen_down = 0;
                continue;
            }
            vs_sb_printf(b, "%s%.2f %.2f", pen_down ? "L" : "M", px_x(f, x), px_y(f, y));
            pen_down = 1;
        }
        vs_sb_printf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", color, dash);
        for (size_t i = 0; i < s->n; i++) {
            double x = sx(p, s, i), y = s->y[i];
            if (!usable(p, x, y)) continue;
            if (s->err) draw_err(b, f, px_x(f, x), y, fabs(s->err[i]), 3, color);
            if (s->n <= 60) vs_sb_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n", px_x(f, x), px_y(f, y), color);
        }
        vs_sb_printf(b, "</g>\n");
    }
}

static void draw_bars(vs_sbuf *b, const vs_plot *p, const frame *f)
{
    size_t nc = max_points(p);
    double slot = (f->x1 - f->x0) / (double)(nc ? nc : 1);
    double bw = slot * 0.8 / (double)(p->ns ? p->ns : 1);
    /* Bars grow from 0 (linear axis) or from the bottom of the frame (log axis). */
    double base = f->log_y ? f->y1 : px_y(f, 0);
    for (size_t k = 0; k < p->ns; k++) {
        const series *s = &p->s[k];
        const char *color = palette[k % N_PALETTE];
        vs_sb_printf(b, "<g class=\"series\" fill=\"%s\">\n", color);
        for (size_t i = 0; i < s->n; i++) {
            double y = s->y[i];
            if (!usable(p, (double)i, y)) continue;
            double x = f->x0 + i * slot + slot * 0.1 + k * bw, py = px_y(f, y);
            double top = py < base ? py : base, h = fabs(base - py);
            vs_sb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"%s/>\n", x, top, bw, h,
                      k >= N_PALETTE ? " fill-opacity=\"0.6\"" : "");
            if (s->err) draw_err(b, f, x + bw / 2, y, fabs(s->err[i]), bw / 4, "#222");
        }
        vs_sb_printf(b, "</g>\n");
    }
}

static size_t legend_entries(const vs_plot *p, size_t *longest)
{
    size_t n = 0;
    *longest = 0;
    for (size_t k = 0; k < p->ns; k++)
        if (p->s[k].name && *p->s[k].name) {
            n++;
            size_t l = strlen(p->s[k].name);
            if (l > *longest) *longest = l;
        }
    return n;
}

static void draw_legend(vs_sbuf *b, const vs_plot *p, double x, double y)
{
    vs_sb_printf(b, "<g class=\"legend\" font-size=\"12\" fill=\"#222\">\n");
    size_t row = 0;
    for (size_t k = 0; k < p->ns; k++) {
        if (!p->s[k].name || !*p->s[k].name) continue;
        double yy = y + 18.0 * (double)row++;
        const char *color = palette[k % N_PALETTE];
        if (p->kind == VS_PLOT_BAR)
            vs_sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x, yy - 9, color);
        else
            vs_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", x, yy - 4,
                      x + 18, yy - 4, color, k >= N_PALETTE ? " stroke-dasharray=\"6 3\"" : "");
        sb_label(b, x + 24, yy, "", p->s[k].name);
    }
    vs_sb_printf(b, "</g>\n");
}

vs_status vs_plot_svg(const vs_plot *p, char **out, size_t *len, vs_error *err)
{
    if (!p || !out) return vs_error_set(err, VS_ERR_ARG, "plot: no plot or output");
    *out = NULL;
    if (len) *len = 0;

    double xmin, xmax, ymin, ymax;
    if (!data_range(p, &xmin, &xmax, &ymin, &ymax)) xmin = 0, xmax = 1, ymin = p->log_y ? 1 : 0, ymax = p->log_y ? 10 : 1;
    frame f = {0};
    f.log_y = p->log_y;
    if (p->log_y) {
        /* Whole decades; more than 10 of them are ticked every few decades. */
        double dlo = floor(log10(ymin) + 1e-6), dhi = ceil(log10(ymax) - 1e-6); /* 0.01f is 0.0099999998 */
        if (dhi <= dlo) dhi = dlo + 1;
        double every = ceil((dhi - dlo) / 10);
        dlo = floor(dlo / every) * every;
        dhi = ceil(dhi / every) * every;
        f.yt = (vs_axis_ticks){dlo, dhi, every, (int)((dhi - dlo) / every) + 1};
    } else {
        if (p->kind == VS_PLOT_BAR) ymin = fmin(ymin, 0), ymax = fmax(ymax, 0);
        f.yt = vs_nice_ticks(ymin, ymax, 5);
    }
    f.xt = vs_nice_ticks(xmin, xmax, 6);
    if (integer_x(p) && f.xt.step < 1) { /* a short integer axis: one tick per whole number */
        double lo = floor(xmin), hi = ceil(xmax);
        if (hi <= lo) lo -= 1, hi += 1;
        f.xt = (vs_axis_ticks){lo, hi, 1, (int)(hi - lo) + 1};
    }

    size_t longest, nleg = legend_entries(p, &longest);
    double legend_w = nleg ? 40 + 7.0 * (double)longest : 0;
    double W = p->width + legend_w, H = p->height, below = 0;
    f.x0 = 80;
    f.x1 = p->width - 20;
    f.y0 = p->title ? 40 : 20;
    if (p->kind == VS_PLOT_BAR) {
        /* labels wider than their slot turn by 45 degrees; the canvas grows by their height */
        size_t nc = max_points(p);
        double slot = (f.x1 - f.x0) / (double)(nc ? nc : 1), wide = widest_category(p);
        f.rotate = wide > 0.9 * slot;
        if (f.rotate) below = wide * 0.7071 + 4;
    }
    H += below;
    f.y1 = H - 55 - below;
    f.label_y = H - 15;

    vs_sbuf b = {0};
    vs_sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    vs_sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n", W, H, W, H);
    vs_sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (p->title) sb_label(&b, (f.x0 + f.x1) / 2, 24, "text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\"", p->title);
    draw_axes(&b, p, &f);
    if (p->kind == VS_PLOT_BAR) draw_bars(&b, p, &f);
    else draw_lines(&b, p, &f);
    if (nleg) draw_legend(&b, p, p->width, f.y0 + 12);
    vs_sb_printf(&b, "</svg>\n");
    if (b.oom) {
        free(b.p);
        return vs_error_set(err, VS_ERR_NOMEM, "plot: out of memory rendering the SVG");
    }
    *out = b.p;
    if (len) *len = b.len;
    return VS_OK;
}

vs_status vs_plot_write_svg(const vs_plot *p, const char *path, vs_error *err)
{
    if (!path) return vs_error_set(err, VS_ERR_ARG, "plot: no path");
    char *svg;
    size_t n;
    vs_error e;
    if (vs_plot_svg(p, &svg, &n, &e) != VS_OK) return vs_error_set(err, e.code, "%s: %s", path, e.msg);
    vs_status s = vs_write_file_atomic(path, svg, n, err);
    free(svg);
    return s;
}
