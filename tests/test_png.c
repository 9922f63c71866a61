/* test_png.c - PNG round trips, chunk CRCs and Adler-32, corrupt files, PNGs from other encoders (fixed
 * and dynamic Huffman), the colormap, heatmaps, overlays, text and image grids. */
#include "vs_check.h"
#include "versus/picture.h"
#include "versus/rng.h"

#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* Reference CRC-32, bit by bit, independent of the library's table. */
static uint32_t ref_crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void set_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Walk the chunks of a PNG, checking every CRC with ref_crc32; returns the number of chunks and
 * counts IDAT chunks; *idat_end gets the offset just after the last IDAT's data. */
static int check_chunks(const uint8_t *b, size_t n, int *n_idat, size_t *idat_end)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    ck_assert(n >= 8 && memcmp(b, sig, 8) == 0);
    size_t pos = 8;
    int chunks = 0;
    *n_idat = 0;
    for (;;) {
        ck_assert_uint_le(pos + 12, n);
        uint32_t len = be32(b + pos);
        ck_assert_uint_le(pos + 12 + len, n);
        ck_assert_uint_eq(be32(b + pos + 8 + len), ref_crc32(b + pos + 4, len + 4));
        chunks++;
        if (memcmp(b + pos + 4, "IDAT", 4) == 0) {
            (*n_idat)++;
            *idat_end = pos + 8 + len;
        }
        if (memcmp(b + pos + 4, "IEND", 4) == 0) {
            ck_assert_uint_eq(pos + 12, n); /* IEND is last */
            return chunks;
        }
        pos += 12 + len;
    }
}

/* Recompute the CRC of the chunk whose data contains byte offset `at`. */
static void fix_crc(uint8_t *b, size_t at)
{
    size_t pos = 8;
    for (;;) {
        uint32_t len = be32(b + pos);
        if (at < pos + 8 + len) {
            set_be32(b + pos + 8 + len, ref_crc32(b + pos + 4, len + 4));
            return;
        }
        pos += 12 + len;
    }
}

static vs_image *random_image(int w, int h, int c, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_image *im = vs_image_new(w, h, c);
    ck_assert_ptr_nonnull(im);
    for (size_t i = 0; i < (size_t)w * h * c; i++) im->pixels[i] = (uint8_t)vs_rng_below(&r, 256);
    return im;
}

/* Smooth, repetitive content (gradients and stripes): exercises LZ77 matches and every filter. */
static vs_image *smooth_image(int w, int h, int c)
{
    vs_image *im = vs_image_new(w, h, c);
    ck_assert_ptr_nonnull(im);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++)
                im->pixels[((size_t)y * w + x) * c + k] = (uint8_t)(k == 0 ? x * 3 + y : k == 1 ? (x / 4 + y / 4) * 16 : x ^ y);
    return im;
}

