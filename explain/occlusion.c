/* occlusion.c - occlusion (Zeiler & Fergus): slide a window over the example, replace it with the
 * baseline, and credit each covered element with the score drop, averaged over the windows that
 * cover it (Captum's convention).  Occlusion-1 is the default 1-element window. */
#include "explain/internal.h"

#include <stdlib.h>
#include <string.h>

vs_status vs_attr_occlusion(vs_attr_job *j, float *attr)
{
    int k = j->x->ndim - 1; /* dims of one example */
    if (k > 3) return vs_error_set(j->err, VS_ERR_SHAPE, "occlusion: examples of at most 3 dims");
    int64_t d[3] = {1, 1, 1}, w[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pos[3];
    for (int i = 0; i < k; i++) {
        d[3 - k + i] = j->x->shape[1 + i];
        w[3 - k + i] = j->o->window[i] > 0 ? j->o->window[i] : 1;
        s[3 - k + i] = j->o->stride[i] > 0 ? j->o->stride[i] : 1;
    }
    int64_t nwin = 1;
    for (int i = 0; i < 3; i++) {
        if (w[i] > d[i]) return vs_error_set(j->err, VS_ERR_ARG, "occlusion: window %lld larger than dimension %lld", (long long)w[i], (long long)d[i]);
        pos[i] = (d[i] - w[i]) / s[i] + 1;
        nwin *= pos[i];
    }
    int64_t chunk = j->o->batch > 0 ? j->o->batch : 64;
    float *rows = malloc((size_t)(chunk * j->dim) * sizeof *rows);
    double *scores = malloc((size_t)chunk * sizeof *scores), *acc = calloc((size_t)j->dim, sizeof *acc), base;
    int32_t *count = calloc((size_t)j->dim, sizeof *count);
    vs_status st = rows && scores && acc && count ? VS_OK : vs_error_set(j->err, VS_ERR_NOMEM, "occlusion: out of memory");
    if (st == VS_OK) st = vs_job_scores(j, j->x->data, 1, &base);
    for (int64_t w0 = 0; w0 < nwin && st == VS_OK; w0 += chunk) {
        int64_t n = nwin - w0 < chunk ? nwin - w0 : chunk;
        for (int64_t r = 0; r < n; r++) {
            int64_t q = w0 + r, o2 = (q % pos[2]) * s[2], o1 = (q / pos[2] % pos[1]) * s[1], o0 = (q / pos[2] / pos[1]) * s[0];
            float *row = rows + r * j->dim;
            memcpy(row, j->x->data, (size_t)j->dim * sizeof(float));
            for (int64_t a = o0; a < o0 + w[0]; a++)
                for (int64_t b = o1; b < o1 + w[1]; b++)
                    for (int64_t c = o2; c < o2 + w[2]; c++) {
                        int64_t e = (a * d[1] + b) * d[2] + c;
                        row[e] = j->baseline->data[e];
                    }
        }
        st = vs_job_scores(j, rows, n, scores);
        for (int64_t r = 0; r < n && st == VS_OK; r++) {
            int64_t q = w0 + r, o2 = (q % pos[2]) * s[2], o1 = (q / pos[2] % pos[1]) * s[1], o0 = (q / pos[2] / pos[1]) * s[0];
            for (int64_t a = o0; a < o0 + w[0]; a++)
                for (int64_t b = o1; b < o1 + w[1]; b++)
                    for (int64_t c = o2; c < o2 + w[2]; c++) {
                        int64_t e = (a * d[1] + b) * d[2] + c;
                        acc[e] += base - scores[r];
                        count[e]++;
                    }
        }
    }
    if (st == VS_OK)
        for (int64_t e = 0; e < j->dim; e++) attr[e] = count[e] ? (float)(acc[e] / count[e]) : 0.0f;
    free(rows);
    free(scores);
    free(acc);
    free(count);
    return st;
}
