/* placeholder during bring-up */
#include "vs_check.h"
static Suite *s_(void) { return suite_create("st"); }
VS_TEST_MAIN(s_)
