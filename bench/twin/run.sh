#!/bin/sh
# bench/twin/run.sh - train a bench's classifier with versus and its PyTorch twin (twin.py) on the same
# data, split, epochs, batch and optimiser, in the same run, and keep the model as an artefact with
# its provenance.
#
#   bench/twin/run.sh NAME ARCH TRAIN_SPEC TEST_SPEC EPOCHS [versus train flags...]
#
# Writes bench/models/NAME/ (or $TWIN_OUT/NAME): model.json, model.safetensors, metrics.json (versus),
# twin.json (PyTorch), provenance.json (command, build commit, sha256 of the exported data, both test
# accuracies and their gap in points).  Rerun after a kill: versus resumes from its checkpoint, which
# is removed once the run ends.  VERSUS (default ./versus) and PYTHON (default /usr/bin/python3) name
# the programs; the data come from $VERSUS_DATA as for every bench.
set -eu
[ $# -ge 5 ] || { echo "usage: bench/twin/run.sh NAME ARCH TRAIN_SPEC TEST_SPEC EPOCHS [versus train flags...]" >&2; exit 2; }
name=$1 arch=$2 train=$3 test=$4 epochs=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
V=${VERSUS:-./versus}
PY=${PYTHON:-/usr/bin/python3}
out=${TWIN_OUT:-bench/models}/$name
work=${TMPDIR:-/tmp}/versus-twin-$name
mkdir -p "$out" "$work"

"$V" data export "$train" --out "$work/train" >/dev/null
"$V" data export "$test" --out "$work/test" >/dev/null

resume=
[ -f "$out/checkpoint.safetensors" ] && resume=--resume
"$V" train --arch "$arch" --data "$train" --test-data "$test" --epochs "$epochs" --batch-size 64 --threads 1 --out "$out" $resume "$@" \
    >"$work/versus.txt"
"$PY" "$here/twin.py" --model "$out" --train "$work/train" --test "$work/test" --out "$out/twin.json" >/dev/null
rm -f "$out/checkpoint.safetensors"

commit=$(git -C "$here" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
sum() { sha256sum "$1" | cut -d' ' -f1; }
"$PY" - "$out" "$name" "$commit" "$(sum "$work/train/X.npy")" "$(sum "$work/train/y.npy")" "$(sum "$work/test/X.npy")" \
    "$(sum "$work/test/y.npy")" "versus train --arch $arch --data $train --test-data $test --epochs $epochs --batch-size 64 --threads 1 $*" <<'EOF'
import json, sys
out, name, commit, trx, try_, tex, tey, command = sys.argv[1:]
m = json.load(open(f"{out}/metrics.json"))
t = json.load(open(f"{out}/twin.json"))
p = {"format": "versus-provenance/1", "name": name, "command": command, "commit": commit,
     "data": {"train": m["data"], "test": m["test_data"], "sha256": {"train_X": trx, "train_y": try_, "test_X": tex, "test_y": tey}},
     "versus": {"test_accuracy": m["test_accuracy"], "train_seconds": m["train_seconds"]},
     "pytorch": {"test_accuracy": t["test_accuracy"], "train_seconds": t["train_seconds"], "torch": t["torch"]},
     "gap_points": round(100 * (m["test_accuracy"] - t["test_accuracy"]), 2)}
json.dump(p, open(f"{out}/provenance.json", "w"), indent=1)
print(f"{name}: versus {m['test_accuracy']:.4f} ({m['train_seconds']:.0f} s), PyTorch {t['test_accuracy']:.4f} "
      f"({t['train_seconds']:.0f} s), gap {p['gap_points']:+.2f} points")
EOF
rm -rf "$work"
