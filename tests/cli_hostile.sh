#!/bin/sh
# cli_hostile.sh - what a new user's files and a hostile-input probe feed versus: whitespace tables
# (a german.data stand-in), the corpus under tests/hostile/ (npy, safetensors, model.json, ONNX, CSV, IDX,
# TU) and inputs that would exhaust the machine (devices, pipes, huge claims).  Every hostile case
# must exit 1 with a "versus: " message within 60 s; the sanitizer build runs the same script.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=./versus
H="$(dirname "$0")/hostile"
W=cli_hostile.tmp
rm -rf "$W"
mkdir -p "$W"

refused() { # description, command...: exit 1 and a first stderr line "versus: ..."
    desc=$1
    shift
    timeout 60 "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -ne 1 ]; then bad "$desc (exit $got, wanted 1)"; head -3 err.txt; return; fi
    if head -1 err.txt | grep -q '^versus: .'; then ok; else bad "$desc: no 'versus: ' message"; head -3 err.txt; fi
}

# ---- whitespace-separated tables: UCI's german.data (1,000 rows, 700 good / 300 bad) ----------------
awk -f "$(dirname "$0")/german_data.awk" >"$W/german.data"
for d in ' ' space whitespace; do
    check "german.data with --delimiter '$d'" 0 $V data describe "csv:$W/german.data" --delimiter "$d"
    grep_out "1,000 rows with '$d'" '"rows": 1000' out.txt
done
check "german.data sniffed" 0 $V data describe "csv:$W/german.data"
grep_out "sniffed: 1,000 rows" '"rows": 1000' out.txt
grep_out "sniffed: 700 good" '{"name": "1", "count": 700}' out.txt
grep_out "sniffed: 300 bad" '{"name": "2", "count": 300}' out.txt
grep_out "sniffed: 20 attributes" '"name": "c19"' out.txt
check "german.data trains" 0 $V train --arch mlp --data "csv:$W/german.data" --epochs 1 --out "$W/german"
grep_out "700 training rows" '"train_rows": 700' "$W/german/metrics.json"
grep_out "300 test rows" '"test_rows": 300' "$W/german/metrics.json"
check "a bad delimiter is a usage error" 2 $V data describe "csv:$W/german.data" --delimiter ':'

# ---- a model to feed hostile arrays and weights to -------------------------------------------------
check "train a small mlp" 0 $V train --arch mlp --data synthetic-tabular --n 200 --epochs 1 --out "$W/mlp"
check "export its inputs" 0 $V data export synthetic-tabular --n 20 --out "$W/x"

# ---- predict on graphs: a folder from data export, a TU folder, a SPEC; one row per graph ----------
check "export graphs" 0 $V data export synthetic-graph --n 40 --seed 3 --out "$W/g"
check "export one reference graph" 0 $V data export synthetic-graph --n 1 --seed 9 --out "$W/g1"
check "train a Siamese GCN" 0 $V train --arch siamese-gcn --data "graphs:$W/g" --epochs 1 --out "$W/sg"
check "predict graphs against one reference" 0 $V predict --model "$W/sg" --input "$W/g" --reference "$W/g1" --out "$W/s1.npy"
grep_out "one similarity per graph" "\[40\]" out.txt
check "predict graphs pairwise" 0 $V predict --model "$W/sg" --input "$W/g" --reference "$W/g" --out "$W/s2.npy"
check "export five references" 0 $V data export synthetic-graph --n 5 --out "$W/g5"
refused "a Siamese graph model needs --reference" $V predict --model "$W/sg" --input "$W/g" --out "$W/s.npy"
refused "references: 1 or one per graph" $V predict --model "$W/sg" --input "$W/g" --reference "graphs:$W/g5" --out "$W/s.npy"
grep_out "reference count named" "5 graphs, expected 1" err.txt
printf '{"format": "versus-model/1", "input": [3], "sequential": [{"op": "gcn_conv", "in": 3, "out": 8}, {"op": "relu"}, {"op": "mean_readout"}, {"op": "linear", "in": 8, "out": 2}]}\n' >"$W/gcls.json"
check "train a graph classifier" 0 $V train --spec "$W/gcls.json" --data "graphs:$W/g" --epochs 2 --out "$W/gc"
check "predict a graph classifier" 0 $V predict --model "$W/gc" --input "$W/g" --out "$W/p1.npy"
grep_out "scores per graph" "\[40,2\]" out.txt
check "the same from graphs:DIR" 0 $V predict --model "$W/gc" --input "graphs:$W/g" --out "$W/p2.npy"
same "folder and SPEC agree" "$W/p1.npy" "$W/p2.npy"
mkdir -p "$W/tu3" # a TU folder: two graphs, node labels 0..2 (three one-hot features)
printf '1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n' >"$W/tu3/T_A.txt"
printf '1\n1\n1\n2\n2\n' >"$W/tu3/T_graph_indicator.txt"
printf '1\n-1\n' >"$W/tu3/T_graph_labels.txt"
printf '0\n1\n2\n0\n1\n' >"$W/tu3/T_node_labels.txt"
check "predict a TU folder" 0 $V predict --model "$W/gc" --input "$W/tu3" --out "$W/p3.npy"
grep_out "TU: scores per graph" "\[2,2\]" out.txt
check "and its tu: SPEC" 0 $V predict --model "$W/gc" --input "tu:$W/tu3/T" --out "$W/p4.npy"
same "TU folder and SPEC agree" "$W/p3.npy" "$W/p4.npy"
refused "graphs for an array model" $V predict --model "$W/gc" --input "$W/x/X.npy" --out "$W/p.npy"
refused "a hostile graph folder" $V predict --model "$W/gc" --input "$H/graphs/no_reverse" --out "$W/p.npy"

