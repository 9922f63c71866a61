/* version.c - the library version string (from configure). */
#include "config.h"
#include "versus/versus.h"

const char *vs_version(void) { return PACKAGE_VERSION; }
