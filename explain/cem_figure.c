/* cem_figure.c - picture grids of contrastive explanations (CEM-MAF Figs. 1, 4, 7): one row per
 * explained image, one column per panel (original, PN, PP, LIME, Grad-CAM, ...), column titles on
 * top and a short caption under every cell, written as PNG. */
#include "versus/cem.h"
#include "versus/picture.h"

#include <stdlib.h>
#include <string.h>

vs_status vs_cem_grid_png(const float *const *cells, int n_rows, int n_cols, int c, int h, int w, int scale,
                          const char *const *titles, const char *const *captions, const char *path, vs_error *err)
{
    if (n_rows < 1 || n_cols < 1 || (c != 1 && c != 3) || h < 1 || w < 1 || scale < 1)
        return vs_error_set(err, VS_ERR_ARG, "grid: needs rows, columns, [1 or 3,h,w] images and scale >= 1");
    const int pad = 4, text_h = VS_FONT_CELL_H + 2;
    int cw = w * scale, ch = h * scale;
    /* a column is as wide as its image or its longest title / caption */
    int colw = cw;
    for (int j = 0; titles && j < n_cols; j++)
        if (titles[j] && (int)strlen(titles[j]) * VS_FONT_CELL_W > colw) colw = (int)strlen(titles[j]) * VS_FONT_CELL_W;
    for (int i = 0; captions && i < n_rows * n_cols; i++)
        if (captions[i] && (int)strlen(captions[i]) * VS_FONT_CELL_W > colw) colw = (int)strlen(captions[i]) * VS_FONT_CELL_W;
    int W = pad + n_cols * (colw + pad), H = pad + text_h + n_rows * (ch + text_h + pad);
    vs_image *im = vs_image_new(W, H, 3);
    if (!im) return vs_error_set(err, VS_ERR_NOMEM, "grid: out of memory for a %dx%d picture", W, H);
    memset(im->pixels, 255, (size_t)W * (size_t)H * 3);
    const uint8_t ink[3] = {0, 0, 0};
    for (int j = 0; titles && j < n_cols; j++)
        if (titles[j]) vs_image_draw_text(im, pad + j * (colw + pad), pad, titles[j], ink, 1);
    vs_status st = VS_OK;
    for (int r = 0; r < n_rows && st == VS_OK; r++)
        for (int j = 0; j < n_cols; j++) {
            int x0 = pad + j * (colw + pad), y0 = pad + text_h + r * (ch + text_h + pad);
            const float *cell = cells[r * n_cols + j];
            if (cell) {
                vs_image *one = vs_image_from_float(cell, c, h, w);
                if (!one) {
                    st = vs_error_set(err, VS_ERR_NOMEM, "grid: out of memory");
                    break;
                }
                for (int yy = 0; yy < ch; yy++)
                    for (int xx = 0; xx < cw; xx++) {
                        const uint8_t *p = one->pixels + ((size_t)(yy / scale) * (size_t)w + (size_t)(xx / scale)) * (size_t)c;
                        uint8_t rgb[3] = {p[0], p[c == 3 ? 1 : 0], p[c == 3 ? 2 : 0]};
                        vs_image_put_pixel(im, x0 + xx, y0 + yy, rgb);
                    }
                vs_image_free(one);
            }
            const char *cap = captions ? captions[r * n_cols + j] : NULL;
            if (cap) vs_image_draw_text(im, x0, y0 + ch + 1, cap, ink, 1);
        }
    if (st == VS_OK) st = vs_png_write(im, path, err);
    vs_image_free(im);
    return st;
}
