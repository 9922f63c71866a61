/* args.c - flag parsing for the verbs: --name value, --name=value, switches, positionals. */
#include "cli/cli.h"
#include "versus/error.h"
#include "versus/threads.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vs_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fputs("versus: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (verb)
        fprintf(stderr, "\nversus: see 'versus help %s'\n", verb);
    else
        fputs("\nversus: see 'versus help'\n", stderr);
    return 2;
}

int vs_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("versus: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* "1073741824", "512M", "1.5G", "2GiB", "64k" -> bytes (binary units); 0 when malformed or zero. */
static size_t parse_size(const char *v)
{
    char *end;
    errno = 0;
    double x = v && *v ? strtod(v, &end) : -1;
    if (errno || x <= 0 || !isfinite(x)) return 0;
    static const char units[] = "KMGTP";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (*end && !u) return 0;
    if (u) {
        for (int k = 0; k <= u - units; k++) x *= 1024;
        end++;
        if (*end == 'i' || *end == 'I') end++;
        if (*end == 'B' || *end == 'b') end++;
    }
    if (*end || x >= 18e18) return 0;
    return (size_t)x;
}

static const vs_cli_opt *find_opt(const vs_cli_opt *opts, const char *name, size_t len)
{
    for (const vs_cli_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

int vs_args_parse(const char *verb, const vs_cli_opt *opts, int argc, char **argv, vs_args *a)
{
    memset(a, 0, sizeof *a);
    a->verb = verb;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (strncmp(w, "--", 2) != 0 || w[2] == '\0') {
            if (a->n_pos == VS_ARGS_MAX) return vs_usage_error(verb, "too many arguments");
            a->pos[a->n_pos++] = w;
            continue;
        }
        const char *name = w + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const vs_cli_opt *o = find_opt(opts, name, len);
        if (!o && len == 7 && strncmp(name, "threads", 7) == 0) {
            /* --threads T is every verb's: the kernels' thread pool (results do not depend on it) */
            const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            char *end;
            long t = v ? strtol(v, &end, 10) : -1;
            if (!v || *v == '\0' || *end != '\0' || t < 1 || t > 1024)
                return vs_usage_error(verb, "option '--threads' expects an integer in [1, 1024], got '%s'", v ? v : "");
            vs_set_threads((int)t);
            continue;
        }
        if (!o && len == 10 && strncmp(name, "max-memory", 10) == 0) {
            /* --max-memory SIZE is every verb's: the budget input-sized allocations are checked against */
            const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            size_t bytes = parse_size(v);
            if (bytes < 4096)
                return vs_usage_error(verb, "option '--max-memory' expects a size of at least 4K such as 512M or 4G, got '%s'",
                                      v ? v : "");
            vs_set_mem_budget(bytes);
            continue;
        }
        if (!o) return vs_usage_error(verb, "unknown option '--%.*s' for '%s'", (int)len, name, verb);
        const char *value = NULL;
        if (o->has_arg) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return vs_usage_error(verb, "option '--%s' needs a value", o->name);
        } else if (eq) {
            return vs_usage_error(verb, "option '--%s' takes no value", o->name);
        }
        if (vs_args_has(a, o->name)) return vs_usage_error(verb, "option '--%s' given twice", o->name);
        if (a->n == VS_ARGS_MAX) return vs_usage_error(verb, "too many options");
        a->name[a->n] = o->name;
        a->value[a->n] = value;
        a->n++;
    }
    return 0;
}

const char *vs_args_get(const vs_args *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) return a->value[i];
    return NULL;
}

bool vs_args_has(const vs_args *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) return true;
    return false;
}

int vs_args_int(const vs_args *a, const char *name, int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = vs_args_get(a, name);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi)
        return vs_usage_error(a->verb, "option '--%s' expects an integer in [%lld, %lld], got '%s'", name,
                              (long long)lo, (long long)hi, v);
    *out = (int64_t)x;
    return 0;
}

int vs_args_float(const vs_args *a, const char *name, double def, double lo, double hi, double *out)
{
    const char *v = vs_args_get(a, name);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !isfinite(x) || x < lo || x > hi)
        return vs_usage_error(a->verb, "option '--%s' expects a number in [%g, %g], got '%s'", name, lo, hi, v);
    *out = x;
    return 0;
}

void vs_cli_put_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.9g", v);
}

int vs_cli_output_flags(const vs_args *a, int64_t *target, const char **targets, const char **mask, const char **score)
{
    const char *v = vs_args_get(a, "target");
    *target = -1;
    *targets = NULL;
    *mask = vs_args_get(a, "target-mask");
    *score = vs_args_get(a, "score");
    if (!v) return 0;
    size_t n = strlen(v);
    if (n > 4 && strcmp(v + n - 4, ".npy") == 0) {
        *targets = v;
        return 0;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < 0)
        return vs_usage_error(a->verb, "--target expects a class or output index (an integer >= 0) or T.npy with one per row, got '%s'", v);
    *target = (int64_t)x;
    return 0;
}
