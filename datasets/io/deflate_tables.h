/* datasets/deflate_tables.h - internal: the length and distance tables of RFC 1951 section 3.2.5,
 * shared by the inflater (datasets/inflate.c) and the PNG writer's deflate (datasets/png.c).
 * Length symbol 257 + i codes lengths len_base[i] .. len_base[i] + 2^len_extra[i] - 1; distance
 * symbol i codes distances dist_base[i] .. dist_base[i] + 2^dist_extra[i] - 1. */
#ifndef VERSUS_DATASETS_DEFLATE_TABLES_H
#define VERSUS_DATASETS_DEFLATE_TABLES_H

#include <stdint.h>

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                       33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

#endif
