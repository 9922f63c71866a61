/* inflate.c - our own DEFLATE decoder (RFC 1951: stored, fixed and dynamic Huffman blocks), the
 * zlib (RFC 1950) and gzip (RFC 1952) wrappers around it, CRC-32 and Adler-32, and whole-file
 * reading that gunzips transparently.  Compression lives elsewhere (the PNG writer's deflate in png.c). */
#include "versus/data_io.h"

#include "datasets/io/deflate_tables.h"
#include "datasets/io/io_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checksums ---- */

/* CRC-32 table for the reflected polynomial 0xEDB88320: crc_table[b] = crc of the byte b alone. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

/* Inputs at least this long are taken eight bytes per step ("slicing by 8"): byte by byte, each step
 * waits for the last table lookup, about 7 cycles a byte (the CRC of a gzip'd MNIST file was 1% of a
 * training run); the eight lookups of a slice are independent.  Shorter inputs (PNG chunk headers) do
 * not pay for building the tables. */
#define CRC_SLICE_MIN 4096

uint32_t vs_crc32(uint32_t crc, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    crc = ~crc;
    if (n >= CRC_SLICE_MIN) {
        /* t[k][b]: the CRC register after the byte b and then k zero bytes (t[0] = crc_table) */
        uint32_t t[8][256];
        memcpy(t[0], crc_table, sizeof t[0]);
        for (int k = 1; k < 8; k++)
            for (int b = 0; b < 256; b++) t[k][b] = (t[k - 1][b] >> 8) ^ crc_table[t[k - 1][b] & 0xff];
        for (; n >= 8; n -= 8, p += 8) {
            const uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
            crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
                  t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        }
    }
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t vs_adler32(uint32_t adler, const void *buf, size_t n)
{
    enum { MOD = 65521, NMAX = 5552 }; /* NMAX: most bytes before b can overflow 32 bits */
    const uint8_t *p = buf;
    uint32_t a = adler & 0xffff, b = adler >> 16;
    while (n > 0) {
        size_t k = n < NMAX ? n : NMAX;
        n -= k;
        while (k--) {
            a += *p++;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    return b << 16 | a;
}

/* ---- output buffer with a hard cap ---- */

typedef struct outbuf {
    uint8_t *p;
    size_t n, cap, max;
    size_t stop_at; /* vs_decompress_head: stop (VS_ERR_STATE, stopped set) once n reaches it */
    int stopped;
} outbuf;

static vs_status out_grow(outbuf *o, size_t extra, const char *what, vs_error *err)
{
    size_t need;
    if (o->n >= o->stop_at) { /* every block writes at most 64 KiB between calls: max = stop_at + 64 KiB */
        o->stopped = 1;
        return vs_error_set(err, VS_ERR_STATE, "%s: stopped after the first %zu bytes", what, o->stop_at);
    }
    if (!vs_size_add(o->n, extra, &need) || need > o->max)
        return vs_error_set(err, VS_ERR_NOMEM, "%s: decompressed data exceeds the limit of %zu bytes", what,
                            o->max);
    if (need <= o->cap) return VS_OK;
    size_t cap = o->cap < 4096 ? 4096 : o->cap;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > o->max) cap = o->max;
    uint8_t *p = realloc(o->p, cap);
    if (!p) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu bytes of output", what, cap);
    o->p = p;
    o->cap = cap;
    return VS_OK;
}

/* ---- bit reader and Huffman tables ---- */

enum {
    MAXBITS = 15,   /* longest code in deflate */
    MAXLCODES = 286, /* literal/length symbols that may be used: 0..285 */
    MAXDCODES = 30,  /* distance symbols that may be used: 0..29 */
    FIXLCODES = 288  /* the fixed code defines 288 (286 and 287 never valid) */
};

/* A canonical Huffman code as one flat lookup table indexed by the next `bits` input bits
 * (least significant first, the way deflate packs codes).  Entry = symbol << 4 | code length;
 * length 0 marks a bit pattern no code starts with.  bits is the longest code length, so one
 * lookup decodes any symbol; the table has at most 2^15 entries. */
typedef struct huff {
    uint16_t table[1 << MAXBITS];
    int bits; /* 0: the code is empty */
} huff;

typedef struct inflater {
    const uint8_t *in;
    size_t n, pos;     /* input and next unread byte */
    uint64_t bitbuf;   /* unread bits, next bit in bit 0 */
    unsigned bitcnt;
    outbuf *out;
    size_t base;       /* where this stream's output starts in out (distances may not reach before) */
    const char *what;  /* "deflate", for messages */
    vs_error *err;
    huff lencode, distcode;
} inflater;

static vs_status bad(inflater *s, vs_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static vs_status bad(inflater *s, vs_status code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t at = s->pos - s->bitcnt / 8;
    return vs_error_set(s->err, code, "%s: %s (at compressed byte %zu)", s->what, msg, at);
}

static inline void refill(inflater *s)
{
    while (s->bitcnt <= 56 && s->pos < s->n) {
        s->bitbuf |= (uint64_t)s->in[s->pos++] << s->bitcnt;
        s->bitcnt += 8;
    }
}

/* Next k (<= 16) bits as a number, first bit least significant. */
static inline vs_status getbits(inflater *s, unsigned k, unsigned *v)
{
    *v = 0; /* defined on every path (the compiler cannot see that bad() never returns VS_OK) */
    if (s->bitcnt < k) {
        refill(s);
        if (s->bitcnt < k) return bad(s, VS_ERR_FORMAT, "truncated input");
    }
    *v = (unsigned)(s->bitbuf & ((1u << k) - 1));
    s->bitbuf >>= k;
    s->bitcnt -= k;
    return VS_OK;
}

static inline vs_status decode(inflater *s, const huff *h, const char *which, unsigned *sym)
{
    *sym = 0;
    if (h->bits == 0) return bad(s, VS_ERR_FORMAT, "%s symbol read but the block defines no %s codes", which, which);
    if (s->bitcnt < (unsigned)h->bits) refill(s);
    unsigned e = h->table[s->bitbuf & ((1u << h->bits) - 1)];
    unsigned len = e & 15;
    if (len == 0) return bad(s, VS_ERR_FORMAT, "invalid %s code", which);
    if (len > s->bitcnt) return bad(s, VS_ERR_FORMAT, "truncated input");
    s->bitbuf >>= len;
    s->bitcnt -= len;
    *sym = e >> 4;
    return VS_OK;
}

typedef enum huff_result {
    HUFF_OK = 0,     /* complete code */
    HUFF_SINGLE,     /* incomplete, but just one code of length 1: fine for literal/length and distance */
    HUFF_INCOMPLETE, /* any other incomplete code */
    HUFF_OVER,       /* more codes than bit patterns */
    HUFF_EMPTY       /* no codes at all: fine for distance codes of a literal-only block */
} huff_result;

/* Build the lookup table of the canonical code with the given code lengths (0 = unused symbol).
 * Unassigned bit patterns of an incomplete code stay 0 and are rejected when met in the input. */
static huff_result huff_build(huff *h, const uint8_t *lens, unsigned n)
{
    unsigned count[MAXBITS + 1] = {0}, next[MAXBITS + 1];
    for (unsigned i = 0; i < n; i++) count[lens[i]]++;
    int maxlen = MAXBITS;
    while (maxlen > 0 && count[maxlen] == 0) maxlen--;
    h->bits = maxlen;
    if (maxlen == 0) return HUFF_EMPTY;
    int left = 1; /* codes of the current length still unassigned */
    for (int len = 1; len <= MAXBITS; len++) {
        left <<= 1;
        left -= (int)count[len];
        if (left < 0) return HUFF_OVER;
    }
    /* canonical codes: shorter codes first, same length in symbol order */
    next[1] = 0;
    for (int len = 1; len < MAXBITS; len++) next[len + 1] = (next[len] + count[len]) << 1;
    size_t size = (size_t)1 << maxlen;
    memset(h->table, 0, size * sizeof h->table[0]);
    for (unsigned sym = 0; sym < n; sym++) {
        unsigned len = lens[sym];
        if (len == 0) continue;
        unsigned code = next[len]++, rev = 0;
        for (unsigned b = 0; b < len; b++) rev |= ((code >> b) & 1u) << (len - 1 - b);
        for (size_t i = rev; i < size; i += (size_t)1 << len) h->table[i] = (uint16_t)(sym << 4 | len);
    }
    if (left > 0) return maxlen == 1 ? HUFF_SINGLE : HUFF_INCOMPLETE;
    return HUFF_OK;
}

static const char *huff_problem(huff_result r)
{
    switch (r) {
    case HUFF_OVER: return "over-subscribed";
    case HUFF_EMPTY: return "empty";
    default: return "incomplete";  /* HUFF_SINGLE and HUFF_INCOMPLETE */
    }
}

/* ---- blocks ---- */

/* len_base, len_extra, dist_base, dist_extra: datasets/deflate_tables.h */

static vs_status stored_block(inflater *s)
{
    unsigned len, nlen;
    vs_status st;
    s->bitbuf >>= s->bitcnt & 7; /* skip to a byte boundary */
    s->bitcnt -= s->bitcnt & 7;
    if ((st = getbits(s, 16, &len)) || (st = getbits(s, 16, &nlen))) return st;
    if (len != (~nlen & 0xffff))
        return bad(s, VS_ERR_FORMAT, "stored block length %u does not match its complement %u", len, nlen);
    /* give back the whole bytes still buffered, then copy straight from the input */
    s->pos -= s->bitcnt / 8;
    s->bitbuf = 0;
    s->bitcnt = 0;
    if (len > s->n - s->pos) return bad(s, VS_ERR_FORMAT, "truncated stored block (%u bytes announced)", len);
    if ((st = out_grow(s->out, len, s->what, s->err))) return st;
    if (len) memcpy(s->out->p + s->out->n, s->in + s->pos, len);
    s->out->n += len;
    s->pos += len;
    return VS_OK;
}

/* Decode literals and length/distance pairs with the current codes until end-of-block. */
static vs_status codes(inflater *s)
{
    outbuf *o = s->out;
    vs_status st;
    for (;;) {
        unsigned sym;
        if ((st = decode(s, &s->lencode, "literal/length", &sym))) return st;
        if (sym < 256) {
            if (o->n == o->cap && (st = out_grow(o, 1, s->what, s->err))) return st;
            o->p[o->n++] = (uint8_t)sym;
            continue;
        }
        if (sym == 256) return VS_OK;
        sym -= 257;
        if (sym >= 29) return bad(s, VS_ERR_FORMAT, "invalid length symbol %u", sym + 257);
        unsigned extra, len, dsym, dist;
        if ((st = getbits(s, len_extra[sym], &extra))) return st;
        len = len_base[sym] + extra;
        if ((st = decode(s, &s->distcode, "distance", &dsym))) return st;
        if (dsym >= 30) return bad(s, VS_ERR_FORMAT, "invalid distance symbol %u", dsym);
        if ((st = getbits(s, dist_extra[dsym], &extra))) return st;
        dist = dist_base[dsym] + extra;
        if (dist > o->n - s->base)
            return bad(s, VS_ERR_FORMAT, "distance %u too far back (only %zu bytes decoded)", dist, o->n - s->base);
        if (o->cap - o->n < len && (st = out_grow(o, len, s->what, s->err))) return st;
        uint8_t *d = o->p + o->n;
        const uint8_t *from = d - dist;
        if (dist >= len) {
            memcpy(d, from, len);
        } else {
            for (unsigned i = 0; i < len; i++) d[i] = from[i]; /* overlapping: repeats the last dist bytes */
        }
        o->n += len;
    }
}

static vs_status fixed_block(inflater *s)
{
    uint8_t lens[FIXLCODES + MAXDCODES];
    unsigned i = 0;
    for (; i < 144; i++) lens[i] = 8;
    for (; i < 256; i++) lens[i] = 9;
    for (; i < 280; i++) lens[i] = 7;
    for (; i < FIXLCODES; i++) lens[i] = 8;
    /* 32 distance codes of 5 bits; 30 and 31 are rejected when decoded */
    uint8_t dl[32];
    memset(dl, 5, sizeof dl);
    huff_build(&s->lencode, lens, FIXLCODES);
    huff_build(&s->distcode, dl, 32);
    return codes(s);
}

static vs_status dynamic_block(inflater *s)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    uint8_t lens[MAXLCODES + MAXDCODES];
    unsigned hlit, hdist, hclen, v;
    vs_status st;
    if ((st = getbits(s, 5, &hlit)) || (st = getbits(s, 5, &hdist)) || (st = getbits(s, 4, &hclen))) return st;
    hlit += 257;
    hdist += 1;
    hclen += 4;
    if (hlit > MAXLCODES || hdist > MAXDCODES)
        return bad(s, VS_ERR_FORMAT, "too many length or distance symbols (%u, %u)", hlit, hdist);

    uint8_t cl[19] = {0};
    for (unsigned i = 0; i < hclen; i++) {
        if ((st = getbits(s, 3, &v))) return st;
        cl[order[i]] = (uint8_t)v;
    }
    huff_result r = huff_build(&s->lencode, cl, 19); /* code-length code must be complete */
    if (r != HUFF_OK) return bad(s, VS_ERR_FORMAT, "%s code-length code", huff_problem(r));

    for (unsigned i = 0; i < hlit + hdist;) {
        unsigned sym, rep;
        uint8_t val = 0;
        if ((st = decode(s, &s->lencode, "code-length", &sym))) return st;
        if (sym < 16) {
            lens[i++] = (uint8_t)sym;
            continue;
        }
        if (sym == 16) {
            if (i == 0) return bad(s, VS_ERR_FORMAT, "repeat of the previous code length with none before it");
            val = lens[i - 1];
            if ((st = getbits(s, 2, &rep))) return st;
            rep += 3;
        } else if (sym == 17) {
            if ((st = getbits(s, 3, &rep))) return st;
            rep += 3;
        } else {
            if ((st = getbits(s, 7, &rep))) return st;
            rep += 11;
        }
        if (rep > hlit + hdist - i)
            return bad(s, VS_ERR_FORMAT, "code-length repeat runs past the %u lengths announced", hlit + hdist);
        while (rep--) lens[i++] = val;
    }
    if (lens[256] == 0) return bad(s, VS_ERR_FORMAT, "no end-of-block code");

    r = huff_build(&s->lencode, lens, hlit);
    if (r != HUFF_OK && r != HUFF_SINGLE) return bad(s, VS_ERR_FORMAT, "%s literal/length code", huff_problem(r));
    r = huff_build(&s->distcode, lens + hlit, hdist);
    if (r != HUFF_OK && r != HUFF_SINGLE && r != HUFF_EMPTY)
        return bad(s, VS_ERR_FORMAT, "%s distance code", huff_problem(r));
    return codes(s);
}

/* Inflate one raw deflate stream from in[0..n), appending to o; *used = bytes of input consumed
 * (the stream ends at the byte holding its last bit). */
static vs_status inflate_stream(const uint8_t *in, size_t n, outbuf *o, size_t *used, vs_error *err)
{
    inflater *s = malloc(sizeof *s);
    if (!s) return vs_error_set(err, VS_ERR_NOMEM, "deflate: out of memory for the decoder");
    s->in = in;
    s->n = n;
    s->pos = 0;
    s->bitbuf = 0;
    s->bitcnt = 0;
    s->out = o;
    s->base = o->n;
    s->what = "deflate";
    s->err = err;
    vs_status st = VS_OK;
    unsigned last = 0, type;
    while (!last && st == VS_OK) {
        if ((st = getbits(s, 1, &last)) || (st = getbits(s, 2, &type))) break;
        switch (type) {
        case 0: st = stored_block(s); break;
        case 1: st = fixed_block(s); break;
        case 2: st = dynamic_block(s); break;
        default: st = bad(s, VS_ERR_FORMAT, "invalid block type 3"); break;
        }
    }
    *used = s->pos - s->bitcnt / 8;
    free(s);
    return st;
}

/* ---- wrappers ---- */

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* One gzip member starting at in[0]; *used = its length in bytes. */
static vs_status gzip_member(const uint8_t *in, size_t n, int member, outbuf *o, size_t *used, vs_error *err)
{
    enum { FHCRC = 2, FEXTRA = 4, FNAME = 8, FCOMMENT = 16 };
    if (n < 10) return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: truncated header (%zu bytes)", member, n);
    if (in[0] != 0x1f || in[1] != 0x8b)
        return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: bad magic %02x %02x (expected 1f 8b)", member, in[0],
                            in[1]);
    if (in[2] != 8)
        return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: unknown compression method %u (expected 8, deflate)",
                            member, in[2]);
    unsigned flg = in[3];
    if (flg & 0xe0) return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: reserved flag bits set (0x%02x)", member, flg);
    size_t p = 10;
    if (flg & FEXTRA) {
        if (n - p < 2) return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: truncated extra field", member);
        size_t xlen = (size_t)in[p] | (size_t)in[p + 1] << 8;
        p += 2;
        if (n - p < xlen) return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: truncated extra field", member);
        p += xlen;
    }
    for (unsigned f = FNAME; f <= FCOMMENT; f <<= 1) {
        if (!(flg & f)) continue;
        const uint8_t *z = memchr(in + p, 0, n - p);
        if (!z)
            return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: unterminated %s", member,
                                f == FNAME ? "file name" : "comment");
        p = (size_t)(z - in) + 1;
    }
    if (flg & FHCRC) {
        if (n - p < 2) return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: truncated header CRC", member);
        unsigned want = (unsigned)in[p] | (unsigned)in[p + 1] << 8;
        unsigned got = vs_crc32(0, in, p) & 0xffff;
        if (want != got)
            return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: header CRC mismatch (stored 0x%04x, computed 0x%04x)",
                                member, want, got);
        p += 2;
    }
    size_t start = o->n, body;
    vs_error e;
    vs_status st = inflate_stream(in + p, n - p, o, &body, &e);
    if (st) return vs_error_set(err, st, "gzip: member %d: %s", member, e.msg);
    p += body;
    if (n - p < 8)
        return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: truncated trailer (%zu of 8 bytes)", member, n - p);
    uint32_t crc = o->n > start ? vs_crc32(0, o->p + start, o->n - start) : 0; /* o->p may be NULL */
    uint32_t want = le32(in + p), isize = le32(in + p + 4);
    if (crc != want)
        return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)",
                            member, want, crc);
    if (isize != (uint32_t)(o->n - start))
        return vs_error_set(err, VS_ERR_FORMAT, "gzip: member %d: length mismatch (stored %u, decoded %zu bytes)", member,
                            isize, o->n - start);
    *used = p + 8;
    return VS_OK;
}

