/* versus/picture.h - 8-bit images, PNG files, attribution heatmaps and captioned image grids.
 *
 * A vs_image is an 8-bit raster owned by whoever created it; free it with vs_image_free().  Inputs
 * from the rest of versus are plain float arrays: an image is [C,H,W] with C = 1 or 3 and values in
 * [0,1]; an attribution map is [H,W] (sum a [C,H,W] map over channels with vs_attr_channel_sum).
 * Functions that return a new object return NULL on failure and record why with vs_set_last_error().
 * PNG files are written atomically (temporary file in the same directory, fsync, rename).
 * The PNG reader reads non-interlaced 8-bit gray, gray+alpha, RGB and RGBA PNGs from any encoder
 * (every deflate block type, via vs_decompress of versus/data_io.h); other or malformed files get a
 * VS_ERR_FORMAT message naming them, except image data longer than IHDR announces, which meets the
 * decompression cap (VS_ERR_NOMEM, as in data_io.h). */
#ifndef VERSUS_PICTURE_H
#define VERSUS_PICTURE_H

#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Interleaved 8-bit pixels, row-major: pixel (x,y) channel k is pixels[(y*w + x)*channels + k].
 * channels: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
typedef struct vs_image {
    int w, h, channels;
    uint8_t *pixels;            /* [h*w*channels], owned by the image */
} vs_image;

/* New w x h image with all bytes 0; NULL on bad size or out of memory. */
vs_image *vs_image_new(int w, int h, int channels);
/* Free the image and its pixels; NULL is fine. */
void vs_image_free(vs_image *im);
/* 8-bit copy of a float image x [c,h,w] (c = 1 or 3): v -> round(255 * clamp(v, 0, 1)), NaN -> 0. */
vs_image *vs_image_from_float(const float *x, int c, int h, int w);
/* Set pixel (x,y) to the opaque colour rgb (gray images: its luma 0.299 r + 0.587 g + 0.114 b;
 * alpha, if any, to 255); coordinates outside the image are ignored. */
void vs_image_put_pixel(vs_image *im, int x, int y, const uint8_t rgb[3]);
/* Draw printable ASCII text with the embedded 5x7 font (g j p q y descend into an 8th row) in
 * 6x8 cells times `scale`, top-left corner at (x,y), clipped to the image; other bytes draw as '?'.
 * Gray images use the luma of rgb.  Returns the width in pixels the text occupies. */
int vs_image_draw_text(vs_image *im, int x, int y, const char *text, const uint8_t rgb[3], int scale);
/* Width and height of one character cell of vs_image_draw_text at scale 1. */
#define VS_FONT_CELL_W 6
#define VS_FONT_CELL_H 8
/* Paint pixels whose right or lower 4-neighbour has another label: labels [h*w] of an image the
 * same size as im (for example SLIC superpixels), rgb the boundary colour. */
vs_status vs_image_mark_boundaries(vs_image *im, const int32_t *labels, const uint8_t rgb[3], vs_error *err);

/* PNG file holding im (8-bit; colour type from im->channels).  Errors name the path. */
vs_status vs_png_write(const vs_image *im, const char *path, vs_error *err);
/* PNG bytes of im in a new malloc'd buffer *out of *len bytes (the caller frees it). */
vs_status vs_png_encode(const vs_image *im, uint8_t **out, size_t *len, vs_error *err);
/* Read a PNG file into a new image *out (the caller frees it with vs_image_free). */
vs_status vs_png_read(const char *path, vs_image **out, vs_error *err);
/* Decode PNG bytes; `name` is used in error messages (a path, or "<memory>"). */
vs_status vs_png_decode(const uint8_t *buf, size_t len, const char *name, vs_image **out, vs_error *err);

/* Diverging blue-white-red colour of t in [-1,1] (clamped; NaN -> white):
 * t = -1 -> (0,0,255), t = 0 -> (255,255,255), t = +1 -> (255,0,0), linear in between. */
