/* bench/perf/main.c - vs_bench_perf, behind both `vs_bench` (bench/perf/vs_bench.c, `make bench`) and
 * `versus bench perf`: runs the registered workloads at each requested thread count and reports the
 * median time of repeated runs after warm-up, as JSON lines and a Markdown table.
 *
 *   PROG [--threads 1,2] [--filter SUBSTR[,SUBSTR...]] [--reps N] [--json FILE] [--list] [--rss]
 *
 * A filter substring ending in '$' matches only at the end of a name. *
 * One JSON line per (workload, threads): name, suite, impl "versus", threads, isa, reps, iters (runs
 * per timed sample), median_s and min_s (seconds per run), gflops, peak_pct, plus the workload's
 * own fields (shapes).  bench/perf/torch_reference.py reads these lines to time the same cases.  --rss ends
 * with a line {"suite":"rss","max_rss_kb":...}: the process's peak resident memory (getrusage), which
 * measures one workload's loop when --filter and --threads select only that one.
 *
 * Thread scaling of the workloads in SCALING (the kernels issue's 2-thread target) is measured
 * pairwise as well, when --threads lists 1 and a larger count: samples at 1 and N threads alternate
 * (1,N then N,1), each of at least SCALING_SAMPLE_S after one untimed run at its thread count (so a
 * pool that slept during the 1-thread sample is awake again), and the line {"suite":"scaling",
 * "ratio_median":...} gives the median over pairs of time(1) / time(N).  On a shared VM whose speed
 * drifts over minutes, that ratio of neighbours is steadier than the ratio of two medians measured
 * minutes apart. */
#include "bench/perf/perf.h"
#include "autograd/kernels.h"
#include "versus/threads.h"
#include "versus/versus.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const struct {
    const vs_bench_case *cases;
    const size_t *count;
} suites[] = {
    {vs_bench_peak_cases, &vs_bench_peak_count},
    {vs_bench_sgemm_cases, &vs_bench_sgemm_count},
    {vs_bench_conv_cases, &vs_bench_conv_count},
    {vs_bench_train_cases, &vs_bench_train_count},
    {vs_bench_sweep_cases, &vs_bench_sweep_count},
};

#define MAX_THREAD_COUNTS 16
#define MAX_REPS 1000
/* A timed sample repeats the workload until it lasts at least this long (timer resolution,
 * call overhead), and warm-up runs at least this long before the first sample. */
#define MIN_SAMPLE_S 2e-3
#define WARMUP_S 50e-3
/* A pairwise scaling sample lasts at least this long (see the top comment). */
#define SCALING_SAMPLE_S 20e-3

typedef struct options {
    int threads[MAX_THREAD_COUNTS];
    int nthreads;
    const char *filter;
    int reps;
    const char *json_path;
    bool list;
    bool rss;
    bool help;
    bool cpu_clock; /* --clock cpu */
} options;

typedef struct result {
    const vs_bench_case *c;
    int threads;
    double median_s, min_s, gflops, peak_pct;
    long iters;
} result;

/* Workloads whose thread scaling is measured pairwise. */
static const char *const SCALING[] = {"sgemm_nn_512", "ganmex_mnist_step"};

/* --clock cpu: the process's CPU time instead of wall-clock time (meaningful at 1 thread on a machine
 * that other programs share; at n threads it adds up the n threads). */
static bool cpu_clock;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out, "usage: %s [--threads 1,2] [--filter SUBSTR[,SUBSTR...]] [--reps N] [--json FILE] [--list] [--rss]\n"
                 "       [--clock wall|cpu]\n"
                 "  --threads  thread counts to run every workload at (default: 1 and all cores)\n"
                 "  --filter   run only workloads whose name contains one of the substrings (SUBSTR$: ends with, ^SUBSTR: starts with)\n"
                 "  --reps     timed samples per workload; the median is reported (default 15)\n"
                 "  --json     also write the JSON lines to FILE\n"
                 "  --list     print the workload names and exit\n"
                 "  --rss      end with the peak resident memory of the process (one workload: --filter)\n"
                 "  --clock    wall (default) or cpu: the process's CPU time, for 1 thread on a shared machine\n",
            prog);
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static bool parse_threads(const char *s, options *o)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return false;
    strcpy(buf, s);
    o->nthreads = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nthreads == MAX_THREAD_COUNTS || !parse_int(tok, 1, 1024, &o->threads[o->nthreads])) return false;
        o->nthreads++;
    }
    return o->nthreads > 0;
}

