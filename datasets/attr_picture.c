/* attr_picture.c - the labelled picture of image attributions `versus attribute --png` and
 * `versus evaluate --heatmaps` write: a title, per row the input, the map on a colour-blind-safe
 * diverging scale centred at 0 and the map over a lightened input, each captioned, and a colour bar.
 * The scale is ColorBrewer's RdBu (safe for the common colour blindnesses); the overlay lightens the
 * input first, so blue on a dark MNIST background stays visible. */
#include "versus/picture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vs_colormap_signed(float t, uint8_t rgb[3])
{
    static const uint8_t rdbu[11][3] = {{5, 48, 97},    {33, 102, 172}, {67, 147, 195}, {146, 197, 222}, {209, 229, 240}, {247, 247, 247},
                                        {253, 219, 199}, {244, 165, 130}, {214, 96, 77},  {178, 24, 43},   {103, 0, 31}};
    if (!(t == t)) t = 0;
    t = t < -1 ? -1 : t > 1 ? 1 : t;
    float p = (t + 1) * 5;
    int k = p >= 10 ? 9 : (int)p;
    float f = p - (float)k;
    for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)lrintf((1 - f) * rdbu[k][c] + f * rdbu[k + 1][c]);
}

/* The map a [h*w] (scale s) as a tile, alone or over the lightened luma of image [c,h,w]. */
static vs_image *map_tile(const float *image, int c, int h, int w, const float *a, float s)
{
    vs_image *im = vs_image_new(w, h, 3);
    size_t plane = (size_t)w * (size_t)h;
    for (size_t i = 0; im && i < plane; i++) {
        float t = s > 0 ? a[i] / s : 0, alpha = fminf(1.0f, fabsf(t == t ? t : 0));
        uint8_t col[3];
        vs_colormap_signed(t, col);
        float bg = 1;
        if (image) {
            float g = c == 3 ? 0.299f * image[i] + 0.587f * image[plane + i] + 0.114f * image[2 * plane + i] : image[i];
            g = g > 0 ? (g < 1 ? g : 1) : 0;
            bg = 0.45f + 0.5f * g; /* a light gray input under the colours */
        }
        for (int k = 0; k < 3; k++)
            im->pixels[3 * i + (size_t)k] = image ? (uint8_t)lrintf((1 - alpha) * 255.0f * bg + alpha * col[k]) : col[k];
    }
    return im;
}

/* The bottom band: a colour bar from -1 to +1 of the row's scale, with its labels. */
static void colour_bar(vs_image *im, int x0, int y0)
{
    static const uint8_t ink[3] = {32, 32, 32};
    int bw = 240, bh = 12;
    for (int x = 0; x < bw; x++) {
        uint8_t col[3];
        vs_colormap_signed(2.0f * (float)x / (float)(bw - 1) - 1, col);
        for (int y = 0; y < bh; y++) vs_image_put_pixel(im, x0 + x, y0 + y, col);
    }
    vs_image_draw_text(im, x0, y0 + bh + 3, "-s", ink, 1);
    vs_image_draw_text(im, x0 + bw / 2 - 3, y0 + bh + 3, "0", ink, 1);
    vs_image_draw_text(im, x0 + bw - 12, y0 + bh + 3, "+s", ink, 1);
    vs_image_draw_text(im, x0 + bw + 10, y0 + 2, "s: the row's 99th percentile of |A|", ink, 1);
    vs_image_draw_text(im, x0 + bw + 10, y0 + 12, "red raises the score, blue lowers it", ink, 1);
}

enum { TITLE_H = 2 * (VS_FONT_CELL_H + 3) + 6, BAR_H = 40, PAD = 6 };

vs_image *vs_attr_picture(const float *x, const float *a, int n, int c, int h, int w, const char *title, const char *const *labels)
{
    if (!x || !a || n < 1 || (c != 1 && c != 3) || h < 1 || w < 1) {
        vs_set_last_error(VS_ERR_ARG, "attribution picture: images [n, 1 or 3, h, w] and their maps are needed");
        return NULL;
    }
    int rows = n < 16 ? n : 16, side = h > w ? h : w, zoom = side >= 112 ? 1 : 112 / side;
    if (zoom > 8) zoom = 8;
    while (w * zoom < 96) zoom++; /* room for a caption's words */
    vs_grid *g = vs_grid_new(rows, 3, w, h, zoom, PAD, 3);
    float *sum = malloc((size_t)h * (size_t)w * sizeof *sum);
    vs_image *out = NULL;
    vs_error err;
    bool ok = g && sum;
    for (int r = 0; ok && r < rows; r++) {
        size_t off = (size_t)r * (size_t)c * (size_t)h * (size_t)w;
        vs_attr_channel_sum(a + off, c, h, w, sum);
        float s = 0;
        if (vs_attr_scale(sum, (size_t)h * (size_t)w, 99.0, &s, &err) != VS_OK) s = 0;
        vs_image *im = vs_image_from_float(x + off, c, h, w), *map = map_tile(NULL, c, h, w, sum, s), *ov = map_tile(x + off, c, h, w, sum, s);
        char cap[96];
        snprintf(cap, sizeof cap, "map A, s = %.3g", (double)s);
        ok = im && map && ov && vs_grid_put(g, r, 0, im, &err) == VS_OK && vs_grid_put(g, r, 1, map, &err) == VS_OK &&
             vs_grid_put(g, r, 2, ov, &err) == VS_OK && vs_grid_caption(g, r, 1, cap, &err) == VS_OK;
        if (ok && labels && labels[2 * r]) ok = vs_grid_caption(g, r, 0, labels[2 * r], &err) == VS_OK;
        if (ok && labels && labels[2 * r + 1]) ok = vs_grid_caption(g, r, 2, labels[2 * r + 1], &err) == VS_OK;
        vs_image_free(im);
        vs_image_free(map);
        vs_image_free(ov);
    }
    const vs_image *gi = ok ? vs_grid_image(g) : NULL;
    int W = gi ? (gi->w > 520 ? gi->w : 520) : 0;
    if (gi && (out = vs_image_new(W, TITLE_H + gi->h + BAR_H, 3))) {
        static const uint8_t ink[3] = {32, 32, 32};
        memset(out->pixels, 255, (size_t)out->w * (size_t)out->h * 3);
        for (int y = 0; y < gi->h; y++) memcpy(out->pixels + ((size_t)(TITLE_H + y) * (size_t)W) * 3, gi->pixels + (size_t)y * (size_t)gi->w * 3, (size_t)gi->w * 3);
        /* the title over two lines, cut at the width */
        size_t len = title ? strlen(title) : 0, per = (size_t)(W - 2 * PAD) / VS_FONT_CELL_W;
        char line[512];
        for (int k = 0; k < 2 && (size_t)k * per < len; k++) {
            snprintf(line, sizeof line, "%.*s", (int)(per < sizeof line - 1 ? per : sizeof line - 1), title + (size_t)k * per);
            vs_image_draw_text(out, PAD, PAD + k * (VS_FONT_CELL_H + 3), line, ink, 1);
        }
        colour_bar(out, PAD, TITLE_H + gi->h + 4);
    } else if (!gi) {
        vs_set_last_error(err.code ? err.code : VS_ERR_NOMEM, "attribution picture: %s", err.code ? err.msg : "out of memory");
    }
    vs_grid_free(g);
    free(sum);
    return out;
}
