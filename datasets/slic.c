/* slic.c - SLIC superpixels (Achanta et al., TPAMI 2012) on gray and RGB images.
 *
 * Steps: optional Gaussian smoothing per channel, conversion to CIELAB, seeds on a regular grid
 * (placed like skimage's regular_grid) moved to the lowest gradient of their 3x3 neighbourhood, local
 * k-means in a 2S x 2S window around each centre, then connectivity enforcement as in the paper's
 * code: each 4-connected component gets its own label, components smaller than the minimum size join
 * a neighbouring segment.  Everything is deterministic (ties go to the lower index). */
#include "versus/superpixel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

vs_slic_options vs_slic_defaults(void)
{
    vs_slic_options o = {100, 10.0f, 0.0f, 10, 1, 0.5f};
    return o;
}

/* sRGB transfer function inverse: encoded value in [0,1] -> linear light. */
static double srgb_linear(double c)
{
    c = c < 0 ? 0 : c > 1 ? 1 : c;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* CIELAB's f(t): cube root above (6/29)^3, linear below. */
static double lab_f(double t)
{
    const double d = 6.0 / 29.0;
    return t > d * d * d ? cbrt(t) : t / (3 * d * d) + 4.0 / 29.0;
}

void vs_srgb_to_lab(const float rgb[3], float lab[3])
{
    double r = srgb_linear(rgb[0]), g = srgb_linear(rgb[1]), b = srgb_linear(rgb[2]);
    /* linear sRGB -> XYZ (D65), divided by the D65 white point */
    double X = (0.412453 * r + 0.357580 * g + 0.180423 * b) / 0.950456;
    double Y = 0.212671 * r + 0.715160 * g + 0.072169 * b;
    double Z = (0.019334 * r + 0.119193 * g + 0.950227 * b) / 1.088754;
    double fx = lab_f(X), fy = lab_f(Y), fz = lab_f(Z);
    lab[0] = (float)(116 * fy - 16);
    lab[1] = (float)(500 * (fx - fy));
    lab[2] = (float)(200 * (fy - fz));
}

/* scipy.ndimage 'reflect' boundary: d c b a | a b c d | d c b a. */
static int reflect(int i, int n)
{
    for (;;) {
        if (i < 0) i = -i - 1;
        else if (i >= n) i = 2 * n - i - 1;
        else return i;
    }
}

/* In-place separable Gaussian blur of plane [h,w], kernel radius round(4 sigma) as scipy's
 * gaussian_filter (truncate = 4); tmp [h*w] and k [2*radius+1] are scratch. */
static void gaussian_blur(float *plane, int h, int w, double sigma, float *tmp, double *k, int radius)
{
    double sum = 0;
    for (int i = -radius; i <= radius; i++) sum += k[i + radius] = exp(-0.5 * i * i / (sigma * sigma));
    for (int i = 0; i <= 2 * radius; i++) k[i] /= sum;
    for (int y = 0; y < h; y++) /* rows into tmp */
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int i = -radius; i <= radius; i++) s += k[i + radius] * plane[(size_t)y * w + reflect(x + i, w)];
            tmp[(size_t)y * w + x] = (float)s;
        }
    for (int y = 0; y < h; y++) /* columns back into plane */
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int i = -radius; i <= radius; i++) s += k[i + radius] * tmp[(size_t)reflect(y + i, h) * w + x];
            plane[(size_t)y * w + x] = (float)s;
        }
}

/* Seed grid as skimage's regular_grid for a 2-D image: step sqrt(H*W/n) on both axes (an axis shorter
 * than that takes its whole length and the other axis gets the rest), first seed at step/2. */
