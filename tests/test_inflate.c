/* test_inflate.c - our inflate against known vectors (stored, fixed, dynamic blocks; zlib; gzip
 * with every header flag and several members), CRC-32 / Adler-32 known answers, and corrupt
 * streams each rejected with the expected message. */
#include "vs_check.h"
#include "versus/data_io.h"

#include <stdint.h>
#include <unistd.h>

/* Vectors made once with CPython's zlib/gzip (level 9; Z_FIXED for `fixed`; level 0 for `stored`);
 * the bad_* streams were written bit by bit and CPython's zlib rejects each of them too. */
static const uint8_t stored[24] = {
    0x01, 0x13, 0x00, 0xec, 0xff, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x2c, 0x20, 0x73, 0x74, 0x6f, 0x72,
    0x65, 0x64, 0x20, 0x62, 0x6c, 0x6f, 0x63, 0x6b,
};
static const uint8_t fixed[13] = {
    0x4b, 0x4c, 0x4a, 0x4e, 0x44, 0x42, 0x0a, 0x69, 0x99, 0x15, 0xa9, 0x29, 0x00,
};
static const uint8_t dynamic[300] = {
    0x5d, 0x93, 0x4b, 0x6e, 0x05, 0x21, 0x0c, 0x04, 0xaf, 0xc2, 0x11, 0xf0, 0x0f, 0x06, 0xcd, 0x69,
    0x22, 0x25, 0x8b, 0x2c, 0x93, 0xa7, 0xdc, 0x3f, 0xf4, 0xac, 0xa8, 0xb7, 0xc4, 0xb2, 0xec, 0xea,
    0xa6, 0xdd, 0xdb, 0xeb, 0xe7, 0xef, 0xe3, 0xf7, 0xeb, 0xb3, 0x7d, 0xbf, 0x5a, 0xbf, 0x9b, 0x9d,
    0x6f, 0xbb, 0x9b, 0x9f, 0xef, 0xbc, 0x5b, 0x9c, 0xef, 0x75, 0xb7, 0x44, 0xff, 0xb8, 0x5b, 0x9d,
    0x05, 0xaf, 0xbb, 0x8d, 0xb3, 0x10, 0xbb, 0x63, 0x62, 0xe4, 0x9e, 0x71, 0x9d, 0x85, 0xb1, 0x97,
    0xac, 0xb3, 0x70, 0x6d, 0x0a, 0xeb, 0x58, 0xd3, 0x05, 0x4a, 0x52, 0x57, 0x17, 0x60, 0x2d, 0xf7,
    0x24, 0x0b, 0xf2, 0xed, 0x6d, 0x46, 0xe4, 0xb5, 0x89, 0x8c, 0xd0, 0xa2, 0xb6, 0x41, 0x1d, 0xea,
    0x02, 0xb8, 0x5f, 0x9a, 0x05, 0xf4, 0x70, 0x6d, 0x5c, 0xd4, 0x2b, 0x0f, 0x41, 0x9f, 0xa2, 0x77,
    0xd0, 0x67, 0xaa, 0x8b, 0x56, 0x5f, 0x7b, 0x96, 0x83, 0xbe, 0x7c, 0x6f, 0x74, 0xd0, 0xd7, 0xdc,
    0x5c, 0x0e, 0xfa, 0x21, 0x7a, 0x07, 0xfd, 0x78, 0xba, 0x40, 0x3f, 0x9f, 0x59, 0xa0, 0x9f, 0xcf,
    0x46, 0x5a, 0x2f, 0xae, 0x00, 0xfd, 0x12, 0x7d, 0x80, 0x7e, 0x49, 0x63, 0xd0, 0xfb, 0x2e, 0x2b,
    0x82, 0xe6, 0x77, 0x39, 0x16, 0x74, 0xdf, 0x64, 0x6c, 0x14, 0xbf, 0x52, 0x0a, 0x62, 0xb0, 0xa6,
    0x6f, 0x0a, 0x48, 0xb0, 0xd0, 0x6f, 0xc6, 0xf5, 0xf6, 0xe7, 0xda, 0x0b, 0x11, 0x56, 0xca, 0x46,
    0x32, 0x41, 0x43, 0x32, 0x92, 0x11, 0x1a, 0x4a, 0x5a, 0x52, 0xc7, 0x54, 0x1c, 0x93, 0x3a, 0x2e,
    0x65, 0x36, 0xdf, 0x52, 0xa4, 0x60, 0x27, 0x63, 0xd4, 0xa5, 0x23, 0x99, 0x23, 0xd3, 0x89, 0x24,
    0x83, 0xe4, 0x5d, 0xf3, 0xa0, 0xc3, 0xa3, 0x6b, 0x2f, 0x74, 0x78, 0xf6, 0xcd, 0x57, 0x9d, 0xb9,
    0x94, 0x8e, 0x82, 0x0e, 0x1f, 0x4f, 0x1f, 0x74, 0xf8, 0xd4, 0xbc, 0x0a, 0x06, 0x58, 0x7b, 0x0b,
    0x3a, 0x7c, 0x3d, 0x27, 0x0c, 0x1d, 0xf1, 0xe8, 0x28, 0x9e, 0xb1, 0x49, 0x6f, 0xcd, 0xb7, 0xf4,
    0x6b, 0x1e, 0x2f, 0x22, 0xe4, 0x5f, 0xf1, 0x24, 0x52, 0x3e, 0xff, 0x03,
};
static const uint8_t zlib_text[62] = {
    0x78, 0xda, 0x2b, 0x4b, 0x2d, 0x2a, 0x2e, 0x2d, 0x56, 0x48, 0xce, 0xcf, 0x2d, 0x48, 0x2c, 0x4a,
    0x2d, 0x56, 0x28, 0xc9, 0xc8, 0xcc, 0x4b, 0x2f, 0xb6, 0x56, 0x28, 0x83, 0x88, 0xa7, 0x56, 0x14,
    0xe4, 0x24, 0x66, 0xe6, 0x15, 0x2b, 0xe4, 0xe6, 0xa7, 0xa4, 0xe6, 0x80, 0xa4, 0x13, 0x4b, 0x60,
    0x8a, 0xa1, 0x6a, 0xf5, 0x60, 0x6a, 0x07, 0xdc, 0x0c, 0x00, 0x3e, 0x78, 0x4d, 0x68,
};
static const uint8_t gz_flags[70] = {
    0x1f, 0x8b, 0x08, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x04, 0x00, 0x61, 0x62, 0x01, 0x02,
    0x6e, 0x61, 0x6d, 0x65, 0x2e, 0x74, 0x78, 0x74, 0x00, 0x61, 0x20, 0x63, 0x6f, 0x6d, 0x6d, 0x65,
    0x6e, 0x74, 0x00, 0xeb, 0xac, 0x4b, 0xaf, 0xca, 0x2c, 0x50, 0xc8, 0x48, 0x4d, 0x4c, 0x49, 0x2d,
    0x52, 0x48, 0xcb, 0x49, 0x4c, 0x2f, 0x56, 0x28, 0x49, 0x2d, 0x2e, 0xe1, 0x02, 0x00, 0xca, 0xe9,
    0x22, 0x68, 0x17, 0x00, 0x00, 0x00,
};
static const uint8_t gz_multi[67] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xcb, 0x2c, 0x2a, 0x2e, 0x51,
    0xc8, 0x4d, 0xcd, 0x4d, 0x4a, 0x2d, 0xe2, 0x02, 0x00, 0xa7, 0xf4, 0x85, 0x0a, 0x0d, 0x00, 0x00,
    0x00, 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x2b, 0x4e, 0x4d, 0xce, 0xcf,
    0x4b, 0x51, 0xc8, 0x4d, 0xcd, 0x4d, 0x4a, 0x2d, 0xe2, 0x02, 0x00, 0x36, 0x18, 0x4b, 0x0e, 0x0e,
    0x00, 0x00, 0x00,
};
static const uint8_t gz_empty[20] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00,
};
static const uint8_t zlib_zeros[120] = {
    0x78, 0xda, 0xed, 0xc1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xc2, 0xa0, 0xf5, 0x4f, 0x6d, 0x0d, 0x0f,
    0xa0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x80, 0x57, 0x03, 0x86, 0xaf, 0x00, 0x01,
};
static const uint8_t raw_runs[11] = {
    0x4b, 0x4c, 0x1c, 0x05, 0xa3, 0x60, 0x14, 0x0c, 0x77, 0x00, 0x00,
};
static const uint8_t bad_oversub[4] = {
    0x05, 0x00, 0x92, 0x04,
};
static const uint8_t bad_toomany[3] = {
    0xf5, 0x00, 0x00,
};
static const uint8_t bad_repeat[4] = {
    0x05, 0x00, 0x02, 0x24,
};
static const uint8_t bad_noeob[37] = {
    0x05, 0x20, 0x00, 0x24, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x02,
};
static const uint8_t bad_far[4] = {
    0x4b, 0x04, 0x42, 0x00,
};
static const uint8_t bad_dist30[4] = {
    0x4b, 0x04, 0x3e, 0x00,
};
static const uint8_t bad_len286[4] = {
    0x4b, 0x1c, 0x03, 0x00,
};
static const uint8_t bad_type3[1] = {
    0x07,
};
static const uint8_t bad_nlen[10] = {
    0x01, 0x05, 0x00, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
};

