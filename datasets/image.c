/* image.c - the 8-bit vs_image: allocation, conversion from [C,H,W] floats, superpixel boundaries. */
#include "versus/picture.h"

#include <math.h>
#include <stdlib.h>

vs_image *vs_image_new(int w, int h, int channels)
{
    size_t n;
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || !vs_size_mul((size_t)w, (size_t)h, &n) ||
        !vs_size_mul(n, (size_t)channels, &n)) {
        vs_set_last_error(VS_ERR_ARG, "image: size %d x %d x %d is invalid", w, h, channels);
        return NULL;
    }
    vs_image *im = malloc(sizeof *im);
    uint8_t *px = calloc(n, 1);
    if (!im || !px) {
        free(im);
        free(px);
        vs_set_last_error(VS_ERR_NOMEM, "image: out of memory for %d x %d x %d", w, h, channels);
        return NULL;
    }
    im->w = w;
    im->h = h;
    im->channels = channels;
    im->pixels = px;
    return im;
}

void vs_image_free(vs_image *im)
{
    if (!im) return;
    free(im->pixels);
    free(im);
}

vs_image *vs_image_from_float(const float *x, int c, int h, int w)
{
    if (!x || (c != 1 && c != 3)) {
        vs_set_last_error(VS_ERR_ARG, "image_from_float: need data with 1 or 3 channels (got %d)", c);
        return NULL;
    }
    vs_image *im = vs_image_new(w, h, c);
    if (!im) return NULL;
    size_t plane = (size_t)w * (size_t)h;
    for (int k = 0; k < c; k++)
        for (size_t i = 0; i < plane; i++) {
            float v = x[(size_t)k * plane + i];
            v = v > 0 ? (v < 1 ? v : 1) : 0; /* NaN compares false: -> 0 */
            im->pixels[i * (size_t)c + (size_t)k] = (uint8_t)lrintf(255.0f * v);
        }
    return im;
}

void vs_image_put_pixel(vs_image *im, int x, int y, const uint8_t rgb[3])
{
    if (!im || !im->pixels || x < 0 || y < 0 || x >= im->w || y >= im->h) return;
    int c = im->channels;
    uint8_t *p = im->pixels + ((size_t)y * (size_t)im->w + (size_t)x) * (size_t)c;
    if (c >= 3) {
        p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
    } else {
        p[0] = (uint8_t)lrintf(0.299f * rgb[0] + 0.587f * rgb[1] + 0.114f * rgb[2]);
    }
    if (c == 2 || c == 4) p[c - 1] = 255;
}

vs_status vs_image_mark_boundaries(vs_image *im, const int32_t *labels, const uint8_t rgb[3], vs_error *err)
{
    if (!im || !im->pixels || !labels || !rgb) return vs_error_set(err, VS_ERR_ARG, "mark_boundaries: NULL argument");
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            size_t i = (size_t)y * (size_t)im->w + (size_t)x;
            int edge = (x + 1 < im->w && labels[i + 1] != labels[i]) ||
                       (y + 1 < im->h && labels[i + (size_t)im->w] != labels[i]);
            if (edge) vs_image_put_pixel(im, x, y, rgb);
        }
    return VS_OK;
}
