#!/bin/sh
# exports.sh - the shared library exports only vs_ symbols: nm -D on .libs/libversus.so lists no
# defined dynamic symbol outside vs_, and the public API is still there.
set -u
lib=.libs/libversus.so
if [ ! -f "$lib" ]; then
    echo "SKIP: $lib not built (a static-only build has no dynamic symbol table)"
    exit 77
fi
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: nm not found"
    exit 77
fi
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }') || { echo "FAIL: nm -D $lib"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v '^vs_' | grep -v '^$')
if [ -n "$bad" ]; then
    echo "FAIL: $lib exports symbols outside vs_:"
    printf '%s\n' "$bad" | head -50
    exit 1
fi
# The fence must not hide the API: a few public functions of different modules, and many in all.
fails=0
for s in vs_version vs_tensor_new vs_grad vs_backward vs_conv2d vs_last_error vs_set_threads vs_rng_seed; do
    printf '%s\n' "$syms" | grep -qx "$s" || { echo "FAIL: $s is not exported"; fails=1; }
done
n=$(printf '%s\n' "$syms" | grep -c '^vs_')
if [ "$n" -lt 300 ]; then
    echo "FAIL: only $n vs_ symbols exported"
    fails=1
fi
[ "$fails" -eq 0 ] && echo "PASS: $n symbols exported, all vs_"
exit "$fails"
