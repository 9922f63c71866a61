/* fuzz/fuzz_modelio.c - libFuzzer target for the model-file parsers (JSON, .npy, safetensors).
 *
 * Every input goes through all three memory parsers.  Whatever a parser accepts must survive a
 * round trip: written back out and parsed again it gives the same thing (same JSON text, same
 * tensor bits, same names and metadata).  Build and run with `make fuzz-modelio`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "versus/json.h"
#include "versus/npy.h"
#include "versus/safetensors.h"

#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "fuzz_modelio: %s:%d: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                         \
        }                                                                    \
    } while (0)

static void fuzz_json(const char *text, size_t len)
{
    vs_json *j = NULL;
    vs_error e;
    if (vs_json_parse(text, len, "fuzz.json", NULL, &j, &e) != VS_OK) {
        CHECK(j == NULL && strstr(e.msg, "fuzz.json:") == e.msg);
        return;
    }
    char *s1 = NULL, *s2 = NULL, *pretty = NULL;
    size_t n1, n2, np;
    CHECK(vs_json_write(j, 0, &s1, &n1, &e) == VS_OK);
    CHECK(vs_json_write(j, 2, &pretty, &np, &e) == VS_OK);
    vs_json *back = NULL, *back2 = NULL;
    CHECK(vs_json_parse(s1, n1, "s1", NULL, &back, &e) == VS_OK);
    CHECK(vs_json_write(back, 0, &s2, &n2, &e) == VS_OK);
    CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
    free(s2);
    CHECK(vs_json_parse(pretty, np, "pretty", NULL, &back2, &e) == VS_OK);
    CHECK(vs_json_write(back2, 0, &s2, &n2, &e) == VS_OK);
    CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
    free(s1);
    free(s2);
    free(pretty);
    vs_json_free(back);
    vs_json_free(back2);
    vs_json_free(j);
}

static void same_tensor(const vs_tensor *a, const vs_tensor *b)
{
    CHECK(a->ndim == b->ndim && a->size == b->size);
    for (int i = 0; i < a->ndim; i++) CHECK(a->shape[i] == b->shape[i]);
    CHECK(a->size == 0 || memcmp(a->data, b->data, (size_t)a->size * sizeof(float)) == 0);
}

static void fuzz_npy(const uint8_t *data, size_t size)
{
    vs_tensor *t = NULL;
    vs_error e;
    if (vs_npy_parse(data, size, "fuzz.npy", &t, &e) == VS_OK) {
        unsigned char *enc;
        size_t n;
        CHECK(vs_npy_encode(t, &enc, &n, &e) == VS_OK);
        vs_tensor *back = NULL;
        CHECK(vs_npy_parse(enc, n, "enc", &back, &e) == VS_OK);
        same_tensor(t, back);
        vs_tensor_free(back);
        free(enc);
        vs_tensor_free(t);
    } else {
        CHECK(t == NULL && strstr(e.msg, "fuzz.npy: ") == e.msg);
    }
    vs_i64_array a;
    if (vs_npy_parse_i64(data, size, "fuzz.npy", &a, &e) == VS_OK)
        vs_i64_array_free(&a);
    else
        CHECK(a.data == NULL);
}

static void fuzz_safetensors(const uint8_t *data, size_t size)
{
    vs_safetensors *st = NULL;
    vs_error e;
    if (vs_safetensors_parse(data, size, "fuzz.safetensors", &st, &e) != VS_OK) {
        CHECK(st == NULL && strstr(e.msg, "fuzz.safetensors: ") == e.msg);
        return;
    }
    vs_safetensors_item *items = calloc((size_t)st->n + 1, sizeof *items);
    const char **meta = calloc(2 * (size_t)st->n_meta + 1, sizeof *meta);
    CHECK(items && meta);
    for (int64_t i = 0; i < st->n; i++) items[i] = (vs_safetensors_item){st->entries[i].name, st->entries[i].tensor};
    for (int64_t i = 0; i < st->n_meta; i++) {
        meta[2 * i] = st->meta[i].key;
        meta[2 * i + 1] = st->meta[i].value;
    }
    unsigned char *enc;
    size_t n;
    CHECK(vs_safetensors_encode(items, st->n, meta, st->n_meta, &enc, &n, &e) == VS_OK);
    vs_safetensors *back = NULL;
    CHECK(vs_safetensors_parse(enc, n, "enc", &back, &e) == VS_OK);
    CHECK(back->n == st->n && back->n_meta == st->n_meta);
    for (int64_t i = 0; i < st->n; i++) {
        CHECK(strcmp(back->entries[i].name, st->entries[i].name) == 0);
        same_tensor(st->entries[i].tensor, back->entries[i].tensor);
    }
    for (int64_t i = 0; i < st->n_meta; i++)
        CHECK(strcmp(back->meta[i].key, st->meta[i].key) == 0 && strcmp(back->meta[i].value, st->meta[i].value) == 0);
    vs_safetensors_free(back);
    free(enc);
    free(items);
    free(meta);
    vs_safetensors_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t live = vs_live_tensors();
    fuzz_json((const char *)data, size);
    fuzz_npy(data, size);
    fuzz_safetensors(data, size);
    CHECK(vs_live_tensors() == live);
    return 0;
}