static vs_status gunzip_all(const uint8_t *in, size_t n, outbuf *o, vs_error *err)
{
    size_t p = 0;
    int member = 1;
    do {
        size_t used = 0;
        vs_status st = gzip_member(in + p, n - p, member, o, &used, err);
        if (st) return st;
        p += used;
        member++;
        size_t z = p; /* zero padding after the last member is ignored, as gzip(1) does */
        while (z < n && in[z] == 0) z++;
        if (z == n) break;
    } while (p < n);
    return VS_OK;
}

static vs_status zlib_all(const uint8_t *in, size_t n, outbuf *o, vs_error *err)
{
    if (n < 2) return vs_error_set(err, VS_ERR_FORMAT, "zlib: truncated header (%zu bytes)", n);
    unsigned cmf = in[0], flg = in[1];
    if ((cmf << 8 | flg) % 31 != 0)
        return vs_error_set(err, VS_ERR_FORMAT, "zlib: bad header check bits (%02x %02x)", cmf, flg);
    if ((cmf & 15) != 8)
        return vs_error_set(err, VS_ERR_FORMAT, "zlib: unknown compression method %u (expected 8, deflate)", cmf & 15);
    if ((cmf >> 4) > 7) return vs_error_set(err, VS_ERR_FORMAT, "zlib: window size 2^%u too large", (cmf >> 4) + 8);
    if (flg & 0x20) return vs_error_set(err, VS_ERR_FORMAT, "zlib: preset dictionary not supported");
    size_t body;
    vs_error e;
    vs_status st = inflate_stream(in + 2, n - 2, o, &body, &e);
    if (st) return vs_error_set(err, st, "zlib: %s", e.msg);
    size_t p = 2 + body;
    if (n - p < 4) return vs_error_set(err, VS_ERR_FORMAT, "zlib: truncated Adler-32 trailer (%zu of 4 bytes)", n - p);
    uint32_t want = be32(in + p), got = vs_adler32(1, o->p, o->n);
    if (want != got)
        return vs_error_set(err, VS_ERR_FORMAT, "zlib: Adler-32 mismatch (stored 0x%08x, computed 0x%08x)", want, got);
    if (p + 4 != n) return vs_error_set(err, VS_ERR_FORMAT, "zlib: %zu bytes of trailing data", n - p - 4);
    return VS_OK;
}

