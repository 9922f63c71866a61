/* task_registry.c - the training tasks by name, and the task a model asks for.  A new task is one
 * file defining a `const vs_task` and one line here. */
#include "nn/train_internal.h"
#include "versus/composite.h"

#include <stdio.h>
#include <string.h>


/* the tasks, one file each (task_*.c) */
extern const vs_task vs_task_classifier, vs_task_siamese, vs_task_vae, vs_task_gan;
extern const vs_task vs_task_svae, vs_task_m2;
extern const vs_task vs_task_ganmex;

const char *const vs_task_one_model[] = {"model", NULL};
const char *const vs_task_one_loss[] = {"loss", NULL};

static const vs_task *const tasks[] = {
    &vs_task_classifier,
    &vs_task_siamese,
    &vs_task_vae,
    &vs_task_gan,
    &vs_task_svae,
    &vs_task_m2,
    &vs_task_ganmex,
};
#define N_TASKS ((int)(sizeof tasks / sizeof tasks[0]))

const vs_task *vs_task_at(int i) { return i >= 0 && i < N_TASKS ? tasks[i] : NULL; }

const vs_task *vs_task_find(const char *name)
{
    for (int i = 0; i < N_TASKS; i++)
        if (strcmp(tasks[i]->name, name) == 0) return tasks[i];
    return NULL;
}

const vs_task *vs_task_for_model(const vs_module *m, vs_error *err)
{
    const char *name = m->kind == VS_MODULE_COMPOSITE ? vs_composite_task(m) : NULL;
    if (!name) return m->kind == VS_MODULE_SIAMESE ? &vs_task_siamese : &vs_task_classifier;
    const vs_task *t = vs_task_find(name);
    if (!t) {
        char names[256];
        size_t o = 0;
        for (int i = 0; i < N_TASKS && o < sizeof names; i++) o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "", tasks[i]->name);
        vs_error_set(err, VS_ERR_ARG, "the model asks for task \"%s\"; the tasks are %s", name, names);
    }
    return t;
}
