/* lr_schedule.c - learning-rate schedules in PyTorch's closed forms (StepLR, CosineAnnealingLR). */
#include "versus/optim.h"

#include <math.h>

float vs_lr_at(const vs_lr_schedule *s, int64_t epoch)
{
    switch (s->kind) {
    case VS_LR_STEP:
        /* base * gamma^floor(epoch / step_size) */
        return (float)((double)s->base_lr * pow((double)s->gamma, (double)(epoch / (s->step_size > 0 ? s->step_size : 1))));
    case VS_LR_COSINE: {
        /* eta_min + (base - eta_min) (1 + cos(pi epoch / t_max)) / 2 */
        double t = s->t_max > 0 ? (double)epoch / (double)s->t_max : 0.0;
        return (float)((double)s->eta_min + ((double)s->base_lr - (double)s->eta_min) * (1.0 + cos(3.14159265358979323846 * t)) / 2.0);
    }
    default:
        return s->base_lr;
    }
}
