/* main.c - `versus <verb> [options]`: find the verb, hand it the rest of the command line. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Help order.  A verb lives in its own cli/cmd_*.c file and is listed here once. */
const vs_verb *const vs_verbs[] = {
    &vs_verb_demo,
    &vs_verb_data,
    &vs_verb_train,
    &vs_verb_predict,
    &vs_verb_attribute,
    &vs_verb_evaluate,
    &vs_verb_explain,
    &vs_verb_bench,
    &vs_verb_report,
    &vs_verb_merge,
    &vs_verb_import,
    &vs_verb_help,
    NULL,
};

const vs_verb *vs_find_verb(const char *name)
{
    for (int i = 0; vs_verbs[i]; i++)
        if (strcmp(vs_verbs[i]->name, name) == 0) return vs_verbs[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("versus: no verb given\nusage: versus <verb> [options]   (versus help lists the verbs)\n", stderr);
        return 2;
    }
    vs_cli_attribute_init();
    const char *verb = argv[1];
    if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
        printf("versus %s (commit %s)\n", vs_version(), vs_build_commit());
        return 0;
    }
    if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) verb = "help";
    if (verb[0] == '-') return vs_usage_error(NULL, "unknown option '%s'", verb);
    const vs_verb *v = vs_find_verb(verb);
    if (!v) return vs_usage_error(NULL, "unknown verb '%s'", verb);
    /* `versus VERB [TOPIC] --help` is `versus help VERB [TOPIC]` */
    for (int i = 2; i < argc && v != &vs_verb_help; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            char *words[2] = {argv[1], i > 2 && argv[2][0] != '-' ? argv[2] : NULL};
            return vs_verb_help.run(words[1] ? 2 : 1, words);
        }
    int rc = v->run(argc - 2, argv + 2);
    /* output that never arrived (a full disk, > /dev/full, a closed pipe) is a failed run */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        fprintf(stderr, "versus: cannot write standard output: %s\n", e ? strerror(e) : "write error");
        return rc ? rc : 1;
    }
    return rc;
}
