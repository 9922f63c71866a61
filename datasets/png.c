/* png.c - PNG writer and reader for 8-bit gray, gray+alpha, RGB and RGBA images.
 *
 * Writer: per-row filter chosen by the minimum-sum-of-absolute-differences heuristic, a zlib stream
 * made by our own deflate (greedy LZ77 over hash chains, coded with the fixed Huffman tables; a block
 * falls back to stored when that is smaller), IDAT split into 64 KiB chunks, every chunk with its
 * CRC-32.  Reader: any non-interlaced 8-bit PNG of those colour types, whatever deflate blocks made
 * it (stored, fixed or dynamic Huffman); it verifies every chunk CRC and never trusts a length it has
 * not checked.  Checksums, inflate (output capped at the size IHDR announces) and file reading are
 * the public ones of versus/data_io.h (datasets/inflate.c); compression is the only codec code here. */
#include "versus/picture.h"

#include "versus/data_io.h"

#include "datasets/io/deflate_tables.h"
#include "datasets/io/write_atomic.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* ---------------------------------------------------------------- deflate codes (RFC 1951 3.2.5, 3.2.6) */

/* Index i with base[i] <= v < base[i+1] (the last index for v >= base[n-1]). */
static int code_index(const uint16_t *base, int n, unsigned v)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (base[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Fixed Huffman literal/length code of symbol s: *bits gets its length, returns the code. */
static unsigned fixed_code(unsigned s, int *bits)
{
    if (s < 144) return *bits = 8, 0x30 + s;
    if (s < 256) return *bits = 9, 0x190 + (s - 144);
    if (s < 280) return *bits = 7, s - 256;
    return *bits = 8, 0xC0 + (s - 280);
}

/* ---------------------------------------------------------------- deflate encoder */

typedef struct bitwriter {
    uint8_t *buf;
    size_t len, cap;
    uint64_t acc; /* pending bits, LSB first */
    int nacc;
    int oom;
} bitwriter;

static void bw_byte(bitwriter *w, uint8_t b)
{
    if (w->oom) return;
    if (w->len == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        uint8_t *nb = cap > w->cap ? realloc(w->buf, cap) : NULL;
        if (!nb) {
            w->oom = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    w->buf[w->len++] = b;
}

/* Append the n (<= 32) low bits of v, least significant first. */
static void bw_bits(bitwriter *w, uint32_t v, int n)
{
    w->acc |= (uint64_t)v << w->nacc;
    w->nacc += n;
    while (w->nacc >= 8) {
        bw_byte(w, (uint8_t)w->acc);
        w->acc >>= 8;
        w->nacc -= 8;
    }
}

/* Huffman codes are defined most significant bit first: emit them reversed. */
static void bw_code(bitwriter *w, unsigned code, int n)
{
    unsigned r = 0;
    for (int i = 0; i < n; i++) r |= ((code >> i) & 1u) << (n - 1 - i);
    bw_bits(w, r, n);
}

static void bw_align(bitwriter *w)
{
    if (w->nacc > 0) bw_bits(w, 0, 8 - w->nacc);
}

enum { WBITS = 15, WSIZE = 1 << WBITS, HBITS = 15, MIN_MATCH = 3, MAX_MATCH = 258, MAX_CHAIN = 64,
       BLOCK_MAX = 65535 /* input bytes per block: a stored block holds at most this */ };
#define NO_POS SIZE_MAX

typedef struct lz_state {
    size_t head[1 << HBITS]; /* last position with each 3-byte hash, NO_POS if none */
    size_t prev[WSIZE];      /* previous position with the same hash, by position mod WSIZE */
} lz_state;

static unsigned lz_hash(const uint8_t *p)
{
    uint32_t x = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    return (x * 2654435761u) >> (32 - HBITS);
}

static void lz_insert(lz_state *s, const uint8_t *in, size_t n, size_t pos)
{
    if (pos + MIN_MATCH > n) return;
    unsigned h = lz_hash(in + pos);
    s->prev[pos & (WSIZE - 1)] = s->head[h];
    s->head[h] = pos;
}

/* Longest earlier match for in[pos..end) within the window; returns its length (0 if < MIN_MATCH). */
static size_t lz_match(const lz_state *s, const uint8_t *in, size_t n, size_t pos, size_t end, size_t *dist)
{
    size_t limit = end - pos < MAX_MATCH ? end - pos : MAX_MATCH;
    if (limit < MIN_MATCH || pos + MIN_MATCH > n) return 0;
    size_t best = 0;
    size_t cand = s->head[lz_hash(in + pos)];
    /* The chain only goes back in position; prev[] entries older than the window are stale, so stop there. */
    for (int chain = 0; cand != NO_POS && pos - cand <= WSIZE && chain < MAX_CHAIN; chain++) {
        if (in[cand + best] == in[pos + best]) {
            size_t k = 0;
            while (k < limit && in[cand + k] == in[pos + k]) k++;
            if (k > best) {
                best = k;
                *dist = pos - cand;
                if (k == limit) break;
            }
        }
        size_t next = s->prev[cand & (WSIZE - 1)];
        if (next == NO_POS || next >= cand) break;
        cand = next;
    }
    return best >= MIN_MATCH ? best : 0;
}

/* Raw deflate stream of in [n] appended to w. */
static int deflate_raw(bitwriter *w, const uint8_t *in, size_t n)
{
    lz_state *s = malloc(sizeof *s);
    uint16_t *tlen = malloc(BLOCK_MAX * sizeof *tlen);  /* 0: literal; else match length */
    uint16_t *tval = malloc(BLOCK_MAX * sizeof *tval);  /* literal byte or match distance */
    if (!s || !tlen || !tval) {
        free(s), free(tlen), free(tval);
        return 0;
    }
    for (size_t i = 0; i < (size_t)1 << HBITS; i++) s->head[i] = NO_POS;
    for (size_t i = 0; i < WSIZE; i++) s->prev[i] = NO_POS;

    size_t start = 0;
    do {
        size_t end = n - start < BLOCK_MAX ? n : start + BLOCK_MAX;
        size_t nt = 0, pos = start;
        uint64_t fixed_bits = 3 + 7; /* block header + end-of-block code */
        while (pos < end) {
            size_t dist = 0, len = lz_match(s, in, n, pos, end, &dist);
            if (len) {
                int li = code_index(len_base, 29, (unsigned)len), di = code_index(dist_base, 30, (unsigned)dist);
                fixed_bits += (257 + li < 280 ? 7 : 8) + len_extra[li] + 5 + dist_extra[di];
                tlen[nt] = (uint16_t)len;
                tval[nt++] = (uint16_t)dist;
                for (size_t k = 0; k < len; k++) lz_insert(s, in, n, pos + k);
                pos += len;
            } else {
                fixed_bits += in[pos] < 144 ? 8 : 9;
                tlen[nt] = 0;
                tval[nt++] = in[pos];
                lz_insert(s, in, n, pos);
                pos++;
            }
        }
        int final = end == n;
        uint64_t stored_bits = 3 + 7 + 32 + 8 * (uint64_t)(end - start);
        if (stored_bits < fixed_bits) {
            bw_bits(w, (uint32_t)final, 1);
            bw_bits(w, 0, 2);
            bw_align(w);
            uint32_t len = (uint32_t)(end - start);
            bw_bits(w, len, 16);
            bw_bits(w, ~len & 0xFFFFu, 16);
            for (size_t k = start; k < end; k++) bw_byte(w, in[k]);
        } else {
            bw_bits(w, (uint32_t)final, 1);
            bw_bits(w, 1, 2);
            int bits;
            for (size_t t = 0; t < nt; t++) {
                if (!tlen[t]) {
                    unsigned c = fixed_code(tval[t], &bits);
                    bw_code(w, c, bits);
                    continue;
                }
                int li = code_index(len_base, 29, tlen[t]), di = code_index(dist_base, 30, tval[t]);
                unsigned c = fixed_code(257u + (unsigned)li, &bits);
                bw_code(w, c, bits);
                bw_bits(w, tlen[t] - len_base[li], len_extra[li]);
                bw_code(w, (unsigned)di, 5);
                bw_bits(w, tval[t] - dist_base[di], dist_extra[di]);
            }
            unsigned c = fixed_code(256, &bits);
            bw_code(w, c, bits);
        }
        start = end;
    } while (start < n);
    bw_align(w);
    free(s), free(tlen), free(tval);
    return !w->oom;
}

/* ---------------------------------------------------------------- PNG writer */

static int color_type_of(int channels)
{
    static const int ct[5] = {-1, 0, 4, 2, 6}; /* gray, gray+alpha, RGB, RGBA */
    return channels >= 1 && channels <= 4 ? ct[channels] : -1;
}

static int channels_of(int color_type)
{
    switch (color_type) {
    case 0: return 1;
    case 4: return 2;
    case 2: return 3;
    case 6: return 4;
    default: return 0;
    }
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

/* Prediction of byte i of a row by filter type f (PNG specification, section 9): a, b, c are the
 * original bytes left, above and above-left (0 outside the image); row and prev (the row above, NULL
 * for the first) hold original bytes, not filtered ones, at least up to i. */
static int predict(int f, const uint8_t *row, const uint8_t *prev, size_t i, int bpp)
{
    int a = i >= (size_t)bpp ? row[i - bpp] : 0;
    int b = prev ? prev[i] : 0;
    int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
    return f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : f == 4 ? paeth(a, b, c) : 0;
}

/* Filter row cur (prev = row above or NULL) with type f into out [stride bytes]. */
static void filter_row(int f, const uint8_t *cur, const uint8_t *prev, size_t stride, int bpp, uint8_t *out)
{
    for (size_t i = 0; i < stride; i++) out[i] = (uint8_t)(cur[i] - predict(f, cur, prev, i, bpp));
}

/* Append one chunk (length, type, data, CRC over type and data) to w. */
static void put_chunk(bitwriter *w, const char type[4], const uint8_t *data, size_t n)
{
    uint8_t hdr[8];
    put_be32(hdr, (uint32_t)n);
    memcpy(hdr + 4, type, 4);
    for (int i = 0; i < 8; i++) bw_byte(w, hdr[i]);
    for (size_t i = 0; i < n; i++) bw_byte(w, data[i]);
    uint32_t crc = vs_crc32(vs_crc32(0, hdr + 4, 4), data, n);
    uint8_t c[4];
    put_be32(c, crc);
    for (int i = 0; i < 4; i++) bw_byte(w, c[i]);
}

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

vs_status vs_png_encode(const vs_image *im, uint8_t **out, size_t *len, vs_error *err)
{
    if (!out || !len) return vs_error_set(err, VS_ERR_ARG, "png: no output buffer");
    *out = NULL;
    *len = 0;
    if (!im || !im->pixels || im->w < 1 || im->h < 1 || color_type_of(im->channels) < 0)
        return vs_error_set(err, VS_ERR_ARG, "png: image must have w, h >= 1 and 1..4 channels");
    size_t stride, raw_len;
    if (!vs_size_mul((size_t)im->w, (size_t)im->channels, &stride) || !vs_size_mul(stride + 1, (size_t)im->h, &raw_len))
        return vs_error_set(err, VS_ERR_NOMEM, "png: %d x %d image too large", im->w, im->h);

    /* Filtered scanlines: one filter-type byte, then the row filtered with the type whose output has
     * the smallest sum of |signed byte| (the heuristic of the PNG specification, section 12.8). */
    uint8_t *raw = malloc(raw_len), *trial = malloc(stride);
    if (!raw || !trial) {
        free(raw), free(trial);
        return vs_error_set(err, VS_ERR_NOMEM, "png: out of memory for %zu bytes", raw_len);
    }
    for (int y = 0; y < im->h; y++) {
        const uint8_t *cur = im->pixels + (size_t)y * stride, *prev = y ? cur - stride : NULL;
        uint8_t *dst = raw + (size_t)y * (stride + 1);
        uint64_t best = UINT64_MAX;
        for (int f = 0; f < 5; f++) {
            filter_row(f, cur, prev, stride, im->channels, trial);
            uint64_t sum = 0;
            for (size_t i = 0; i < stride; i++) sum += (uint64_t)abs((int)(int8_t)trial[i]);
            if (sum < best) { /* strict: ties keep the lower filter type */
                best = sum;
                dst[0] = (uint8_t)f;
                memcpy(dst + 1, trial, stride);
            }
        }
    }
    free(trial);

    bitwriter z = {0};
    bw_byte(&z, 0x78); /* CM = 8 (deflate), CINFO = 7 (32 KiB window) */
    bw_byte(&z, 0x9C); /* FLEVEL = 2, FCHECK makes 0x789C a multiple of 31 */
    int ok = deflate_raw(&z, raw, raw_len);
    uint8_t ad[4];
    put_be32(ad, vs_adler32(1, raw, raw_len));
    free(raw);
    for (int i = 0; i < 4; i++) bw_byte(&z, ad[i]);
    if (!ok || z.oom) {
        free(z.buf);
        return vs_error_set(err, VS_ERR_NOMEM, "png: out of memory while compressing");
    }

    bitwriter f = {0};
    for (int i = 0; i < 8; i++) bw_byte(&f, png_signature[i]);
    uint8_t ihdr[13];
    put_be32(ihdr, (uint32_t)im->w);
    put_be32(ihdr + 4, (uint32_t)im->h);
    ihdr[8] = 8;                                   /* bit depth */
    ihdr[9] = (uint8_t)color_type_of(im->channels);
    ihdr[10] = ihdr[11] = ihdr[12] = 0;            /* deflate, adaptive filtering, no interlace */
    put_chunk(&f, "IHDR", ihdr, sizeof ihdr);
    for (size_t off = 0; off < z.len; off += 65536) {
        size_t k = z.len - off < 65536 ? z.len - off : 65536;
        put_chunk(&f, "IDAT", z.buf + off, k);
    }
    put_chunk(&f, "IEND", NULL, 0);
    free(z.buf);
    if (f.oom) {
        free(f.buf);
        return vs_error_set(err, VS_ERR_NOMEM, "png: out of memory");
    }
    *out = f.buf;
    *len = f.len;
    return VS_OK;
}

vs_status vs_png_write(const vs_image *im, const char *path, vs_error *err)
{
    if (!path) return vs_error_set(err, VS_ERR_ARG, "png: no path");
    uint8_t *buf;
    size_t len;
    vs_error e;
    if (vs_png_encode(im, &buf, &len, &e) != VS_OK) return vs_error_set(err, e.code, "%s: %s", path, e.msg);
    vs_status s = vs_write_file_atomic(path, buf, len, err);
    free(buf);
    return s;
}

/* ---------------------------------------------------------------- PNG reader */

static int chunk_is(const uint8_t *type, const char *name)
{
    return memcmp(type, name, 4) == 0;
}

vs_status vs_png_decode(const uint8_t *buf, size_t len, const char *name, vs_image **out, vs_error *err)
{
    if (!name) name = "<memory>";
    if (!out) return vs_error_set(err, VS_ERR_ARG, "%s: no output image", name);
    *out = NULL;
    if (!buf || len < 8 || memcmp(buf, png_signature, 8) != 0)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: not a PNG file (bad signature)", name);

    /* Pass 1: walk and verify every chunk, read IHDR, size the IDAT data. */
    uint32_t w = 0, h = 0;
    int channels = 0, seen_iend = 0;
    size_t idat_total = 0, pos = 8;
    while (!seen_iend) {
        if (len - pos < 12)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: truncated at byte %zu (expected a chunk%s)", name, pos,
                                pos == 8 ? "" : " or IEND");
        uint32_t n = get_be32(buf + pos);
        const uint8_t *type = buf + pos + 4, *data = buf + pos + 8;
        for (int i = 0; i < 4; i++)
            if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z')))
                return vs_error_set(err, VS_ERR_FORMAT, "%s: byte %zu: invalid chunk type", name, pos + 4);
        if (n > 0x7FFFFFFFu || len - pos - 12 < n)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: chunk %.4s at byte %zu: length %u runs past the end of the file",
                                name, (const char *)type, pos, (unsigned)n);
        uint32_t stored = get_be32(data + n), crc = vs_crc32(0, type, (size_t)n + 4);
        if (stored != crc)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: chunk %.4s at byte %zu: CRC mismatch (stored %08x, computed %08x)",
                                name, (const char *)type, pos, (unsigned)stored, (unsigned)crc);
        if (pos == 8 && !chunk_is(type, "IHDR"))
            return vs_error_set(err, VS_ERR_FORMAT, "%s: first chunk is %.4s, expected IHDR", name, (const char *)type);
        if (chunk_is(type, "IHDR")) {
            if (pos != 8) return vs_error_set(err, VS_ERR_FORMAT, "%s: second IHDR chunk at byte %zu", name, pos);
            if (n != 13) return vs_error_set(err, VS_ERR_FORMAT, "%s: IHDR has %u bytes, expected 13", name, (unsigned)n);
            w = get_be32(data);
            h = get_be32(data + 4);
            channels = channels_of(data[9]);
            if (w == 0 || h == 0 || w > INT_MAX || h > INT_MAX)
                return vs_error_set(err, VS_ERR_FORMAT, "%s: IHDR size %u x %u is invalid", name, (unsigned)w, (unsigned)h);
            if (data[8] != 8 || !channels)
                return vs_error_set(err, VS_ERR_FORMAT, "%s: bit depth %d, colour type %d not supported (expected 8-bit gray, gray+alpha, RGB or RGBA)",
                                    name, data[8], data[9]);
            if (data[10] != 0 || data[11] != 0)
                return vs_error_set(err, VS_ERR_FORMAT, "%s: unknown compression or filter method in IHDR", name);
            if (data[12] != 0) return vs_error_set(err, VS_ERR_FORMAT, "%s: interlaced PNGs are not supported", name);
        } else if (chunk_is(type, "IDAT")) {
            idat_total += n; /* cannot overflow: bounded by len */
        } else if (chunk_is(type, "IEND")) {
            seen_iend = 1;
        } else if (type[0] >= 'A' && type[0] <= 'Z' && !chunk_is(type, "PLTE")) {
            return vs_error_set(err, VS_ERR_FORMAT, "%s: unknown critical chunk %.4s at byte %zu", name, (const char *)type, pos);
        }
        pos += (size_t)n + 12;
    }
    if (idat_total < 6) return vs_error_set(err, VS_ERR_FORMAT, "%s: no image data (IDAT) before IEND", name);

    size_t stride, raw_len;
    if (!vs_size_mul((size_t)w, (size_t)channels, &stride) || !vs_size_mul(stride + 1, (size_t)h, &raw_len))
        return vs_error_set(err, VS_ERR_FORMAT, "%s: image %u x %u too large", name, (unsigned)w, (unsigned)h);
    /* Deflate cannot expand data more than 1032:1, so a larger claim is a corrupt header: fail before
     * allocating what it asks for. */
    if (raw_len / 1032 > idat_total)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: %zu bytes of IDAT cannot hold a %u x %u image", name, idat_total,
                            (unsigned)w, (unsigned)h);

    /* Pass 2: gather the zlib stream and inflate it, capped at the size IHDR announces. */
    uint8_t *z = malloc(idat_total), *raw = NULL;
    if (!z) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu bytes of IDAT", name, idat_total);
    size_t zn = 0;
    for (pos = 8;;) {
        uint32_t n = get_be32(buf + pos);
        if (chunk_is(buf + pos + 4, "IDAT")) {
            memcpy(z + zn, buf + pos + 8, n);
            zn += n;
        }
        if (chunk_is(buf + pos + 4, "IEND")) break;
        pos += (size_t)n + 12;
    }
    size_t raw_n;
    vs_error e;
    vs_status st = vs_decompress(VS_ZFORMAT_ZLIB, z, zn, raw_len, &raw, &raw_n, &e);
    free(z);
    if (st != VS_OK) return vs_error_set(err, st, "%s: IDAT: %s", name, e.msg);
    vs_image *im = NULL;
    if (raw_n != raw_len) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: IDAT holds %zu bytes, a %u x %u image needs %zu", name, raw_n,
                          (unsigned)w, (unsigned)h, raw_len);
        goto done;
    }
    im = vs_image_new((int)w, (int)h, channels);
    if (!im) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for a %u x %u image", name, (unsigned)w, (unsigned)h);
        goto done;
    }

    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *src = raw + (size_t)y * (stride + 1);
        uint8_t *cur = im->pixels + (size_t)y * stride, *prev = y ? cur - stride : NULL;
        int f = src[0];
        if (f > 4) {
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: row %u: invalid filter type %d", name, (unsigned)y, f);
            goto done;
        }
        for (size_t i = 0; i < stride; i++) cur[i] = (uint8_t)(src[1 + i] + predict(f, cur, prev, i, channels));
    }
done:
    free(raw);
    if (st != VS_OK) {
        vs_image_free(im);
        return st;
    }
    *out = im;
    return VS_OK;
}

vs_status vs_png_read(const char *path, vs_image **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!path || !out) return vs_error_set(err, VS_ERR_ARG, "png: no path or output");
    uint8_t *buf;
    size_t len;
    vs_status s = vs_read_file(path, &buf, &len, err);
    if (s != VS_OK) return s;
    s = vs_png_decode(buf, len, path, out, err);
    free(buf);
    return s;
}
