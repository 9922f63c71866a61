/* data_flags.c - the data SPEC flags every data-reading verb accepts (see versus/data_spec.h). */
#include "cli/cli.h"
#include "versus/tabular.h"

#include <string.h>

int vs_cli_data_flags(const vs_args *a, vs_data_flags *f)
{
    memset(f, 0, sizeof *f);
    f->path = vs_args_get(a, "path");
    const char *d = vs_args_get(a, "delimiter");
    if (d) {
        if (strcmp(d, "\\t") == 0 || strcmp(d, "tab") == 0)
            f->delimiter = '\t';
        else if (strcmp(d, " ") == 0 || strcmp(d, "space") == 0 || strcmp(d, "whitespace") == 0)
            f->delimiter = VS_CSV_WHITESPACE; /* runs of blanks and tabs, as UCI *.data files need */
        else if (strlen(d) == 1 && strchr(",;|\t", d[0]))
            f->delimiter = d[0];
        else
            return vs_usage_error(a->verb, "option '--delimiter' expects one of , ; | tab space whitespace, got '%s'", d);
    }
    if (vs_args_has(a, "no-header") && vs_args_has(a, "header"))
        return vs_usage_error(a->verb, "give --header or --no-header, not both");
    f->no_header = vs_args_has(a, "no-header") ? 1 : vs_args_has(a, "header") ? -1 : 0;
    f->label = vs_args_get(a, "label");
    f->drop = vs_args_get(a, "drop");
    f->categorical = vs_args_get(a, "categorical");
    f->missing = vs_args_get(a, "missing");
    int64_t bins, seed, n;
    int rc;
    if ((rc = vs_args_int(a, "bins", 0, 2, 1000, &bins)) || (rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &seed)) ||
        (rc = vs_args_int(a, "n", 0, 1, 100000000, &n)))
        return rc;
    f->bins = (int)bins;
    f->seed = (uint64_t)seed;
    f->n = n;
    return 0;
}