static vs_status decompress(vs_zformat fmt, const uint8_t *in, size_t n, size_t max_out, size_t stop_at, uint8_t **out,
                            size_t *out_n, vs_error *err)
{
    if (!out || !out_n || (!in && n)) return vs_error_set(err, VS_ERR_ARG, "vs_decompress: NULL argument");
    *out = NULL;
    *out_n = 0;
    size_t cap = VS_INFLATE_MAX_DEFAULT < vs_mem_budget() ? VS_INFLATE_MAX_DEFAULT : vs_mem_budget();
    outbuf o = {NULL, 0, 0, max_out ? max_out : cap, stop_at, 0};
    /* first guess of the output size: gzip's ISIZE (mod 2^32), else 4x, never past what the
     * input can expand to (deflate's ratio is at most 1032:1) or the cap */
    size_t guess = n < SIZE_MAX / 4 ? 4 * n : SIZE_MAX;
    if (fmt == VS_ZFORMAT_GZIP && n >= 18) guess = le32(in + n - 4);
    size_t bound = n < (SIZE_MAX - 64) / 1032 ? n * 1032 + 64 : SIZE_MAX;
    if (guess > bound) guess = bound;
    if (guess > o.max) guess = o.max;
    (void)out_grow(&o, guess, "deflate", NULL); /* only a guess: on failure grow on demand instead */
    vs_status st;
    switch (fmt) {
    case VS_ZFORMAT_GZIP: st = gunzip_all(in, n, &o, err); break;
    case VS_ZFORMAT_ZLIB: st = zlib_all(in, n, &o, err); break;
    case VS_ZFORMAT_RAW: {
        size_t used = 0;
        st = inflate_stream(in, n, &o, &used, err);
        if (st == VS_OK && used != n) st = vs_error_set(err, VS_ERR_FORMAT, "deflate: %zu bytes of trailing data", n - used);
        break;
    }
    default: st = vs_error_set(err, VS_ERR_ARG, "vs_decompress: unknown format %d", (int)fmt); break;
    }
    if (st != VS_OK && o.stopped) { /* the head asked for is there; the rest stays compressed */
        st = VS_OK;
        o.n = stop_at;
    }
    if (st == VS_OK && o.cap == 0) st = out_grow(&o, 1, "deflate", err); /* never return NULL */
    if (st) {
        free(o.p);
        return st;
    }
    if (o.n > 0 && o.n < o.cap) { /* give back the slack of the guess */
        uint8_t *p = realloc(o.p, o.n);
        if (p) o.p = p;
    }
    *out = o.p;
    *out_n = o.n;
    return VS_OK;
}

