#!/bin/sh
# check_data.sh - accuracy targets on the real data sets (`make check-data`; takes minutes, so it is
# not part of `make check`).  Each target trains with `versus train`, reads the test accuracy from
# the last line of its output and compares it with the target.  A target whose data is absent is
# skipped with the reason.  Usage: check_data.sh [path/to/versus]
set -u
V=${1:-./versus}
T=${TMPDIR:-/tmp}/versus-check-data.$$
mkdir -p "$T" || exit 1
fails=0
MNIST=${VERSUS_DATA:-}/mnist
FASHION=/usr/share/datasets/fashion-mnist

target() { # description, minimum test accuracy, versus train flags...
    desc=$1; min=$2; shift 2
    start=$(date +%s)
    "$V" train "$@" --out "$T/model" >"$T/out" 2>"$T/err"
    rc=$?
    secs=$(($(date +%s) - start))
    last=$(tail -n 1 "$T/out")
    acc=$(echo "$last" | awk '{print $NF}')
    if [ "$rc" -ne 0 ]; then
        fails=$((fails + 1)); echo "FAIL: $desc: exit status $rc"; cat "$T/err"
    elif awk -v a="$acc" -v m="$min" 'BEGIN { exit !(a + 0 >= m + 0) }'; then
        echo "PASS: $desc: $last (target $min, $secs s)"
    else
        fails=$((fails + 1)); echo "FAIL: $desc: $last (target $min, $secs s)"
    fi
    rm -rf "$T/model"
}

if [ -d "$MNIST" ]; then
    target "GANMEX MNIST classifier, 2 epochs on the 10k train images, 10k test images" 0.97 \
        --arch ganmex-mnist --data mnist-train --test-data mnist --epochs 2 --batch-size 16
else
    echo "SKIP: GANMEX MNIST: $MNIST not found (set VERSUS_DATA to the shared datasets folder)"
fi
if [ -d "$FASHION" ]; then
    target "CEM-MAF Fashion-MNIST shoes classifier (sandal, sneaker, ankle boot; 70/30 split of the 10k test images)" 0.95 \
        --arch cem-fashion --classes 5,7,9 --data fashion-mnist --epochs 5 --batch-size 16
else
    echo "SKIP: Fashion-MNIST shoes: $FASHION not found (Debian package dataset-fashion-mnist)"
fi
rm -rf "$T"
echo "check-data: $fails failed"
[ "$fails" -eq 0 ]