static const char text3[] = "versus compares things; versus explains models that compare things. "
                            "versus compares things; versus explains models that compare things. "
                            "versus compares things; versus explains models that compare things. ";

/* Inflate in (format fmt) and expect exactly want[0..want_n). */
static void expect_ok(vs_zformat fmt, const uint8_t *in, size_t n, const void *want, size_t want_n)
{
    uint8_t *out = NULL;
    size_t out_n = 0;
    vs_error e;
    vs_error_clear(&e);
    vs_status st = vs_decompress(fmt, in, n, 0, &out, &out_n, &e);
    ck_assert_msg(st == VS_OK, "unexpected error: %s", e.msg);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(out_n, want_n);
    ck_assert(memcmp(out, want, want_n) == 0);
    free(out);
}

/* Inflate in and expect failure with code and a message containing part. */
static void expect_fail(vs_zformat fmt, const uint8_t *in, size_t n, size_t max_out, vs_status code, const char *part)
{
    uint8_t *out = (uint8_t *)&out; /* must be reset to NULL */
    size_t out_n = 7;
    vs_error e;
    vs_error_clear(&e);
    vs_status st = vs_decompress(fmt, in, n, max_out, &out, &out_n, &e);
    ck_assert_int_eq(st, code);
    ck_assert_int_eq(e.code, code);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(out_n, 0);
    ck_assert_msg(strstr(e.msg, part) != NULL, "message \"%s\" lacks \"%s\"", e.msg, part);
}

