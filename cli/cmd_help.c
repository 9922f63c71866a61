/* cmd_help.c - `versus help [VERB]`: the manual, generated from the verb table; `versus help methods`:
 * every explanation method, from the method registry. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

bool vs_cli_opts_have(const vs_cli_opt *opts, const char *name)
{
    for (const vs_cli_opt *o = opts; o && o->name; o++)
        if (strcmp(o->name, name) == 0) return true;
    return false;
}

void vs_help_shards(void)
{
    printf("\nShards and resume: every finished item is journalled (one checksummed append) in OUT.journal,\n"
           "removed once the files are written; --resume keeps the journal's items after a kill and does the\n"
           "rest.  --shard K/N does only shard K's items and writes them to --out PART; `versus merge PART...\n"
           "--out OUT` joins shards 1..N into the files of a single run.  Progress (items, rate, time left)\n"
           "goes to standard error.  Recipes for Slurm and GNU parallel: docs/CLUSTER.md.\n");
}

static void print_verb_help(const vs_verb *v)
{
    printf("%s\n", v->usage);
    if (vs_cli_opts_have(v->opts, "shard")) vs_help_shards();
    if (v->more_help) v->more_help();
    if (vs_cli_opts_have(v->opts, "path")) printf("\nSPEC (a data set) is one of:\n%s", vs_data_spec_help());
    if (v->opts && v->opts[0].name) {
        printf("\nOptions:\n");
        for (const vs_cli_opt *o = v->opts; o->name; o++) {
            char left[64];
            snprintf(left, sizeof left, "--%s%s", o->name, o->has_arg ? " X" : "");
            printf("  %-24s %s\n", left, o->help);
        }
        printf("  %-24s %s\n", "--threads X", "threads of the kernels (default: $VERSUS_THREADS, else all cores)");
        printf("  %-24s %s\n", "--max-memory X", "memory budget for input-sized allocations, e.g. 4G (default: half the RAM)");
    }
}

/* One line per method of family f: its name, an older spelling when it has one, what it computes. */
static void print_family(vs_method_family f)
{
    for (int i = 0; i < vs_method_family_count(f); i++) {
        const vs_method *m = vs_method_family_at(f, i);
        char name[64];
        snprintf(name, sizeof name, m->alias ? "%s (%s)" : "%s", m->name, m->alias);
        printf("  %-28s %s\n", name, m->help);
    }
}

static int help_methods(void)
{
    printf("Explanation methods (one registry; a method has one name, older spellings in brackets still work).\n\n"
           "Attributions of one input or one pair ('versus attribute --method NAME', 'versus evaluate --method NAME';\n"
           "their options: 'versus help attribute'):\n");
    print_family(VS_METHOD_ATTRIBUTION);
    printf("\nMasks of a Siamese pair of rows or graphs ('versus explain snx --method NAME'; 'versus help explain'):\n");
    print_family(VS_METHOD_SNX);
    printf("\nExplainers with their own verbs: 'versus explain cem' (CEM-MAF pertinent positives and negatives),\n"
           "'versus explain svae' (a supervised VAE's invariances); the search explanations (Shapley, Shapley-Taylor,\n"
           "SAM) are measured by 'versus bench search'.\n");
    return 0;
}

static int run_help(int argc, char **argv)
{
    if (argc == 1 && strcmp(argv[0], "methods") == 0) return help_methods();
    if (argc > 2) return vs_usage_error("help", "help takes a verb and at most one topic (versus help bench perf)");
    const vs_verb *v = argc ? vs_find_verb(argv[0]) : NULL;
    if (argc && !v) return vs_usage_error(NULL, "unknown verb '%s'", argv[0]);
    if (argc == 2 && v == &vs_verb_bench) return vs_bench_topic_help(argv[1]);
    if (argc == 2) return vs_usage_error("help", "'versus help %s' has no topics; try 'versus help %s'", argv[0], argv[0]);
    if (argc == 1) {
        print_verb_help(v);
        return 0;
    }
    printf("versus %s (commit %s) - train and explain models that compare things\n\n", vs_version(), vs_build_commit());
    printf("usage: versus <verb> [options]\n\nVerbs:\n");
    for (int i = 0; vs_verbs[i]; i++) printf("  %-10s %s\n", vs_verbs[i]->name, vs_verbs[i]->summary);
    printf("\n'versus help VERB' (or 'versus VERB --help') documents a verb, 'versus help methods' lists every\n"
           "explanation method.  'versus --version' prints the version and the commit it was built from, which\n"
           "every bench report records.\n"
           "A first session: versus demo; then, on your own data or ours:\n"
           "  versus data export synthetic-tabular --out d          (d/X.npy, d/y.npy)\n"
           "  versus train --arch mlp --data synthetic-tabular --out m\n"
           "  versus attribute --model m --input d/X.npy --method integrated_gradients --out A.npy\n"
           "  versus evaluate --model m --input d/X.npy --attributions A.npy\n"
           "A PyTorch model becomes a versus model directory with torch_to_versus.py (see its --help; installed in\n"
           "share/versus/, datasets/io/ in the source).\n"
           "Every verb takes --threads T (default: $VERSUS_THREADS, else all cores); results do not depend on it.\n"
           "Kernel details (convolution algorithms, AVX-512, VERSUS_CONV, VERSUS_ISA): 'versus help bench perf'.\n"
           "Every verb takes --max-memory SIZE (512M, 4G; default half the RAM): sizes read from input (headers,\n"
           "--n, label counts) are checked against it before they are allocated.  Input files are read whole:\n"
           "regular files up to that budget, pipes up to 256 MiB; devices (/dev/zero) are refused.  --out to a\n"
           "device or a pipe is written in place, other files are replaced atomically.\n"
           "Exit status: 0 success, 1 bad data or failed run, 2 usage error.\n");
    return 0;
}

const vs_verb vs_verb_help = {
    "help",
    "show this list, or the manual of one verb",
    "usage: versus help [VERB [TOPIC] | methods]\n\nWithout VERB, lists the verbs; with VERB, prints its manual (as 'versus VERB --help' does);\n"
    "'versus help methods' lists every explanation method by family;\n"
    "'versus help bench NAME' prints one benchmark's manual (bench perf: the kernels and their choices).",
    NULL,
    run_help,
    NULL,
};