static bool parse_args(const char *prog, int argc, char **argv, options *o)
{
    const int cores = vs_get_threads();
    *o = (options){.reps = 15};
    o->threads[o->nthreads++] = 1;
    if (cores > 1) o->threads[o->nthreads++] = cores;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            o->list = true;
        } else if (!strcmp(a, "--rss")) {
            o->rss = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = true;
        } else if (strcmp(a, "--threads") && strcmp(a, "--filter") && strcmp(a, "--reps") && strcmp(a, "--json") &&
                   strcmp(a, "--clock")) {
            fprintf(stderr, "%s: unknown flag %s\n", prog, a);
            return false;
        } else if (!v) {
            fprintf(stderr, "%s: %s needs a value\n", prog, a);
            return false;
        } else if (!strcmp(a, "--threads")) {
            if (!parse_threads(v, o)) {
                fprintf(stderr, "%s: --threads %s: expected a comma-separated list of counts 1..1024\n", prog, v);
                return false;
            }
            i++;
        } else if (!strcmp(a, "--filter")) {
            o->filter = v;
            i++;
        } else if (!strcmp(a, "--reps")) {
            if (!parse_int(v, 1, MAX_REPS, &o->reps)) {
                fprintf(stderr, "%s: --reps %s: expected an integer 1..%d\n", prog, v, MAX_REPS);
                return false;
            }
            i++;
        } else if (!strcmp(a, "--json")) {
            o->json_path = v;
            i++;
        } else if (!strcmp(a, "--clock")) {
            if (strcmp(v, "wall") && strcmp(v, "cpu")) {
                fprintf(stderr, "%s: --clock %s: expected wall or cpu\n", prog, v);
                return false;
            }
            o->cpu_clock = !strcmp(v, "cpu");
            i++;
        }
    }
    return true;
}

/* Name matches the comma-separated substrings of filter (NULL: everything); a substring ending in
 * '$' must end the name (sweep_x_fwd$ leaves out sweep_x_fwdbwd), one starting with '^' must start
 * it (^vae_mlp_step leaves out dipvae_mlp_step). */
static bool selected(const char *filter, const char *name)
{
    if (!filter) return true;
    const char *p = filter;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const bool at_start = len && p[0] == '^';
        const char *sub = p + at_start;
        len -= at_start;
        const bool at_end = len && sub[len - 1] == '$';
        len -= at_end;
        for (const char *s = name; len && strlen(s) >= len && (!at_start || s == name); s++)
            if (!strncmp(s, sub, len) && (!at_end || !s[len])) return true;
        if (!comma) break;
        p = comma + 1;
    }
    return false;
}

/* Runs of a workload that takes `once` seconds for a sample to last at least min_s. */
static long runs_per_sample(double once, double min_s)
{
    return once >= min_s ? 1 : (long)(min_s / (once > 1e-9 ? once : 1e-9)) + 1;
}

/* Median seconds per run of c at `threads` threads; false when setup fails. */
static bool measure(const vs_bench_case *c, int threads, int reps, result *r)
{
    vs_set_threads(threads);
    void *state = c->setup(c, threads);
    if (!state) return false;
    c->run(state); /* first run: page faults, scratch buffers, waking the pool */
    double t0 = now_s();
    c->run(state);
    double once = now_s() - t0;
    long iters = runs_per_sample(once, MIN_SAMPLE_S);
    for (double start = now_s(); now_s() - start < WARMUP_S;) c->run(state);
    double samples[MAX_REPS];
    for (int s = 0; s < reps; s++) {
        t0 = now_s();
        for (long i = 0; i < iters; i++) c->run(state);
        samples[s] = (now_s() - t0) / (double)iters;
    }
    c->teardown(state);
    qsort(samples, (size_t)reps, sizeof samples[0], cmp_double);
    r->c = c;
    r->threads = threads;
    r->iters = iters;
    r->median_s = reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
    r->min_s = samples[0];
    r->gflops = c->flops(c, threads) / r->median_s * 1e-9;
    r->peak_pct = -1;
    return true;
}