START_TEST(test_checksums)
{
    ck_assert_uint_eq(vs_crc32(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(vs_crc32(0, "", 0), 0);
    ck_assert_uint_eq(vs_crc32(vs_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u); /* update style */
    ck_assert_uint_eq(vs_crc32(0, text3, sizeof text3 - 1), 0x3a092b54u);
    ck_assert_uint_eq(vs_adler32(1, "Wikipedia", 9), 0x11E60398u);
    ck_assert_uint_eq(vs_adler32(1, "", 0), 1);
    ck_assert_uint_eq(vs_adler32(vs_adler32(1, "Wiki", 4), "pedia", 5), 0x11E60398u);
    ck_assert_uint_eq(vs_adler32(1, text3, sizeof text3 - 1), 0x3e784d68u);
    /* long input: the modulo must be taken before b overflows (100000 bytes of 0xff) */
    static uint8_t ff[100000];
    memset(ff, 0xff, sizeof ff);
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < sizeof ff; i++) {
        a = (a + 0xff) % 65521;
        b = (b + a) % 65521;
    }
    ck_assert_uint_eq(vs_adler32(1, ff, sizeof ff), b << 16 | a);
    /* long inputs go eight bytes a step: the same CRC as short pieces taken byte by byte, from any
     * start and length, and zlib's value (Python's zlib.crc32 of the same bytes) */
    static uint8_t seq[100003];
    for (size_t i = 0; i < sizeof seq; i++) seq[i] = (uint8_t)(i * 131 + 7);
    ck_assert_uint_eq(vs_crc32(0, seq, sizeof seq), 0xcdb01cbfu);
    ck_assert_uint_eq(vs_crc32(0, seq + 5, 65536 + 3), 0xc196d3c9u);
    for (size_t start = 0; start < 9; start++)
        for (size_t len = 4090; len < 4110; len += 3) {
            uint32_t pieces = 0;
            for (size_t k = 0; k < len; k += 1000) pieces = vs_crc32(pieces, seq + start + k, len - k < 1000 ? len - k : 1000);
            ck_assert_uint_eq(vs_crc32(0, seq + start, len), pieces);
        }
}
END_TEST

START_TEST(test_block_types)
{
    expect_ok(VS_ZFORMAT_RAW, stored, sizeof stored, "hello, stored block", 19);
    expect_ok(VS_ZFORMAT_RAW, fixed, sizeof fixed, "abcabcabcabcabc fixed", 21);
    char src[2048];
    size_t len = 0;
    for (int i = 0; i < 60; i++) len += (size_t)snprintf(src + len, sizeof src - len, "%d squared is %d; ", i, i * i);
    ck_assert_uint_eq(len, 1144);
    ck_assert_uint_eq(vs_crc32(0, src, len), 0x51543bfdu);
    expect_ok(VS_ZFORMAT_RAW, dynamic, sizeof dynamic, src, len);
    uint8_t a[1000];
    memset(a, 'a', sizeof a);
    expect_ok(VS_ZFORMAT_RAW, raw_runs, sizeof raw_runs, a, sizeof a); /* distance 1: overlapping copies */
}
END_TEST

START_TEST(test_wrappers)
{
    expect_ok(VS_ZFORMAT_ZLIB, zlib_text, sizeof zlib_text, text3, sizeof text3 - 1);
    expect_ok(VS_ZFORMAT_GZIP, gz_flags, sizeof gz_flags, "gzip header flags test\n", 23);
    expect_ok(VS_ZFORMAT_GZIP, gz_multi, sizeof gz_multi, "first member\nsecond member\n", 27);
    expect_ok(VS_ZFORMAT_GZIP, gz_empty, sizeof gz_empty, "", 0);
    uint8_t padded[sizeof gz_empty + 8] = {0}; /* zero padding after the last member is ignored */
    memcpy(padded, gz_empty, sizeof gz_empty);
    expect_ok(VS_ZFORMAT_GZIP, padded, sizeof padded, "", 0);

    uint8_t *out;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_gunzip(gz_multi, sizeof gz_multi, &out, &n, &e), VS_OK);
    ck_assert_uint_eq(n, 27);
    free(out);
    ck_assert_int_eq(vs_zlib_inflate(zlib_zeros, sizeof zlib_zeros, &out, &n, &e), VS_OK);
    ck_assert_uint_eq(n, 100000);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) nonzero += out[i] != 0;
    ck_assert_uint_eq(nonzero, 0);
    free(out);
    /* an exact cap is fine, one byte less is a decompression bomb */
    ck_assert_int_eq(vs_decompress(VS_ZFORMAT_ZLIB, zlib_zeros, sizeof zlib_zeros, 100000, &out, &n, &e), VS_OK);
    free(out);
    expect_fail(VS_ZFORMAT_ZLIB, zlib_zeros, sizeof zlib_zeros, 99999, VS_ERR_NOMEM, "exceeds the limit of 99999 bytes");
}
END_TEST

