/* train_samples.c - sample grids of generative tasks: the task's sampler drawn from a generator
 * seeded the same way every time (the grids of one run show the same noise), written as
 * <sample_dir>/step-<global step>.png. */
#include "nn/train_internal.h"
#include "versus/picture.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SAMPLE_STREAM 0x73616d706c65ull /* "sample": seed ^ this seeds the sampler */
#define SAMPLE_ZOOM 2
#define SAMPLE_PAD 2

vs_status vs_train_write_samples(vs_trainer *t, vs_error *err)
{
    const char *dir = t->o->sample_dir;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return vs_error_set(err, VS_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
    vs_rng rng;
    vs_rng_seed(&rng, t->o->seed ^ SAMPLE_STREAM);
    bool training = t->m->training, grad = vs_set_grad_enabled(false);
    vs_module_train(t->m, false);
    vs_scope_begin();
    vs_tensor *x = NULL;
    int rows = 0, cols = 0;
    vs_status st = t->task->sample(&t->run, &rng, &x, &rows, &cols, err);
    vs_grid *g = NULL;
    if (st == VS_OK && (x->ndim != 4 || (x->shape[1] != 1 && x->shape[1] != 3) || x->shape[0] != (int64_t)rows * cols))
        st = vs_error_set(err, VS_ERR_SHAPE, "samples: the %s task drew a batch that is not %d x %d images", t->task->name, rows, cols);
    if (st == VS_OK) {
        int c = (int)x->shape[1], h = (int)x->shape[2], w = (int)x->shape[3];
        g = vs_grid_new(rows, cols, w, h, SAMPLE_ZOOM, SAMPLE_PAD, 0);
        if (!g) st = vs_error_set(err, VS_ERR_NOMEM, "samples: out of memory");
        for (int i = 0; st == VS_OK && i < rows * cols; i++) {
            vs_image *im = vs_image_from_float(x->data + (int64_t)i * c * h * w, c, h, w);
            st = im ? vs_grid_put(g, i / cols, i % cols, im, err) : vs_error_set(err, VS_ERR_NOMEM, "samples: out of memory");
            vs_image_free(im);
        }
    }
    if (st == VS_OK) {
        char path[4096];
        snprintf(path, sizeof path, "%s/step-%08lld.png", dir, (long long)t->global_step);
        st = vs_png_write(vs_grid_image(g), path, err);
    }
    vs_grid_free(g);
    vs_scope_end();
    vs_module_train(t->m, training);
    vs_set_grad_enabled(grad);
    return st;
}
