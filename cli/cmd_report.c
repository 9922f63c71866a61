/* cmd_report.c - `versus report DIR`: rebuild DIR/index.html from DIR/results.json (the page of
 * versus bench or versus demo), e.g. after a change to the page's look. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>

static const vs_cli_opt report_opts[] = {{NULL, 0, NULL}};

static int run_report(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("report", report_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos == 0) return vs_usage_error("report", "expected a directory holding results.json");
    if (a.n_pos > 1) return vs_usage_error("report", "unexpected argument '%s'", a.pos[1]);
    vs_error err;
    if (vs_report_rebuild_html(a.pos[0], &err) != VS_OK) return vs_fail("%s", err.msg);
    printf("wrote %s/index.html\n", a.pos[0]);
    return 0;
}

const vs_verb vs_verb_report = {
    "report",
    "rebuild the HTML page of a bench or demo directory from its results.json",
    "usage: versus report DIR\n\n"
    "Reads DIR/results.json as written by `versus bench` or `versus demo` (the experiment's numbers and\n"
    "its report: headings, tables with typed cells, figures as data) and writes DIR/index.html: one\n"
    "self-contained page (inline stylesheet, figures inlined as SVG, no script, no network) with the\n"
    "direction of every score (lower or higher is better), best and runner-up marked, significance marks,\n"
    "missing values as a dash with a footnote, and every figure numbered with its caption.",
    report_opts,
    run_report,
    NULL,
};
