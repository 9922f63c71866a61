/* heatmap.c - signed attribution pictures: the blue-white-red colormap, its symmetric scale,
 * heatmaps, overlays on the input image, and captioned grids of tiles. */
#include "versus/picture.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_colormap_diverging(float t, uint8_t rgb[3])
{
    if (!(t == t)) t = 0; /* NaN -> white */
    t = t < -1 ? -1 : t > 1 ? 1 : t;
    uint8_t fade = (uint8_t)lrintf(255.0f * (1.0f - fabsf(t))); /* the two other channels fade with |t| */
    rgb[0] = t < 0 ? fade : 255;
    rgb[1] = fade;
    rgb[2] = t > 0 ? fade : 255;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

vs_status vs_attr_scale(const float *attr, size_t n, double percentile, float *scale, vs_error *err)
{
    if (!scale) return vs_error_set(err, VS_ERR_ARG, "attr_scale: no output");
    *scale = 0;
    if (!attr && n > 0) return vs_error_set(err, VS_ERR_ARG, "attr_scale: no attributions");
    if (!(percentile > 0 && percentile <= 100))
        return vs_error_set(err, VS_ERR_ARG, "attr_scale: percentile %g is not in (0, 100]", percentile);
    size_t m = 0;
    float top = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(attr[i])) {
            m++;
            if (fabsf(attr[i]) > top) top = fabsf(attr[i]);
        }
    if (m == 0 || percentile == 100) {
        *scale = top;
        return VS_OK;
    }
    float *v = malloc(m * sizeof *v);
    if (!v) return vs_error_set(err, VS_ERR_NOMEM, "attr_scale: out of memory for %zu values", m);
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(attr[i])) v[m++] = fabsf(attr[i]);
    qsort(v, m, sizeof *v, cmp_float);
    double pos = percentile / 100.0 * (double)(m - 1);
    size_t lo = (size_t)floor(pos);
    double frac = pos - (double)lo;
    double s = lo + 1 < m ? v[lo] + frac * ((double)v[lo + 1] - v[lo]) : v[lo];
    free(v);
    *scale = (float)s;
    return VS_OK;
}

void vs_attr_channel_sum(const float *attr, int c, int h, int w, float *out)
{
    size_t plane = (size_t)h * (size_t)w;
    for (size_t i = 0; i < plane; i++) {
        float s = 0;
        for (int k = 0; k < c; k++) s += attr[(size_t)k * plane + i];
        out[i] = s;
    }
}

/* a / scale as the colormap's t; a non-positive or non-finite scale gives 0 (white). */
static float scaled(float a, float scale)
{
    return scale > 0 && isfinite(scale) ? a / scale : 0.0f;
}

vs_image *vs_heatmap_rgb(const float *attr, int h, int w, float scale)
{
    if (!attr) {
        vs_set_last_error(VS_ERR_ARG, "heatmap: no attributions");
        return NULL;
    }
    vs_image *im = vs_image_new(w, h, 3);
    if (!im) return NULL;
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) vs_colormap_diverging(scaled(attr[i], scale), im->pixels + 3 * i);
    return im;
}

vs_image *vs_overlay(const float *image, int c, int h, int w, const float *attr, float scale)
{
    if (!image || !attr || (c != 1 && c != 3)) {
        vs_set_last_error(VS_ERR_ARG, "overlay: need an image with 1 or 3 channels and attributions");
        return NULL;
    }
    vs_image *im = vs_image_new(w, h, 3);
    if (!im) return NULL;
    size_t plane = (size_t)w * (size_t)h;
    for (size_t i = 0; i < plane; i++) {
        float g = c == 1 ? image[i]
                         : 0.299f * image[i] + 0.587f * image[plane + i] + 0.114f * image[2 * plane + i];
        g = g > 0 ? (g < 1 ? g : 1) : 0; /* NaN -> 0 */
        float t = scaled(attr[i], scale);
        if (!(t == t)) t = 0;
        float alpha = fminf(1.0f, fabsf(t));
        float col[3] = {t > 0 ? 1.0f : 0.0f, 0.0f, t < 0 ? 1.0f : 0.0f};
        for (int k = 0; k < 3; k++) im->pixels[3 * i + (size_t)k] = (uint8_t)lrintf(255.0f * ((1 - alpha) * g + alpha * col[k]));
    }
    return im;
}

/* ---------------------------------------------------------------- grids */

struct vs_grid {
    int rows, cols, tile_w, tile_h, zoom, pad, caption_lines;
    int cell_w, cell_h;
    vs_image *canvas;
};

enum { CAPTION_LINE_H = VS_FONT_CELL_H + 2 };
static const uint8_t white[3] = {255, 255, 255}, ink[3] = {32, 32, 32};

static void fill_rect(vs_image *im, int x0, int y0, int w, int h, const uint8_t rgb[3])
{
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x0 + w; x++) vs_image_put_pixel(im, x, y, rgb);
}