static void roundtrip(const vs_image *im)
{
    char path[512];
    snprintf(path, sizeof path, "%s/vs_test_png_%d_%dx%dx%d.png", vs_test_tmpdir(), (int)getpid(), im->w, im->h, im->channels);
    vs_error e;
    ck_assert_msg(vs_png_write(im, path, &e) == VS_OK, "%s", e.msg);
    vs_image *back = NULL;
    ck_assert_msg(vs_png_read(path, &back, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(back->w, im->w);
    ck_assert_int_eq(back->h, im->h);
    ck_assert_int_eq(back->channels, im->channels);
    ck_assert_mem_eq(back->pixels, im->pixels, (size_t)im->w * im->h * im->channels);
    vs_image_free(back);

    /* the file on disk is exactly the in-memory encoding, and every chunk CRC is right */
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(vs_png_encode(im, &buf, &len, &e), VS_OK);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *disk = malloc(len + 1);
    ck_assert_uint_eq(fread(disk, 1, len + 1, f), len);
    fclose(f);
    ck_assert_mem_eq(disk, buf, len);
    int n_idat;
    size_t idat_end;
    ck_assert_int_ge(check_chunks(buf, len, &n_idat, &idat_end), 3);
    ck_assert_uint_eq(be32(buf + 16), (uint32_t)im->w); /* IHDR */
    ck_assert_uint_eq(be32(buf + 20), (uint32_t)im->h);
    ck_assert_int_eq(buf[24], 8);
    static const int ct[5] = {0, 0, 4, 2, 6};
    ck_assert_int_eq(buf[25], ct[im->channels]);
    free(disk);
    free(buf);
    unlink(path);
}

/* A 24x10 RGB PNG made by Python's zlib (Z_FIXED strategy: fixed Huffman, lazy matches): rows
 * filtered with types 0,1,2,3,4 in turn, values chosen so that Paeth ties (a = c, b = c) occur
 * on the left half, the right half repeats;
 * a tEXt chunk; IDAT split in two.  And its pixels. */
static const uint8_t foreign_png[525] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x02, 0x00, 0x00, 0x00, 0x21, 0x0b, 0x09,
    0x3f, 0x00, 0x00, 0x00, 0x15, 0x74, 0x45, 0x58, 0x74, 0x53, 0x6f, 0x66, 0x74, 0x77, 0x61, 0x72,
    0x65, 0x00, 0x7a, 0x6c, 0x69, 0x62, 0x20, 0x5a, 0x5f, 0x46, 0x49, 0x58, 0x45, 0x44, 0x0d, 0xc4,
    0xd6, 0xf9, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x01, 0x63, 0x60, 0x66, 0xfe,
    0xc5, 0xc0, 0xf4, 0x9f, 0xee, 0x03, 0xc5, 0x83, 0x00, 0x00, 0x01, 0x9d, 0x49, 0x44, 0x41, 0x54,
    0x81, 0xe9, 0x17, 0xf3, 0x2f, 0x66, 0x06, 0x66, 0x26, 0x26, 0xe6, 0xff, 0xbf, 0x38, 0x98, 0x19,
    0x18, 0x58, 0x19, 0x19, 0x18, 0xfe, 0x73, 0x70, 0xfc, 0x02, 0x0a, 0xb2, 0x32, 0xb3, 0xb3, 0x73,
    0x12, 0x44, 0x8c, 0xbf, 0x7e, 0x31, 0xb1, 0xb1, 0xff, 0x67, 0xfa, 0xff, 0xff, 0x07, 0x33, 0x07,
    0x3b, 0xeb, 0xcf, 0x9f, 0x3f, 0x7e, 0xb2, 0x32, 0xb2, 0x71, 0x32, 0x30, 0xff, 0x64, 0x64, 0x62,
    0xff, 0xc1, 0xfc, 0x9d, 0xe1, 0x07, 0x23, 0x07, 0x03, 0x3b, 0x2b, 0x27, 0x03, 0x21, 0xc0, 0xc4,
    0xce, 0xfa, 0x0f, 0x64, 0x0a, 0x03, 0x2b, 0xc3, 0xff, 0x9f, 0x2c, 0xbf, 0x18, 0xd8, 0x19, 0xd8,
    0x7e, 0xff, 0x67, 0xfd, 0xce, 0xfe, 0xfd, 0xff, 0xff, 0x3f, 0xbf, 0x59, 0x7f, 0xb3, 0x71, 0x32,
    0xfd, 0xfa, 0xc1, 0xc1, 0x40, 0x04, 0x60, 0x66, 0x6c, 0x02, 0x7a, 0x8c, 0xb1, 0x96, 0x99, 0x95,
    0x9d, 0x91, 0x91, 0xf5, 0xc7, 0x9f, 0xff, 0x4d, 0x2d, 0x4d, 0x4d, 0x7f, 0x1b, 0xff, 0xb7, 0x01,
    0xbd, 0xf6, 0xaf, 0x89, 0xe1, 0xdf, 0xbf, 0x1f, 0x4d, 0x2d, 0x95, 0x2d, 0xcc, 0x1d, 0x04, 0x0d,
    0x62, 0x61, 0x62, 0x67, 0x60, 0xf8, 0xf1, 0x8f, 0x9b, 0xe9, 0x13, 0xd3, 0x2f, 0x56, 0x06, 0x36,
    0x36, 0xa6, 0x5f, 0x7f, 0x99, 0x7e, 0x32, 0xfc, 0xe6, 0xfe, 0xcf, 0xf2, 0x8f, 0x91, 0xe1, 0xfb,
    0x5f, 0x66, 0x4e, 0x56, 0xb6, 0x7f, 0x8c, 0x4c, 0x0c, 0x84, 0xbd, 0xc6, 0x00, 0xb4, 0x99, 0x91,
    0xe9, 0x17, 0x23, 0x07, 0xe3, 0xff, 0x5f, 0xff, 0x99, 0x7f, 0xb1, 0xb2, 0x32, 0xfe, 0x67, 0xe4,
    0xf8, 0xcf, 0xcc, 0xca, 0xc4, 0xc8, 0xca, 0xcc, 0x01, 0x74, 0xeb, 0x7f, 0xc6, 0xff, 0xff, 0x59,
    0x89, 0x0a, 0x6c, 0x66, 0x60, 0x60, 0xb0, 0x00, 0x63, 0xeb, 0x3f, 0xd3, 0xbf, 0xff, 0xff, 0x98,
    0x98, 0xff, 0xfd, 0xf9, 0xcf, 0xf9, 0xf3, 0xef, 0x27, 0x4e, 0x36, 0xce, 0x7f, 0x7f, 0xbf, 0xb3,
    0xfc, 0x65, 0xff, 0xc5, 0xc8, 0x02, 0x34, 0x10, 0x14, 0x87, 0x84, 0x02, 0xfb, 0x0f, 0x27, 0x27,
    0x30, 0x6c, 0xfe, 0xff, 0x66, 0xff, 0xcf, 0xca, 0xc1, 0xf4, 0xf7, 0x2f, 0xe7, 0xcf, 0xff, 0xbf,
    0xd8, 0x58, 0x58, 0xff, 0xfc, 0xfd, 0xcf, 0xf0, 0x03, 0xe8, 0x56, 0x96, 0xdf, 0xac, 0xbf, 0x7e,
    0xfc, 0x26, 0x2a, 0xb0, 0x1b, 0x7f, 0x33, 0x32, 0x35, 0x34, 0x33, 0xb2, 0xff, 0x66, 0xfb, 0xfe,
    0xf7, 0x6f, 0x07, 0x07, 0x73, 0xe5, 0x6f, 0x86, 0x8e, 0xca, 0xb6, 0x8a, 0x46, 0x86, 0x0e, 0xce,
    0x6a, 0x86, 0xbf, 0x0d, 0x9d, 0xcd, 0x8c, 0xed, 0xdf, 0x58, 0x18, 0x88, 0x08, 0x6c, 0x56, 0xe6,
    0x7f, 0xff, 0xfe, 0x32, 0xfe, 0x63, 0xe2, 0xf8, 0xc5, 0xf2, 0x9d, 0xed, 0x2f, 0xc3, 0x5f, 0x4e,
    0xb6, 0xaf, 0xff, 0x7f, 0x03, 0x03, 0x97, 0x8d, 0x95, 0x83, 0x93, 0xe1, 0xf7, 0xf7, 0xbf, 0xbf,
    0x19, 0xff, 0xf0, 0x31, 0xb0, 0x11, 0xf6, 0x1a, 0x00, 0xe5, 0xe4, 0x99, 0xae, 0xd8, 0x34, 0x1b,
    0xd1, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};
static const uint8_t foreign_pixels[720] = {
    0x03, 0x03, 0xfa, 0x00, 0x02, 0xff, 0x00, 0x02, 0xfa, 0x03, 0xfa, 0x03, 0x00, 0x03, 0x02, 0x02,
    0x03, 0xff, 0xfa, 0x08, 0x03, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00, 0xff, 0x08, 0x08, 0xfa, 0xfa,
    0x03, 0x00, 0x05, 0x03, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0xfa, 0xfa, 0x02, 0x00, 0x01, 0x01, 0x02, 0x00,
    0x00, 0xfa, 0x03, 0x08, 0x01, 0x08, 0x01, 0xfa, 0x00, 0xfa, 0xff, 0x01, 0x00, 0x08, 0x01, 0x03,
    0x01, 0x02, 0x05, 0x08, 0xfa, 0x08, 0xff, 0xfa, 0x00, 0x00, 0x02, 0x00, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07,
    0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x01, 0xff, 0x00, 0x02, 0x00, 0x00, 0xfa, 0x00, 0x05, 0xfa, 0x02, 0x01, 0x05, 0x02, 0x01, 0x01,
    0x00, 0x00, 0xfa, 0x00, 0x05, 0xff, 0x08, 0xfa, 0x00, 0x01, 0x01, 0x03, 0xff, 0x03, 0x05, 0x03,
    0x02, 0xfa, 0xfa, 0x08, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x01, 0x01, 0x02, 0x00, 0x00, 0x02, 0xfa, 0x03,
    0x08, 0x01, 0x03, 0x05, 0x08, 0xfa, 0xff, 0x03, 0xff, 0x03, 0x00, 0x01, 0x01, 0x00, 0x03, 0x03,
    0x01, 0x02, 0x02, 0x00, 0x02, 0x02, 0x00, 0x00, 0xfa, 0xff, 0x01, 0xfa, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07,
    0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x03, 0x08, 0x02, 0x03, 0x00, 0x00, 0x05, 0x05, 0xfa, 0x03, 0xff, 0xff, 0x08, 0x05, 0x05, 0x05,
    0xff, 0x00, 0x05, 0xfa, 0x00, 0x00, 0x05, 0x02, 0x05, 0x03, 0x03, 0x05, 0xfa, 0x00, 0x08, 0x03,
    0xff, 0x05, 0x01, 0x00, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x01, 0x00, 0x00, 0x01, 0x02, 0xfa, 0x01, 0x08,
    0x01, 0xff, 0xfa, 0xff, 0x03, 0xfa, 0x05, 0x05, 0x01, 0xff, 0x01, 0x08, 0xff, 0x03, 0x05, 0x02,
    0x01, 0x05, 0x03, 0x08, 0x02, 0xff, 0x00, 0xff, 0x01, 0xff, 0xff, 0x05, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07,
    0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x03, 0xff, 0xff, 0xff, 0x03, 0x02, 0x01, 0x05, 0x01, 0x03, 0x03, 0x00, 0x01, 0x05, 0x03, 0xff,
    0x01, 0x02, 0x08, 0xfa, 0xff, 0xfa, 0x03, 0x05, 0x03, 0x01, 0x02, 0xfa, 0x05, 0xff, 0x01, 0xff,
    0x00, 0x05, 0x02, 0x08, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0xff, 0x08, 0x08, 0x00, 0x08, 0xfa, 0x00, 0x00,
    0x08, 0x02, 0x08, 0x08, 0x03, 0x02, 0x00, 0x08, 0xfa, 0x01, 0x02, 0x00, 0x03, 0xff, 0xff, 0x02,
    0x02, 0x01, 0xfa, 0xfa, 0x05, 0x00, 0x05, 0xfa, 0x05, 0xff, 0xfa, 0x03, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07,
    0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x00, 0xff, 0x05, 0x02, 0x03, 0x02, 0x02, 0x08, 0x00, 0x08, 0xff, 0x01, 0x02, 0x08, 0x08, 0x08,
    0xfa, 0xff, 0x05, 0x05, 0xfa, 0x08, 0xfa, 0xff, 0x05, 0x05, 0x05, 0xfa, 0x05, 0xff, 0xff, 0x08,
    0x05, 0x00, 0x08, 0xfa, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
    0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x05, 0x02, 0x03, 0x03, 0xff, 0x03, 0x01, 0x01,
    0x08, 0x02, 0x03, 0xff, 0x08, 0x00, 0xff, 0x05, 0x03, 0x05, 0xfa, 0x02, 0x00, 0xfa, 0x03, 0x00,
    0x00, 0x08, 0x08, 0x03, 0x08, 0xfa, 0xfa, 0x05, 0x00, 0x01, 0x01, 0x08, 0x07, 0x07, 0x09, 0x07,
    0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07,
    0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09, 0x07, 0x07, 0x09,
};


/* A 16x12 RGBA PNG made by Python's zlib.compress(raw, 9), whose stream is one dynamic-Huffman
 * block; rows filtered with types 0,1,2,3,4 in turn, IDAT split in two.  Pixels: dynamic_pixel. */
static const uint8_t dynamic_png[377] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x0c, 0x08, 0x06, 0x00, 0x00, 0x00, 0x6b, 0xe7, 0x3d,
    0x81, 0x00, 0x00, 0x00, 0x66, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0xa5, 0x92, 0x3b, 0x6e, 0x85,
    0x30, 0x10, 0x45, 0x87, 0x7c, 0x9a, 0x94, 0xac, 0x81, 0x82, 0x34, 0x29, 0x59, 0x03, 0x05, 0x69,
    0x52, 0x52, 0xb0, 0x02, 0x4b, 0xe1, 0x35, 0x29, 0xb1, 0xbd, 0x03, 0x9a, 0x34, 0x59, 0x00, 0x2b,
    0xa0, 0x20, 0x4d, 0xd6, 0x41, 0x41, 0x14, 0x25, 0x1b, 0x71, 0xee, 0x1d, 0x19, 0x64, 0x3d, 0x3d,
    0x29, 0x45, 0x2c, 0x8d, 0xb0, 0xe7, 0xd8, 0x1e, 0xfb, 0x18, 0x91, 0xdb, 0x3b, 0x57, 0xdc, 0x3f,
    0x84, 0xf1, 0xf5, 0x2d, 0xd4, 0x8f, 0x4f, 0x1a, 0xe8, 0x6b, 0x0e, 0x2c, 0x24, 0xcc, 0x45, 0x16,
    0x12, 0xe6, 0x32, 0x73, 0x7a, 0x09, 0x45, 0x51, 0x48, 0xdf, 0xf7, 0x32, 0xcf, 0xb3, 0xa0, 0x28,
    0x1a, 0xf2, 0x16, 0x00, 0x00, 0x00, 0xce, 0x49, 0x44, 0x41, 0x54, 0xf9, 0xa6, 0x69, 0xec, 0x38,
    0x8e, 0xb2, 0x6d, 0x9b, 0x44, 0xe6, 0xc1, 0x2c, 0x21, 0x98, 0x44, 0xe6, 0xc1, 0xec, 0x95, 0x31,
    0x46, 0x17, 0xc7, 0xaf, 0x47, 0xd8, 0xf3, 0x1c, 0xbe, 0x96, 0xe3, 0x4b, 0xb9, 0xeb, 0xed, 0xeb,
    0xdb, 0xd5, 0x75, 0x4d, 0xe0, 0xf3, 0x3c, 0xb7, 0x55, 0x55, 0x49, 0xdb, 0xb6, 0x2c, 0x26, 0xd3,
    0x34, 0x79, 0x30, 0xdd, 0x10, 0x4c, 0x22, 0xf3, 0x40, 0x16, 0x4c, 0xb8, 0xee, 0x86, 0x10, 0x47,
    0xd1, 0xca, 0xcb, 0xb2, 0xe8, 0x42, 0x02, 0x1c, 0xd3, 0xe3, 0x98, 0x76, 0xbf, 0x5e, 0x64, 0xba,
    0x61, 0x7a, 0x3d, 0xa1, 0x08, 0xca, 0x99, 0xdf, 0x3f, 0x02, 0x7d, 0x30, 0xd0, 0xd7, 0x1c, 0x65,
    0x25, 0xcc, 0x45, 0x16, 0x12, 0xe6, 0x32, 0xb5, 0xfa, 0x1f, 0x89, 0xe7, 0x72, 0x52, 0x89, 0x31,
    0x2e, 0x4a, 0xe4, 0x3c, 0x95, 0x68, 0x9e, 0x4f, 0x2a, 0x91, 0x49, 0xec, 0xac, 0x12, 0xbb, 0xae,
    0x93, 0x61, 0x18, 0xd4, 0x0d, 0xef, 0xcc, 0x89, 0xac, 0x1a, 0x99, 0x07, 0x53, 0x37, 0x87, 0xc4,
    0xb2, 0x2c, 0x8f, 0x2a, 0x6c, 0x7b, 0x95, 0x75, 0x5d, 0x2d, 0xd8, 0x3e, 0xd6, 0xeb, 0xed, 0xf3,
    0xc0, 0xb8, 0x0e, 0xc6, 0x21, 0x82, 0x72, 0xd6, 0xcf, 0x1f, 0xfd, 0xcb, 0x18, 0xe8, 0x6b, 0x8e,
    0xb2, 0x12, 0xe6, 0x22, 0x0b, 0x09, 0x73, 0x19, 0xad, 0xfe, 0xf5, 0x54, 0x3c, 0x0d, 0x98, 0x4d,
    0x9e, 0xf8, 0x90, 0xf8, 0x0b, 0x2b, 0xae, 0x30, 0xef, 0xe3, 0xab, 0xee, 0xd3, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

static uint8_t dynamic_pixel(int x, int y, int k)
{
    if (k == 3) return (x + y) % 5 ? 255 : 128;
    return (uint8_t)(((x * x + 3 * y) % 7) * 36 + k * 5);
}


START_TEST(test_crc_reference)
{
    ck_assert_uint_eq(ref_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
}
END_TEST

START_TEST(test_foreign_png)
{
    vs_image *im = NULL;
    vs_error e;
    ck_assert_msg(vs_png_decode(foreign_png, sizeof foreign_png, NULL, &im, &e) == VS_OK, "%s", e.msg);
    ck_assert(im->w == 24 && im->h == 10 && im->channels == 3);
    ck_assert_mem_eq(im->pixels, foreign_pixels, sizeof foreign_pixels);
    vs_image_free(im);
    /* the same file with the ancillary tEXt renamed to a critical TEXt chunk is refused */
    uint8_t c[sizeof foreign_png];
    memcpy(c, foreign_png, sizeof c);
    c[37] = 'T';
    fix_crc(c, 41);
    ck_assert_int_eq(vs_png_decode(c, sizeof c, "f.png", &im, &e), VS_ERR_FORMAT);
    ck_assert_msg(strstr(e.msg, "unknown critical chunk TEXt"), "%s", e.msg);
}
END_TEST

START_TEST(test_dynamic_huffman_png)
{
    ck_assert_int_eq((dynamic_png[8 + 25 + 8 + 2] >> 1) & 3, 2); /* BTYPE of the first block: dynamic */
    vs_image *im = NULL;
    vs_error e;
    ck_assert_msg(vs_png_decode(dynamic_png, sizeof dynamic_png, NULL, &im, &e) == VS_OK, "%s", e.msg);
    ck_assert(im->w == 16 && im->h == 12 && im->channels == 4);
    for (int y = 0; y < 12; y++)
        for (int x = 0; x < 16; x++)
            for (int k = 0; k < 4; k++)
                ck_assert_uint_eq(im->pixels[((size_t)y * 16 + x) * 4 + k], dynamic_pixel(x, y, k));
    vs_image_free(im);
    /* IHDR one row taller: the stream holds 12 * 65 bytes, not 13 * 65 */
    uint8_t c[sizeof dynamic_png];
    memcpy(c, dynamic_png, sizeof c);
    set_be32(c + 20, 13);
    fix_crc(c, 20);
    ck_assert_int_eq(vs_png_decode(c, sizeof c, "d.png", &im, &e), VS_ERR_FORMAT);
    ck_assert_ptr_null(im);
    ck_assert_msg(strstr(e.msg, "d.png: IDAT holds 780 bytes") && strstr(e.msg, "needs 845"), "%s", e.msg);
    /* one row shorter: inflating stops at the cap of 11 * 65 bytes */
    set_be32(c + 20, 11);
    fix_crc(c, 20);
    ck_assert_int_eq(vs_png_decode(c, sizeof c, "d.png", &im, &e), VS_ERR_NOMEM);
    ck_assert_ptr_null(im);
    ck_assert_msg(strstr(e.msg, "d.png: IDAT") && strstr(e.msg, "limit of 715 bytes"), "%s", e.msg);
}
END_TEST

START_TEST(test_roundtrip_all_formats)
{
    static const int sizes[][2] = {{1, 1}, {7, 13}, {13, 7}, {1, 17}, {64, 48}};
    for (int c = 1; c <= 4; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            vs_image *a = random_image(sizes[s][0], sizes[s][1], c, 100 + s * 7 + (size_t)c);
            vs_image *b = smooth_image(sizes[s][0], sizes[s][1], c);
            roundtrip(a);
            roundtrip(b);
            vs_image_free(a);
            vs_image_free(b);
        }
}
END_TEST

START_TEST(test_known_bytes)
{
    /* 1x1 gray 200: the only scanline is {filter 0, 200}, so Adler-32 = (1+1+200) << 16 | (1+200) */
    vs_image *im = vs_image_new(1, 1, 1);
    im->pixels[0] = 200;
    uint8_t *b;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_png_encode(im, &b, &n, &e), VS_OK);
    static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    ck_assert_mem_eq(b + n - 12, iend, 12);
    int n_idat;
    size_t end;
    check_chunks(b, n, &n_idat, &end);
    ck_assert_int_eq(n_idat, 1);
    ck_assert_uint_eq(be32(b + end - 4), (202u << 16) | 201u);
    ck_assert_int_eq(b[8 + 25 + 8], 0x78); /* zlib header right after IDAT's length and type */
    ck_assert_int_eq(b[8 + 25 + 9], 0x9C);
    free(b);
    vs_image_free(im);
}
END_TEST

START_TEST(test_compression)
{
    vs_error e;
    uint8_t *b;
    size_t n;
    /* incompressible noise: stored blocks, several IDAT chunks, little overhead */
    vs_image *noise = random_image(300, 300, 3, 9);
    ck_assert_int_eq(vs_png_encode(noise, &b, &n, &e), VS_OK);
    size_t raw = 300 * (300 * 3 + 1);
    ck_assert_uint_lt(n, raw + raw / 100 + 200);
    int n_idat;
    size_t end;
    check_chunks(b, n, &n_idat, &end);
    ck_assert_int_ge(n_idat, 5);
    /* the zlib stream is all stored blocks here: unpack it by hand and check its Adler-32 with a
     * reference implementation */
    uint8_t *z = malloc(n), *rawz = malloc(raw);
    size_t zn = 0, pos = 8, rn = 0;
    for (;;) {
        uint32_t len = be32(b + pos);
        if (memcmp(b + pos + 4, "IDAT", 4) == 0) memcpy(z + zn, b + pos + 8, len), zn += len;
        if (memcmp(b + pos + 4, "IEND", 4) == 0) break;
        pos += 12 + len;
    }
    ck_assert(z[0] == 0x78 && z[1] == 0x9C);
    size_t zp = 2;
    for (int final = 0; !final;) {
        ck_assert_int_eq(z[zp] & 6, 0); /* BTYPE 00 */
        final = z[zp] & 1;
        unsigned len = z[zp + 1] | (unsigned)z[zp + 2] << 8, nlen = z[zp + 3] | (unsigned)z[zp + 4] << 8;
        ck_assert_uint_eq(len ^ 0xFFFFu, nlen);
        ck_assert_uint_le(rn + len, raw);
        memcpy(rawz + rn, z + zp + 5, len);
        rn += len;
        zp += 5 + len;
    }
    ck_assert_uint_eq(rn, raw);
    ck_assert_uint_eq(zp + 4, zn);
    uint32_t a = 1, s2 = 0;
    for (size_t i = 0; i < raw; i++) a = (a + rawz[i]) % 65521, s2 = (s2 + a) % 65521;
    ck_assert_uint_eq(be32(z + zp), (s2 << 16) | a);
    for (int y = 0; y < 300; y++) ck_assert_int_le(rawz[(size_t)y * (300 * 3 + 1)], 4); /* filter types */
    free(z);
    free(rawz);
    vs_image *back;
    ck_assert_int_eq(vs_png_decode(b, n, NULL, &back, &e), VS_OK);
    ck_assert_mem_eq(back->pixels, noise->pixels, 300 * 300 * 3);
    vs_image_free(back);
    free(b);
    vs_image_free(noise);
    /* a flat image with one stripe compresses by far more than 20x */
    vs_image *flat = vs_image_new(256, 256, 1);
    for (int i = 0; i < 256; i++) flat->pixels[i * 256 + 100] = 255;
    ck_assert_int_eq(vs_png_encode(flat, &b, &n, &e), VS_OK);
    ck_assert_uint_lt(n, 256 * 257 / 20);
    ck_assert_int_eq(vs_png_decode(b, n, NULL, &back, &e), VS_OK);
    ck_assert_mem_eq(back->pixels, flat->pixels, 256 * 256);
    vs_image_free(back);
    free(b);
    vs_image_free(flat);
}
END_TEST

START_TEST(test_corrupt_files)
{
    vs_image *im = smooth_image(9, 5, 3), *out = NULL;
    uint8_t *b;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_png_encode(im, &b, &n, &e), VS_OK);
    uint8_t *c = malloc(n);
    int n_idat;
    size_t end;
    check_chunks(b, n, &n_idat, &end);

    /* a changed byte inside IDAT: CRC mismatch, message names the file and the chunk */
    memcpy(c, b, n);
    c[end - 6] ^= 0x10;
    ck_assert_int_eq(vs_png_decode(c, n, "x.png", &out, &e), VS_ERR_FORMAT);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(e.msg, "x.png") && strstr(e.msg, "IDAT") && strstr(e.msg, "CRC"), "%s", e.msg);

    /* a wrong Adler-32 with a valid chunk CRC */
    memcpy(c, b, n);
    c[end - 1] ^= 0x01;
    fix_crc(c, end - 1);
    ck_assert_int_eq(vs_png_decode(c, n, "x.png", &out, &e), VS_ERR_FORMAT);
    ck_assert_msg(strstr(e.msg, "Adler-32"), "%s", e.msg);

    /* bad signature; every truncation is an error, never a crash */
    memcpy(c, b, n);
    c[1] = 'X';
    ck_assert_int_eq(vs_png_decode(c, n, "x.png", &out, &e), VS_ERR_FORMAT);
    ck_assert_msg(strstr(e.msg, "signature"), "%s", e.msg);
    for (size_t k = 0; k < n; k++) {
        ck_assert_int_eq(vs_png_decode(b, k, "x.png", &out, &e), VS_ERR_FORMAT);
        ck_assert_ptr_null(out);
    }

    /* random damage to the zlib stream with CRCs repaired: either an error or a decoded image */
    vs_rng r;
    vs_rng_seed(&r, 5);
    size_t idat_start = 8 + 25 + 8;
    int errors = 0;
    for (int t = 0; t < 2000; t++) {
        memcpy(c, b, n);
        size_t at = idat_start + vs_rng_below(&r, end - idat_start);
        c[at] ^= (uint8_t)(1u << vs_rng_below(&r, 8));
        fix_crc(c, at);
        if (vs_png_decode(c, n, "x.png", &out, &e) != VS_OK) errors++;
        else vs_image_free(out);
    }
    ck_assert_int_gt(errors, 1900); /* Adler-32 catches nearly all of them */

    /* a header announcing more pixels than the data can hold is refused before allocation */
    memcpy(c, b, n);
    set_be32(c + 16, 1u << 30);
    set_be32(c + 20, 1u << 30);
    fix_crc(c, 16);
    ck_assert_int_eq(vs_png_decode(c, n, "x.png", &out, &e), VS_ERR_FORMAT);

    ck_assert_int_eq(vs_png_read("/nonexistent/dir/a.png", &out, &e), VS_ERR_IO);
    ck_assert_msg(strstr(e.msg, "/nonexistent/dir/a.png"), "%s", e.msg);
    free(c);
    free(b);
    vs_image_free(im);
}
END_TEST

