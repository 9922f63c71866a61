#!/bin/sh
# cli_hostile2.sh - the second hostile-input round (issue 39): forged journals, parts and checkpoints
# (tests/hostile/forge.py re-frames them with valid checksums, so versus must refuse them by their
# values), planted symbolic links at every output, composites that do not fit their shapes, training
# options that were silently dropped, non-finite inputs and models, stale temporaries after a kill.
# Every refusal exits 1 (2 for usage) with a "versus: " message naming the file or flag, within 60 s;
# the sanitizer build runs the same script.  Cases that forge files skip without python3.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
H=$(cd "$(dirname "$0")/hostile" && pwd)
# its own directory: out.txt and err.txt must not meet those of a suite running beside it (make -j)
rm -rf cli_hostile2.dir
mkdir -p cli_hostile2.dir/w
cd cli_hostile2.dir || exit 1
W=w
PY=
if command -v python3 >/dev/null 2>&1; then PY=python3; fi
forge() { $PY "$H/forge.py" "$@"; }

refused() { # exit status, pattern the message holds, description, command...
    want=$1 pat=$2 desc=$3
    shift 3
    timeout 60 "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -ne "$want" ]; then bad "$desc (exit $got, wanted $want)"; head -3 err.txt; return; fi
    if ! grep -q '^versus: .' err.txt; then bad "$desc: no 'versus: ' message"; head -3 err.txt; return; fi
    if grep -q -- "$pat" err.txt; then ok; else bad "$desc: the message does not name '$pat'"; head -3 err.txt; fi
}
victim() { printf 'precious\n' >"$W/victim"; ln -sf "$PWD/$W/victim" "$1"; }
intact() { # description, planted link
    if [ "$(cat "$W/victim")" = precious ] && [ -f "$2" ] && [ ! -L "$2" ]; then ok; else bad "$1: the write followed the planted link"; fi
}

check "train a small mlp" 0 $V train --arch mlp --data synthetic-tabular --n 200 --epochs 1 --out "$W/mlp"
check "export its inputs" 0 $V data export synthetic-tabular --n 6 --out "$W/x"
X="$W/x/X.npy"