static void print_json(FILE *out, const result *r, int reps)
{
    fprintf(out, "{\"name\":\"%s\",\"suite\":\"%s\",\"impl\":\"versus\",\"threads\":%d,\"isa\":\"%s\",\"reps\":%d,"
                 "\"iters\":%ld,\"median_s\":%.6e,\"min_s\":%.6e,\"gflops\":%.3f,\"clock\":\"%s\"",
            r->c->name, r->c->suite, r->threads, vs_isa_name(vs_kernel_isa()), reps, r->iters, r->median_s, r->min_s,
            r->gflops, cpu_clock ? "cpu" : "wall");
    if (r->peak_pct >= 0) fprintf(out, ",\"peak_pct\":%.1f", r->peak_pct);
    if (r->c->json_fields) r->c->json_fields(r->c, out);
    fprintf(out, "}\n");
    fflush(out);
}

static void print_table(const result *res, size_t n)
{
    printf("\n| workload | what | threads | median | GFLOP/s | %% of peak |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++) {
        const result *r = &res[i];
        const double t = r->median_s;
        printf("| %s | %s | %d | %.3g %s | ", r->c->name, r->c->about, r->threads, t < 1e-3 ? t * 1e6 : t * 1e3,
               t < 1e-3 ? "us" : "ms");
        if (r->gflops <= 0) { /* a workload timed per step, without a flop count */
            printf("- | - |\n");
            continue;
        }
        printf("%.1f | ", r->gflops);
        if (r->peak_pct >= 0)
            printf("%.0f%% |\n", r->peak_pct);
        else
            printf("- |\n");
    }
}

/* Seconds per run of `iters` runs of the workload at `threads` threads, after one untimed run. */
static double sample_s(const vs_bench_case *c, void *state, int threads, long iters)
{
    vs_set_threads(threads);
    c->run(state);
    const double t0 = now_s();
    for (long i = 0; i < iters; i++) c->run(state);
    return (now_s() - t0) / (double)iters;
}

/* Pairwise thread scaling of c between 1 and `threads` threads (see the top comment); false when
 * a setup fails. */
static bool measure_scaling(const vs_bench_case *c, int threads, int reps, FILE *json)
{
    vs_set_threads(1);
    void *one = c->setup(c, 1);
    vs_set_threads(threads);
    void *many = one ? c->setup(c, threads) : NULL;
    if (!many) {
        if (one) c->teardown(one);
        return false;
    }
    /* Warm both up, then size a sample from the 1-thread time like measure() does. */
    (void)sample_s(c, one, 1, 1);
    (void)sample_s(c, many, threads, 1);
    const double once = sample_s(c, one, 1, 1);
    const long iters = runs_per_sample(once, SCALING_SAMPLE_S);
    for (double start = now_s(); now_s() - start < WARMUP_S;) {
        (void)sample_s(c, one, 1, iters);
        (void)sample_s(c, many, threads, iters);
    }
    double ratios[MAX_REPS];
    for (int s = 0; s < reps; s++) {
        double t1, tn;
        if (s % 2 == 0) {
            t1 = sample_s(c, one, 1, iters);
            tn = sample_s(c, many, threads, iters);
        } else {
            tn = sample_s(c, many, threads, iters);
            t1 = sample_s(c, one, 1, iters);
        }
        ratios[s] = t1 / tn;
    }
    c->teardown(one);
    c->teardown(many);
    qsort(ratios, (size_t)reps, sizeof ratios[0], cmp_double);
    const double median = reps % 2 ? ratios[reps / 2] : 0.5 * (ratios[reps / 2 - 1] + ratios[reps / 2]);
    for (FILE *out = stdout; out; out = out == stdout ? json : NULL)
        fprintf(out,
                "{\"name\":\"%s\",\"suite\":\"scaling\",\"impl\":\"versus\",\"threads\":%d,\"pairs\":%d,"
                "\"ratio_median\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f}\n",
                c->name, threads, reps, median, ratios[0], ratios[reps - 1]);
    printf("pairwise scaling: %s, 1 -> %d threads: %.2fx (median of %d pairs, range %.2f-%.2f)\n", c->name, threads,
           median, reps, ratios[0], ratios[reps - 1]);
    return true;
}

