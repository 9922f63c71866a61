/* explain/games_internal.h - what the game estimators share (not installed): a memo of coalition
 * values, so that every distinct coalition costs one evaluation of the game however often an
 * estimator draws it (Kernel SHAP's merged duplicates; the permutation estimator's repeated small
 * prefixes), and g->evaluations counts distinct coalitions. */
#ifndef VERSUS_EXPLAIN_GAMES_INTERNAL_H
#define VERSUS_EXPLAIN_GAMES_INTERNAL_H

#include "versus/games.h"

typedef struct vs_game_memo {
    vs_game *g;
    int64_t n;              /* players */
    int64_t count, cap;     /* coalitions held, room */
    uint8_t *z;             /* [cap, n] */
    double *v;              /* [cap] values (valid below `done`) */
    int64_t done;           /* coalitions [0, done) are evaluated */
    int64_t *table, tcap;   /* open addressing: index into z or -1 */
} vs_game_memo;

vs_status vs_game_memo_init(vs_game_memo *m, vs_game *g, int64_t cap, vs_error *err);
void vs_game_memo_free(vs_game_memo *m);
/* Index of coalition z (n bytes), adding it (not yet evaluated) when new; -1 when full or out of memory. */
int64_t vs_game_memo_add(vs_game_memo *m, const uint8_t *z, bool *added);
/* Evaluate every coalition added since the last call (in batches of the game's size). */
vs_status vs_game_memo_eval(vs_game_memo *m, vs_error *err);

#endif