START_TEST(test_atomic_write)
{
    vs_image *im = smooth_image(4, 4, 1);
    vs_error e;
    ck_assert_int_eq(vs_png_write(im, "/nonexistent/dir/a.png", &e), VS_ERR_IO);
    ck_assert_msg(strstr(e.msg, "/nonexistent/dir/a.png"), "%s", e.msg);
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/vs_test_png_dir_%d", vs_test_tmpdir(), (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/out.png", dir);
    ck_assert_int_eq(vs_png_write(im, path, &e), VS_OK);
    ck_assert_int_eq(vs_png_write(im, path, &e), VS_OK); /* replacing works too */
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *ent; (ent = readdir(d));)
        if (ent->d_name[0] != '.') {
            files++;
            ck_assert_str_eq(ent->d_name, "out.png"); /* no temporary file left behind */
        }
    closedir(d);
    ck_assert_int_eq(files, 1);
    unlink(path);
    rmdir(dir);
    vs_image_free(im);
}
END_TEST

START_TEST(test_colormap)
{
    uint8_t c[3];
    vs_colormap_diverging(-1, c);
    ck_assert(c[0] == 0 && c[1] == 0 && c[2] == 255);
    vs_colormap_diverging(0, c);
    ck_assert(c[0] == 255 && c[1] == 255 && c[2] == 255);
    vs_colormap_diverging(1, c);
    ck_assert(c[0] == 255 && c[1] == 0 && c[2] == 0);
    vs_colormap_diverging(-0.5f, c);
    ck_assert(c[0] == 128 && c[1] == 128 && c[2] == 255);
    vs_colormap_diverging(7, c); /* clamped */
    ck_assert(c[0] == 255 && c[1] == 0 && c[2] == 0);
    vs_colormap_diverging(NAN, c);
    ck_assert(c[0] == 255 && c[1] == 255 && c[2] == 255);
}
END_TEST

