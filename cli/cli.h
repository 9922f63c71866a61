/* cli/cli.h - the `versus` program: verb table and flag parsing shared by every verb. */
#ifndef VERSUS_CLI_H
#define VERSUS_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* A flag a verb accepts.  has_arg: 0 = switch, 1 = takes a value. */
typedef struct vs_cli_opt {
    const char *name;   /* without the leading "--" */
    int has_arg;
    const char *help;   /* one line for `versus help VERB` */
} vs_cli_opt;

#define VS_ARGS_MAX 64

/* Parsed flags of one verb: name/value pairs (value NULL for switches), in command-line order. */
typedef struct vs_args {
    const char *verb;
    int n;
    const char *name[VS_ARGS_MAX];
    const char *value[VS_ARGS_MAX];
    int n_pos;                       /* positional words (data SPECs, sub-verbs) */
    const char *pos[VS_ARGS_MAX];
} vs_args;

/* Parse argv[0..argc) against opts (terminated by a {NULL} entry).  Returns 0, or 2 after printing
 * "versus: ..." and a usage hint for unknown flags, missing values and repeated flags. */
int vs_args_parse(const char *verb, const vs_cli_opt *opts, int argc, char **argv, vs_args *a);
const char *vs_args_get(const vs_args *a, const char *name);   /* value, or NULL when absent */
bool vs_args_has(const vs_args *a, const char *name);
/* Typed getters: return 0 and set *out (def when absent); return 2 after printing a message when
 * the value is not a number in [lo, hi]. */
int vs_args_int(const vs_args *a, const char *name, int64_t def, int64_t lo, int64_t hi, int64_t *out);
int vs_args_float(const vs_args *a, const char *name, double def, double lo, double hi, double *out);
/* Print "versus: <msg>" on stderr; returns 2 (usage) for use as `return vs_usage_error(...)`. */
int vs_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print "versus: <msg>" on stderr; returns 1 (bad data or failed run). */
int vs_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A verb of the program. */
typedef struct vs_verb {
    const char *name;
    const char *summary;           /* one line for `versus help` */
    const char *usage;             /* synopsis and description for `versus help VERB` */
    const vs_cli_opt *opts;        /* flags, for the help text and the parser */
    int (*run)(int argc, char **argv); /* argv[0] is the first word after the verb */
} vs_verb;

extern const vs_verb *const vs_verbs[];  /* NULL-terminated, in help order */
const vs_verb *vs_find_verb(const char *name);

/* Verbs. */
extern const vs_verb vs_verb_help;
extern const vs_verb vs_verb_demo;

#endif
