/* test_json.c - JSON parsing (values, escapes, positions, limits), typed reads, building, writing,
 * and a table of malformed documents each rejected with its position and problem. */
#include "vs_check.h"
#include "versus/json.h"

#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static const char model_text[] =
    "{\"format\": \"versus-model/1\",\n"
    " \"input\": [1, 28, 28],\n"
    " \"sequential\": [\n"
    "   {\"op\": \"conv2d\", \"in\": 1, \"out\": 32, \"kernel\": -3, \"stride\": 2, \"padding\": 2},\n"
    "   {\"op\": \"relu\"},\n"
    "   {\"op\": \"dropout\", \"p\": 0.5},\n"
    "   {\"op\": \"linear\", \"in\": 3136, \"out\": 10}]}\n";

static vs_json *parse_ok(const char *text)
{
    vs_json *j = NULL;
    vs_error e;
    vs_status s = vs_json_parse(text, strlen(text), "t.json", NULL, &j, &e);
    ck_assert_msg(s == VS_OK, "parse of %s failed: %s", text, e.msg);
    return j;
}

START_TEST(test_parse_model)
{
    vs_json *j = parse_ok(model_text);
    ck_assert_int_eq(j->type, VS_JSON_OBJECT);
    ck_assert_uint_eq(j->n, 3);
    ck_assert_str_eq(j->members[0].key, "format"); /* document order kept */
    ck_assert_str_eq(j->members[1].key, "input");
    ck_assert_str_eq(j->members[2].key, "sequential");
    const char *fmt;
    vs_error e;
    ck_assert_int_eq(vs_json_get_str(j, "format", &fmt, &e), VS_OK);
    ck_assert_str_eq(fmt, "versus-model/1");
    const vs_json *in = vs_json_get_typed(j, "input", VS_JSON_ARRAY, &e);
    ck_assert_ptr_nonnull(in);
    ck_assert_uint_eq(in->n, 3);
    int64_t v;
    ck_assert_int_eq(vs_json_int(vs_json_at(in, 2), 1, 100, &v, &e), VS_OK);
    ck_assert_int_eq(v, 28);
    ck_assert_ptr_null(vs_json_at(in, 3));
    const vs_json *seq = vs_json_get(j, "sequential");
    ck_assert_int_eq(seq->items[0]->line, 4);
    ck_assert_int_eq(seq->items[0]->col, 4);
    /* typed reads with ranges and located messages */
    const vs_json *conv = vs_json_at(seq, 0);
    ck_assert_int_eq(vs_json_get_int(conv, "out", 1, 4096, &v, &e), VS_OK);
    ck_assert_int_eq(v, 32);
    ck_assert_int_eq(vs_json_get_int(conv, "kernel", 1, 4096, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:4:51: \"kernel\": expected an integer in [1, 4096], found -3");
    ck_assert_int_eq(vs_json_get_int(vs_json_at(seq, 1), "in", 1, INT64_MAX, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:5:4: object is missing \"in\"");
    ck_assert_int_eq(vs_json_opt_int(vs_json_at(seq, 1), "in", 1, INT64_MAX, 7, &v, &e), VS_OK);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(vs_json_opt_int(conv, "stride", 1, INT64_MAX, 7, &v, &e), VS_OK);
    ck_assert_int_eq(v, 2);
    double p;
    ck_assert_int_eq(vs_json_get_double(vs_json_at(seq, 2), "p", 0, 1, &p, &e), VS_OK);
    ck_assert_double_eq(p, 0.5);
    ck_assert_int_eq(vs_json_get_double(vs_json_at(seq, 2), "p", 0.75, 1, &p, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:6:27: \"p\": expected a number in [0.75, 1], found 0.5");
    ck_assert_int_eq(vs_json_get_int(vs_json_at(seq, 2), "p", 0, 1, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:6:27: \"p\": expected an integer in [0, 1], found 0.5");
    ck_assert_int_eq(vs_json_get_str(conv, "in", &fmt, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:4:27: \"in\": expected a string, found 1");
    ck_assert_ptr_null(vs_json_get_typed(j, "format", VS_JSON_OBJECT, &e));
    ck_assert_str_eq(e.msg, "t.json:1:12: \"format\": expected an object, found the string \"versus-model/1\"");
    bool flag;
    ck_assert_int_eq(vs_json_get_bool(conv, "op", &flag, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:4:11: \"op\": expected true or false, found the string \"conv2d\"");
    ck_assert_int_eq(vs_json_opt_bool(conv, "bias", true, &flag, &e), VS_OK);
    ck_assert(flag);
    ck_assert_int_eq(vs_json_get_int(in, "x", 0, 1, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:2:11: expected an object holding \"x\", found an array");
    char where[64];
    ck_assert_str_eq(vs_json_where(conv, where, sizeof where), "t.json:4:4");
    vs_json_free(j);
}
END_TEST

START_TEST(test_strings)
{
    vs_json *j = parse_ok("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\", \"\\ud83d\\ude00\", \"x\\u0000y\","
                          " \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"\"]");
    ck_assert_uint_eq(j->n, 6);
    ck_assert_str_eq(j->items[0]->string, "a\"b\\c/d\b\f\n\r\t");
    ck_assert_str_eq(j->items[1]->string, "\xc3\xa9\xe2\x82\xac");       /* é € */
    ck_assert_str_eq(j->items[2]->string, "\xf0\x9f\x98\x80");           /* U+1F600 from a surrogate pair */
    ck_assert_uint_eq(j->items[3]->length, 3);                           /* embedded NUL kept */
    ck_assert_int_eq(memcmp(j->items[3]->string, "x\0y", 3), 0);
    ck_assert_str_eq(j->items[4]->string, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    ck_assert_uint_eq(j->items[5]->length, 0);
    const char *s;
    vs_error e;
    ck_assert_int_eq(vs_json_str(j->items[3], &s, &e), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "NUL"));
    /* columns count characters, not bytes: the array after three 2-byte letters starts at column 9 */
    vs_json_free(j);
    j = parse_ok("{\"\xc3\xa9\xc3\xa9\xc3\xa9\": [1]}");
    ck_assert_int_eq(j->members[0].value->col, 9);
    vs_json_free(j);
}
END_TEST

START_TEST(test_numbers)
{
    vs_json *j = parse_ok("[0, -0, 42, -17, 9223372036854775807, -9223372036854775808, 9223372036854775808,"
                          " 1.5, -2.25e2, 1E-2, 3e+1, 1e-400, 0.1, 123456789012345678901234567890]");
    vs_json **it = j->items;
    ck_assert(it[0]->is_int && it[0]->integer == 0);
    ck_assert(it[1]->is_int && it[1]->integer == 0 && signbit(it[1]->number));
    ck_assert(it[2]->is_int && it[2]->integer == 42);
    ck_assert(it[3]->is_int && it[3]->integer == -17);
    ck_assert(it[4]->is_int && it[4]->integer == INT64_MAX);
    ck_assert(it[5]->is_int && it[5]->integer == INT64_MIN);
    ck_assert(!it[6]->is_int && it[6]->number == 9223372036854775808.0);
    ck_assert(!it[7]->is_int && it[7]->number == 1.5);
    ck_assert_double_eq(it[8]->number, -225.0);
    ck_assert_double_eq(it[9]->number, 0.01);
    ck_assert(!it[10]->is_int);
    ck_assert_double_eq(it[10]->number, 30.0);
    ck_assert_double_eq(it[11]->number, 0.0); /* underflow to zero is fine */
    ck_assert_double_eq(it[12]->number, 0.1);
    ck_assert_double_eq_tol(it[13]->number, 1.2345678901234568e29, 1e14);
    int64_t v;
    vs_error e;
    ck_assert_int_eq(vs_json_int(it[10], 0, 100, &v, &e), VS_OK); /* 3e+1 is an integral number */
    ck_assert_int_eq(v, 30);
    ck_assert_int_eq(vs_json_int(it[6], INT64_MIN, INT64_MAX, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:1:61: expected an integer, found 9.22337204e+18");
    ck_assert_int_eq(vs_json_int(it[3], 0, INT64_MAX, &v, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "t.json:1:13: expected an integer >= 0, found -17");
    vs_json_free(j);
}
END_TEST

START_TEST(test_duplicates_and_depth)
{
    const char *dup = "{\"a\": 1,\n \"b\": 2,\n \"a\": 3}";
    vs_json *j = NULL;
    vs_error e;
    ck_assert_int_eq(vs_json_parse(dup, strlen(dup), "d.json", NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_ptr_null(j);
    ck_assert_str_eq(e.msg, "d.json:3:2: duplicate key \"a\" (first at 1:2)");
    vs_json_parse_opts o = {.allow_duplicate_keys = true};
    ck_assert_int_eq(vs_json_parse(dup, strlen(dup), "d.json", &o, &j, &e), VS_OK);
    int64_t v;
    ck_assert_int_eq(vs_json_get_int(j, "a", 0, 9, &v, &e), VS_OK);
    ck_assert_int_eq(v, 3); /* the last one wins */
    vs_json_free(j);

    char deep[300];
    memset(deep, '[', 128);
    memset(deep + 128, ']', 128);
    ck_assert_int_eq(vs_json_parse(deep, 256, "deep.json", NULL, &j, &e), VS_OK);
    vs_json_free(j);
    memset(deep, '[', 129);
    memset(deep + 129, ']', 129);
    ck_assert_int_eq(vs_json_parse(deep, 258, "deep.json", NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "deep.json:1:129: nesting deeper than 128 levels");
    o = (vs_json_parse_opts){.max_depth = 3};
    ck_assert_int_eq(vs_json_parse("[[[1]]]", 7, NULL, &o, &j, &e), VS_OK);
    vs_json_free(j);
    ck_assert_int_eq(vs_json_parse("[[[[1]]]]", 9, NULL, &o, &j, &e), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "<memory>:1:4: nesting deeper than 3 levels");
    /* a duplicate among many keys is still found (the check sorts) */
    char big[20000];
    size_t k = 0;
    big[k++] = '{';
    for (int i = 0; i < 1000; i++) k += (size_t)snprintf(big + k, sizeof big - k, "\"k%d\":%d,", i, i);
    k += (size_t)snprintf(big + k, sizeof big - k, "\"k517\":0}");
    ck_assert_int_eq(vs_json_parse(big, k, "big.json", NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "duplicate key \"k517\""));
}
END_TEST

/* Malformed documents: each must fail with "name:line:col: <problem>". */
static const struct {
    const char *text;
    const char *msg;
} bad_json[] = {
    {"", "bad.json:1:1: expected a value, found end of input"},
    {"   \n  ", "bad.json:2:3: expected a value, found end of input"},
    {"{", "bad.json:1:2: expected a string key, found end of input"},
    {"{\"a\" 1}", "bad.json:1:6: expected ':' after the key, found '1'"},
    {"{\"a\": 1,}", "bad.json:1:9: expected another member after ',' (trailing commas are not allowed), found '}'"},
    {"[1, 2,]", "bad.json:1:7: expected another item after ',' (trailing commas are not allowed), found ']'"},
    {"[1 2]", "bad.json:1:4: expected ',' or ']' after an array item, found '2'"},
    {"{\"a\": 1 \"b\": 2}", "bad.json:1:9: expected ',' or '}' after an object member, found '\"'"},
    {"{1: 2}", "bad.json:1:2: expected a string key, found '1'"},
    {"[1] x", "bad.json:1:5: expected the end of input after the JSON value, found 'x'"},
    {"\"abc", "bad.json:1:1: unterminated string (no closing '\"' before the end of input)"},
    {"\"a\tb\"", "bad.json:1:3: control character U+0009 inside a string"},
    {"\"\\x\"", "bad.json:1:2: invalid escape '\\' followed by 'x'"},
    {"\"\\u12G4\"", "bad.json:1:2: expected 4 hex digits after \\u"},
    {"\"\\ud800\"", "bad.json:1:2: unpaired surrogate \\uD800"},
    {"\"\\udc00\\ud800\"", "bad.json:1:2: unpaired surrogate \\uDC00"},
    {"\"\xc3\x28\"", "bad.json:1:2: invalid UTF-8 byte 0xC3 in a string"},
    {"\"\xed\xa0\x80\"", "bad.json:1:2: invalid UTF-8 byte 0xED in a string"}, /* encoded surrogate */
    {"\"\xc0\xaf\"", "bad.json:1:2: invalid UTF-8 byte 0xC0 in a string"},     /* overlong '/' */
    {"-", "bad.json:1:2: expected a digit after '-', found end of input"},
    {"012", "bad.json:1:2: leading zeros are not allowed in numbers"},
    {"1.", "bad.json:1:3: expected a digit after '.', found end of input"},
    {"1e+", "bad.json:1:4: expected a digit in the exponent, found end of input"},
    {"[1e400]", "bad.json:1:2: number 1e400 is out of range for a double"},
    {"[.5]", "bad.json:1:2: expected a value (object, array, string, number, true, false or null), found '.'"},
    {"tru", "bad.json:1:1: expected a value (true, false or null here), found 't'"},
    {"[NaN]", "bad.json:1:2: expected a value (object, array, string, number, true, false or null), found 'N'"},
    {"{\"a\":1}\n// comment", "bad.json:2:1: expected the end of input after the JSON value, found '/'"},
    {"[1,\n 2,\n \x01]", "bad.json:3:2: expected a value (object, array, string, number, true, false or null), found byte 0x01"},
};

START_TEST(test_malformed)
{
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        vs_json *j = (vs_json *)1;
        vs_error e;
        vs_error_clear(&e);
        vs_status s = vs_json_parse(bad_json[i].text, strlen(bad_json[i].text), "bad.json", NULL, &j, &e);
        ck_assert_msg(s == VS_ERR_FORMAT, "case %zu (%s) was accepted", i, bad_json[i].text);
        ck_assert_ptr_null(j);
        ck_assert_msg(strncmp(e.msg, bad_json[i].msg, strlen(bad_json[i].msg)) == 0, "case %zu: got \"%s\", want \"%s\"",
                      i, e.msg, bad_json[i].msg);
    }
    /* the parser never reads past len: a valid prefix of a longer buffer */
    vs_json *j;
    vs_error e;
    ck_assert_int_eq(vs_json_parse("[1]]]]", 3, NULL, NULL, &j, &e), VS_OK);
    vs_json_free(j);
    ck_assert_int_eq(vs_json_parse("\"ab\"", 3, NULL, NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_int_eq(vs_json_parse("\"\\", 2, NULL, NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_int_eq(vs_json_parse("\"\\u00", 5, NULL, NULL, &j, &e), VS_ERR_FORMAT);
    ck_assert_int_eq(vs_json_parse("\xEF\xBB\xBF[]", 5, NULL, NULL, &j, &e), VS_OK); /* a UTF-8 BOM is skipped */
    vs_json_free(j);
}
END_TEST

static char *write_str(const vs_json *j, int indent)
{
    char *out;
    size_t n;
    vs_error e;
    ck_assert_msg(vs_json_write(j, indent, &out, &n, &e) == VS_OK, "write failed: %s", e.msg);
    ck_assert_uint_eq(strlen(out), n);
    return out;
}

START_TEST(test_build_and_write)
{
    vs_json *m = vs_json_new_object();
    ck_assert_int_eq(vs_json_set(m, "format", vs_json_new_string("versus-model/1")), VS_OK);
    vs_json *in = vs_json_new_array();
    for (int i = 0; i < 3; i++) ck_assert_int_eq(vs_json_push(in, vs_json_new_int(i ? 28 : 1)), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "input", in), VS_OK);
    vs_json *seq = vs_json_new_array();
    vs_json *l = vs_json_new_object();
    ck_assert_int_eq(vs_json_set(l, "op", vs_json_new_string("dropout")), VS_OK);
    ck_assert_int_eq(vs_json_set(l, "p", vs_json_new_number(0.5f)), VS_OK);
    ck_assert_int_eq(vs_json_set(l, "eps", vs_json_new_number(1e-5f)), VS_OK);
    ck_assert_int_eq(vs_json_set(l, "lr", vs_json_new_number(1.0f / 3.0f)), VS_OK);
    ck_assert_int_eq(vs_json_set(l, "d", vs_json_new_number(0.1)), VS_OK);
    ck_assert_int_eq(vs_json_set(l, "big", vs_json_new_number(1e300)), VS_OK);
    ck_assert_int_eq(vs_json_push(seq, l), VS_OK);
    ck_assert_int_eq(vs_json_push(seq, vs_json_new_object()), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "sequential", seq), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "note", vs_json_new_stringn("tab\there \"q\" \x01 \xc3\xa9", 17)), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "ok", vs_json_new_bool(true)), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "none", vs_json_new_null()), VS_OK);
    ck_assert_int_eq(vs_json_set(m, "format", vs_json_new_string("versus-model/2")), VS_OK); /* replaced in place */

    static const char pretty[] = "{\n"
                                 "  \"format\": \"versus-model/2\",\n"
                                 "  \"input\": [1, 28, 28],\n"
                                 "  \"sequential\": [\n"
                                 "    {\"op\": \"dropout\", \"p\": 0.5, \"eps\": 1e-05, \"lr\": 0.33333334, "
                                 "\"d\": 0.1, \"big\": 1e+300},\n"
                                 "    {}\n"
                                 "  ],\n"
                                 "  \"note\": \"tab\\there \\\"q\\\" \\u0001 \xc3\xa9\",\n"
                                 "  \"ok\": true,\n"
                                 "  \"none\": null\n"
                                 "}";
    char *s = write_str(m, 2);
    ck_assert_str_eq(s, pretty);
    free(s);
    s = write_str(m, 0);
    ck_assert_str_eq(s, "{\"format\":\"versus-model/2\",\"input\":[1,28,28],\"sequential\":[{\"op\":\"dropout\",\"p\":0.5,"
                        "\"eps\":1e-05,\"lr\":0.33333334,\"d\":0.1,\"big\":1e+300},{}],"
                        "\"note\":\"tab\\there \\\"q\\\" \\u0001 \xc3\xa9\",\"ok\":true,\"none\":null}");
    /* round trip: parse(write(m)) writes the same text, and float32 values come back exactly */
    vs_json *back = parse_ok(s);
    char *s2 = write_str(back, 0);
    ck_assert_str_eq(s, s2);
    const vs_json *l2 = vs_json_at(vs_json_get(back, "sequential"), 0);
    ck_assert((float)vs_json_get(l2, "eps")->number == 1e-5f);
    ck_assert((float)vs_json_get(l2, "lr")->number == 1.0f / 3.0f);
    free(s);
    free(s2);
    vs_json_free(back);

    /* builder failures take ownership and say why */
    ck_assert_int_eq(vs_json_push(in, NULL), VS_ERR_NOMEM);
    ck_assert_int_eq(vs_json_push(m, vs_json_new_int(1)), VS_ERR_ARG);  /* m is not an array: value freed */
    ck_assert_int_eq(vs_json_set(in, "k", vs_json_new_int(1)), VS_ERR_ARG);
    vs_json_free(m);

    vs_json *bad = vs_json_new_number(NAN);
    vs_error e;
    char *out = (char *)1;
    ck_assert_int_eq(vs_json_write(bad, 0, &out, NULL, &e), VS_ERR_NUMERIC);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(e.msg, "non-finite"));
    vs_json_free(bad);
    bad = vs_json_new_stringn("\xff", 1);
    ck_assert_int_eq(vs_json_write(bad, 0, &out, NULL, &e), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "invalid UTF-8"));
    vs_json_free(bad);
    /* a negative zero double stays a double (found by fuzz_modelio: "-0" reads back as the integer 0) */
    vs_json *z = parse_ok("[-1e-400, -0]");
    s = write_str(z, 0);
    ck_assert_str_eq(s, "[-0.0,0]");
    free(s);
    vs_json_free(z);
    /* every float32 survives write -> parse exactly */
    vs_json *arr = vs_json_new_array();
    uint32_t bits = 0x3f800001u;
    for (int i = 0; i < 2000; i++) {
        float f;
        bits = bits * 1664525u + 1013904223u;
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f)) continue;
        ck_assert_int_eq(vs_json_push(arr, vs_json_new_number(f)), VS_OK);
    }
    s = write_str(arr, 0);
    back = parse_ok(s);
    ck_assert_uint_eq(back->n, arr->n);
    for (size_t i = 0; i < arr->n; i++) ck_assert((float)back->items[i]->number == (float)arr->items[i]->number);
    free(s);
    vs_json_free(back);
    vs_json_free(arr);
}
END_TEST

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

START_TEST(test_files)
{
    char path[512];
    snprintf(path, sizeof path, "%s/vs_test_json_%d.json", vs_test_tmpdir(), (int)getpid());
    vs_json *j = parse_ok(model_text), *back = NULL;
    vs_error e;
    ck_assert_int_eq(vs_json_write_file(path, j, &e), VS_OK);
    ck_assert_int_eq(vs_json_parse_file(path, NULL, &back, &e), VS_OK);
    ck_assert_str_eq(back->source, path);
    char *a = write_str(j, 2), *b = write_str(back, 2);
    ck_assert_str_eq(a, b);
    size_t n = 0;
    char *file = slurp(path, &n);
    ck_assert_uint_eq(n, strlen(a) + 1);
    ck_assert_int_eq(file[n - 1], '\n');
    /* a failed write (a NaN in the tree) leaves the good file untouched */
    vs_json *nan = vs_json_new_object();
    vs_json_set(nan, "x", vs_json_new_number(NAN));
    ck_assert_int_eq(vs_json_write_file(path, nan, &e), VS_ERR_NUMERIC);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    size_t n2 = 0;
    char *file2 = slurp(path, &n2);
    ck_assert_uint_eq(n, n2);
    ck_assert_int_eq(memcmp(file, file2, n), 0);
    /* messages from a file name it */
    FILE *f = fopen(path, "wb");
    fputs("{\"a\": [1,\n  2,,]}", f);
    fclose(f);
    vs_json *bad = NULL;
    ck_assert_int_eq(vs_json_parse_file(path, NULL, &bad, &e), VS_ERR_FORMAT);
    char want[600];
    snprintf(want, sizeof want, "%s:2:5: expected a value", path);
    ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "got %s", e.msg);
    unlink(path);
    ck_assert_int_eq(vs_json_parse_file(path, NULL, &bad, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot open"));
    ck_assert_int_eq(vs_json_parse_file(vs_test_tmpdir(), NULL, &bad, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "is a directory"));
    free(a);
    free(b);
    free(file);
    free(file2);
    vs_json_free(nan);
    vs_json_free(j);
    vs_json_free(back);
}
END_TEST

static Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = vs_tcase(s, "parse", 20);
    tcase_add_test(tc, test_parse_model);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_duplicates_and_depth);
    tcase_add_test(tc, test_malformed);
    tc = vs_tcase(s, "write", 20);
    tcase_add_test(tc, test_build_and_write);
    tcase_add_test(tc, test_files);
    return s;
}

VS_TEST_MAIN(json_suite)