/* RdBu: dark blue, near white at 0, dark red; symmetric in lightness; the picture's layout */
START_TEST(test_colormap_signed_and_picture)
{
    uint8_t c[3], d[3];
    vs_colormap_signed(-1, c);
    ck_assert(c[0] == 5 && c[1] == 48 && c[2] == 97);
    vs_colormap_signed(0, c);
    ck_assert(c[0] == 247 && c[1] == 247 && c[2] == 247);
    vs_colormap_signed(1, c);
    ck_assert(c[0] == 103 && c[1] == 0 && c[2] == 31);
    vs_colormap_signed(NAN, d);
    ck_assert(d[0] == 247 && d[1] == 247 && d[2] == 247);
    vs_colormap_signed(0.3f, c); /* red side: red dominates; blue side: blue dominates */
    vs_colormap_signed(-0.3f, d);
    ck_assert(c[0] > c[2] && d[2] > d[0]);
    float x[2 * 8 * 8], a[2 * 8 * 8];
    for (int i = 0; i < 128; i++) {
        x[i] = (float)(i % 8) / 8;
        a[i] = (float)(i % 16) - 7.5f;
    }
    const char *labels[4] = {"row 0", "S 1", NULL, "S 2"};
    vs_image *im = vs_attr_picture(x, a, 2, 1, 8, 8, "saliency of X.npy", labels);
    ck_assert_ptr_nonnull(im);
    ck_assert_int_ge(im->w, 3 * 96);
    ck_assert_int_ge(im->h, 2 * 96 + 40);
    bool blue = false, red = false; /* the map's colours are on the canvas */
    for (int i = 0; i < im->w * im->h; i++) {
        const uint8_t *p = im->pixels + 3 * i;
        blue = blue || (p[2] > 150 && p[0] < 80);
        red = red || (p[0] > 150 && p[2] < 80 && p[1] < 80);
    }
    ck_assert(blue && red);
    vs_image_free(im);
    ck_assert_ptr_null(vs_attr_picture(x, a, 2, 2, 8, 8, "t", NULL)); /* 2 channels are no image */
}
END_TEST

