/* versus/rng.h - explicit, seeded random generators (no global state).
 *
 * xoshiro256** seeded through splitmix64.  A generator is a plain value owned by its user:
 * copy it to fork a stream, or derive independent streams with vs_rng_split().  Every draw is
 * made on the calling thread, so results never depend on the thread count. */
#ifndef VERSUS_RNG_H
#define VERSUS_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_rng {
    uint64_t s[4];
} vs_rng;

void vs_rng_seed(vs_rng *r, uint64_t seed);          /* state from a 64-bit seed */
vs_rng vs_rng_split(vs_rng *r);                      /* new independent stream; advances r */
uint64_t vs_rng_u64(vs_rng *r);                      /* uniform 64 bits */
uint64_t vs_rng_below(vs_rng *r, uint64_t n);        /* uniform integer in [0, n), unbiased; n > 0 */
double vs_rng_uniform(vs_rng *r);                    /* uniform double in [0, 1), 53 bits */
float vs_rng_uniformf(vs_rng *r);                    /* uniform float in [0, 1), 24 bits */
double vs_rng_normal(vs_rng *r);                     /* standard normal (Box-Muller, no cached pair) */
void vs_rng_shuffle(vs_rng *r, size_t *idx, size_t n); /* Fisher-Yates permutation of idx[0..n) */

#ifdef __cplusplus
}
#endif
#endif
