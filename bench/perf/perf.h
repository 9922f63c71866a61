/* bench/perf/perf.h - the performance harness's registry: a workload is a vs_bench_case (set up, run, tear down,
 * flops per run); each file of bench/perf/ contributes one table of cases, listed in main.c.
 * To add workloads (a training step, an explainer), write foo.c with its table and add the
 * table to `suites` in main.c. */
#ifndef VERSUS_BENCH_PERF_PERF_H
#define VERSUS_BENCH_PERF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct vs_bench_case vs_bench_case;
struct vs_bench_case {
    const char *suite;  /* "peak", "sgemm", ... */
    const char *name;   /* unique; what --filter matches and the comparison joins on */
    const char *about;  /* one line for the table: shape and meaning */
    int64_t p[6];       /* parameters the callbacks read (shape, flags) */
    const void *data;   /* a row of the workload's own table (a conv shape), or NULL */
    /* State for one run at `threads` threads (already set with vs_set_threads), NULL on failure. */
    void *(*setup)(const vs_bench_case *c, int threads);
    void (*run)(void *state);                 /* the timed work */
    void (*teardown)(void *state);
    double (*flops)(const vs_bench_case *c, int threads); /* floating-point operations per run */
    /* Extra JSON fields (",\"m\":64,..." ) so other implementations can repeat the case; may be NULL. */
    void (*json_fields)(const vs_bench_case *c, FILE *out);
};

extern const vs_bench_case vs_bench_peak_cases[];
extern const size_t vs_bench_peak_count;
extern const vs_bench_case vs_bench_sgemm_cases[];
extern const size_t vs_bench_sgemm_count;
extern const vs_bench_case vs_bench_conv_cases[];
extern const size_t vs_bench_conv_count;
extern const vs_bench_case vs_bench_train_cases[];
extern const size_t vs_bench_train_count;
extern const vs_bench_case vs_bench_sweep_cases[];
extern const size_t vs_bench_sweep_count;

/* One convolution (conv.c times it; the conv and sweep suites list shapes): input [n,c,h,w],
 * o output channels, k x k kernel.  A case points .data at its shape and sets p[0] to 1 for
 * forward + backward (dx, dw, db), 0 for the forward alone. */
typedef struct vs_bench_conv_shape {
    int64_t n, c, h, w, o, k, stride, pad, dilation; /* dilation 0 means 1 */
    bool transpose; /* conv_transpose2d: c channels in, o out, output (h - 1) stride - 2 pad + k */
} vs_bench_conv_shape;

void *vs_bench_conv_setup(const vs_bench_case *c, int threads);
void vs_bench_conv_run(void *state);
void vs_bench_conv_teardown(void *state);
/* Forward 2 n o oh ow c k^2 (transposed: 2 n c h w o k^2); forward + backward three times that. */
double vs_bench_conv_flops(const vs_bench_case *c, int threads);
void vs_bench_conv_json(const vs_bench_case *c, FILE *out);

/* Run the workloads argv selects (argv[0] is skipped; flags as `PROG --help` prints), printing
 * JSON lines and a Markdown table to stdout; PROG names the program in messages.  0, 1 when a
 * workload or the JSON file failed, 2 on bad flags. */
int vs_bench_perf(const char *prog, int argc, char **argv);

#endif