START_TEST(test_heatmap_scale)
{
    float a[101];
    for (int i = 0; i < 100; i++) a[i] = (i % 2 ? -1.0f : 1.0f) * (float)(i + 1); /* |a| = 1..100 */
    a[100] = NAN;
    float s;
    vs_error e;
    ck_assert_int_eq(vs_attr_scale(a, 101, 100, &s, &e), VS_OK);
    ck_assert_float_eq(s, 100);
    ck_assert_int_eq(vs_attr_scale(a, 101, 99, &s, &e), VS_OK);
    ck_assert_float_near(s, 99.01, 1e-4); /* numpy.percentile(1..100, 99) */
    ck_assert_int_eq(vs_attr_scale(a, 101, 50, &s, &e), VS_OK);
    ck_assert_float_near(s, 50.5, 1e-4);
    ck_assert_int_eq(vs_attr_scale(a, 101, 0, &s, &e), VS_ERR_ARG);
    float z[3] = {0, 0, NAN};
    ck_assert_int_eq(vs_attr_scale(z, 3, 99, &s, &e), VS_OK);
    ck_assert_float_eq(s, 0);

    /* endpoints of a heatmap: -max blue, 0 white, +max red; zero scale draws white */
    float h[4] = {-2, 0, 2, 1};
    ck_assert_int_eq(vs_attr_scale(h, 4, 100, &s, &e), VS_OK);
    vs_image *im = vs_heatmap_rgb(h, 2, 2, s);
    ck_assert_int_eq(im->channels, 3);
    static const uint8_t want[12] = {0, 0, 255, 255, 255, 255, 255, 0, 0, 255, 128, 128};
    ck_assert_mem_eq(im->pixels, want, 12);
    vs_image_free(im);
    im = vs_heatmap_rgb(h, 2, 2, 0);
    for (int i = 0; i < 12; i++) ck_assert_int_eq(im->pixels[i], 255);
    vs_image_free(im);

    /* channel sum of a [2,1,2] map */
    float ca[4] = {1, 2, 10, 20}, out[2];
    vs_attr_channel_sum(ca, 2, 1, 2, out);
    ck_assert_float_eq(out[0], 11);
    ck_assert_float_eq(out[1], 22);
}
END_TEST

