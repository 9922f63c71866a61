/* report_matrix.c - a MATRIX figure as SVG: an interaction or correspondence matrix drawn as a heatmap
 * on a diverging colour-blind-safe scale (ColorBrewer RdBu: blue negative, white 0, red positive,
 * symmetric around 0), row and column labels thinned so that they never overlap, a colour bar. */
#include "datasets/sbuf.h"
#include "report/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIDE 300      /* rows or columns drawn; a larger matrix is the caller's to reduce */
#define LABEL_PX 11.0
#define LABEL_GAP 13.0    /* least distance between two neighbouring labels */
#define MAX_LABEL_CHARS 22
#define BAR_W 14.0        /* colour bar */
#define BAR_STEPS 64

/* RdBu, 11 classes (ColorBrewer; safe for the common colour-vision deficiencies), from -1 to +1. */
static const unsigned char rdbu[11][3] = {{5, 48, 97},    {33, 102, 172},  {67, 147, 195},  {146, 197, 222}, {209, 229, 240}, {247, 247, 247},
                                          {253, 219, 199}, {244, 165, 130}, {214, 96, 77},   {178, 24, 43},   {103, 0, 31}};

/* The colour of t in [-1, 1] (clamped) as #rrggbb: linear between the 11 anchors. */
static void diverging(double t, char *hex)
{
    t = t < -1 ? -1 : t > 1 ? 1 : t;
    double u = (t + 1) * 5;
    int k = u >= 10 ? 9 : (int)u;
    double f = u - k;
    int c[3];
    for (int i = 0; i < 3; i++) c[i] = (int)lround(rdbu[k][i] + f * (rdbu[k + 1][i] - rdbu[k][i]));
    snprintf(hex, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* Every step-th label keeps a distance of LABEL_GAP at `cell` pixels per row or column. */
static int label_step(double cell) { return cell >= LABEL_GAP ? 1 : (int)ceil(LABEL_GAP / cell); }

/* Width of the widest label drawn (every step-th), cut as it is drawn. */
static double widest(char *const *labels, size_t n, int step)
{
    double w = 0;
    for (size_t i = 0; i < n; i += (size_t)step) {
        vs_sbuf b = {0};
        vs_sb_text_cut(&b, labels[i] ? labels[i] : "", MAX_LABEL_CHARS);
        w = fmax(w, vs_text_width(b.p ? b.p : "", LABEL_PX));
        free(b.p);
    }
    return w;
}

static void number(char *buf, size_t n, double v) { snprintf(buf, n, "%.3g", fabs(v) < 1e-300 ? 0.0 : v); }

vs_status vs_report_matrix_svg(const vs_report_figure *f, char **out, size_t *len, vs_error *err)
{
    size_t R = f->n_series, C = f->n_categories;
    if (R < 1 || C < 1 || R > MAX_SIDE || C > MAX_SIDE)
        return vs_error_set(err, VS_ERR_ARG, "%s: a matrix figure needs 1 to %d rows and columns, has %zu x %zu", f->name, MAX_SIDE, R, C);
    double vmax = 0;
    for (size_t r = 0; r < R; r++) {
        if (f->series[r].n != C)
            return vs_error_set(err, VS_ERR_ARG, "%s: matrix row %zu has %zu values for %zu columns", f->name, r, f->series[r].n, C);
        for (size_t c = 0; c < C; c++)
            if (isfinite(f->series[r].y[c])) vmax = fmax(vmax, fabs(f->series[r].y[c]));
    }
    if (vmax == 0) vmax = 1; /* an all-zero matrix is drawn white on a unit scale */
    char **row_labels = malloc(R * sizeof *row_labels);
    if (!row_labels) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", f->name);
    for (size_t r = 0; r < R; r++) row_labels[r] = f->series[r].name;

    double side = (double)(R > C ? R : C), cell = fmin(28, fmax(2, 520 / side));
    int rstep = label_step(cell), cstep = label_step(cell);
    double rw = widest(row_labels, R, rstep), cw = widest(f->categories, C, cstep);
    double top = f->title ? 40 : 12, left = (f->ylabel ? 26 : 8) + rw + 6;
    double gx = left, gy = top, gw = cell * (double)C, gh = cell * (double)R;
    double bar_x = gx + gw + 24, W = fmax(bar_x + BAR_W + 60, 360), H = gy + gh + 6 + cw + (f->xlabel ? 28 : 8);
    vs_sbuf b = {0};
    char hex[8], num[32];
    vs_sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    vs_sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" fill=\"#222\">\n",
                 W, H, W, H);
    vs_sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (f->title) {
        vs_sb_printf(&b, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
        vs_sb_text(&b, f->title);
        vs_sb_printf(&b, "</text>\n");
    }
    /* the cells, each with its value in a tooltip */
    vs_sb_printf(&b, "<g class=\"cells\" shape-rendering=\"crispEdges\">\n");
    for (size_t r = 0; r < R; r++)
        for (size_t c = 0; c < C; c++) {
            double v = f->series[r].y[c];
            bool ok = isfinite(v);
            if (ok) diverging(v / vmax, hex);
            vs_sb_printf(&b, "<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>", gx + cell * (double)c,
                         gy + cell * (double)r, cell, cell, ok ? hex : "#bdbdbd");
            vs_sb_text(&b, row_labels[r]);
            vs_sb_printf(&b, " × ");
            vs_sb_text(&b, f->categories[c]);
            number(num, sizeof num, v);
            vs_sb_printf(&b, ": %s</title></rect>\n", ok ? num : "not defined");
        }
    vs_sb_printf(&b, "</g>\n<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"#888\"/>\n", gx, gy, gw, gh);
    /* row labels right-aligned left of the grid, column labels upright below it, every step-th */
    vs_sb_printf(&b, "<g class=\"labels\" font-size=\"%.0f\">\n", LABEL_PX);
    for (size_t r = 0; r < R; r += (size_t)rstep) {
        vs_sb_printf(&b, "<text class=\"row-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" dy=\"0.35em\">", gx - 4,
                     gy + cell * ((double)r + 0.5));
        if (vs_sb_text_cut(&b, row_labels[r], MAX_LABEL_CHARS)) {
            vs_sb_printf(&b, "<title>");
            vs_sb_text(&b, row_labels[r]);
            vs_sb_printf(&b, "</title>");
        }
        vs_sb_printf(&b, "</text>\n");
    }
    for (size_t c = 0; c < C; c += (size_t)cstep) {
        double x = gx + cell * ((double)c + 0.5), y = gy + gh + 4;
        vs_sb_printf(&b, "<text class=\"col-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" dy=\"0.35em\" "
                         "transform=\"rotate(-90 %.2f %.2f)\">",
                     x, y, x, y);
        if (vs_sb_text_cut(&b, f->categories[c], MAX_LABEL_CHARS)) {
            vs_sb_printf(&b, "<title>");
            vs_sb_text(&b, f->categories[c]);
            vs_sb_printf(&b, "</title>");
        }
        vs_sb_printf(&b, "</text>\n");
    }
    vs_sb_printf(&b, "</g>\n");
    if (f->xlabel) {
        vs_sb_printf(&b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"13\">", gx + gw / 2, H - 10);
        vs_sb_text(&b, f->xlabel);
        vs_sb_printf(&b, "</text>\n");
    }
    if (f->ylabel) {
        double x = 16, y = gy + gh / 2;
        vs_sb_printf(&b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 %.2f %.2f)\">", x, y, x, y);
        vs_sb_text(&b, f->ylabel);
        vs_sb_printf(&b, "</text>\n");
    }
    /* the colour bar: -vmax at the bottom, +vmax at the top, ticks at the ends, the halves and 0 */
    double bh = fmax(gh, 120), by = gy;
    vs_sb_printf(&b, "<g class=\"colorbar\" font-size=\"%.0f\" shape-rendering=\"crispEdges\">\n", LABEL_PX);
    for (int k = 0; k < BAR_STEPS; k++) {
        diverging(1 - 2 * (k + 0.5) / BAR_STEPS, hex);
        vs_sb_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.1f\" height=\"%.3f\" fill=\"%s\"/>\n", bar_x, by + bh * k / BAR_STEPS, BAR_W,
                     bh / BAR_STEPS + 0.05, hex);
    }
    vs_sb_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"none\" stroke=\"#888\"/>\n", bar_x, by, BAR_W, bh);
    for (int k = 0; k <= 4; k++) {
        double v = vmax * (1 - k / 2.0), y = by + bh * k / 4;
        number(num, sizeof num, v);
        vs_sb_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\"/>", bar_x + BAR_W, y, bar_x + BAR_W + 4, y);
        vs_sb_printf(&b, "<text x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\">%s</text>\n", bar_x + BAR_W + 6, y, num);
    }
    vs_sb_printf(&b, "</g>\n</svg>\n");
    free(row_labels);
    if (b.oom) {
        free(b.p);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory rendering the SVG", f->name);
    }
    *out = b.p;
    if (len) *len = b.len;
    return VS_OK;
}
