/* docs/example.c - the smallest program against an installed libversus (CI builds it with pkg-config). */
#include <versus/versus.h>
#include <stdio.h>
int main(void)
{
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 3), (float[]){1, 2, 3});
    vs_set_requires_grad(x, true);
    vs_scope_begin();
    vs_tensor *y = vs_sum(vs_pow_scalar(x, 3), VS_ALL_AXES, false);
    vs_tensor *g;
    vs_grad(1, &y, NULL, 1, &x, &g, true);
    printf("versus %s: dy/dx = %g %g %g\n", vs_version(), g->data[0], g->data[1], g->data[2]);
    vs_scope_end();
    vs_tensor_free(x);
    return 0;
}
