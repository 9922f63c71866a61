/* explain_call.h - tests' shorthand for one vs_explain call of a registered method, named with its
 * settings ("steps=7 ig-rule=middle", as vs_method_opts_parse reads them). */
#ifndef VERSUS_TESTS_EXPLAIN_CALL_H
#define VERSUS_TESTS_EXPLAIN_CALL_H

#include "versus/method.h"

/* A request for target and contrast (-1: the predicted class / none), the rest at its defaults. */
static inline vs_explain_request explain_req(int64_t target, int64_t contrast)
{
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = target;
    r.contrast = contrast;
    return r;
}

/* vs_explain of the method called `method` with settings (NULL: its defaults) under r. */
static inline vs_status explain_with(const vs_model_fn *m, vs_tensor *x, const char *method, const char *settings,
                                     const vs_explain_request *r, vs_tensor **out, vs_attr_report *rep, vs_error *err)
{
    const vs_method *meth = vs_method_find(method);
    vs_method_opts *o = vs_method_opts_parse(meth, settings, err);
    *out = NULL;
    vs_status st = o ? vs_explain(m, x, meth, o, r, out, rep, err) : err ? err->code : VS_ERR_ARG;
    vs_method_opts_free(o);
    return st;
}

#endif
