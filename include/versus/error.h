/* versus/error.h - errors are values that carry a message.
 *
 * Functions that read user input (files, flags, JSON) take a `vs_error *err` (may be NULL) and
 * return a status; on failure err->msg names the file, the field and what was expected.
 * Tensor ops cannot take an extra argument without making expressions unreadable, so an op that
 * fails (shape mismatch, bad axis) returns NULL and records its message in a per-thread slot read
 * with vs_last_error(); every op given a NULL input returns NULL, so a chain fails once, cleanly.
 * Library code never calls exit() and never asserts on user input. */
#ifndef VERSUS_ERROR_H
#define VERSUS_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_status {
    VS_OK = 0,
    VS_ERR_ARG,     /* bad argument or flag value */
    VS_ERR_SHAPE,   /* tensor shapes do not fit the op */
    VS_ERR_IO,      /* open/read/write failed */
    VS_ERR_FORMAT,  /* malformed file contents */
    VS_ERR_NOMEM,   /* allocation failed or size overflows */
    VS_ERR_NUMERIC, /* NaN/Inf where a finite number is required */
    VS_ERR_STATE    /* call not valid in the current state */
} vs_status;

#define VS_ERROR_MSG_MAX 512

typedef struct vs_error {
    vs_status code;
    char msg[VS_ERROR_MSG_MAX];
} vs_error;

/* Set err (if not NULL) to code and a printf-formatted message; returns code. */
vs_status vs_error_set(vs_error *err, vs_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Clear err to VS_OK and an empty message. */
void vs_error_clear(vs_error *err);
/* A loader's failure is the file's, never a usage error: VS_ERR_ARG becomes VS_ERR_FORMAT (exit 1,
 * not 2, in the CLI); returns err's code. */
static inline vs_status vs_error_as_file(vs_error *err)
{
    if (err->code == VS_ERR_ARG) err->code = VS_ERR_FORMAT;
    return err->code;
}

/* The last error recorded by a tensor op on this thread (code VS_OK when none). */
const vs_error *vs_last_error(void);
/* Record an op error on this thread; returns code (ops use it, then return NULL). */
vs_status vs_set_last_error(vs_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void vs_clear_last_error(void);

/* Human-readable name of a status ("shape error", ...). */
const char *vs_status_name(vs_status code);

/* Overflow-checked size arithmetic: return 0 on overflow, else 1 and *out set. */
int vs_size_mul(size_t a, size_t b, size_t *out);
int vs_size_add(size_t a, size_t b, size_t *out);

/* The memory budget: every allocation whose size comes from input (file headers and lengths, row
 * counts, label counts, layer sizes) is checked against it first.  Default: half the physical memory.
 * Set it before starting work on other threads; 0 restores the default (CLI: --max-memory). */
size_t vs_mem_budget(void);
void vs_set_mem_budget(size_t bytes);
/* VS_OK when count x size bytes fit the budget, else VS_ERR_NOMEM with
 * "<what>: needs 4.0 GiB, more than the memory budget of 2.0 GiB (--max-memory)". */
vs_status vs_mem_check(size_t count, size_t size, const char *what, vs_error *err);
/* "12 bytes", "1.5 MiB", ... into buf[n]; returns buf. */
const char *vs_mem_size_str(size_t bytes, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
