/* docs/example_evaluate.c - `versus evaluate` from C: the run
 *     versus evaluate --model DIR --input X.npy --attributions A.npy --per-step 4 --replace zero [--method M]
 * through the public headers alone.  vs_evaluate loads the model and the arrays, scores every row and
 * returns a report whose data is the summary the verb writes; this program prints each metric's mean
 * and the report's page as Markdown.  tests/example_evaluate.sh compares its numbers with the verb's,
 * and CI builds it against the installed library with pkg-config.
 *     cc -std=c11 example_evaluate.c $(pkg-config --cflags --libs versus) -o example_evaluate */
#include <versus/versus.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: example_evaluate MODEL_DIR X.npy A.npy [METHOD]\n");
        return 2;
    }
    vs_evaluate_opts o;
    vs_evaluate_opts_init(&o);           /* the defaults `versus help evaluate` documents */
    o.model = argv[1];
    o.input = argv[2];
    o.attributions = argv[3];
    o.method = argc > 4 ? argv[4] : NULL; /* robustness, random logit, input invariance */
    o.per_step = 4;
    o.replace = "zero";
    vs_report *r = NULL;
    vs_error err;
    if (vs_evaluate(&o, &r, &err) != VS_OK) {
        fprintf(stderr, "example_evaluate: %s\n", err.msg);
        return 1;
    }
    /* the summary: each metric {mean, std, per_row}; null where a metric does not apply */
    for (size_t i = 0; i < r->data->n; i++) {
        const vs_json_member *m = &r->data->members[i];
        const vs_json *mean = vs_json_get(m->value, "mean");
        if (!mean) continue;
        if (mean->type == VS_JSON_NUMBER) printf("%s %.9g\n", m->key, mean->number);
        else printf("%s null\n", m->key);
    }
    if (vs_report_markdown(r, stderr, &err) != VS_OK) fprintf(stderr, "example_evaluate: %s\n", err.msg);
    vs_report_free(r);
    return 0;
}