# ---- undefined behaviour: sizes and counts from files ------------------------------------------------
for f in "$H"/composite/*.json; do
    rm -rf "$W/c" && mkdir "$W/c" && cp "$f" "$W/c/model.json"
    refused 1 "$W/c/model.json" "composite $(basename "$f")" $V predict --model "$W/c" --input "$X" --out "$W/y.npy"
done
cp "$H/composite/reshape_overflow.json" "$W/c/model.json"
refused 1 "overflows" "a reshape to (2^40)^3" $V predict --model "$W/c" --input "$X" --out "$W/y.npy"
cp "$H/composite/add_mismatch.json" "$W/c/model.json"
refused 1 "does not fit" "an add of mismatched inputs no output needs" $V predict --model "$W/c" --input "$X" --out "$W/y.npy"
cp "$H/composite/unused_mismatch.json" "$W/c/model.json"
refused 1 "does not fit" "a mismatched node beside the output" $V predict --model "$W/c" --input "$X" --out "$W/y.npy"
cp "$H/composite/outputs_empty.json" "$W/c/model.json"
refused 1 "outputs" "a composite without outputs" $V predict --model "$W/c" --input "$X" --out "$W/y.npy"

A="--model $W/mlp --input $X --method saliency"
check "a part of one shard" 0 $V attribute $A --shard 1/1 --out "$W/part"
if [ -n "$PY" ]; then
    # an attribute row's record ends with four doubles after two int64s: the evaluations are 40 bytes from its end
    forge journal "$W/part" "$W/evals" i64-from-end 40 4611686018427387904
    refused 1 "row 1 holds a negative" "forged evaluation counts that overflow" $V merge "$W/evals" --out "$W/m.npy"
    forge journal "$W/part" "$W/negative" i64-from-end 40 -5
    refused 1 "negative" "a forged negative count" $V merge "$W/negative" --out "$W/m.npy"
    forge journal "$W/part" "$W/items" header items=4000000000000000000
    refused 1 "memory budget\|overflow" "a journal claiming 4e18 items" $V merge "$W/items" --out "$W/m.npy"
    forge journal "$W/part" "$W/r.npy.journal" header items=1000000000
    refused 1 "r.npy.journal: the index of its 1000000000 items: needs" "a journal claiming 1e9 items under --max-memory 1G" \
        $V attribute $A --max-memory 1G --resume --out "$W/r.npy"
    # ---- merge runs only what a shard records, and writes only OUT ----
    mkdir -p "$W/elsewhere"
    forge journal "$W/part" "$W/report" header 'argv=["--model", "'"$W"'/mlp", "--input", "'"$X"'", "--method", "saliency", "--report", "'"$PWD/$W"'/elsewhere/evil.json", "--out", "x"]'
    check "a forged --report is written beside OUT" 0 $V merge "$W/report" --out "$W/m.npy"
    grep_out "merge says where the report went" "beside --out" err.txt
    if [ ! -e "$W/elsewhere/evil.json" ] && [ -s "$W/evil.json" ]; then ok; else bad "merge wrote outside OUT's directory"; fi
    forge journal "$W/part" "$W/verb" header verb='"train"' header 'argv=["--arch", "mlp", "--data", "synthetic-tabular", "--out", "x"]'
    refused 1 "writes no parts" "a forged verb" $V merge "$W/verb" --out "$W/m2"
    if [ ! -e "$W/m2" ] && [ ! -e "$W/m2.journal" ]; then ok; else bad "a refused merge left files"; fi
    forge journal "$W/part" "$W/opt" header 'argv=["--model", "'"$W"'/mlp", "--input", "'"$X"'", "--bogus", "1", "--out", "x"]'
    refused 1 "'--bogus'" "a forged option" $V merge "$W/opt" --out "$W/m.npy"
    forge journal "$W/part" "$W/stray" header 'argv=["--model", "'"$W"'/mlp", "stray", "--out", "x"]'
    refused 1 "stray" "a forged stray word" $V merge "$W/stray" --out "$W/m.npy"
fi

# ---- no writer follows a planted link ----------------------------------------------------------------
victim "$W/rep.json"
check "attribute --report through a planted link" 0 $V attribute $A --report "$W/rep.json" --out "$W/a.npy"
intact "attribute --report" "$W/rep.json"
victim "$W/e.json"
check "evaluate --out through a planted link" 0 $V evaluate --model "$W/mlp" --input "$X" --attributions "$W/a.npy" --aopc-steps 3 --out "$W/e.json"
intact "evaluate --out" "$W/e.json"
check "interactions" 0 $V attribute --model "$W/mlp" --input "$X" --method integrated_hessians --steps 4 --out "$W/ih.npy"
victim "$W/ie.json"
check "evaluate interactions --out through a planted link" 0 $V evaluate --model "$W/mlp" --input "$X" --attributions "$W/ih.npy" --out "$W/ie.json"
intact "evaluate interactions --out" "$W/ie.json"
printf 'a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n' >"$W/t.csv"
mkdir -p "$W/d" && victim "$W/d/features.txt"
check "data export through a planted features.txt" 0 $V data export "csv:$W/t.csv" --out "$W/d"
intact "data export features.txt" "$W/d/features.txt"
check "train siamese" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 120 --epochs 1 --out "$W/sn"
mkdir -p "$W/ex" && victim "$W/ex/explanation.json"
check "explain snx through a planted explanation.json" 0 $V explain snx --model "$W/sn" --data synthetic-tabular --n 120 --query 0 --reference 1 \
    --iters 5 --out "$W/ex"
intact "explain snx explanation.json" "$W/ex/explanation.json"
victim "$W/y.npy"
check "predict through a planted link" 0 $V predict --model "$W/mlp" --input "$X" --out "$W/y.npy"
intact "predict --out" "$W/y.npy"

# ---- training options that were dropped ---------------------------------------------------------------
T="train --arch mlp --data synthetic-tabular --n 100 --epochs 1"
refused 1 "no optimizer 'modle'" "a misspelt --optimizers name" $V $T --optimizers 'modle:lr=100' --out "$W/t"
refused 2 "'momentum' is not a setting of Adam" "momentum on Adam" $V $T --optimizers 'model:momentum=0.9' --out "$W/t"
refused 2 "'beta1' is not a setting of SGD" "beta1 on SGD" $V $T --optimizer sgd --optimizers 'model:beta1=0.5' --out "$W/t"
refused 2 "larger than a float" "lr=1e39" $V $T --optimizers 'model:lr=1e39' --out "$W/t"
refused 2 "lr-schedule" "a schedule step past int64" $V $T --lr-schedule 'step:9223372036854775808:0.5' --out "$W/t"
refused 2 "lr-schedule" "a schedule step with a blank" $V $T --lr-schedule 'step: 1:0.5' --out "$W/t"
check "a schedule of digits" 0 $V $T --lr-schedule 'step:1:0.5' --out "$W/t"

# ---- non-finite inputs, attributions and models ----------------------------------------------------------
N="$H/npy/nan_values.npy"
refused 1 "$N: element 36 is NaN" "NaN inputs to predict" $V predict --model "$W/mlp" --input "$N" --out "$W/y2.npy"
refused 1 "$N" "NaN attributions to evaluate" $V evaluate --model "$W/mlp" --input "$X" --attributions "$N" --out "$W/e2.json"
refused 1 "$N" "a NaN reference" $V attribute --model "$W/sn" --input "$X" --reference "$N" --side both --method saliency --out "$W/a2.npy"
refused 1 "not finite\|diverged" "--lr 1e35" $V $T --lr 1e35 --out "$W/lr"
if [ ! -e "$W/lr/model.safetensors" ]; then ok; else bad "a diverged model was saved"; fi
check "a checkpoint to forge" 0 $V $T --out "$W/ck"
if [ -n "$PY" ]; then
    CK="$W/ck/checkpoint.safetensors"
    forge checkpoint "$CK" "$W/ck.st" nan optim.model.0.exp_avg 2>/dev/null || forge checkpoint "$CK" "$W/ck.st" nan model.0.weight
    cp -r "$W/ck" "$W/ck1" && cp "$W/ck.st" "$W/ck1/checkpoint.safetensors"
    refused 1 "non-finite" "a checkpoint holding NaN" $V train --arch mlp --data synthetic-tabular --n 100 --epochs 2 --out "$W/ck1" --resume
    forge checkpoint "$CK" "$W/ck.st" state step=1152921504606846976
    cp -r "$W/ck" "$W/ck2" && cp "$W/ck.st" "$W/ck2/checkpoint.safetensors"
    refused 1 "past the epoch" "a checkpoint step of 2^60" $V train --arch mlp --data synthetic-tabular --n 100 --epochs 2 --out "$W/ck2" --resume
    forge checkpoint "$CK" "$W/ck.st" state 'rngs.order=["0000000000000000","0000000000000000","0000000000000000","0000000000000000"]'
    cp -r "$W/ck" "$W/ck3" && cp "$W/ck.st" "$W/ck3/checkpoint.safetensors"
    refused 1 "all zeros" "an all-zero generator state" $V train --arch mlp --data synthetic-tabular --n 100 --epochs 2 --out "$W/ck3" --resume
    forge checkpoint "$CK" "$W/ck.st" state epoch=0 keep-crc
    cp -r "$W/ck" "$W/ck4" && cp "$W/ck.st" "$W/ck4/checkpoint.safetensors"
    refused 1 "checksum" "an altered checkpoint" $V train --arch mlp --data synthetic-tabular --n 100 --epochs 2 --out "$W/ck4" --resume
fi

# ---- CEM: a VAE is no classifier; superpixels; no rows --------------------------------------------------
check "train a classifier" 0 $V train --arch ganmex-mnist --data synthetic-shapes --n 64 --epochs 1 --seed 3 --out "$W/clf"
check "train a VAE" 0 $V train --arch dip-vae-ii --data synthetic-shapes --n 64 --epochs 1 --seed 3 --out "$W/vae"
check "export images" 0 $V data export synthetic-shapes --n 2 --seed 3 --out "$W/img"
refused 1 "not a classifier" "a VAE as CEM's --model" $V explain cem --model "$W/vae" --vae "$W/vae" --input "$W/img/X.npy" --out "$W/cem"
refused 2 "superpixels" "--superpixels 100000" $V explain cem --model "$W/clf" --vae "$W/vae" --input "$W/img/X.npy" --superpixels 100000 --out "$W/cem"
refused 1 "no images" "CEM on zero rows" $V explain cem --model "$W/clf" --vae "$W/vae" --input "$H/npy/zero_rows.npy" --out "$W/cem"

if [ -n "$PY" ]; then # an SVAE whose z split is swapped: z1 no longer fits the classifier on it
    check "train an SVAE" 0 $V train --arch svae --data synthetic-shapes --n 64 --epochs 1 --seed 3 --out "$W/svae"
    refused 1 "$N" "NaN inputs to explain svae" $V explain svae --model "$W/svae" --input "$N" --row 0 --samples 2 --data synthetic-shapes \
        --n 64 --out "$W/sve"
    $PY -c 'import json, sys
m = json.load(open(sys.argv[1]))
for n in m["composite"]["graph"]:
    if n.get("out") == ["z1", "z2"]: n["sizes"].reverse()
json.dump(m, open(sys.argv[1], "w"))' "$W/svae/model.json"
    refused 1 "does not fit" "a swapped SVAE z split" $V predict --model "$W/svae" --input "$W/img/X.npy" --out "$W/sv.npy"
fi

# ---- smaller ones ---------------------------------------------------------------------------------------
refused 1 "--drop names the label" "--label a --drop a" $V data describe "csv:$W/t.csv" --label label --drop label
refused 1 "class" "a one-class CSV" $V train --arch mlp --data "csv:$H/train_csv/one_class.csv" --epochs 1 --out "$W/t"
refused 1 "no t\|rows" "a one-row CSV" $V train --arch mlp --data "csv:$H/train_csv/one_row.csv" --epochs 1 --out "$W/t"
refused 1 "examples have 1 dimension" "--window 1,2,2 on tabular rows" $V attribute --model "$W/mlp" --input "$X" --method occlusion --window 1,2,2 --out "$W/o.npy"
refused 2 "no verb" "a bare versus" $V

# ---- no stale temporaries: those of a killed process go at the next write in their directory ------------
sh -c 'exit 0' &
dead=$!
wait
mkdir -p "$W/ck/samples"
: >"$W/ck/checkpoint.safetensors.tmp-$dead-AbC123"
: >"$W/ck/model.json.tmp-$dead-XyZ789"
check "resume after a (simulated) kill" 0 $V train --arch mlp --data synthetic-tabular --n 100 --epochs 2 --out "$W/ck" --resume
if ls "$W/ck" | grep -q 'tmp-'; then bad "temporaries left after a resume: $(ls "$W/ck" | grep tmp-)"; else ok; fi

cd .. && rm -rf cli_hostile2.dir
echo "cli_hostile2: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