vs_status vs_decompress(vs_zformat fmt, const uint8_t *in, size_t n, size_t max_out, uint8_t **out,
                        size_t *out_n, vs_error *err)
{
    return decompress(fmt, in, n, max_out, SIZE_MAX, out, out_n, err);
}

vs_status vs_decompress_head(vs_zformat fmt, const uint8_t *in, size_t n, size_t want, uint8_t **out, size_t *out_n,
                             vs_error *err)
{
    size_t max = want < SIZE_MAX - 65536 ? want + 65536 : SIZE_MAX;
    return decompress(fmt, in, n, max, want, out, out_n, err);
}

vs_status vs_gunzip(const uint8_t *in, size_t n, uint8_t **out, size_t *out_n, vs_error *err)
{
    return vs_decompress(VS_ZFORMAT_GZIP, in, n, 0, out, out_n, err);
}

vs_status vs_zlib_inflate(const uint8_t *in, size_t n, uint8_t **out, size_t *out_n, vs_error *err)
{
    return vs_decompress(VS_ZFORMAT_ZLIB, in, n, 0, out, out_n, err);
}

/* ---- files ---- */

vs_status vs_read_file(const char *path, uint8_t **buf, size_t *n, vs_error *err)
{
    if (!path || !buf || !n) return vs_error_set(err, VS_ERR_ARG, "vs_read_file: NULL argument");
    return vs_io_read_file(path, SIZE_MAX, buf, n, err); /* bounded by the memory budget */
}

vs_status vs_read_file_maybe_gz(const char *path, uint8_t **buf, size_t *n, vs_error *err)
{
    uint8_t *raw;
    size_t rn;
    vs_status st = vs_read_file(path, &raw, &rn, err);
    if (st) return st;
    if (rn < 2 || raw[0] != 0x1f || raw[1] != 0x8b) {
        *buf = raw;
        *n = rn;
        return VS_OK;
    }
    vs_error e;
    st = vs_gunzip(raw, rn, buf, n, &e);
    free(raw);
    if (st) return vs_error_set(err, st, "%s: %s", path, e.msg);
    return VS_OK;
}
