/* cmd_demo.c - `versus demo`: the main job end to end in about a minute.  Flags and printing only:
 * the demo itself is the library call vs_demo_experiment (bench/demo/demo.c), whose report
 * is written to a directory (index.html, results.json, table.md, SVG figures) and printed. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>

static const vs_cli_opt demo_opts[] = {
    {"out", 1, "report directory (default versus-demo)"},
    {"seed", 1, "random seed (default 1)"},
    {NULL, 0, NULL},
};

static int run_demo(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("demo", demo_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("demo", "unexpected argument '%s'", a.pos[0]);
    int64_t seed;
    if ((rc = vs_args_int(&a, "seed", 1, 0, INT64_MAX, &seed))) return rc;
    const char *dir = vs_args_get(&a, "out") ? vs_args_get(&a, "out") : "versus-demo";
    printf("versus demo: Siamese networks on data with planted ground truth, explained with SNX\n");
    fflush(stdout);
    vs_report *r = NULL;
    vs_error err;
    if (vs_demo_experiment((uint64_t)seed, stderr, &r, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else if (vs_report_write_dir(r, dir, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else if (vs_report_markdown(r, stdout, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    else printf("\nreport: %s/index.html\n", dir);
    vs_report_free(r);
    return rc;
}

const vs_verb vs_verb_demo = {
    "demo",
    "train Siamese models on planted data, explain them with SNX, write a report",
    "usage: versus demo [--out DIR] [--seed S]\n\n"
    "Trains a Siamese MLP on synthetic credit applicants and a Siamese GCN on synthetic graphs with a\n"
    "planted motif, explains one query against a same-class and an other-class reference with SNX-global\n"
    "(the query's invariant) and SNX (local masks constrained by it), compares with saliency maps, scores\n"
    "every explanation (faithfulness, counterfactual, conformity, violated constraints, precision and\n"
    "recall against the planted truth), explains a classifier one-vs-one with integrated gradients,\n"
    "DeepLIFT and Kernel SHAP, and writes DIR (default versus-demo): index.html, one self-contained page\n"
    "with the tables and figures (feature importances, the query graph drawn with its edge masks and the\n"
    "planted motif, GDA convergence, violated constraints), results.json (`versus report DIR` rebuilds\n"
    "the page from it), table.md and the SVG figures.",
    demo_opts,
    run_demo,
    NULL,
};
