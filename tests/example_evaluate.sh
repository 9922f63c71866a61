#!/bin/sh
# example_evaluate.sh - docs/example_evaluate.c (built by make check against the just-built library as
# tests/example_evaluate) reproduces a `versus evaluate` run through the public headers: the same
# model, inputs and attributions give every metric's mean bit for bit as the verb's summary.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
EX=$(pwd)/tests/example_evaluate
W=example_evaluate.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

check "train a classifier" 0 $V train --arch mlp --data synthetic-tabular --n 120 --epochs 2 --seed 2 --out clf
check "export inputs" 0 $V data export synthetic-tabular --n 24 --seed 3 --out data
check "attribute" 0 $V attribute --model clf --input data/X.npy --method integrated_gradients --steps 20 --out a.npy
check "the verb" 0 $V evaluate --model clf --input data/X.npy --attributions a.npy --per-step 4 --replace zero --method saliency \
    --out verb.json
check "the C example" 0 "$EX" clf data/X.npy a.npy saliency
cp out.txt example.txt
cp err.txt example.md
# "  \"aopc_L\": {\"mean\": 0.25, ..." -> "aopc_L 0.25"
sed -n 's/^  "\([A-Za-z_]*\)": {"mean": \([^,]*\),.*/\1 \2/p' verb.json > verb.txt
exists "the verb's means" verb.txt
grep_out "robustness computed" "^max_sensitivity [0-9]" example.txt
same "the example's means are the verb's" verb.txt example.txt
grep_out "the report's table" "| metric |" example.md
check "the example's usage" 2 "$EX"
check "a missing model" 1 "$EX" nowhere data/X.npy a.npy

cd .. && rm -rf "$W"
echo "example_evaluate: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
