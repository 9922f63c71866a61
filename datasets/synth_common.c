/* datasets/synth_common.c - allocation helpers shared by the synthetic generators and pairs.c. */
#include "datasets/synth_common.h"

#include <stdlib.h>
#include <string.h>

void *vs_data_calloc(size_t count, size_t size, const char *what, vs_error *err)
{
    size_t bytes;
    if (!vs_size_mul(count, size, &bytes)) {
        vs_error_set(err, VS_ERR_NOMEM, "%s: size overflows (%zu x %zu bytes)", what, count, size);
        return NULL;
    }
    if (vs_mem_check(count, size, what, err)) return NULL;
    void *p = calloc(count ? count : 1, count ? size : 1);
    if (!p) vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory (%zu bytes)", what, bytes);
    return p;
}

char **vs_data_strings_copy(const char *const *s, int64_t k, const char *what, vs_error *err)
{
    char **c = vs_data_calloc((size_t)k, sizeof *c, what, err);
    if (!c) return NULL;
    for (int64_t i = 0; i < k; i++) {
        if (s[i] && !(c[i] = strdup(s[i]))) {
            for (int64_t j = 0; j < i; j++) free(c[j]);
            free(c);
            vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory copying names", what);
            return NULL;
        }
    }
    return c;
}

vs_status vs_data_set_classes(vs_dataset *d, int64_t k, const char *const *names, vs_error *err)
{
    d->class_names = vs_data_strings_copy(names, k, "class names", err);
    if (!d->class_names) return VS_ERR_NOMEM;
    d->n_classes = k;
    return VS_OK;
}

vs_dataset *vs_data_new(vs_data_kind kind, const char *name, vs_error *err)
{
    vs_dataset *d = vs_dataset_new(kind, name);
    if (!d) vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", name);
    return d;
}
