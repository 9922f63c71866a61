/* test_safetensors.c - safetensors: the bytes PyTorch writes for a small Sequential, the reference
 * serializer's own vectors, dtype conversion, ownership, round trips, atomic writes, and malformed
 * files each rejected with the file name and the problem. */
#include "vs_check.h"
#include "io_check.h"
#include "versus/safetensors.h"

#include <math.h>
#include <stdint.h>

/* safetensors.torch.save_file(torch.nn.Sequential(Linear(3, 4), ReLU(), Linear(4, 2)).state_dict(), f):
 * names sorted, offsets in that order, compact JSON padded with spaces to 256 bytes. */
static const char seq_header[] =
    "{\"0.bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
    "\"0.weight\":{\"dtype\":\"F32\",\"shape\":[4,3],\"data_offsets\":[16,64]},"
    "\"2.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[64,72]},"
    "\"2.weight\":{\"dtype\":\"F32\",\"shape\":[2,4],\"data_offsets\":[72,104]}}";

/* Value k of the file's 26 floats (exact in float32). */
static float seq_value(int k) { return (float)(k - 13) * 0.125f; }

static void put_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(u >> (8 * i));
}

/* 8-byte little-endian length, header (padded with spaces to a multiple of pad_to), data. */
static unsigned char *st_bytes(const char *header, size_t pad_to, const void *data, size_t n, size_t *len)
{
    size_t h = strlen(header), hp = pad_to ? (h + pad_to - 1) / pad_to * pad_to : h;
    unsigned char *b = malloc(8 + hp + n + 1);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hp >> (8 * i));
    memcpy(b + 8, header, h);
    memset(b + 8 + h, ' ', hp - h);
    if (n) memcpy(b + 8 + hp, data, n);
    *len = 8 + hp + n;
    return b;
}

static unsigned char *seq_file(size_t *len)
{
    unsigned char data[104];
    for (int k = 0; k < 26; k++) put_f32(data + 4 * k, seq_value(k));
    return st_bytes(seq_header, 8, data, sizeof data, len);
}

static vs_safetensors *parse_ok(const void *b, size_t n)
{
    vs_safetensors *st = NULL;
    vs_error e;
    ck_assert_msg(vs_safetensors_parse(b, n, "ok.safetensors", &st, &e) == VS_OK, "%s", e.msg);
    return st;
}

START_TEST(test_torch_sequential)
{
    size_t n;
    unsigned char *b = seq_file(&n);
    ck_assert_uint_eq(n, 8 + 256 + 104);
    ck_assert_int_eq(b[0], 0x00); /* header length 256 = 0x100 */
    ck_assert_int_eq(b[1], 0x01);
    int64_t live = vs_live_tensors();
    vs_safetensors *st = parse_ok(b, n);
    ck_assert_int_eq(st->n, 4);
    ck_assert_int_eq(st->n_meta, 0);
    const char *names[4] = {"0.bias", "0.weight", "2.bias", "2.weight"};
    const int64_t shapes[4][2] = {{4, 0}, {4, 3}, {2, 0}, {2, 4}};
    int k = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(st->entries[i].name, names[i]);
        ck_assert_str_eq(st->entries[i].dtype, "F32");
        const vs_tensor *t = vs_safetensors_get(st, names[i]);
        ck_assert_ptr_eq(t, st->entries[i].tensor);
        ck_assert_int_eq(t->ndim, shapes[i][1] ? 2 : 1);
        ck_assert_int_eq(t->shape[0], shapes[i][0]);
        if (shapes[i][1]) ck_assert_int_eq(t->shape[1], shapes[i][1]);
        for (int64_t j = 0; j < t->size; j++) ck_assert(t->data[j] == seq_value(k++));
    }
    ck_assert_int_eq(k, 26);
    ck_assert_ptr_null(vs_safetensors_get(st, "1.weight")); /* ReLU has no parameters */
    ck_assert_ptr_null(vs_safetensors_meta_get(st, "format"));

    /* writing the same tensors reproduces the file byte for byte */
    vs_safetensors_item items[4] = {{"2.weight", st->entries[3].tensor}, {"0.bias", st->entries[0].tensor},
                                    {"2.bias", st->entries[2].tensor}, {"0.weight", st->entries[1].tensor}};
    unsigned char *enc;
    size_t en;
    vs_error e;
    ck_assert_int_eq(vs_safetensors_encode(items, 4, NULL, 0, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, n);
    ck_assert_int_eq(memcmp(enc, b, n), 0);
    free(enc);
    vs_safetensors_free(st);
    ck_assert_int_eq(vs_live_tensors(), live);
    free(b);
}
END_TEST