START_TEST(test_overlay)
{
    /* RGB image [3,1,3]; attributions 0, +scale, -scale/2 */
    float img[9] = {1, 0.5f, 0, 1, 0.5f, 0, 1, 0.5f, 0};
    float a[3] = {0, 4, -2};
    vs_image *o = vs_overlay(img, 3, 1, 3, a, 4);
    ck_assert_ptr_nonnull(o);
    ck_assert(o->pixels[0] == 255 && o->pixels[1] == 255 && o->pixels[2] == 255); /* white, no heat */
    ck_assert(o->pixels[3] == 255 && o->pixels[4] == 0 && o->pixels[5] == 0);     /* full red */
    ck_assert(o->pixels[6] == 0 && o->pixels[7] == 0 && o->pixels[8] == 128);     /* black half blue */
    vs_image_free(o);
    float gray[1] = {0.5f}, a1[1] = {0};
    o = vs_overlay(gray, 1, 1, 1, a1, 1);
    ck_assert(o->pixels[0] == 128 && o->pixels[1] == 128 && o->pixels[2] == 128);
    vs_image_free(o);
    ck_assert_ptr_null(vs_overlay(gray, 2, 1, 1, a1, 1));
}
END_TEST

START_TEST(test_image_from_float_and_text)
{
    float v[4] = {-1, 0.5f, 2, NAN};
    vs_image *im = vs_image_from_float(v, 1, 2, 2);
    ck_assert(im->pixels[0] == 0 && im->pixels[1] == 128 && im->pixels[2] == 255 && im->pixels[3] == 0);
    vs_image_free(im);
    float rgb[6] = {1, 0, 0, 1, 0, 0}; /* [3,1,2]: red then green */
    im = vs_image_from_float(rgb, 3, 1, 2);
    static const uint8_t want[6] = {255, 0, 0, 0, 255, 0};
    ck_assert_mem_eq(im->pixels, want, 6);
    vs_image_free(im);
    ck_assert_ptr_null(vs_image_from_float(v, 2, 1, 2));
    ck_assert_ptr_null(vs_image_new(0, 3, 1));

    /* '|' is the middle column, rows 0-6; ':' two dots; nothing drawn outside its 6x8 cell */
    im = vs_image_new(12, 8, 1);
    memset(im->pixels, 255, 96);
    static const uint8_t ink[3] = {0, 0, 0};
    ck_assert_int_eq(vs_image_draw_text(im, 0, 0, "|:", ink, 1), 12);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 6; x++) ck_assert_int_eq(im->pixels[y * 12 + x], x == 2 && y < 7 ? 0 : 255);
    int dark = 0;
    for (int y = 0; y < 8; y++)
        for (int x = 6; x < 12; x++) dark += im->pixels[y * 12 + x] == 0;
    ck_assert_int_eq(dark, 8); /* two 2x2 dots */
    vs_image_free(im);
    /* clipping: text running off every edge is safe */
    im = vs_image_new(5, 5, 3);
    ck_assert_int_eq(vs_image_draw_text(im, -3, -4, "W\x01\xff", ink, 2), 36);
    vs_image_free(im);
}
END_TEST

