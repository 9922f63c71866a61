/* fuzz_idx.c - libFuzzer entry for vs_parse_idx_mem.  Bytes 0-1 (big-endian) give the length of
 * the image file, which follows; the label file is the rest.  Checks every loaded value. */
#include "versus/data_io.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t len = (size_t)data[0] << 8 | data[1];
    if (len > size - 2) len = size - 2;
    const uint8_t *img = data + 2, *lab = img + len;
    size_t lab_n = size - 2 - len;
    vs_dataset *d = NULL;
    vs_error err;
    vs_status st = vs_parse_idx_mem(img, len, lab, lab_n, (len & 1) ? "fashion-mnist" : "mnist", &d, &err);
    if (st != VS_OK) {
        if (d || err.code != st || err.msg[0] == '\0') abort();
        return 0;
    }
    if (d->n < 1 || d->dim != d->shape[1] * d->shape[2] || d->n_classes != 10) abort();
    for (int64_t i = 0; i < d->n; i++)
        if (d->y[i] < 0 || d->y[i] >= 10) abort();
    for (int64_t i = 0; i < d->n * d->dim; i++)
        if (!(d->X[i] >= 0.0f && d->X[i] <= 1.0f)) abort();
    vs_dataset_free(d);
    return 0;
}
