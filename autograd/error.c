/* error.c - error values and the per-thread last-op-error slot. */
#include "versus/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Thread_local vs_error last_error;

static void vs_error_vset(vs_error *err, vs_status code, const char *fmt, va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

vs_status vs_error_set(vs_error *err, vs_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vs_error_vset(err, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

void vs_error_clear(vs_error *err)
{
    if (err) {
        err->code = VS_OK;
        err->msg[0] = '\0';
    }
}

const vs_error *vs_last_error(void) { return &last_error; }

vs_status vs_set_last_error(vs_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vs_error_vset(&last_error, code, fmt, ap);
    va_end(ap);
    return code;
}

void vs_clear_last_error(void) { vs_error_clear(&last_error); }

const char *vs_status_name(vs_status code)
{
    switch (code) {
    case VS_OK: return "ok";
    case VS_ERR_ARG: return "bad argument";
    case VS_ERR_SHAPE: return "shape error";
    case VS_ERR_IO: return "i/o error";
    case VS_ERR_FORMAT: return "format error";
    case VS_ERR_NOMEM: return "out of memory";
    case VS_ERR_NUMERIC: return "numeric error";
    case VS_ERR_STATE: return "invalid state";
    }
    return "unknown error";
}

int vs_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int vs_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}