# ---- the corpus --------------------------------------------------------------------------------------
for f in "$H"/npy/*.npy; do
    refused "npy $(basename "$f")" $V predict --model "$W/mlp" --input "$f" --out "$W/y.npy"
done
for f in "$H"/safetensors/*.safetensors; do
    rm -rf "$W/m" && mkdir "$W/m" && cp "$W/mlp/model.json" "$W/m/" && cp "$f" "$W/m/model.safetensors"
    refused "safetensors $(basename "$f")" $V predict --model "$W/m" --input "$W/x/X.npy" --out "$W/y.npy"
done
for f in "$H"/model/*.json; do
    rm -rf "$W/m" && mkdir "$W/m" && cp "$f" "$W/m/model.json" && cp "$W/mlp/model.safetensors" "$W/m/"
    refused "model.json $(basename "$f")" $V predict --model "$W/m" --input "$W/x/X.npy" --out "$W/y.npy"
done
for f in bias stride padding; do
    cp "$H/model/${f}_minus_one.json" "$W/m/model.json"
    refused "model.json $f -1" $V predict --model "$W/m" --input "$W/x/X.npy" --out "$W/y.npy"
    grep_out "-1 names $f" "\"$f\" is -1, expected" err.txt
done
for f in "$H"/onnx/*.onnx; do
    refused "onnx $(basename "$f")" $V predict --model "$f" --input "$W/x/X.npy" --out "$W/y.npy"
done
for f in "$H"/csv/*.csv; do
    refused "csv $(basename "$f")" $V data describe "csv:$f"
done
for d in "$H"/idx/*/; do
    refused "idx $(basename "$d")" $V data describe "idx:${d}images,${d}labels"
done
for d in "$H"/tu/*/; do
    refused "tu $(basename "$d")" $V data describe "tu:${d}DS"
done
for d in "$H"/graphs/*/; do
    refused "graphs $(basename "$d")" $V data describe "graphs:$d"
done

# ---- inputs without an end, and claims larger than the machine --------------------------------------
refused "npy from /dev/zero" $V predict --model "$W/mlp" --input /dev/zero --out "$W/y.npy"
grep_out "device named" "/dev/zero: is a device" err.txt
refused "csv from /dev/urandom" $V data describe csv:/dev/urandom
refused "a pipe of zeros stops at the limit" sh -c "head -c 300000000 /dev/zero | $V predict --model $W/mlp --input /dev/stdin --out $W/y.npy"
grep_out "pipe limit named" "256.0 MiB" err.txt
rm -f "$W/fifo" && mkfifo "$W/fifo"
refused "a FIFO nobody writes to" $V predict --model "$W/mlp" --input "$W/fifo" --out "$W/y.npy"
grep_out "FIFO wait named" "nobody wrote to" err.txt
refused "synthetic-tabular --n 1e8" $V data describe synthetic-tabular --n 100000000 --max-memory 1G
grep_out "budget named" "synthetic-tabular --n 100000000: .*more than the memory budget of 1.0 GiB" err.txt
refused "train on synthetic-tabular --n 1e8" $V train --arch mlp --data synthetic-tabular --n 100000000 --max-memory 1G --out "$W/t"
refused "synthetic-graph --n 1e8" $V data describe synthetic-graph --n 100000000 --max-memory 1G
refused "synthetic-shapes --n 1e8" $V data describe synthetic-shapes --n 100000000 --max-memory 1G
check "--max-memory must be a size" 2 $V data describe synthetic-tabular --max-memory lots
# a TU set with 100,000 distinct node labels: 100,000 nodes x 100,000 one-hot columns
mkdir -p "$W/tu"
seq 1 100000 >"$W/tu/DS_node_labels.txt"
yes 1 | head -n 100000 >"$W/tu/DS_graph_indicator.txt"
printf '1, 2\n2, 1\n' >"$W/tu/DS_A.txt"
printf '1\n' >"$W/tu/DS_graph_labels.txt"
refused "TU with 100,000 node labels" $V data describe "tu:$W/tu/DS" --max-memory 1G
grep_out "one-hot width named" "100000 nodes x 100000 node features" err.txt
# IDX in gzip: a header claiming 1 GiB of pixels is refused before inflating; a bomb with a bad
# magic is refused after its first bytes
printf '\000\000\010\003\000\000\004\000\000\000\004\000\000\000\004\000' >"$W/big.idx"
head -c 1048576 /dev/zero >>"$W/big.idx"
gzip -n -9 <"$W/big.idx" >"$W/big.idx.gz"
refused "IDX .gz claiming 1 GiB" $V data describe "idx:$W/big.idx.gz,$H/idx/bad_magic/labels" --max-memory 256M
grep_out "IDX budget named" "big.idx.gz: needs 5.0 GiB, more than the memory budget" err.txt
printf '\000\000\015\012\000\000\100\000\000\000\004\000\000\000\004\000' >"$W/bomb.idx"
head -c 67108864 /dev/zero >>"$W/bomb.idx"
gzip -n -9 <"$W/bomb.idx" >"$W/bomb.idx.gz"
refused "gzip bomb with a bad IDX magic" $V data describe "idx:$W/bomb.idx.gz,$H/idx/bad_magic/labels" --max-memory 16M
grep_out "magic checked first" "IDX magic 0x00000d0a" err.txt