START_TEST(test_grid_geometry)
{
    vs_grid *g = vs_grid_new(2, 3, 5, 4, 3, 2, 1);
    ck_assert_ptr_nonnull(g);
    const vs_image *c = vs_grid_image(g);
    ck_assert_int_eq(c->w, 2 + 3 * (15 + 2));
    ck_assert_int_eq(c->h, 2 + 2 * (12 + VS_FONT_CELL_H + 2 + 2));
    int x, y;
    vs_grid_cell_origin(g, 1, 2, &x, &y);
    ck_assert_int_eq(x, 2 + 2 * 17);
    ck_assert_int_eq(y, 2 + 24);

    /* a 5x4 gray tile with distinct values lands zoomed 3x at the cell origin */
    vs_image *t = vs_image_new(5, 4, 1);
    for (int i = 0; i < 20; i++) t->pixels[i] = (uint8_t)(10 * i);
    vs_error e;
    ck_assert_int_eq(vs_grid_put(g, 1, 2, t, &e), VS_OK);
    for (int yy = 0; yy < 12; yy++)
        for (int xx = 0; xx < 15; xx++) {
            const uint8_t *p = c->pixels + ((size_t)(y + yy) * c->w + (x + xx)) * 3;
            uint8_t v = t->pixels[(yy / 3) * 5 + xx / 3];
            ck_assert(p[0] == v && p[1] == v && p[2] == v);
        }
    /* padding around it stays white */
    ck_assert_int_eq(c->pixels[((size_t)(y - 1) * c->w + x) * 3], 255);
    ck_assert_int_eq(c->pixels[((size_t)y * c->w + x - 1) * 3], 255);
    ck_assert_int_eq(c->pixels[((size_t)y * c->w + x + 15) * 3], 255);

    /* a caption is drawn inside the caption band of its cell only */
    ck_assert_int_eq(vs_grid_caption(g, 1, 2, "ab cd", &e), VS_OK);
    int ink_in = 0, ink_out = 0;
    for (int yy = 0; yy < c->h; yy++)
        for (int xx = 0; xx < c->w; xx++) {
            int dark = c->pixels[((size_t)yy * c->w + xx) * 3] == 32;
            int in_band = xx >= x && xx < x + 15 && yy >= y + 12 && yy < y + 12 + VS_FONT_CELL_H + 2;
            if (dark && in_band) ink_in++;
            if (dark && !in_band) ink_out++;
        }
    ck_assert_int_gt(ink_in, 10);
    ck_assert_int_eq(ink_out, 0);

    /* a smaller RGBA tile is centred and composited over white */
    vs_image *s = vs_image_new(1, 2, 4);
    s->pixels[0] = 255, s->pixels[3] = 255;          /* opaque red */
    s->pixels[4] = 0, s->pixels[5] = 0, s->pixels[7] = 0; /* transparent */
    ck_assert_int_eq(vs_grid_put(g, 0, 0, s, &e), VS_OK);
    vs_grid_cell_origin(g, 0, 0, &x, &y);
    const uint8_t *p = c->pixels + ((size_t)(y + 1 * 3) * c->w + x + 2 * 3) * 3;
    ck_assert(p[0] == 255 && p[1] == 0 && p[2] == 0);
    p += (size_t)3 * c->w * 3;
    ck_assert(p[0] == 255 && p[1] == 255 && p[2] == 255);

    vs_image *big = vs_image_new(6, 4, 1);
    ck_assert_int_eq(vs_grid_put(g, 0, 0, big, &e), VS_ERR_ARG);
    ck_assert_int_eq(vs_grid_put(g, 2, 0, t, &e), VS_ERR_ARG);
    ck_assert_int_eq(vs_grid_caption(g, 0, 3, "x", &e), VS_ERR_ARG);
    ck_assert_ptr_null(vs_grid_new(0, 1, 1, 1, 1, 0, 0));
    vs_image_free(big);
    vs_image_free(s);
    vs_image_free(t);
    vs_grid_free(g);
}
END_TEST

