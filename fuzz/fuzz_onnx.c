/* fuzz_onnx.c - libFuzzer entry for vs_onnx_read_buffer (the ONNX reader, versus/onnx.h): any bytes are
 * refused with a message or read into a graph whose every reference is checked. */
#include "versus/onnx.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vs_onnx_model *m = NULL;
    vs_error err;
    vs_status st = vs_onnx_read_buffer(data, size, "fuzz.onnx", &m, &err);
    if (st != VS_OK) {
        if (m || err.code != st || strncmp(err.msg, "fuzz.onnx", 9) != 0) abort();
        return 0;
    }
    if (m->n_outputs < 1 || m->opset < 0) abort();
    for (int i = 0; i < m->n_init; i++) {
        const vs_onnx_tensor *t = &m->init[i];
        if (t->n < 0 || (!t->f && !t->i) || t->ndim > VS_ONNX_MAX_DIMS) abort();
        volatile float s = 0;
        for (int64_t k = 0; k < t->n; k++) s += t->f ? t->f[k] : (float)t->i[k];
    }
    for (int i = 0; i < m->n_nodes; i++)
        if (!m->nodes[i].op_type || !m->nodes[i].name || !m->nodes[i].domain) abort();
    vs_onnx_free(m);
    return 0;
}