/* The registered case called name, or NULL. */
static const vs_bench_case *find_case(const char *name)
{
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
        for (size_t i = 0; i < *suites[s].count; i++)
            if (!strcmp(suites[s].cases[i].name, name)) return &suites[s].cases[i];
    return NULL;
}

int vs_bench_perf(const char *prog, int argc, char **argv)
{
    options o;
    if (!parse_args(prog, argc, argv, &o)) {
        usage(stderr, prog);
        return 2;
    }
    if (o.help) {
        usage(stdout, prog);
        return 0;
    }
    cpu_clock = o.cpu_clock;
    if (o.list) {
        for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
            for (size_t i = 0; i < *suites[s].count; i++)
                printf("%s\t%s\n", suites[s].cases[i].name, suites[s].cases[i].about);
        return 0;
    }
    FILE *json = NULL;
    if (o.json_path && !(json = fopen(o.json_path, "w"))) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, o.json_path, strerror(errno));
        return 1;
    }
    size_t total = 0;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) total += *suites[s].count;
    result *res = calloc(total * (size_t)o.nthreads + 1, sizeof *res);
    if (!res) return 1;
    size_t nres = 0;

    for (FILE *out = stdout; out; out = out == stdout ? json : NULL)
        fprintf(out, "{\"name\":\"machine\",\"suite\":\"info\",\"impl\":\"versus\",\"version\":\"%s\",\"isa\":\"%s\",%s\"cores\":%d}\n",
                vs_version(), vs_isa_name(vs_kernel_isa()),
                vs_kernel_isa() != VS_ISA_AVX512 ? "" : vs_avx512_split() ? "\"zmm_fma\":\"split\"," : "\"zmm_fma\":\"full\",",
                vs_get_threads());
    int status = 0;
    for (int t = 0; t < o.nthreads; t++) {
        const int threads = o.threads[t];
        /* The peak at this thread count, measured even when filtered out: percents need it. */
        result peak;
        const bool have_peak = measure(&vs_bench_peak_cases[0], threads, o.reps, &peak);
        if (have_peak) peak.peak_pct = 100.0;
        for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
            for (size_t i = 0; i < *suites[s].count; i++) {
                const vs_bench_case *c = &suites[s].cases[i];
                if (!selected(o.filter, c->name)) continue;
                result r;
                if (c == &vs_bench_peak_cases[0] && have_peak) {
                    r = peak;
                } else if (!measure(c, threads, o.reps, &r)) {
                    fprintf(stderr, "%s: %s: setup failed (out of memory?)\n", prog, c->name);
                    status = 1;
                    continue;
                } else if (have_peak && r.gflops > 0) { /* workloads without a flop count have no share */
                    r.peak_pct = 100.0 * r.gflops / peak.gflops;
                }
                print_json(stdout, &r, o.reps);
                if (json) print_json(json, &r, o.reps);
                res[nres++] = r;
            }
    }
    print_table(res, nres);
    const int most = o.threads[o.nthreads - 1];
    if (o.nthreads > 1 && o.threads[0] == 1 && most > 1 && !o.rss)
        for (size_t k = 0; k < sizeof SCALING / sizeof SCALING[0]; k++) {
            const vs_bench_case *c = find_case(SCALING[k]);
            if (!c || !selected(o.filter, c->name)) continue;
            if (!measure_scaling(c, most, o.reps, json)) {
                fprintf(stderr, "%s: %s: setup failed (out of memory?)\n", prog, c->name);
                status = 1;
            }
        }
    if (o.rss) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        for (FILE *out = stdout; out; out = out == stdout ? json : NULL)
            fprintf(out, "{\"name\":\"%s\",\"suite\":\"rss\",\"impl\":\"versus\",\"threads\":%d,\"max_rss_kb\":%ld}\n",
                    o.filter ? o.filter : "all", o.threads[0], (long)ru.ru_maxrss);
    }
    free(res);
    if (json && fclose(json) != 0) {
        fprintf(stderr, "%s: writing %s failed\n", prog, o.json_path);
        status = 1;
    }
    vs_set_threads(0);
    return status;
}
