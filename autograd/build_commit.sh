#!/bin/sh
# build_commit.sh SRCDIR - print the commit versus is built from, for build_commit.h (Makefile.am):
# SRCDIR/.build-commit when the tree came from a release tarball (`make dist` writes it there);
# otherwise, when SRCDIR is the top of a git work tree, `git describe --always --dirty` (a short hash,
# or the nearest tag and the commits since; "-dirty" when the tree has changes not committed);
# otherwise "unknown".  Prints one line of [A-Za-z0-9._+-] (anything else becomes '-').
srcdir=${1:-.}
commit=
if [ -f "$srcdir/.build-commit" ]; then
    commit=$(sed -n 1p "$srcdir/.build-commit")
elif top=$(git -C "$srcdir" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$top" && pwd -P)" = "$(cd "$srcdir" && pwd -P)" ]; then
    commit=$(git -C "$srcdir" describe --always --dirty 2>/dev/null)
fi
[ -n "$commit" ] || commit=unknown
printf '%s\n' "$commit" | tr -c 'A-Za-z0-9._+\n-' '-'
