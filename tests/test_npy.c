/* test_npy.c - .npy: numpy's own bytes, dtype conversions, int64 labels, round trips, atomic
 * writes, and malformed files each rejected with the file name and the problem. */
#include "vs_check.h"
#include "io_check.h"
#include "versus/npy.h"

#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* np.save("x.npy", np.array([[1, -2, 0.5], [3.25, -0.125, 100]], dtype=np.float32)) writes: the
 * 10-byte preamble (magic, version 1.0, header length 118), the dict padded with spaces to 128
 * bytes in all, then the 24 data bytes. */
static const char fixture_dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
static const unsigned char fixture_data[24] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f,
                                               0x00, 0x00, 0x50, 0x40, 0x00, 0x00, 0x00, 0xbe, 0x00, 0x00, 0xc8, 0x42};
static const float fixture_values[6] = {1, -2, 0.5f, 3.25f, -0.125f, 100};

static size_t fixture(unsigned char *out)
{
    memcpy(out, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(out + 10, fixture_dict, 59);
    memset(out + 69, ' ', 58);
    out[127] = '\n';
    memcpy(out + 128, fixture_data, 24);
    return 152;
}

/* A .npy file with the given header dict, padded as numpy pads it, and data bytes.
 * version 1 or 2 (3 is laid out as 2). */
static unsigned char *make_npy(const char *dict, int version, const void *data, size_t n, size_t *len)
{
    size_t pre = version == 1 ? 10 : 12, hl = strlen(dict) + 1, pad = 64 - (pre + hl) % 64, total = pre + hl + pad + n;
    unsigned char *b = malloc(total);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)version;
    b[7] = 0;
    size_t h = hl + pad;
    for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (unsigned char)(h >> (8 * i));
    memcpy(b + pre, dict, hl - 1);
    memset(b + pre + hl - 1, ' ', pad);
    b[pre + hl + pad - 1] = '\n';
    if (n) memcpy(b + pre + hl + pad, data, n);
    *len = total;
    return b;
}

static vs_tensor *parse_ok(const void *b, size_t n)
{
    vs_tensor *t = NULL;
    vs_error e;
    ck_assert_msg(vs_npy_parse(b, n, "ok.npy", &t, &e) == VS_OK, "%s", e.msg);
    return t;
}

START_TEST(test_numpy_fixture)
{
    unsigned char b[152];
    size_t n = fixture(b);
    vs_tensor *t = parse_ok(b, n);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(t->shape[0], 2);
    ck_assert_int_eq(t->shape[1], 3);
    for (int i = 0; i < 6; i++) ck_assert(t->data[i] == fixture_values[i]);
    /* writing the same tensor gives numpy's bytes exactly */
    unsigned char *enc;
    size_t en;
    vs_error e;
    ck_assert_int_eq(vs_npy_encode(t, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, n);
    ck_assert_int_eq(memcmp(enc, b, n), 0);
    free(enc);
    vs_tensor_free(t);

    /* 1-d and 0-d headers as numpy writes them (growth padding after the dict) */
    float one[3] = {7, 8, 9};
    t = vs_tensor_from(1, (int64_t[]){3}, one);
    ck_assert_int_eq(vs_npy_encode(t, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, 128 + 12);
    ck_assert_int_eq(memcmp(enc + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 57), 0);
    for (size_t i = 67; i < 127; i++) ck_assert_int_eq(enc[i], ' ');
    ck_assert_int_eq(enc[127], '\n');
    free(enc);
    vs_tensor_free(t);
    t = vs_scalar(2.5f);
    ck_assert_int_eq(vs_npy_encode(t, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, 128 + 4); /* 55-byte dict + '\n' = 66 with the preamble: padded to 128 */
    ck_assert_int_eq(memcmp(enc + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 55), 0);
    vs_tensor_free(t);
    t = parse_ok(enc, en);
    ck_assert_int_eq(t->ndim, 0);
    ck_assert(t->data[0] == 2.5f);
    free(enc);
    vs_tensor_free(t);
}
END_TEST

START_TEST(test_header_variants)
{
    size_t n;
    float d[2] = {1.5f, -3};
    /* format 2.0 and 3.0, double quotes, Python 2 longs, a trailing comma, no spaces */
    const char *dicts[] = {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2L,)}",
                           "{'shape':(1,2,),'fortran_order':False,'descr':'<f4'}",
                           "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }"}; /* one non-unit dim: same layout */
    for (int v = 1; v <= 3; v++) {
        for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
            unsigned char *b = make_npy(dicts[i], v == 1 ? 1 : 2, d, sizeof d, &n);
            b[6] = (unsigned char)v;
            vs_tensor *t = parse_ok(b, n);
            ck_assert_int_eq(t->size, 2);
            ck_assert(t->data[0] == 1.5f && t->data[1] == -3.0f);
            vs_tensor_free(t);
            free(b);
        }
    }
    /* an empty array */
    unsigned char *b = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", 1, NULL, 0, &n);
    vs_tensor *t = parse_ok(b, n);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(t->size, 0);
    ck_assert_int_eq(t->shape[1], 5);
    vs_tensor_free(t);
    free(b);
}
END_TEST