# ---- wrong answers and crashes -----------------------------------------------------------------------
for m in saliency integrated_gradients occlusion kernel_shap; do
    refused "attribute $m on zero rows" $V attribute --model "$W/mlp" --input "$H/npy/zero_rows.npy" --method $m --out "$W/a.npy"
done
refused "gauss-legendre with 32000 steps" $V attribute --model "$W/mlp" --input "$W/x/X.npy" --method integrated_gradients --steps 32000 --out "$W/a.npy"
grep_out "rule cap named" "at most 4096 steps" err.txt
check "gauss-legendre with 4096 steps" 0 $V attribute --model "$W/mlp" --input "$W/x/X.npy" --method integrated_gradients --steps 4096 --out "$W/a.npy"
if [ -w /dev/full ]; then
    refused "--out /dev/full" $V predict --model "$W/mlp" --input "$W/x/X.npy" --out /dev/full
    grep_out "write error named" "/dev/full: cannot write" err.txt
    if [ -c /dev/full ]; then ok; else bad "/dev/full was replaced"; fi
    refused "data describe > /dev/full" sh -c "$V data describe synthetic-tabular --n 50 >/dev/full"
fi
check "--out /dev/null writes in place" 0 $V predict --model "$W/mlp" --input "$W/x/X.npy" --out /dev/null
if [ -c /dev/null ]; then ok; else bad "/dev/null was replaced"; fi
rm -f "$W/out.fifo" && mkfifo "$W/out.fifo"
cat "$W/out.fifo" >"$W/from_fifo.npy" &
check "--out a FIFO writes into it" 0 $V predict --model "$W/mlp" --input "$W/x/X.npy" --out "$W/out.fifo"
wait
if [ -p "$W/out.fifo" ]; then ok; else bad "the FIFO was replaced"; fi
check "what came through the FIFO" 0 $V predict --model "$W/mlp" --input "$W/x/X.npy" --out "$W/direct.npy"
same "FIFO output" "$W/from_fifo.npy" "$W/direct.npy"
refused "--out a directory" $V predict --model "$W/mlp" --input "$W/x/X.npy" --out "$W"
# temporaries of a killed writer: an old one is removed on the next write, a fresh one is kept
: >"$W/y.npy.tmp-AbC123" && touch -t 200001010000 "$W/y.npy.tmp-AbC123"
: >"$W/y.npy.tmp-XyZ789"
check "a write after a kill" 0 $V predict --model "$W/mlp" --input "$W/x/X.npy" --out "$W/y.npy"
if [ ! -e "$W/y.npy.tmp-AbC123" ]; then ok; else bad "stale temporary left"; fi
if [ -e "$W/y.npy.tmp-XyZ789" ]; then ok; else bad "a fresh temporary (another writer's) removed"; fi
mkdir -p "$W/ck" && : >"$W/ck/checkpoint.safetensors.tmp-k1LLed" && touch -t 200001010000 "$W/ck/checkpoint.safetensors.tmp-k1LLed"
check "a training run after a kill" 0 $V train --arch mlp --data synthetic-tabular --n 100 --epochs 1 --out "$W/ck"
if [ ! -e "$W/ck/checkpoint.safetensors.tmp-k1LLed" ]; then ok; else bad "the killed checkpoint's temporary was left"; fi

rm -rf "$W" out.txt err.txt
echo "cli_hostile: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