START_TEST(test_bad_deflate)
{
    expect_fail(VS_ZFORMAT_RAW, bad_type3, sizeof bad_type3, 0, VS_ERR_FORMAT, "invalid block type 3");
    expect_fail(VS_ZFORMAT_RAW, bad_nlen, sizeof bad_nlen, 0, VS_ERR_FORMAT, "does not match its complement");
    expect_fail(VS_ZFORMAT_RAW, bad_oversub, sizeof bad_oversub, 0, VS_ERR_FORMAT, "over-subscribed code-length code");
    expect_fail(VS_ZFORMAT_RAW, bad_toomany, sizeof bad_toomany, 0, VS_ERR_FORMAT, "too many length or distance symbols");
    expect_fail(VS_ZFORMAT_RAW, bad_repeat, sizeof bad_repeat, 0, VS_ERR_FORMAT, "with none before it");
    expect_fail(VS_ZFORMAT_RAW, bad_noeob, sizeof bad_noeob, 0, VS_ERR_FORMAT, "no end-of-block code");
    expect_fail(VS_ZFORMAT_RAW, bad_far, sizeof bad_far, 0, VS_ERR_FORMAT, "distance 2 too far back");
    expect_fail(VS_ZFORMAT_RAW, bad_dist30, sizeof bad_dist30, 0, VS_ERR_FORMAT, "invalid distance symbol 30");
    expect_fail(VS_ZFORMAT_RAW, bad_len286, sizeof bad_len286, 0, VS_ERR_FORMAT, "invalid length symbol 286");
    /* every proper prefix of a valid stream is truncated */
    for (size_t k = 0; k < sizeof dynamic; k++)
        expect_fail(VS_ZFORMAT_RAW, dynamic, k, 0, VS_ERR_FORMAT, "truncated");
    for (size_t k = 0; k < sizeof stored; k++)
        expect_fail(VS_ZFORMAT_RAW, stored, k, 0, VS_ERR_FORMAT, "truncated");
    uint8_t extra[sizeof fixed + 1];
    memcpy(extra, fixed, sizeof fixed);
    extra[sizeof fixed] = 0;
    expect_fail(VS_ZFORMAT_RAW, extra, sizeof extra, 0, VS_ERR_FORMAT, "1 bytes of trailing data");
}
END_TEST