/* Vectors from the reference implementation's own serializer tests. */
START_TEST(test_reference_vectors)
{
    float v[6] = {0, 1, 2, 3, 4, 5};
    unsigned char *enc;
    size_t en;
    vs_error e;
    vs_tensor *t = vs_tensor_from(3, (int64_t[]){1, 2, 3}, v);
    vs_safetensors_item it = {"attn.0", t};
    ck_assert_int_eq(vs_safetensors_encode(&it, 1, NULL, 0, &enc, &en, &e), VS_OK);
    static const char h1[] = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
    ck_assert_uint_eq(en, 8 + 64 + 24);
    ck_assert_int_eq(enc[0], 64);
    ck_assert_int_eq(memcmp(enc + 8, h1, 64), 0);
    ck_assert_int_eq(memcmp(enc + 72, "\0\0\0\0\0\0\x80\x3f\0\0\0\x40\0\0\x40\x40\0\0\x80\x40\0\0\xa0\x40", 24), 0);
    free(enc);
    vs_tensor_free(t);

    t = vs_tensor_from(4, (int64_t[]){1, 1, 2, 3}, v); /* forces 7 spaces of padding */
    it = (vs_safetensors_item){"attn0", t};
    ck_assert_int_eq(vs_safetensors_encode(&it, 1, NULL, 0, &enc, &en, &e), VS_OK);
    ck_assert_int_eq(enc[0], 72);
    ck_assert_int_eq(memcmp(enc + 8, "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ", 72), 0);
    free(enc);
    vs_tensor_free(t);

    ck_assert_int_eq(vs_safetensors_encode(NULL, 0, NULL, 0, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, 16);
    ck_assert_int_eq(memcmp(enc, "\x08\0\0\0\0\0\0\0{}      ", 16), 0);
    free(enc);
    const char *meta[2] = {"framework", "pt"};
    ck_assert_int_eq(vs_safetensors_encode(NULL, 0, meta, 1, &enc, &en, &e), VS_OK);
    ck_assert_uint_eq(en, 48);
    ck_assert_int_eq(memcmp(enc, "(\0\0\0\0\0\0\0{\"__metadata__\":{\"framework\":\"pt\"}}     ", 48), 0);
    vs_safetensors *st = parse_ok(enc, en);
    ck_assert_int_eq(st->n, 0);
    ck_assert_str_eq(vs_safetensors_meta_get(st, "framework"), "pt");
    vs_safetensors_free(st);
    free(enc);
}
END_TEST

START_TEST(test_dtype_conversion)
{
    static const char h[] = "{\"bn.num_batches_tracked\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[28,36]},"
                            "\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
                            "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                            "\"c\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[12,28]}}";
    unsigned char data[36] = {0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c, /* F16 1, -2, 2^-24, inf */
                              0x80, 0x3f, 0xa0, 0xc0,                         /* BF16 1, -5 */
                              0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, /* F64 0.1 */
                              0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, /* F64 -2 */
                              7, 0, 0, 0, 0, 0, 0, 0};                        /* I64 7 */
    size_t n;
    unsigned char *b = st_bytes(h, 8, data, sizeof data, &n);
    vs_safetensors *st = parse_ok(b, n);
    ck_assert_int_eq(st->n, 3); /* the BatchNorm counter is skipped */
    ck_assert_ptr_null(vs_safetensors_get(st, "bn.num_batches_tracked"));
    const vs_tensor *a = vs_safetensors_get(st, "a"), *bb = vs_safetensors_get(st, "b"), *c = vs_safetensors_get(st, "c");
    ck_assert(a->data[0] == 1.0f && a->data[1] == -2.0f && a->data[2] == 5.9604644775390625e-8f && isinf(a->data[3]));
    ck_assert(bb->data[0] == 1.0f && bb->data[1] == -5.0f);
    ck_assert(c->data[0] == 0.1f && c->data[1] == -2.0f);
    ck_assert_str_eq(st->entries[0].dtype, "F16");
    ck_assert_str_eq(st->entries[1].dtype, "BF16");
    ck_assert_str_eq(st->entries[2].dtype, "F64");
    vs_safetensors_free(st);
    free(b);
}
END_TEST

START_TEST(test_ownership)
{
    size_t n;
    unsigned char *b = seq_file(&n);
    int64_t live = vs_live_tensors();
    vs_scope_begin();
    vs_safetensors *st = parse_ok(b, n);
    vs_tensor *w = vs_safetensors_take(st, "0.weight");
    vs_scope_end(); /* the handle's tensors and the taken one outlive the scope */
    ck_assert_int_eq(vs_live_tensors(), live + 4);
    ck_assert(w->data[11] == seq_value(4 + 11));
    ck_assert(vs_safetensors_get(st, "2.weight")->data[7] == seq_value(25));
    ck_assert_ptr_null(vs_safetensors_get(st, "0.weight"));
    ck_assert_ptr_null(vs_safetensors_take(st, "0.weight"));
    vs_safetensors_free(st);
    ck_assert_int_eq(vs_live_tensors(), live + 1);
    vs_tensor_free(w);
    ck_assert_int_eq(vs_live_tensors(), live);
    free(b);
}
END_TEST

START_TEST(test_round_trip_files)
{
    char path[512];
    io_tmp_path(path, sizeof path, "st_rt.safetensors");
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_tensor *conv = vs_tensor_randn(4, (int64_t[]){32, 1, 6, 6}, &r, 0, 1);
    vs_tensor *bias = vs_tensor_randn(1, (int64_t[]){32}, &r, 0, 1);
    vs_tensor *scalar = vs_scalar(-0.0f);
    vs_tensor *empty = vs_tensor_new(2, (int64_t[]){0, 3});
    bias->data[3] = NAN;
    vs_safetensors_item items[4] = {{"encoder.0.weight", conv}, {"encoder.0.bias", bias}, {"t", scalar}, {"e", empty}};
    const char *meta[4] = {"format", "pt", "versus", "0.1.0"};
    vs_error e;
    ck_assert_msg(vs_safetensors_write(path, items, 4, meta, 2, &e) == VS_OK, "%s", e.msg);
    vs_safetensors *st = NULL;
    ck_assert_msg(vs_safetensors_read(path, &st, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(st->n, 4);
    ck_assert_str_eq(st->entries[0].name, "e");
    ck_assert_str_eq(vs_safetensors_meta_get(st, "format"), "pt");
    ck_assert_str_eq(vs_safetensors_meta_get(st, "versus"), "0.1.0");
    for (int i = 0; i < 4; i++) {
        const vs_tensor *a = items[i].tensor, *got = vs_safetensors_get(st, items[i].name);
        ck_assert_ptr_nonnull(got);
        ck_assert(vs_same_shape(a, got));
        ck_assert_int_eq(memcmp(a->data, got->data, (size_t)a->size * 4), 0);
    }
    vs_safetensors_free(st);

    /* a write that fails half-way keeps the good file and leaves no temporary */
    size_t good_n = 0;
    unsigned char *good = io_slurp(path, &good_n);
    vs_tensor *big = vs_tensor_zeros(1, (int64_t[]){200000});
    vs_safetensors_item bi = {"big", big};
    struct rlimit old = io_fsize_limit(100000);
    vs_status s = vs_safetensors_write(path, &bi, 1, NULL, 0, &e);
    io_fsize_unlimit(old);
    ck_assert_int_eq(s, VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    io_assert_file(path, good, good_n);

    /* writes refused before touching the file */
    const struct {
        vs_safetensors_item items[2];
        int n;
        const char *meta[4];
        int n_meta;
        const char *msg;
    } refused[] = {
        {{{"w", conv}, {"w", bias}}, 2, {0}, 0, "duplicate tensor name \"w\""},
        {{{"__metadata__", conv}}, 1, {0}, 0, "\"__metadata__\" is reserved"},
        {{{"w", NULL}}, 1, {0}, 0, "tensor \"w\" is missing"},
        {{{NULL, conv}}, 1, {0}, 0, "tensor name 0 is missing"},
        {{{"w", conv}}, 1, {"k", "1", "k", "2"}, 2, "duplicate metadata key \"k\""},
        {{{"w", conv}}, 1, {"k", NULL}, 1, "metadata \"k\" has no value"},
        {{{"bad\xff", conv}}, 1, {0}, 0, "invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        s = vs_safetensors_write(path, refused[i].items, refused[i].n, refused[i].meta, refused[i].n_meta, &e);
        ck_assert_msg(s != VS_OK && strstr(e.msg, path) && strstr(e.msg, refused[i].msg), "refused %zu: %s", i, e.msg);
        io_assert_file(path, good, good_n);
    }
    ck_assert_int_eq(vs_safetensors_read("/nonexistent-dir/m.safetensors", &st, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent-dir/m.safetensors: cannot open"));
    free(good);
    vs_tensor_free(big);
    vs_tensor_free(conv);
    vs_tensor_free(bias);
    vs_tensor_free(scalar);
    vs_tensor_free(empty);
    unlink(path);
}
END_TEST

/* Malformed files: the Sequential fixture cut or edited, or a header with zero-filled data. */
typedef struct bad_case {
    const char *what;
    const char *header; /* NULL: the fixture */
    size_t data;        /* with a header: bytes of data after it */
    size_t cut;         /* with the fixture: keep this many bytes (0: all) */
    uint64_t hlen;      /* with the fixture: replace the length field (0: keep) */
    size_t extra;       /* bytes appended */
    const char *msg;
} bad_case;

#define T(name, dtype, shape, b, e) "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" b "," e "]}"
static const bad_case bad_st[] = {
    {"empty file", NULL, 0, 1, 0, 0, "truncated: 1 bytes, shorter than the 8-byte header length"},
    {"cut in the length", NULL, 0, 7, 0, 0, "truncated: 7 bytes"},
    {"length only", NULL, 0, 8, 0, 0, "header length 256 is larger than the 0 bytes after the length field"},
    {"cut in the header", NULL, 0, 100, 0, 0, "header length 256 is larger than the 92 bytes"},
    {"cut at the header's end", NULL, 0, 263, 0, 0, "header length 256 is larger than the 255 bytes"},
    {"no data", NULL, 0, 264, 0, 0, "tensor \"0.bias\": data_offsets [0, 16] run past the end of the data region (0 bytes)"},
    {"cut in the data", NULL, 0, 300, 0, 0, "tensor \"0.weight\": data_offsets [16, 64] run past the end of the data region (36 bytes)"},
    {"last byte missing", NULL, 0, 367, 0, 0, "tensor \"2.weight\": data_offsets [72, 104] run past"},
    {"trailing bytes", NULL, 0, 0, 0, 4, "the last 4 bytes of the data region belong to no tensor"},
    {"length beyond the file", NULL, 0, 0, 1000, 0, "header length 1000 is larger than the 360 bytes after the length field"},
    {"length out of range", NULL, 0, 0, (uint64_t)1 << 40, 0, "header length 1099511627776 out of range (at most 100000000)"},
    {"length all ones", NULL, 0, 0, UINT64_MAX, 0, "header length 18446744073709551615 out of range"},
    {"header shorter than its JSON", NULL, 0, 0, 100, 0, "header:1:101: expected a string key, found end of input"},
    {"not JSON", "{\"a\":", 0, 0, 0, 0, "header:1:6: expected a value, found end of input"},
    {"trailing comma", "{" T("a", "F32", "[1]", "0", "4") ",}", 4, 0, 0, 0, "trailing commas are not allowed"},
    {"not an object", "[1, 2]", 0, 0, 0, 0, "header: expected a JSON object, found an array"},
    {"binary header", "\x01\x02\x03\x04", 0, 0, 0, 0, "header:1:1: expected a value"},
    {"invalid UTF-8", "{\"\xff\":1}", 0, 0, 0, 0, "invalid UTF-8 byte 0xFF"},
    {"nesting bomb", "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]}", 0, 0, 0, 0, "nesting deeper than 128 levels"},
    {"duplicate names", "{" T("w", "F32", "[1]", "0", "4") "," T("w", "F32", "[1]", "4", "8") "}", 8, 0, 0, 0,
     "duplicate key \"w\""},
    {"integer weights", "{" T("0.weight", "I64", "[2]", "0", "16") "}", 16, 0, 0, 0,
     "tensor \"0.weight\": dtype I64 is not supported"},
    {"bool weights", "{" T("mask", "BOOL", "[2]", "0", "2") "}", 2, 0, 0, 0, "tensor \"mask\": dtype BOOL is not supported"},
    {"unknown dtype", "{" T("w", "F12", "[2]", "0", "8") "}", 8, 0, 0, 0, "tensor \"w\": unknown dtype \"F12\""},
    {"dtype not a string", "{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0, 0, 0,
     "tensor \"w\": \"dtype\" must be a string, found 32"},
    {"negative shape", "{" T("w", "F32", "[-4]", "0", "16") "}", 16, 0, 0, 0,
     "tensor \"w\": \"shape\" item 0: expected a non-negative integer, found -4"},
    {"fractional shape", "{" T("w", "F32", "[2.5]", "0", "10") "}", 10, 0, 0, 0, "\"shape\" item 0: expected a non-negative integer, found 2.5"},
    {"shape not an array", "{" T("w", "F32", "4", "0", "16") "}", 16, 0, 0, 0, "\"shape\" must be an array of non-negative integers, found 4"},
    {"shape overflow", "{" T("w", "F32", "[4294967296,4294967296,4294967296]", "0", "16") "}", 16, 0, 0, 0,
     "shape [4294967296, 4294967296, 4294967296] has too many elements"},
    {"huge shape, small data", "{" T("w", "F32", "[1000000,1000000]", "0", "16") "}", 16, 0, 0, 0,
     "data_offsets [0, 16] hold 16 bytes, but shape [1000000, 1000000] of F32 needs 4000000000000"},
    {"nine dimensions", "{" T("w", "F32", "[1,1,1,1,1,1,1,1,1]", "0", "4") "}", 4, 0, 0, 0, "\"shape\" has 9 dimensions"},
    {"three offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, 0, 0, 0,
     "\"data_offsets\" must be an array of two non-negative integers"},
    {"negative offset", "{" T("w", "F32", "[1]", "-4", "0") "}", 4, 0, 0, 0, "\"data_offsets\" must be an array of two"},
    {"begin after end", "{" T("w", "F32", "[0]", "16", "0") "}", 16, 0, 0, 0, "data_offsets [16, 0]: begin is after end"},
    {"offsets out of range", "{" T("w", "F32", "[250]", "0", "1000") "}", 16, 0, 0, 0,
     "data_offsets [0, 1000] run past the end of the data region (16 bytes)"},
    {"huge offsets", "{" T("w", "F32", "[1]", "18446744073709551612", "18446744073709551616") "}", 4, 0, 0, 0,
     "\"data_offsets\" must be an array of two non-negative integers"},
    {"size mismatch", "{" T("w", "F32", "[4]", "0", "12") "}", 12, 0, 0, 0,
     "data_offsets [0, 12] hold 12 bytes, but shape [4] of F32 needs 16"},
    {"overlapping", "{" T("a", "F32", "[4]", "0", "16") "," T("b", "F32", "[4]", "8", "24") "}", 24, 0, 0, 0,
     "tensors \"a\" [0, 16] and \"b\" [8, 24] overlap"},
    {"same offsets", "{" T("a", "F32", "[4]", "0", "16") "," T("b", "F32", "[4]", "0", "16") "}", 16, 0, 0, 0,
     "tensors \"a\" [0, 16] and \"b\" [0, 16] overlap"},
    {"gap", "{" T("a", "F32", "[4]", "0", "16") "," T("b", "F32", "[4]", "20", "36") "}", 36, 0, 0, 0,
     "bytes [16, 20) of the data region belong to no tensor"},
    {"gap at the start", "{" T("a", "F32", "[4]", "4", "20") "}", 20, 0, 0, 0, "bytes [0, 4) of the data region"},
    {"missing dtype", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0, 0, 0, "tensor \"w\": missing \"dtype\""},
    {"missing shape", "{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, 0, 0, 0, "tensor \"w\": missing \"shape\""},
    {"missing offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, 0, 0, 0, "tensor \"w\": missing \"data_offsets\""},
    {"tensor not an object", "{\"w\":5}", 0, 0, 0, 0, "tensor \"w\": expected an object with \"dtype\""},
    {"NUL in a name", "{" T("a\\u0000b", "F32", "[1]", "0", "4") "}", 4, 0, 0, 0, "name contains a NUL character"},
    {"metadata not strings", "{\"__metadata__\":{\"epoch\":3}}", 0, 0, 0, 0,
     "\"__metadata__\" value of \"epoch\" must be a string, found 3"},
    {"metadata not an object", "{\"__metadata__\":[\"pt\"]}", 0, 0, 0, 0,
     "\"__metadata__\" must be an object of strings, found an array"},
};

static unsigned char *bad_bytes(const bad_case *c, size_t *n)
{
    unsigned char *b;
    if (c->header) {
        unsigned char *zeros = calloc(c->data + 1, 1);
        b = st_bytes(c->header, 0, zeros, c->data, n);
        free(zeros);
    } else {
        b = seq_file(n);
        if (c->cut) *n = c->cut;
        if (c->hlen)
            for (int i = 0; i < 8; i++) b[i] = (unsigned char)(c->hlen >> (8 * i));
    }
    if (c->extra) {
        b = realloc(b, *n + c->extra);
        memset(b + *n, 0, c->extra);
        *n += c->extra;
    }
    return b;
}

START_TEST(test_malformed)
{
    char path[512];
    io_tmp_path(path, sizeof path, "st_bad.safetensors");
    int64_t live = vs_live_tensors();
    for (size_t i = 0; i < sizeof bad_st / sizeof bad_st[0]; i++) {
        const bad_case *c = &bad_st[i];
        size_t n;
        unsigned char *b = bad_bytes(c, &n);
        vs_safetensors *st = (vs_safetensors *)1;
        vs_error e;
        vs_status s = vs_safetensors_parse(b, n, "bad.safetensors", &st, &e);
        ck_assert_msg(s == VS_ERR_FORMAT, "%s: accepted (status %d)", c->what, (int)s);
        ck_assert_ptr_null(st);
        ck_assert_msg(strncmp(e.msg, "bad.safetensors: ", 17) == 0 && strstr(e.msg, c->msg), "%s: got \"%s\", want \"%s\"",
                      c->what, e.msg, c->msg);
        io_spit(path, b, n);
        s = vs_safetensors_read(path, &st, &e);
        ck_assert_msg(s == VS_ERR_FORMAT && strstr(e.msg, path) && strstr(e.msg, c->msg), "%s (file): %s", c->what, e.msg);
        ck_assert_ptr_null(st);
        free(b);
    }
    ck_assert_int_eq(vs_live_tensors(), live); /* nothing half-built survives a failure */
    unlink(path);
}
END_TEST

static Suite *safetensors_suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = vs_tcase(s, "read", 20);
    tcase_add_test(tc, test_torch_sequential);
    tcase_add_test(tc, test_reference_vectors);
    tcase_add_test(tc, test_dtype_conversion);
    tcase_add_test(tc, test_ownership);
    tcase_add_test(tc, test_malformed);
    tc = vs_tcase(s, "write", 20);
    tcase_add_test(tc, test_round_trip_files);
    return s;
}

VS_TEST_MAIN(safetensors_suite)