static void seed_grid(int h, int w, int n, int *start_y, int *step_y, int *start_x, int *step_x)
{
    double space = (double)h * w;
    if (space <= n) {
        *start_y = *start_x = 0;
        *step_y = *step_x = 1;
        return;
    }
    double sy = sqrt(space / n), sx = sy;
    if (h < sy) sy = h, sx = (double)w / n;
    else if (w < sx) sx = w, sy = (double)h / n;
    *start_y = (int)(sy / 2);
    *start_x = (int)(sx / 2);
    *step_y = (int)nearbyint(sy) > 0 ? (int)nearbyint(sy) : 1; /* numpy rounds half to even, as nearbyint */
    *step_x = (int)nearbyint(sx) > 0 ? (int)nearbyint(sx) : 1;
}

typedef struct centre {
    double y, x, l, a, b;
} centre;

static double lab_dist2(const float *p, const float *q)
{
    double d0 = p[0] - q[0], d1 = p[1] - q[1], d2 = p[2] - q[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* |I(x+1) - I(x-1)|^2 + |I(y+1) - I(y-1)|^2 on the Lab image, indices clamped at the border. */
static double gradient2(const float *lab, int h, int w, int y, int x)
{
    int xl = x > 0 ? x - 1 : x, xr = x + 1 < w ? x + 1 : x, yu = y > 0 ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;
    return lab_dist2(lab + 3 * ((size_t)y * w + xr), lab + 3 * ((size_t)y * w + xl)) +
           lab_dist2(lab + 3 * ((size_t)yd * w + x), lab + 3 * ((size_t)yu * w + x));
}

/* Combined SLIC distance: colour^2 / m^2 + space^2 / S^2 (the paper's D^2, divided by m^2). */
static double slic_dist(const centre *c, const float *px, int y, int x, double inv_m2, double inv_s2)
{
    double dl = px[0] - c->l, da = px[1] - c->a, db = px[2] - c->b, dy = y - c->y, dx = x - c->x;
    return (dl * dl + da * da + db * db) * inv_m2 + (dy * dy + dx * dx) * inv_s2;
}

/* Relabel 4-connected components in raster order; a component smaller than min_size takes the label
 * of the first already-relabelled neighbour found.  out [h*w], queue [h*w] scratch.  Returns the count. */
static int enforce_connectivity(const int32_t *in, int h, int w, size_t min_size, int32_t *out, size_t *queue)
{
    size_t n = (size_t)h * w;
    for (size_t i = 0; i < n; i++) out[i] = -1;
    int32_t next = 0;
    for (size_t start = 0; start < n; start++) {
        if (out[start] >= 0) continue;
        int32_t lab = in[start], adjacent = -1;
        size_t head = 0, tail = 0;
        queue[tail++] = start;
        out[start] = next;
        while (head < tail) {
            size_t p = queue[head++];
            int y = (int)(p / (size_t)w), x = (int)(p % (size_t)w);
            size_t nb[4];
            int nn = 0;
            if (x > 0) nb[nn++] = p - 1;
            if (x + 1 < w) nb[nn++] = p + 1;
            if (y > 0) nb[nn++] = p - (size_t)w;
            if (y + 1 < h) nb[nn++] = p + (size_t)w;
            for (int j = 0; j < nn; j++) {
                size_t q = nb[j];
                if (out[q] < 0 && in[q] == lab) {
                    out[q] = next;
                    queue[tail++] = q;
                } else if (out[q] >= 0 && out[q] != next && adjacent < 0) {
                    adjacent = out[q];
                }
            }
        }
        if (tail < min_size && adjacent >= 0) {
            for (size_t j = 0; j < tail; j++) out[queue[j]] = adjacent;
        } else {
            next++;
        }
    }
    return next;
}

vs_status vs_slic(const float *image, int c, int h, int w, const vs_slic_options *opt, int32_t *labels,
                  int *n_labels, vs_error *err)
{
    vs_slic_options o = opt ? *opt : vs_slic_defaults();
    if (!image || !labels || !n_labels) return vs_error_set(err, VS_ERR_ARG, "slic: NULL image or output");
    if (c != 1 && c != 3) return vs_error_set(err, VS_ERR_ARG, "slic: image has %d channels, expected 1 or 3", c);
    if (h < 1 || w < 1) return vs_error_set(err, VS_ERR_ARG, "slic: image size %d x %d is empty", h, w);
    if (o.n_segments < 1) return vs_error_set(err, VS_ERR_ARG, "slic: n_segments %d must be >= 1", o.n_segments);
    if (!(o.compactness > 0) || !isfinite(o.compactness))
        return vs_error_set(err, VS_ERR_ARG, "slic: compactness %g must be positive", (double)o.compactness);
    if (!(o.sigma >= 0) || o.sigma > 1000) return vs_error_set(err, VS_ERR_ARG, "slic: sigma %g must be in [0, 1000]", (double)o.sigma);
    if (o.max_iter < 1) return vs_error_set(err, VS_ERR_ARG, "slic: max_iter %d must be >= 1", o.max_iter);
    if (!(o.min_size_factor >= 0) || !isfinite(o.min_size_factor))
        return vs_error_set(err, VS_ERR_ARG, "slic: min_size_factor %g must be >= 0", (double)o.min_size_factor);
    size_t n, nc, n3;
    if (!vs_size_mul((size_t)h, (size_t)w, &n) || !vs_size_mul(n, (size_t)c, &nc) || !vs_size_mul(n, 3 * sizeof(float), &n3) ||
        n > (size_t)INT32_MAX)
        return vs_error_set(err, VS_ERR_NOMEM, "slic: image %d x %d too large", h, w);
    for (size_t i = 0; i < nc; i++)
        if (!isfinite(image[i]))
            return vs_error_set(err, VS_ERR_NUMERIC, "slic: image value %zu (channel %zu, pixel %zu) is not finite", i, i / n, i % n);

    int sy0, sty, sx0, stx;
    seed_grid(h, w, o.n_segments, &sy0, &sty, &sx0, &stx);
    int ny = sy0 < h ? (h - 1 - sy0) / sty + 1 : 0, nx = sx0 < w ? (w - 1 - sx0) / stx + 1 : 0;
    size_t k = (size_t)ny * (size_t)nx;
    int radius = (int)(4.0 * o.sigma + 0.5);

    float *chan = malloc(nc * sizeof *chan), *tmp = malloc(n * sizeof *tmp), *lab = malloc(n3);
    double *kern = malloc((size_t)(2 * radius + 1) * sizeof *kern), *dist = malloc(n * sizeof *dist);
    centre *ctr = malloc((k ? k : 1) * sizeof *ctr), *sum = malloc((k ? k : 1) * sizeof *sum);
    size_t *count = malloc((k ? k : 1) * sizeof *count), *queue = malloc(n * sizeof *queue);
    int32_t *assign = malloc(n * sizeof *assign), *before = malloc(n * sizeof *before);
    vs_status st = VS_OK;
    if (!chan || !tmp || !lab || !kern || !dist || !ctr || !sum || !count || !queue || !assign || !before) {
        st = vs_error_set(err, VS_ERR_NOMEM, "slic: out of memory for a %d x %d image", h, w);
        goto done;
    }

    memcpy(chan, image, nc * sizeof *chan);
    if (o.sigma > 0)
        for (int ch = 0; ch < c; ch++) gaussian_blur(chan + (size_t)ch * n, h, w, o.sigma, tmp, kern, radius);
    for (size_t i = 0; i < n; i++) {
        float rgb[3];
        for (int j = 0; j < 3; j++) rgb[j] = chan[(c == 3 ? (size_t)j : 0) * n + i];
        vs_srgb_to_lab(rgb, lab + 3 * i);
    }

    /* Seeds: grid points moved to the smallest gradient in their 3x3 neighbourhood (first in raster
     * order on ties), so no centre starts on an edge or a noisy pixel. */
    for (int gy = 0; gy < ny; gy++)
        for (int gx = 0; gx < nx; gx++) {
            int y = sy0 + gy * sty, x = sx0 + gx * stx, by = y, bx = x;
            double best = DBL_MAX;
            for (int yy = y - 1; yy <= y + 1; yy++)
                for (int xx = x - 1; xx <= x + 1; xx++) {
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    double g = gradient2(lab, h, w, yy, xx);
                    if (g < best) best = g, by = yy, bx = xx;
                }
            const float *p = lab + 3 * ((size_t)by * w + bx);
            ctr[(size_t)gy * nx + gx] = (centre){by, bx, p[0], p[1], p[2]};
        }

    int S = sty > stx ? sty : stx;
    double inv_m2 = 1.0 / ((double)o.compactness * o.compactness), inv_s2 = 1.0 / ((double)S * S);
    for (size_t i = 0; i < n; i++) assign[i] = -1;
    for (int it = 0; it < o.max_iter; it++) {
        /* Assignment: each centre claims the pixels of its 2S x 2S window that are closer to it than
         * to any centre seen so far.  A pixel no window reaches keeps its label from the last round. */
        for (size_t i = 0; i < n; i++) dist[i] = DBL_MAX;
        memcpy(before, assign, n * sizeof *assign);
        for (size_t j = 0; j < k; j++) {
            int cy = (int)lround(ctr[j].y), cx = (int)lround(ctr[j].x);
            int y0 = cy - S > 0 ? cy - S : 0, y1 = cy + S < h - 1 ? cy + S : h - 1;
            int x0 = cx - S > 0 ? cx - S : 0, x1 = cx + S < w - 1 ? cx + S : w - 1;
            for (int y = y0; y <= y1; y++)
                for (int x = x0; x <= x1; x++) {
                    size_t i = (size_t)y * w + x;
                    double d = slic_dist(&ctr[j], lab + 3 * i, y, x, inv_m2, inv_s2);
                    if (d < dist[i]) dist[i] = d, assign[i] = (int32_t)j;
                }
        }
        /* Only in the first round can a pixel be left without a label (grid margins): give it the
         * nearest centre over all of them. */
        for (size_t i = 0; i < n; i++) {
            if (assign[i] >= 0) continue;
            int y = (int)(i / (size_t)w), x = (int)(i % (size_t)w);
            for (size_t j = 0; j < k; j++) {
                double d = slic_dist(&ctr[j], lab + 3 * i, y, x, inv_m2, inv_s2);
                if (d < dist[i]) dist[i] = d, assign[i] = (int32_t)j;
            }
        }
        /* Update: each centre moves to the mean position and colour of its pixels. */
        memset(sum, 0, k * sizeof *sum);
        memset(count, 0, k * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            centre *s = &sum[assign[i]];
            const float *p = lab + 3 * i;
            s->y += (double)(i / (size_t)w);
            s->x += (double)(i % (size_t)w);
            s->l += p[0], s->a += p[1], s->b += p[2];
            count[assign[i]]++;
        }
        for (size_t j = 0; j < k; j++)
            if (count[j]) {
                double inv = 1.0 / (double)count[j];
                ctr[j] = (centre){sum[j].y * inv, sum[j].x * inv, sum[j].l * inv, sum[j].a * inv, sum[j].b * inv};
            }
        if (memcmp(before, assign, n * sizeof *assign) == 0) break; /* converged: centres are fixed too */
    }

    if (o.enforce_connectivity) {
        double seg = (double)n / o.n_segments;
        *n_labels = enforce_connectivity(assign, h, w, (size_t)(o.min_size_factor * seg), labels, queue);
    } else {
        /* Renumber the centres that kept pixels, in raster order of first appearance. */
        int32_t *map = (int32_t *)queue; /* k <= n entries of scratch */
        for (size_t j = 0; j < k; j++) map[j] = -1;
        int32_t next = 0;
        for (size_t i = 0; i < n; i++) {
            if (map[assign[i]] < 0) map[assign[i]] = next++;
            labels[i] = map[assign[i]];
        }
        *n_labels = next;
    }
done:
    free(chan), free(tmp), free(lab), free(kern), free(dist), free(ctr), free(sum), free(count), free(queue), free(assign), free(before);
    return st;
}
