/* fuzz_csv.c - libFuzzer target: arbitrary bytes through vs_csv_parse_mem and vs_tabular_encode.
 * The first byte picks the options (delimiter, header, bins, missing policy), the rest is CSV text.
 * Any crash, sanitizer report, leak or broken one-hot invariant is a bug.  Build: make fuzz-csv. */
#include "versus/describe.h"
#include "versus/tabular.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Every group covers the next columns and every row has exactly one 1 in each group. */
static void check_one_hot(const vs_dataset *d)
{
    int64_t next = 0;
    for (int64_t g = 0; g < d->n_groups; g++) {
        if (d->groups[g].first != next || d->groups[g].count < 1) abort();
        next += d->groups[g].count;
        for (int64_t i = 0; i < d->n; i++) {
            int ones = 0;
            for (int64_t j = d->groups[g].first; j < next; j++) {
                float v = d->X[i * d->dim + j];
                if (v != 0.0f && v != 1.0f) abort();
                ones += v == 1.0f;
            }
            if (ones != 1) abort();
        }
    }
    if (next != d->dim) abort();
    for (int64_t i = 0; i < d->n; i++)
        if (d->y[i] < 0 || d->y[i] >= d->n_classes) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    if (size < 1) return 0;
    static const char delims[6] = {0, ',', ';', '\t', '|', VS_CSV_WHITESPACE};
    uint8_t b = data[0];
    vs_csv_opts o = vs_csv_opts_defaults();
    o.delimiter = delims[b % 6];
    o.no_header = (b >> 3) & 1 ? 1 : b % 6 == 5 ? -1 : 0; /* given, forced or sniffed header */
    o.skip_lines = (b >> 4) & 1;
    o.bins = 1 + ((b >> 5) & 3) * 2;
    o.drop_missing_rows = (b >> 7) & 1;
    o.numeric_min_distinct = 2;
    vs_csv_table *t = NULL;
    vs_error err;
    if (vs_csv_parse_mem((const char *)data + 1, size - 1, "fuzz", &o, &t, &err) == VS_OK) {
        vs_dataset *d = NULL;
        if (vs_tabular_encode(t, &o, "fuzz", &d, &err) == VS_OK) {
            check_one_hot(d);
            if (sink && vs_dataset_describe_json(d, sink) != VS_OK) abort();
            vs_dataset_free(d);
        }
        vs_csv_table_free(t);
    } else if (t) {
        abort(); /* a failed parse must not return a table */
    }
    return 0;
}
