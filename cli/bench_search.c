/* bench_search.c - `versus bench search`: the flags of the search experiment (Hamilton et al. 2022),
 * the images they name, and its report written to OUT (table.md, results.json, index.html, SVG
 * figures, correspondence.png) and printed.  The experiment is library code
 * (explain/experiment_search*.c). */
#include "cli/bench.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vs_bench_search(const vs_args *a, int argc, char **argv)
{
    vs_search_experiment_opts o;
    vs_search_experiment_opts_init(&o);
    int64_t v;
    int rc;
    const char *spec = vs_args_get(a, "data");
    o.data = spec ? spec : "planted";
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &v))) return rc;
    o.seed = (uint64_t)v;
    if ((rc = vs_args_int(a, "pairs", o.pairs, 1, 100000, &o.pairs)) || (rc = vs_args_int(a, "epochs", o.epochs, 1, 100000, &o.epochs)) ||
        (rc = vs_args_int(a, "train-rows", o.train_rows, 100, INT64_MAX, &o.train_rows)) ||
        (rc = vs_args_int(a, "budget1", o.budget1, 10, 100000000, &o.budget1)) ||
        (rc = vs_args_int(a, "budget2", o.budget2, 100, 100000000, &o.budget2)) ||
        (rc = vs_args_int(a, "study-games", o.study_games, 0, 10000, &o.study_games)))
        return rc;
    o.commit = vs_args_get(a, "commit");
    o.progress = stderr;
    char out[3800];
    if ((rc = vs_bench_out(a, "search", o.data, out, sizeof out))) return rc;
    o.png_dir = out;

    vs_data_flags df;
    if ((rc = vs_cli_data_flags(a, &df))) return rc;
    vs_dataset *d = NULL;
    vs_report *r = NULL;
    vs_error err;
    char *cmd = vs_bench_command_line(argc, argv);
    o.command = cmd;
    if (!cmd) rc = vs_fail("out of memory");
    else if (strcmp(o.data, "planted") != 0 && vs_load_spec(o.data, &df, &d, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0) {
        o.images = d;
        if (vs_search_experiment(&o, &r, &err) != VS_OK) rc = err.code == VS_ERR_ARG ? vs_usage_error("bench", "%s", err.msg) : vs_fail("%s", err.msg);
        else rc = vs_bench_publish(r, out, "table.md, results.json, index.html, figures and correspondence.png");
    }
    vs_report_free(r);
    vs_dataset_free(d);
    free(cmd);
    return rc;
}