START_TEST(test_bad_wrappers)
{
    uint8_t b[128];
    /* gzip */
    memcpy(b, gz_flags, sizeof gz_flags);
    b[sizeof gz_flags - 8] ^= 1;
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "CRC-32 mismatch");
    memcpy(b, gz_flags, sizeof gz_flags);
    b[sizeof gz_flags - 4] ^= 1;
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "length mismatch (stored 22, decoded 23 bytes)");
    memcpy(b, gz_flags, sizeof gz_flags);
    b[12] ^= 1; /* inside the extra field: header CRC no longer matches */
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "header CRC mismatch");
    memcpy(b, gz_flags, sizeof gz_flags);
    b[1] = 0x8c;
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "bad magic 1f 8c");
    memcpy(b, gz_flags, sizeof gz_flags);
    b[2] = 7;
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "unknown compression method 7");
    memcpy(b, gz_flags, sizeof gz_flags);
    b[3] |= 0x80;
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_flags, 0, VS_ERR_FORMAT, "reserved flag bits");
    expect_fail(VS_ZFORMAT_GZIP, gz_flags, 30, 0, VS_ERR_FORMAT, "unterminated comment");
    expect_fail(VS_ZFORMAT_GZIP, gz_flags, sizeof gz_flags - 3, 0, VS_ERR_FORMAT, "truncated trailer (5 of 8 bytes)");
    expect_fail(VS_ZFORMAT_GZIP, gz_flags, 5, 0, VS_ERR_FORMAT, "truncated header");
    expect_fail(VS_ZFORMAT_GZIP, gz_multi, sizeof gz_multi - 20, 0, VS_ERR_FORMAT, "member 2: deflate: truncated input");
    memcpy(b, gz_empty, sizeof gz_empty);
    memcpy(b + sizeof gz_empty, "junk", 4);
    expect_fail(VS_ZFORMAT_GZIP, b, sizeof gz_empty + 4, 0, VS_ERR_FORMAT, "member 2");
    /* zlib */
    memcpy(b, zlib_text, sizeof zlib_text);
    b[sizeof zlib_text - 1] ^= 1;
    expect_fail(VS_ZFORMAT_ZLIB, b, sizeof zlib_text, 0, VS_ERR_FORMAT, "Adler-32 mismatch");
    memcpy(b, zlib_text, sizeof zlib_text);
    b[1] ^= 1;
    expect_fail(VS_ZFORMAT_ZLIB, b, sizeof zlib_text, 0, VS_ERR_FORMAT, "bad header check bits");
    const uint8_t dict[2] = {0x78, 0xbb}; /* FDICT set, check bits valid */
    expect_fail(VS_ZFORMAT_ZLIB, dict, 2, 0, VS_ERR_FORMAT, "preset dictionary");
    const uint8_t win[2] = {0x88, 0x1c}; /* window 2^16 */
    expect_fail(VS_ZFORMAT_ZLIB, win, 2, 0, VS_ERR_FORMAT, "window size 2^16 too large");
    expect_fail(VS_ZFORMAT_ZLIB, zlib_text, sizeof zlib_text - 2, 0, VS_ERR_FORMAT, "truncated Adler-32 trailer");
}
END_TEST

/* The head of a stream: a header is read from a bomb's first bytes without inflating the rest; the
 * budget refuses sizes before they are allocated; devices are refused, not read. */