START_TEST(test_conversions)
{
    size_t n;
    double f8[3] = {0.1, -2.5, 1e300};
    int64_t i8[3] = {-5, 0, (int64_t)1 << 40};
    int32_t i4[3] = {-7, 123456, 2147483647};
    uint8_t u1[3] = {0, 128, 255};
    uint8_t b1[3] = {1, 0, 1};
    const struct {
        const char *descr;
        const void *data;
        size_t bytes;
        float want[3];
    } cases[] = {
        {"<f8", f8, sizeof f8, {0.1f, -2.5f, INFINITY}},
        {"<i8", i8, sizeof i8, {-5, 0, 1099511627776.0f}},
        {"<i4", i4, sizeof i4, {-7, 123456, 2147483648.0f}},
        {"|u1", u1, sizeof u1, {0, 128, 255}},
        {"<u1", u1, sizeof u1, {0, 128, 255}},
        {"|b1", b1, sizeof b1, {1, 0, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", cases[c].descr);
        unsigned char *b = make_npy(dict, 1, cases[c].data, cases[c].bytes, &n);
        vs_tensor *t = parse_ok(b, n);
        for (int i = 0; i < 3; i++) ck_assert_msg(t->data[i] == cases[c].want[i], "%s[%d] = %g", cases[c].descr, i, t->data[i]);
        vs_tensor_free(t);
        /* integer dtypes are labels too */
        vs_i64_array a;
        vs_error e;
        if (strcmp(cases[c].descr, "<f8") != 0) {
            ck_assert_msg(vs_npy_parse_i64(b, n, "y.npy", &a, &e) == VS_OK, "%s", e.msg);
            ck_assert_int_eq(a.ndim, 1);
            ck_assert_int_eq(a.size, 3);
            for (int i = 0; i < 3; i++) ck_assert_int_eq(a.data[i], (int64_t)cases[c].want[i] - (c == 2 && i == 2));
            vs_i64_array_free(&a);
            ck_assert_ptr_null(a.data);
        } else {
            ck_assert_int_eq(vs_npy_parse_i64(b, n, "y.npy", &a, &e), VS_ERR_FORMAT);
            ck_assert_str_eq(e.msg, "y.npy: element 0 is 0.1, not an integer (dtype '<f8' read as int64)");
            ck_assert_ptr_null(a.data);
        }
        free(b);
    }
    /* floats holding whole numbers are accepted as labels */
    float lab[4] = {3, 0, 9, -1};
    unsigned char *b = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 1, lab, sizeof lab, &n);
    vs_i64_array a;
    vs_error e;
    ck_assert_int_eq(vs_npy_parse_i64(b, n, "y.npy", &a, &e), VS_OK);
    ck_assert(a.data[0] == 3 && a.data[1] == 0 && a.data[2] == 9 && a.data[3] == -1);
    vs_i64_array_free(&a);
    free(b);
}
END_TEST

START_TEST(test_round_trip_files)
{
    char path[512], ypath[512];
    io_tmp_path(path, sizeof path, "npy_rt.npy");
    io_tmp_path(ypath, sizeof ypath, "npy_y.npy");
    /* 3 x 1 x 100 x 100 floats: several 64 KiB chunks, with special values in it */
    vs_rng r;
    vs_rng_seed(&r, 11);
    vs_tensor *x = vs_tensor_randn(4, (int64_t[]){3, 1, 100, 100}, &r, 0, 1);
    x->data[0] = NAN;
    x->data[1] = -INFINITY;
    x->data[2] = -0.0f;
    x->data[29999] = 1e-45f;
    vs_error e;
    ck_assert_int_eq(vs_npy_write(path, x, &e), VS_OK);
    vs_tensor *y = NULL;
    ck_assert_msg(vs_npy_read(path, &y, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(y->ndim, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(y->shape[i], x->shape[i]);
    ck_assert_int_eq(memcmp(x->data, y->data, (size_t)x->size * 4), 0); /* bit for bit, NaN and -0 included */
    vs_tensor_free(y);

    int64_t labels[5] = {0, 9, -3, INT64_MAX, INT64_MIN};
    ck_assert_int_eq(vs_npy_write_i64(ypath, 1, (int64_t[]){5}, labels, &e), VS_OK);
    vs_i64_array a;
    ck_assert_int_eq(vs_npy_read_i64(ypath, &a, &e), VS_OK);
    ck_assert_int_eq(a.size, 5);
    ck_assert_int_eq(memcmp(a.data, labels, sizeof labels), 0);
    vs_i64_array_free(&a);
    /* labels read as floats too */
    ck_assert_int_eq(vs_npy_read(ypath, &y, &e), VS_OK);
    ck_assert(y->data[1] == 9.0f && y->data[2] == -3.0f);
    vs_tensor_free(y);

    /* a write that fails half-way (file size limit) leaves the old file and no temporary */
    size_t good_n = 0;
    unsigned char *good = io_slurp(path, &good_n);
    vs_tensor *big = vs_tensor_full(1, (int64_t[]){100000}, 1.0f);
    struct rlimit old = io_fsize_limit(50000);
    vs_status s = vs_npy_write(path, big, &e);
    io_fsize_unlimit(old);
    ck_assert_int_eq(s, VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot write"));
    io_assert_file(path, good, good_n);
    /* so does a write refused up front */
    ck_assert_int_eq(vs_npy_write_i64(path, 2, (int64_t[]){2, -1}, labels, &e), VS_ERR_ARG);
    io_assert_file(path, good, good_n);
    ck_assert_int_eq(vs_npy_write(path, NULL, &e), VS_ERR_ARG);
    io_assert_file(path, good, good_n);
    /* a missing directory */
    ck_assert_int_eq(vs_npy_write("/nonexistent-dir/x.npy", x, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent-dir/x.npy"));
    ck_assert_int_eq(vs_npy_read("/nonexistent-dir/x.npy", &y, &e), VS_ERR_IO);
    ck_assert_ptr_null(y);
    free(good);
    vs_tensor_free(big);
    vs_tensor_free(x);
    unlink(path);
    unlink(ypath);
}
END_TEST

/* Malformed files: built from the numpy fixture by cutting or editing one part. */
typedef struct bad_case {
    const char *what;
    const char *dict; /* header dict, or NULL to use the fixture bytes */
    size_t cut;       /* keep only this many bytes of the fixture (0: keep all) */
    int patch_at;     /* with dict NULL: byte index to overwrite (-1: none) */
    unsigned char patch[4];
    int patch_n;
    int extra;        /* bytes appended after the data */
    const char *msg;
} bad_case;

#define DICT(d, s) "{'descr': " d ", 'fortran_order': False, 'shape': " s ", }"
static const bad_case bad_npy[] = {
    {"empty file", NULL, 1, -1, {0}, 0, 0, "truncated: 1 bytes, shorter than the 10-byte .npy preamble"},
    {"cut in the magic", NULL, 5, -1, {0}, 0, 0, "truncated: 5 bytes, shorter than the 10-byte"},
    {"cut in the header length", NULL, 9, -1, {0}, 0, 0, "truncated: 9 bytes"},
    {"cut in the header", NULL, 60, -1, {0}, 0, 0, "header length 118 runs past the end of the file (60 bytes)"},
    {"cut before the newline", NULL, 127, -1, {0}, 0, 0, "header length 118 runs past the end of the file"},
    {"no data", NULL, 128, -1, {0}, 0, 0, "truncated data: shape (2, 3) of '<f4' needs 24 bytes, the file has 0"},
    {"cut in the data", NULL, 150, -1, {0}, 0, 0, "truncated data: shape (2, 3) of '<f4' needs 24 bytes, the file has 22"},
    {"trailing bytes", NULL, 0, -1, {0}, 0, 3, "3 unexpected bytes after the data"},
    {"bad magic", NULL, 0, 1, {'X'}, 1, 0, "not a .npy file"},
    {"version 4.0", NULL, 0, 6, {4}, 1, 0, "unsupported .npy format version 4.0"},
    {"version 1.1", NULL, 0, 7, {1}, 1, 0, "unsupported .npy format version 1.1"},
    {"header length past the end", NULL, 0, 8, {0xff, 0xff}, 2, 0, "header length 65535 runs past the end of the file"},
    {"version 2 header length out of range", NULL, 0, 6, {2, 0, 0xff, 0xff}, 4, 0, "out of range (at most 1048576)"},
    {"big-endian", DICT("'>f4'", "(2, 3)"), 0, -1, {0}, 0, 0, "header field 'descr': '>f4' is big-endian"},
    {"complex dtype", DICT("'<c8'", "(2, 3)"), 0, -1, {0}, 0, 0, "header field 'descr': dtype '<c8' is not supported"},
    {"object dtype", DICT("'|O'", "(2, 3)"), 0, -1, {0}, 0, 0, "header field 'descr': dtype '|O' is not supported"},
    {"half floats", DICT("'<f2'", "(2, 3)"), 0, -1, {0}, 0, 0, "dtype '<f2' is not supported"},
    {"native order", DICT("'=f4'", "(2, 3)"), 0, -1, {0}, 0, 0, "'=f4' does not say little-endian"},
    {"no byte order", DICT("'f4'", "(2, 3)"), 0, -1, {0}, 0, 0, "'f4' has no byte-order character"},
    {"structured", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", 0, -1, {0}, 0, 0,
     "structured dtypes"},
    {"fortran order", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 0, -1, {0}, 0, 0,
     "header field 'fortran_order': True (column-major) is not supported"},
    {"fortran order not a bool", "{'descr': '<f4', 'fortran_order': 1, 'shape': (2, 3), }", 0, -1, {0}, 0, 0,
     "expected True or False for 'fortran_order'"},
    {"missing shape", "{'descr': '<f4', 'fortran_order': False, }", 0, -1, {0}, 0, 0, "header: missing key 'shape'"},
    {"missing descr", "{'fortran_order': False, 'shape': (2, 3), }", 0, -1, {0}, 0, 0, "header: missing key 'descr'"},
    {"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 0, -1, {0}, 0, 0,
     "unexpected key 'x'"},
    {"repeated key", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 0, -1, {0}, 0, 0,
     "key 'descr' appears twice"},
    {"negative dimension", DICT("'<f4'", "(2, -3)"), 0, -1, {0}, 0, 0, "header field 'shape': negative dimension"},
    {"dimension too large", DICT("'<f4'", "(99999999999999999999, 1)"), 0, -1, {0}, 0, 0, "larger than 2^63-1"},
    {"element count overflow", DICT("'<f4'", "(4294967296, 4294967296)"), 0, -1, {0}, 0, 0,
     "header field 'shape': (4294967296, 4294967296) has too many elements"},
    {"huge shape, tiny file", DICT("'<f4'", "(1000000, 1000000)"), 0, -1, {0}, 0, 0,
     "needs 4000000000000 bytes, the file has 24"},
    {"nine dimensions", DICT("'<f4'", "(1, 1, 1, 1, 1, 1, 1, 1, 6)"), 0, -1, {0}, 0, 0, "more than 8 dimensions"},
    {"shape not a tuple", DICT("'<f4'", "(6)"), 0, -1, {0}, 0, 0, "(6) is not a tuple"},
    {"shape a list", DICT("'<f4'", "[2, 3]"), 0, -1, {0}, 0, 0, "expected a tuple of integers for 'shape'"},
    {"unterminated string", "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3), }", 0, -1, {0}, 0, 0,
     "header field 'descr': dtype '<f4, ' is not supported"},
    {"no dict", "descr=<f4", 0, -1, {0}, 0, 0, "header: expected '{' opening the header dict at offset 0, found 'd'"},
    {"text after the dict", DICT("'<f4'", "(2, 3)") " x", 0, -1, {0}, 0, 0, "expected only padding after the header dict"},
    {"dict not closed", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", 0, -1, {0}, 0, 0,
     "expected ',' or '}' in the header dict"},
};

/* The bytes of case c. */
static unsigned char *bad_bytes(const bad_case *c, size_t *n)
{
    unsigned char *b;
    if (c->dict) {
        b = make_npy(c->dict, 1, fixture_data, 24, n);
    } else {
        b = malloc(160);
        *n = fixture(b);
        if (c->cut) *n = c->cut;
        if (c->patch_at >= 0) memcpy(b + c->patch_at, c->patch, (size_t)c->patch_n);
    }
    if (c->extra) {
        b = realloc(b, *n + (size_t)c->extra);
        memset(b + *n, 0, (size_t)c->extra);
        *n += (size_t)c->extra;
    }
    return b;
}

START_TEST(test_malformed)
{
    char path[512];
    io_tmp_path(path, sizeof path, "npy_bad.npy");
    for (size_t i = 0; i < sizeof bad_npy / sizeof bad_npy[0]; i++) {
        const bad_case *c = &bad_npy[i];
        size_t n;
        unsigned char *b = bad_bytes(c, &n);
        /* from memory, under a given name */
        vs_tensor *t = (vs_tensor *)1;
        vs_error e;
        vs_status s = vs_npy_parse(b, n, "bad.npy", &t, &e);
        ck_assert_msg(s == VS_ERR_FORMAT, "%s: accepted (status %d)", c->what, (int)s);
        ck_assert_ptr_null(t);
        ck_assert_msg(strncmp(e.msg, "bad.npy: ", 9) == 0 && strstr(e.msg, c->msg), "%s: got \"%s\", want \"%s\"", c->what,
                      e.msg, c->msg);
        /* from a file: the message names it */
        io_spit(path, b, n);
        s = vs_npy_read(path, &t, &e);
        ck_assert_msg(s == VS_ERR_FORMAT && strstr(e.msg, path) && strstr(e.msg, c->msg), "%s (file): %s", c->what, e.msg);
        ck_assert_ptr_null(t);
        /* and as labels */
        vs_i64_array a;
        ck_assert_int_eq(vs_npy_read_i64(path, &a, &e), VS_ERR_FORMAT);
        ck_assert_ptr_null(a.data);
        free(b);
    }
    unlink(path);
    /* no input at all */
    vs_tensor *t;
    vs_error e;
    ck_assert_int_eq(vs_npy_parse(NULL, 0, NULL, &t, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "<memory>: truncated: 0 bytes, shorter than the 10-byte .npy preamble");
}
END_TEST

/* A pipe has no size until it has been read: the reader takes it whole, then checks it. */
START_TEST(test_fifo)
{
    char path[512];
    io_tmp_path(path, sizeof path, "npy_fifo");
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        alarm(10); /* never outlive a failed test blocked in open() */
        unsigned char b[152];
        size_t n = fixture(b);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(b, 1, n, f);
            fclose(f);
        }
        _exit(0);
    }
    vs_tensor *t = NULL;
    vs_error e;
    vs_status s = vs_npy_read(path, &t, &e);
    waitpid(child, NULL, 0);
    unlink(path);
    ck_assert_msg(s == VS_OK, "%s", e.msg);
    ck_assert_int_eq(t->size, 6);
    for (int i = 0; i < 6; i++) ck_assert(t->data[i] == fixture_values[i]);
    vs_tensor_free(t);
}
END_TEST

static Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = vs_tcase(s, "read", 20);
    tcase_add_test(tc, test_numpy_fixture);
    tcase_add_test(tc, test_header_variants);
    tcase_add_test(tc, test_conversions);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_fifo);
    tc = vs_tcase(s, "write", 20);
    tcase_add_test(tc, test_round_trip_files);
    return s;
}

VS_TEST_MAIN(npy_suite)
