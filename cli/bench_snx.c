/* bench_snx.c - `versus bench snx`: the flags of the SNX experiment, the data set they name, and
 * its report written to OUT (table.md, results.json, index.html, SVG figures) and printed.  The
 * experiment itself is library code (explain/experiment_snx*.c). */
#include "cli/bench.h"
#include "versus/versus.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *vs_bench_command_line(int argc, char **argv)
{
    size_t n = 32;
    for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "versus bench");
    for (int i = 0; i < argc; i++) {
        bool plain = argv[i][0] != 0;
        for (const char *c = argv[i]; *c; c++) plain &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%", *c) != NULL;
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", argv[i]);
            continue;
        }
        *p++ = '\'';
        for (const char *c = argv[i]; *c; c++) p += *c == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *c);
        *p++ = '\'';
        *p = 0;
    }
    return s;
}

/* Default OUT: bench/results/snx-<data>, the SPEC with anything but [A-Za-z0-9._-] turned into '-'. */
static void default_out(const char *spec, char *out, size_t n)
{
    int k = snprintf(out, n, "bench/results/snx-");
    for (const char *c = spec; *c && (size_t)k + 1 < n; c++)
        out[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("._-", *c) ? *c : '-');
    out[k] = 0;
}

/* An integer flag into an int option (0 when absent); rc. */
static int int_flag(const vs_args *a, const char *name, int64_t lo, int *out)
{
    int64_t v;
    int rc = vs_args_int(a, name, 0, lo, 100000, &v);
    if (rc == 0 && vs_args_has(a, name)) *out = (int)v;
    return rc;
}

/* The experiment's options from the flags; rc. */
static int options(const vs_args *a, vs_snx_experiment_opts *o)
{
    int64_t v;
    int rc;
    o->spec = vs_args_get(a, "data");
    o->model_dir = vs_args_get(a, "model");
    o->tag = vs_args_get(a, "tag");
    o->methods = vs_args_get(a, "methods");
    o->progress = stderr;
    if (!o->spec) return vs_usage_error("bench", "--data SPEC is required (adult, bank, credit, compas, mutag, synthetic-tabular, ...)");
    if (o->model_dir && vs_args_has(a, "epochs")) return vs_usage_error("bench", "--epochs trains a model; it does not go with --model");
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &o->seed))) return rc;
    if ((rc = vs_args_int(a, "epochs", 0, 1, 100000, &o->epochs))) return rc;
    if ((rc = vs_args_int(a, "pairs", 0, 2, INT64_MAX, &o->pairs))) return rc;
    if ((rc = vs_args_float(a, "weight-decay", -1, 0, 100, &o->weight_decay))) return rc;
    if ((rc = vs_args_float(a, "gamma", -1, 0, 1e6, &o->gamma))) return rc;
    if ((rc = int_flag(a, "iters", 1, &o->iters)) || (rc = int_flag(a, "global-iters", 1, &o->global_iters)) ||
        (rc = int_flag(a, "baseline-iters", 1, &o->baseline_iters)) || (rc = int_flag(a, "pg-epochs", 1, &o->pg_epochs)))
        return rc;
    if ((rc = vs_args_int(a, "pre-iters", 0, 0, 100000, &v))) return rc;
    if (vs_args_has(a, "pre-iters")) o->pre_iters = (int)v;
    return 0;
}

int vs_bench_snx(const vs_args *a, int argc, char **argv)
{
    vs_snx_experiment_opts o;
    vs_snx_experiment_opts_init(&o);
    int rc = options(a, &o);
    if (rc) return rc;
    char out[3800];
    const char *dir = vs_args_get(a, "out");
    if (dir && strlen(dir) >= sizeof out - 1) return vs_usage_error("bench", "--out: path longer than %zu characters", sizeof out - 2);
    if (dir) snprintf(out, sizeof out, "%s", dir);
    else default_out(o.spec, out, sizeof out);
    if (o.methods && strlen(o.methods) >= 1024) return vs_usage_error("bench", "--methods: list too long");

    vs_data_flags df;
    if ((rc = vs_cli_data_flags(a, &df))) return rc;
    vs_dataset *d = NULL;
    vs_report *r = NULL;
    vs_error err;
    char *cmd = vs_bench_command_line(argc, argv);
    o.command = cmd;
    if (!cmd) rc = vs_fail("out of memory");
    else if (vs_load_spec(o.spec, &df, &d, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else if (vs_snx_experiment(d, &o, &r, &err) != VS_OK) rc = err.code == VS_ERR_ARG ? vs_usage_error("bench", "%s", err.msg) : vs_fail("%s", err.msg);
    else if (vs_report_write_dir(r, out, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else if (vs_report_markdown(r, stdout, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else printf("\nwrote %s/table.md, results.json, index.html and figures\n", out);
    vs_report_free(r);
    vs_dataset_free(d);
    free(cmd);
    return rc;
}
