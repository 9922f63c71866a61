/* cmd_help.c - `versus help [VERB]`: the manual, generated from the verb table. */
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

static int run_help(int argc, char **argv)
{
    if (argc > 1) return vs_usage_error("help", "help takes at most one verb");
    if (argc == 1) {
        const vs_verb *v = vs_find_verb(argv[0]);
        if (!v) return vs_usage_error(NULL, "unknown verb '%s'", argv[0]);
        print_verb_help(v);
        return 0;
    }
    printf("versus %s - train and explain models that compare things\n\n", vs_version());
    printf("usage: versus <verb> [options]\n\nVerbs:\n");
    for (int i = 0; vs_verbs[i]; i++) printf("  %-10s %s\n", vs_verbs[i]->name, vs_verbs[i]->summary);
    printf("\n'versus help VERB' documents a verb.  'versus --version' prints the version.\n"
           "Every verb takes --threads T (default: $VERSUS_THREADS, else all cores); results do not depend on it.\n"
           "Stride-1 2x2, 3x3, 4x4 and 5x5 convolutions of 16 or more channels (dilated ones too) and stride-1 7x7\n"
           "forwards run as Winograd F(4x4,2x2) / F(4x4,3x3) or F(3x3,3x3) / F(3x3,4x4) / F(2x2,5x5) / F(2x2,7x7) where\n"
           "that is faster, and so do stride-2 4x4, 5x5, 6x6 and 7x7 ones (WGAN-GP's, StarGAN's, GANMEX's) over their four\n"
           "input phases, kernels padded with zero taps to a multiple of the stride (results differ from the direct\n"
           "sums by about 1e-6 of sum |w x|, at most 2.2e-6; IG's path engine keeps the direct sums);\n"
           "VERSUS_CONV=direct keeps the direct kernels (and their bits) everywhere.\n"
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
    "usage: versus help [VERB]\n\nWithout VERB, lists the verbs; with VERB, prints its manual.",
    NULL,
    run_help,
    NULL,
};