START_TEST(test_head_budget_devices)
{
    uint8_t *out;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_decompress_head(VS_ZFORMAT_ZLIB, zlib_zeros, sizeof zlib_zeros, 16, &out, &n, &e), VS_OK);
    ck_assert_uint_eq(n, 16);
    ck_assert_uint_eq(out[0] | out[15], 0);
    free(out);
    ck_assert_int_eq(vs_decompress_head(VS_ZFORMAT_GZIP, gz_multi, sizeof gz_multi, 100, &out, &n, &e), VS_OK);
    ck_assert_uint_eq(n, 27); /* shorter than asked: the whole (checked) stream */
    free(out);
    size_t saved = vs_mem_budget();
    vs_set_mem_budget(1 << 20);
    ck_assert_int_eq(vs_mem_check(1 << 18, 4, "x", &e), VS_OK);
    ck_assert_int_eq(vs_mem_check((1 << 18) + 1, 4, "synthetic X", &e), VS_ERR_NOMEM);
    ck_assert_str_eq(e.msg, "synthetic X: needs 1.0 MiB, more than the memory budget of 1.0 MiB (--max-memory)");
    ck_assert_int_eq(vs_mem_check(SIZE_MAX, 2, "y", &e), VS_ERR_NOMEM);
    /* the default cap of inflating follows the budget */
    vs_set_mem_budget(50000);
    ck_assert_int_eq(vs_zlib_inflate(zlib_zeros, sizeof zlib_zeros, &out, &n, &e), VS_ERR_NOMEM);
    vs_set_mem_budget(0);
    ck_assert_uint_eq(vs_mem_budget(), saved);
    ck_assert_int_eq(vs_read_file("/dev/zero", &out, &n, &e), VS_ERR_IO);
    ck_assert_str_eq(e.msg, "/dev/zero: is a device, expected a regular file or a pipe");
    ck_assert_int_eq(vs_read_file("/", &out, &n, &e), VS_ERR_IO);
}
END_TEST

START_TEST(test_files)
{
    char plain[512], gz[512];
    snprintf(plain, sizeof plain, "%s/vs_inflate_%ld.txt", vs_test_tmpdir(), (long)getpid());
    snprintf(gz, sizeof gz, "%s/vs_inflate_%ld.gz", vs_test_tmpdir(), (long)getpid());
    FILE *f = fopen(plain, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(text3, 1, sizeof text3 - 1, f);
    fclose(f);
    f = fopen(gz, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(gz_multi, 1, sizeof gz_multi - 1, f); /* last byte missing */
    fclose(f);

    uint8_t *buf;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_read_file_maybe_gz(plain, &buf, &n, &e), VS_OK);
    ck_assert_uint_eq(n, sizeof text3 - 1);
    ck_assert(memcmp(buf, text3, n) == 0);
    free(buf);
    ck_assert_int_eq(vs_read_file_maybe_gz(gz, &buf, &n, &e), VS_ERR_FORMAT);
    ck_assert(strncmp(e.msg, gz, strlen(gz)) == 0); /* names the file */
    ck_assert_ptr_nonnull(strstr(e.msg, "member 2: truncated trailer"));
    f = fopen(gz, "wb");
    fwrite(gz_multi, 1, sizeof gz_multi, f);
    fclose(f);
    ck_assert_int_eq(vs_read_file_maybe_gz(gz, &buf, &n, &e), VS_OK);
    ck_assert_uint_eq(n, 27);
    ck_assert(memcmp(buf, "first member\nsecond member\n", 27) == 0);
    free(buf);
    remove(plain);
    remove(gz);
    ck_assert_int_eq(vs_read_file_maybe_gz(plain, &buf, &n, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot open"));
}
END_TEST

/* Real data: the MNIST test images (1.6 MB gz -> 7.8 MB) exercise long distances and many blocks;
 * the gzip CRC-32 and ISIZE checks prove the bytes are right. */
START_TEST(test_mnist_gz)
{
    char path[1024];
    if (!vs_test_data_path(path, sizeof path, "mnist/t10k-images-idx3-ubyte.gz")) return;
    uint8_t *buf;
    size_t n;
    vs_error e;
    ck_assert_msg(vs_read_file_maybe_gz(path, &buf, &n, &e) == VS_OK, "%s", e.msg);
    ck_assert_uint_eq(n, 7840016);
    ck_assert_uint_eq(buf[2], 0x08);
    ck_assert_uint_eq(buf[3], 0x03);
    free(buf);
}
END_TEST

static Suite *inflate_suite(void)
{
    Suite *s = suite_create("inflate");
    TCase *tc = vs_tcase(s, "vectors", 20);
    tcase_add_test(tc, test_checksums);
    tcase_add_test(tc, test_block_types);
    tcase_add_test(tc, test_wrappers);
    tc = vs_tcase(s, "corrupt", 20);
    tcase_add_test(tc, test_bad_deflate);
    tcase_add_test(tc, test_bad_wrappers);
    tc = vs_tcase(s, "files", 60);
    tcase_add_test(tc, test_files);
    tcase_add_test(tc, test_head_budget_devices);
    tcase_add_test(tc, test_mnist_gz);
    return s;
}

VS_TEST_MAIN(inflate_suite)