void vs_colormap_diverging(float t, uint8_t rgb[3]);
/* ColorBrewer's RdBu, a diverging scale safe for the common colour blindnesses, at t in [-1,1]
 * (clamped; NaN -> 0): dark blue (5,48,97) at -1, near white (247,247,247) at 0, dark red (103,0,31)
 * at +1, linear between its 11 colours. */
void vs_colormap_signed(float t, uint8_t rgb[3]);
/* The labelled picture of image attributions a of images x (both [n, c, h, w], c = 1 or 3; the
 * first 16 rows): a title (cut to two lines), per row the input, the channel-summed map on
 * vs_colormap_signed from -s to +s (s: the row's 99th percentile of |A|, in the map's caption) and
 * the map over the lightened input; labels [2 n] (may be NULL, entries may be NULL) caption the
 * input and the overlay of each row; a colour bar at the bottom.  A new image, or NULL with
 * vs_last_error() set. */
vs_image *vs_attr_picture(const float *x, const float *a, int n, int c, int h, int w, const char *title, const char *const *labels);
/* Symmetric colour scale of an attribution map a [n]: the `percentile`-th percentile (0 < p <= 100,
 * linear interpolation between order statistics as numpy.percentile) of |a| over its finite
 * values; 100 gives max |a|.  *scale = 0 when every value is 0 or non-finite. */
vs_status vs_attr_scale(const float *attr, size_t n, double percentile, float *scale, vs_error *err);
/* out[y,x] = sum_k attr[k,y,x]; attr [c,h,w], out [h,w] (caller-allocated). */
void vs_attr_channel_sum(const float *attr, int c, int h, int w, float *out);
/* RGB heatmap of attr [h,w]: pixel = vs_colormap_diverging(a / scale).  scale <= 0 (or not finite)
 * draws every pixel white. */
vs_image *vs_heatmap_rgb(const float *attr, int h, int w, float scale);
/* RGB overlay: the luma of image [c,h,w] (c = 1 or 3) as gray background, blended towards pure red
 * (a > 0) or pure blue (a < 0) with alpha = min(1, |a| / scale); attr [h,w]. */
vs_image *vs_overlay(const float *image, int c, int h, int w, const float *attr, float scale);

/* A white RGB canvas of rows x cols cells.  Each cell holds one tile of at most tile_w x tile_h
 * pixels drawn `zoom` times larger (nearest neighbour) and, under it, caption_lines lines of text.
 * Geometry (all in pixels): cell_w = tile_w*zoom, cell_h = tile_h*zoom + caption_lines*(VS_FONT_CELL_H+2);
 * canvas w = pad + cols*(cell_w + pad), h = pad + rows*(cell_h + pad);
 * cell (r,c) starts at x = pad + c*(cell_w + pad), y = pad + r*(cell_h + pad).
 * The grid owns its canvas; free it with vs_grid_free(). */
typedef struct vs_grid vs_grid;

/* New grid; NULL on bad geometry (any size < 1, pad or caption_lines < 0) or out of memory. */
vs_grid *vs_grid_new(int rows, int cols, int tile_w, int tile_h, int zoom, int pad, int caption_lines);
void vs_grid_free(vs_grid *g);
/* Draw tile (1..4 channels; alpha is composited over white) into cell (row,col), centred when
 * smaller than tile_w x tile_h.  VS_ERR_ARG for a cell outside the grid or a tile too large. */
vs_status vs_grid_put(vs_grid *g, int row, int col, const vs_image *tile, vs_error *err);
/* Write text under the tile of cell (row,col), word-wrapped to the cell width over caption_lines
 * lines; what does not fit is cut.  Replaces an earlier caption of that cell. */
vs_status vs_grid_caption(vs_grid *g, int row, int col, const char *text, vs_error *err);
/* Top-left pixel of cell (row,col) on the canvas (see the geometry above). */
void vs_grid_cell_origin(const vs_grid *g, int row, int col, int *x, int *y);
/* The canvas (borrowed; valid until vs_grid_free).  Write it with vs_png_write. */
const vs_image *vs_grid_image(const vs_grid *g);

#ifdef __cplusplus
}
#endif
#endif