vs_grid *vs_grid_new(int rows, int cols, int tile_w, int tile_h, int zoom, int pad, int caption_lines)
{
    if (rows < 1 || cols < 1 || tile_w < 1 || tile_h < 1 || zoom < 1 || pad < 0 || caption_lines < 0) {
        vs_set_last_error(VS_ERR_ARG, "grid: sizes must be >= 1 (pad, caption_lines >= 0)");
        return NULL;
    }
    long long cw = (long long)tile_w * zoom, ch = (long long)tile_h * zoom + (long long)caption_lines * CAPTION_LINE_H;
    long long W = pad + cols * (cw + pad), H = pad + rows * (ch + pad);
    if (cw > INT_MAX || ch > INT_MAX || W > INT_MAX || H > INT_MAX) {
        vs_set_last_error(VS_ERR_ARG, "grid: canvas of %lld x %lld pixels is too large", W, H);
        return NULL;
    }
    vs_grid *g = calloc(1, sizeof *g);
    if (!g) {
        vs_set_last_error(VS_ERR_NOMEM, "grid: out of memory");
        return NULL;
    }
    *g = (vs_grid){rows, cols, tile_w, tile_h, zoom, pad, caption_lines, (int)cw, (int)ch, vs_image_new((int)W, (int)H, 3)};
    if (!g->canvas) {
        free(g);
        return NULL;
    }
    memset(g->canvas->pixels, 255, (size_t)W * (size_t)H * 3);
    return g;
}

void vs_grid_free(vs_grid *g)
{
    if (!g) return;
    vs_image_free(g->canvas);
    free(g);
}

void vs_grid_cell_origin(const vs_grid *g, int row, int col, int *x, int *y)
{
    if (!g) {
        *x = *y = 0;
        return;
    }
    *x = g->pad + col * (g->cell_w + g->pad);
    *y = g->pad + row * (g->cell_h + g->pad);
}

const vs_image *vs_grid_image(const vs_grid *g)
{
    return g ? g->canvas : NULL;
}

vs_status vs_grid_put(vs_grid *g, int row, int col, const vs_image *tile, vs_error *err)
{
    if (!g || !tile || !tile->pixels) return vs_error_set(err, VS_ERR_ARG, "grid_put: NULL grid or tile");
    if (row < 0 || row >= g->rows || col < 0 || col >= g->cols)
        return vs_error_set(err, VS_ERR_ARG, "grid_put: cell (%d,%d) outside the %d x %d grid", row, col, g->rows, g->cols);
    if (tile->w > g->tile_w || tile->h > g->tile_h || tile->channels < 1 || tile->channels > 4)
        return vs_error_set(err, VS_ERR_ARG, "grid_put: %d x %d tile does not fit the %d x %d cells", tile->w, tile->h,
                            g->tile_w, g->tile_h);
    int x0, y0, c = tile->channels;
    vs_grid_cell_origin(g, row, col, &x0, &y0);
    fill_rect(g->canvas, x0, y0, g->cell_w, g->tile_h * g->zoom, white);
    x0 += (g->tile_w - tile->w) / 2 * g->zoom;
    y0 += (g->tile_h - tile->h) / 2 * g->zoom;
    for (int y = 0; y < tile->h; y++)
        for (int x = 0; x < tile->w; x++) {
            const uint8_t *p = tile->pixels + ((size_t)y * (size_t)tile->w + (size_t)x) * (size_t)c;
            int alpha = c == 2 || c == 4 ? p[c - 1] : 255;
            uint8_t rgb[3];
            for (int k = 0; k < 3; k++) {
                int v = c >= 3 ? p[k] : p[0];
                rgb[k] = (uint8_t)((v * alpha + 255 * (255 - alpha) + 127) / 255); /* over white */
            }
            fill_rect(g->canvas, x0 + x * g->zoom, y0 + y * g->zoom, g->zoom, g->zoom, rgb);
        }
    return VS_OK;
}

vs_status vs_grid_caption(vs_grid *g, int row, int col, const char *text, vs_error *err)
{
    if (!g || !text) return vs_error_set(err, VS_ERR_ARG, "grid_caption: NULL grid or text");
    if (row < 0 || row >= g->rows || col < 0 || col >= g->cols)
        return vs_error_set(err, VS_ERR_ARG, "grid_caption: cell (%d,%d) outside the %d x %d grid", row, col, g->rows, g->cols);
    int x0, y0;
    vs_grid_cell_origin(g, row, col, &x0, &y0);
    y0 += g->tile_h * g->zoom;
    fill_rect(g->canvas, x0, y0, g->cell_w, g->caption_lines * CAPTION_LINE_H, white);
    size_t maxc = (size_t)(g->cell_w / VS_FONT_CELL_W);
    if (maxc == 0) return VS_OK;
    char *line = malloc(maxc + 1);
    if (!line) return vs_error_set(err, VS_ERR_NOMEM, "grid_caption: out of memory");
    const char *t = text;
    for (int l = 0; l < g->caption_lines && *t; l++) {
        while (*t == ' ') t++;
        /* The longest prefix that fits, cut at the last space (or newline) when the text goes on. */
        size_t n = 0, cut = 0;
        while (t[n] && t[n] != '\n' && n < maxc) {
            if (t[n] == ' ') cut = n;
            n++;
        }
        if (t[n] && t[n] != '\n' && t[n] != ' ' && cut > 0) n = cut;
        memcpy(line, t, n);
        line[n] = '\0';
        int width = (int)n * VS_FONT_CELL_W;
        vs_image_draw_text(g->canvas, x0 + (g->cell_w - width) / 2 + 1, y0 + 2 + l * CAPTION_LINE_H, line, ink, 1);
        t += n;
        if (*t == '\n') t++;
    }
    free(line);
    return VS_OK;
}