START_TEST(test_grid_caption_wrap)
{
    /* cells 48 pixels = 8 characters wide, two lines: the text breaks after "saliency" and at the
     * space of "map of", the rest is cut; each line is centred.  Compare with text drawn by hand. */
    vs_grid *g = vs_grid_new(1, 1, 16, 4, 3, 0, 2);
    vs_error e;
    ck_assert_int_eq(vs_grid_caption(g, 0, 0, "saliency map of class", &e), VS_OK);
    const vs_image *c = vs_grid_image(g);
    vs_image *want = vs_image_new(c->w, c->h, 3);
    memset(want->pixels, 255, (size_t)c->w * c->h * 3);
    static const uint8_t ink[3] = {32, 32, 32};
    vs_image_draw_text(want, (48 - 8 * 6) / 2 + 1, 12 + 2, "saliency", ink, 1);
    vs_image_draw_text(want, (48 - 6 * 6) / 2 + 1, 12 + 2 + 10, "map of", ink, 1);
    ck_assert_mem_eq(c->pixels, want->pixels, (size_t)c->w * c->h * 3);
    /* a re-caption replaces the old text */
    ck_assert_int_eq(vs_grid_caption(g, 0, 0, "", &e), VS_OK);
    for (size_t i = 0; i < (size_t)c->w * c->h * 3; i++) ck_assert_int_eq(c->pixels[i], 255);
    vs_image_free(want);
    vs_grid_free(g);
}
END_TEST

START_TEST(test_mark_boundaries)
{
    int32_t lab[6] = {0, 0, 1, 0, 0, 1}; /* 3 wide, 2 high */
    vs_image *im = vs_image_new(3, 2, 3);
    static const uint8_t red[3] = {255, 0, 0};
    vs_error e;
    ck_assert_int_eq(vs_image_mark_boundaries(im, lab, red, &e), VS_OK);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(im->pixels[3 * i], i == 1 || i == 4 ? 255 : 0);
    vs_image_free(im);
}
END_TEST

static Suite *png_suite(void)
{
    Suite *s = suite_create("png");
    TCase *tc = vs_tcase(s, "png", 30);
    tcase_add_test(tc, test_crc_reference);
    tcase_add_test(tc, test_colormap_signed_and_picture);
    tcase_add_test(tc, test_roundtrip_all_formats);
    tcase_add_test(tc, test_known_bytes);
    tcase_add_test(tc, test_foreign_png);
    tcase_add_test(tc, test_dynamic_huffman_png);
    tcase_add_test(tc, test_compression);
    tcase_add_test(tc, test_corrupt_files);
    tcase_add_test(tc, test_atomic_write);
    tc = vs_tcase(s, "heatmap", 10);
    tcase_add_test(tc, test_colormap);
    tcase_add_test(tc, test_heatmap_scale);
    tcase_add_test(tc, test_overlay);
    tcase_add_test(tc, test_image_from_float_and_text);
    tcase_add_test(tc, test_grid_geometry);
    tcase_add_test(tc, test_grid_caption_wrap);
    tcase_add_test(tc, test_mark_boundaries);
    return s;
}

VS_TEST_MAIN(png_suite)
