/* png.c - PNG writer and reader for 8-bit gray, gray+alpha, RGB and RGBA images.
 *
 * Writer: per-row filter chosen by the minimum-sum-of-absolute-differences heuristic, a zlib stream
 * made by our own deflate (greedy LZ77 over hash chains, coded with the fixed Huffman tables; a block
 * falls back to stored when that is smaller), IDAT split into 64 KiB chunks, every chunk with its
 * CRC-32.  Reader: the subset the writer produces (stored and fixed-Huffman blocks, no interlace);
 * it verifies every chunk CRC and the Adler-32 and never trusts a length it has not checked.
 * CRC-32 and Adler-32 are private here (datasets/inflate.c has the public ones; to be merged). */
#include "versus/picture.h"

#include "datasets/write_atomic.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- checksums */

/* CRC-32 (ISO 3309, reflected polynomial 0xEDB88320), four bits at a time. */
static uint32_t png_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    static const uint32_t nib[16] = {
        0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
        0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ nib[crc & 15];
        crc = (crc >> 4) ^ nib[crc & 15];
    }
    return ~crc;
}

/* Adler-32 of p [n] (RFC 1950): a = 1 + sum bytes, b = sum of the running a, both mod 65521. */
static uint32_t png_adler32(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    while (n > 0) {
        size_t k = n < 5552 ? n : 5552; /* largest run whose sums cannot overflow 32 bits */
        n -= k;
        while (k--) {
            a += *p++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}

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

/* ---------------------------------------------------------------- deflate tables (RFC 1951 3.2.5) */

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

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

/* Filter row cur (prev = row above or NULL) with type f into out [stride bytes]. */
static void filter_row(int f, const uint8_t *cur, const uint8_t *prev, size_t stride, int bpp, uint8_t *out)
{
    for (size_t i = 0; i < stride; i++) {
        int a = i >= (size_t)bpp ? cur[i - bpp] : 0;
        int b = prev ? prev[i] : 0;
        int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
        int pred = f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : f == 4 ? paeth(a, b, c) : 0;
        out[i] = (uint8_t)(cur[i] - pred);
    }
}

/* Append one chunk (length, type, data, CRC over type and data) to w. */
static void put_chunk(bitwriter *w, const char type[4], const uint8_t *data, size_t n)
{
    uint8_t hdr[8];
    put_be32(hdr, (uint32_t)n);
    memcpy(hdr + 4, type, 4);
    for (int i = 0; i < 8; i++) bw_byte(w, hdr[i]);
    for (size_t i = 0; i < n; i++) bw_byte(w, data[i]);
    uint32_t crc = png_crc32(png_crc32(0, hdr + 4, 4), data, n);
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
    put_be32(ad, png_adler32(raw, raw_len));
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

/* ---------------------------------------------------------------- inflate (stored + fixed blocks) */

typedef struct bitreader {
    const uint8_t *p;
    size_t n, pos;
    uint32_t buf;
    int cnt;
} bitreader;

/* Next n (<= 16) bits, least significant first; -1 when the input ends. */
static int br_bits(bitreader *r, int n)
{
    while (r->cnt < n) {
        if (r->pos >= r->n) return -1;
        r->buf |= (uint32_t)r->p[r->pos++] << r->cnt;
        r->cnt += 8;
    }
    int v = (int)(r->buf & ((1u << n) - 1));
    r->buf >>= n;
    r->cnt -= n;
    return v;
}

/* Canonical Huffman code as counts per length and symbols in code order (as in zlib's puff.c). */
typedef struct huffman {
    short count[16];
    short symbol[288];
} huffman;

static void huffman_build(huffman *h, const uint8_t *lengths, int n)
{
    short offs[16];
    memset(h->count, 0, sizeof h->count);
    for (int s = 0; s < n; s++) h->count[lengths[s]]++;
    h->count[0] = 0;
    offs[1] = 0;
    for (int l = 1; l < 15; l++) offs[l + 1] = (short)(offs[l] + h->count[l]);
    for (int s = 0; s < n; s++)
        if (lengths[s]) h->symbol[offs[lengths[s]]++] = (short)s;
}

/* Decode one symbol reading the code bit by bit; -1 at end of input, -2 for an unused code. */
static int huffman_decode(bitreader *r, const huffman *h)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; l++) {
        int b = br_bits(r, 1);
        if (b < 0) return -1;
        code |= b;
        int count = h->count[l];
        if (code - count < first) return h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -2;
}

/* Inflate the raw deflate stream at r into out [cap]; exactly cap bytes must come out.  On return
 * r->pos is the first byte after the stream.  Returns NULL on success, else what went wrong. */
static const char *inflate_exact(bitreader *r, uint8_t *out, size_t cap)
{
    uint8_t lengths[288];
    huffman lit, dist;
    memset(lengths, 8, 144);
    memset(lengths + 144, 9, 112);
    memset(lengths + 256, 7, 24);
    memset(lengths + 280, 8, 8);
    huffman_build(&lit, lengths, 288);
    memset(lengths, 5, 30);
    huffman_build(&dist, lengths, 30);

    size_t o = 0;
    int final;
    do {
        final = br_bits(r, 1);
        int type = br_bits(r, 2);
        if (final < 0 || type < 0) return "deflate stream truncated";
        if (type == 0) {
            r->buf = 0; /* stored: skip to the byte boundary (fewer than 8 bits are pending) */
            r->cnt = 0;
            if (r->n - r->pos < 4) return "deflate stream truncated in a stored block header";
            unsigned len = r->p[r->pos] | (unsigned)r->p[r->pos + 1] << 8;
            unsigned nlen = r->p[r->pos + 2] | (unsigned)r->p[r->pos + 3] << 8;
            r->pos += 4;
            if ((len ^ 0xFFFFu) != nlen) return "stored block length does not match its complement";
            if (r->n - r->pos < len) return "deflate stream truncated in a stored block";
            if (cap - o < len) return "more image data than the header announces";
            memcpy(out + o, r->p + r->pos, len);
            o += len;
            r->pos += len;
        } else if (type == 1) {
            for (;;) {
                int sym = huffman_decode(r, &lit);
                if (sym < 0) return sym == -1 ? "deflate stream truncated" : "invalid Huffman code";
                if (sym < 256) {
                    if (o == cap) return "more image data than the header announces";
                    out[o++] = (uint8_t)sym;
                    continue;
                }
                if (sym == 256) break;
                sym -= 257;
                if (sym >= 29) return "invalid length code";
                int e = br_bits(r, len_extra[sym]);
                int ds = huffman_decode(r, &dist);
                if (e < 0 || ds == -1) return "deflate stream truncated";
                if (ds < 0 || ds >= 30) return "invalid distance code";
                int de = br_bits(r, dist_extra[ds]);
                if (de < 0) return "deflate stream truncated";
                size_t len = (size_t)len_base[sym] + (size_t)e, d = (size_t)dist_base[ds] + (size_t)de;
                if (d > o) return "distance points before the start of the data";
                if (cap - o < len) return "more image data than the header announces";
                for (size_t k = 0; k < len; k++, o++) out[o] = out[o - d]; /* may overlap: byte by byte */
            }
        } else if (type == 2) {
            return "dynamic Huffman blocks are not supported by this reader (it reads PNGs written by versus)";
        } else {
            return "invalid deflate block type 3";
        }
    } while (!final);
    if (o != cap) return "less image data than the header announces";
    return NULL;
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
        uint32_t stored = get_be32(data + n), crc = png_crc32(0, type, (size_t)n + 4);
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

    /* Pass 2: gather the zlib stream. */
    uint8_t *z = malloc(idat_total), *raw = malloc(raw_len);
    vs_image *im = vs_image_new((int)w, (int)h, channels);
    vs_status st = VS_OK;
    if (!z || !raw || !im) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for a %u x %u image", name, (unsigned)w, (unsigned)h);
        goto done;
    }
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

    unsigned cmf = z[0], flg = z[1];
    if ((cmf & 15) != 8 || (cmf >> 4) > 7 || (cmf * 256 + flg) % 31 != 0) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: invalid zlib header %02x %02x", name, cmf, flg);
        goto done;
    }
    if (flg & 0x20) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: zlib preset dictionary not allowed in PNG", name);
        goto done;
    }
    bitreader r = {z, zn, 2, 0, 0};
    const char *why = inflate_exact(&r, raw, raw_len);
    if (why) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: %s", name, why);
        goto done;
    }
    if (zn - r.pos < 4) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: zlib stream ends before its Adler-32", name);
        goto done;
    }
    uint32_t want = get_be32(z + r.pos), got = png_adler32(raw, raw_len);
    if (want != got) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: Adler-32 mismatch (stored %08x, computed %08x)", name,
                          (unsigned)want, (unsigned)got);
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
        for (size_t i = 0; i < stride; i++) {
            int a = i >= (size_t)channels ? cur[i - channels] : 0;
            int b = prev ? prev[i] : 0;
            int c = prev && i >= (size_t)channels ? prev[i - channels] : 0;
            int pred = f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : f == 4 ? paeth(a, b, c) : 0;
            cur[i] = (uint8_t)(src[1 + i] + pred);
        }
    }
done:
    free(z);
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
    FILE *f = fopen(path, "rb");
    if (!f) return vs_error_set(err, VS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            uint8_t *nb = nc > cap ? realloc(buf, nc) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory reading the file", path);
            }
            buf = nb;
            cap = nc;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return vs_error_set(err, VS_ERR_IO, "%s: read error", path);
    }
    vs_status s = vs_png_decode(buf, len, path, out, err);
    free(buf);
    return s;
}
