/* version.c - the library version (from configure) and the commit it was built from (from make:
 * build_commit.h, written by autograd/build_commit.sh). */
#include "build_commit.h"
#include "config.h"
#include "versus/versus.h"

const char *vs_version(void) { return PACKAGE_VERSION; }

const char *vs_build_commit(void) { return VS_BUILD_COMMIT; }
