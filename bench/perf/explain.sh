#!/bin/sh
# bench/perf/explain.sh - time per attribution on the GANMEX MNIST classifier: versus against PyTorch doing
# the same computation (bench/perf/torch_explain.py) in the same run, at 1 and 2 threads.
#   usage: bench/perf/explain.sh [MODEL_DIR]   (run from the build directory; without MODEL_DIR one is
#          trained with `versus train --arch ganmex-mnist`, 1 epoch on the 10k training images)
# Needs $VERSUS_DATA (the shared MNIST) and /usr/bin/python3 with torch for the comparison.
# Prints a Markdown table: median seconds per image over ROWS test images, and versus/PyTorch speed-up.
set -eu
V=${VERSUS:-./versus}
ROWS=${ROWS:-5}
W=${BENCH_DIR:-bench/work}
SRC=$(dirname "$0")
PY=/usr/bin/python3
mkdir -p "$W"
MODEL=${1:-$W/ganmex-mnist}
if [ ! -f "$MODEL/model.safetensors" ]; then
    echo "training $MODEL (1 epoch)" >&2
    $V train --arch ganmex-mnist --data mnist-train --test-data mnist --epochs 1 --seed 1 --out "$MODEL" >&2
fi
$V data export mnist --out "$W/mnist" >/dev/null
if ! $PY -c "import torch, numpy" 2>/dev/null; then
    echo "bench/perf/explain.sh: /usr/bin/python3 has no torch (apt-get install python3-torch); versus only" >&2
    HAVE_TORCH=0
else
    HAVE_TORCH=1
fi
$PY -c "import numpy as np; np.save('$W/x.npy', np.load('$W/mnist/X.npy')[:$ROWS])" 2>/dev/null || cp "$W/mnist/X.npy" "$W/x.npy"
: >"$W/explain.jsonl"
for T in 1 2; do
    for M in integrated_gradients deeplift occlusion kernel_shap; do
        extra=""
        [ "$M" = integrated_gradients ] && extra="--steps 200"
        [ "$M" = kernel_shap ] && extra="--samples 2000"
        VERSUS_THREADS=$T $V attribute --model "$MODEL" --input "$W/x.npy" --method $M $extra --report "$W/r.json" --out "$W/a.npy" 2>/dev/null
        $PY -c "
import json, statistics
r = json.load(open('$W/r.json'))
print(json.dumps({'impl': 'versus', 'method': '$M', 'threads': $T, 'seconds': statistics.median(x['seconds'] for x in r['rows'])}))" >>"$W/explain.jsonl"
    done
    [ "$HAVE_TORCH" = 1 ] && $PY "$SRC/torch_explain.py" "$MODEL" "$W/x.npy" "$ROWS" "$T" >>"$W/explain.jsonl"
done
$PY - "$W/explain.jsonl" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = {(r['impl'], r['method'], r['threads']): r['seconds'] for r in rows}
print("| method | threads | versus s/image | PyTorch s/image | speed-up (PyTorch / versus) |")
print("|---|---:|---:|---:|---:|")
for th in (1, 2):
    for m in ("integrated_gradients", "deeplift", "occlusion", "kernel_shap"):
        v, p = t.get(("versus", m, th)), t.get(("torch", m, th))
        print(f"| {m} | {th} | {v:.4f} | " + (f"{p:.4f} | {p / v:.2f}x |" if p else "n/a | n/a |"))
PYEOF
