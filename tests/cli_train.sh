#!/bin/sh
# cli_train.sh - `versus train` and `versus predict` as a user meets them: zoo models on synthetic
# data, the files written, the last line, determinism, resume (also after Ctrl-C), the NaN guard,
# predict's shapes, and the exit status and message of every kind of mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_train.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
TAB="--data synthetic-tabular --n 200"

# ---- help and usage errors (exit 2) ----
check "help train" 0 $V help train
for a in ganmex-mnist ganmex-cifar10 cem-fashion mlp siamese-mlp siamese-gcn siamese-gin vae dip-vae stargan-gen gan-mlp; do
    grep_out "help lists $a" "  $a " out.txt
done
grep_out "help documents the Siamese loss" "sigmoid(5 cos" out.txt
check "help predict" 0 $V help predict
check "no --out" 2 $V train --arch mlp $TAB
grep_out "names --out" "^versus: --out DIR is required" err.txt
check "no --data" 2 $V train --arch mlp --out m
check "arch and spec" 2 $V train --arch mlp --spec x.json $TAB --out m
check "unknown arch" 2 $V train --arch resnet $TAB --out m
grep_out "names the arch" "unknown architecture 'resnet'" err.txt
check "bad epochs" 2 $V train --arch mlp $TAB --out m --epochs 0
check "bad optimizer" 2 $V train --arch mlp $TAB --out m --optimizer rmsprop
grep_out "names the optimizer" "expects sgd or adam, got 'rmsprop'" err.txt
check "bad lr" 2 $V train --arch mlp $TAB --out m --lr -1
check "bad pairs" 2 $V train --arch siamese-mlp $TAB --out m --pairs all
check "bad classes" 2 $V train --arch mlp $TAB --out m --classes 1,x
check "stray argument" 2 $V train --arch mlp $TAB --out m extra
# --threads changes the speed, never the bits
check "train with 2 threads" 0 $V train --arch mlp $TAB --out m2 --threads 2
check "train with 1 thread" 0 $V train --arch mlp $TAB --out m1 --threads 1
same "weights independent of the thread count" m1/model.safetensors m2/model.safetensors

# ---- data and model mistakes (exit 1) ----
check "unknown SPEC" 1 $V train --arch mlp --data nope --out m
grep_out "SPEC named" "unknown data SPEC 'nope'" err.txt
if [ -e m ]; then bad "a failed load leaves --out m behind"; else ok; fi
check "--out under a missing directory" 1 $V train --arch mlp $TAB --out no/such/m
grep_out "--out named before loading" "no/such/m: cannot create directory" err.txt
check "graph model on rows" 1 $V train --arch siamese-gcn $TAB --out m
grep_out "kinds named" "siamese-gcn trains on graphs; synthetic-tabular holds tabular data" err.txt
check "class out of range" 1 $V train --arch mlp $TAB --out m --classes 0,7
grep_out "class named" "class 7 is not one of the 2 classes" err.txt
check "resume without checkpoint" 1 $V train --arch mlp $TAB --out fresh --resume
grep_out "checkpoint named" "fresh/checkpoint.safetensors: no checkpoint to resume from" err.txt

# ---- a run that is not on a terminal (nohup, Slurm) reports itself: a progress line every
# VERSUS_PROGRESS_SECONDS seconds and every epoch's line, on standard error ----
check "train to a log file" 0 env VERSUS_PROGRESS_SECONDS=0 $V train --arch mlp --data synthetic-tabular --n 600 --epochs 3 \
    --batch-size 4 --out logged
grep_out "log: progress lines" "^epoch 2/3 \[#*\.*\] step [0-9]*/[0-9]*  loss [0-9.]*  [0-9.]* steps/s  ETA [0-9:]*$" err.txt
grep_out "log: every epoch's line" "^epoch 3/3  loss [0-9.]*  [0-9.]* s$" err.txt
grep_out "log: the validation metric in the epoch line" "^epoch 2/3  loss [0-9.]*  [0-9.]* s  test_accuracy [0-9.]*$" err.txt
if grep -q "$(printf '\r')" err.txt; then bad "log: carriage returns in a log file"; else ok; fi
# the ETA settles at once: the first step's warm-up does not count (at 1/8 of the run, within 3x of the truth)
total=$(sed -n 's/.*"train_seconds": \([0-9.e+-]*\).*/\1/p' logged/metrics.json)
eta=$(grep -m 1 "^epoch 1/3 .* step 7/" err.txt | sed 's/.*ETA \([0-9]*\):\([0-9]*\)$/\1 \2/')
[ -n "$eta" ] || cat err.txt
if [ -n "$total" ] && [ -n "$eta" ]; then
    awk -v e="$eta" -v t="$total" 'BEGIN { split(e, p, " "); s = 60 * p[1] + p[2]; exit !(s <= 3 * t + 2) }' && ok ||
        bad "log: the ETA after 7 steps is $eta (min sec), the run took $total s"
else
    bad "log: no ETA line or no train_seconds ($eta / $total)"
fi
check "--eval-every is the classifier's and siamese's" 2 $V train --arch vae --data synthetic-shapes --n 40 --epochs 1 --eval-every 1 --out v
check "quiet without VERSUS_PROGRESS_SECONDS" 0 $V train --arch mlp $TAB --epochs 1 --out quiet
if grep -q "steps/s" err.txt; then bad "a 30 s interval printed progress within a short run"; else ok; fi
grep_out "the epoch line even then" "^epoch 1/1  loss" err.txt

# ---- Siamese MLP: files, last line, determinism ----
check "train siamese-mlp" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out s1
for f in model.json model.safetensors metrics.json checkpoint.safetensors; do
    if [ -s "s1/$f" ]; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: train wrote no $f"; fi
done
if tail -n 1 out.txt | grep -q '^pair accuracy: train 0\.[0-9]* test 0\.[0-9]*$'; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: last line"; cat out.txt; fi
grep_out "model.json is Siamese" '"siamese"' s1/model.json
grep_out "metrics: split seed" '"split_seed": 1' s1/metrics.json
grep_out "metrics: train fraction" '"train_frac": 0.7' s1/metrics.json
grep_out "metrics: data flags" '"data_flags": {"n": "200"}' s1/metrics.json
grep_out "metrics: pairs" '"test_pairs": 240' s1/metrics.json
tail -n 1 out.txt >s1.last
check "same command again" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out s2
same "same seed, same weights" s1/model.safetensors s2/model.safetensors
check "another seed" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out s3 --seed 2
if cmp -s s1/model.safetensors s3/model.safetensors; then fails=$((fails + 1)); echo "FAIL: --seed changes nothing"; else pass=$((pass + 1)); fi
check "random pairs" 0 $V train --arch siamese-mlp $TAB --epochs 1 --out s4 --pairs random
grep_out "metrics: pairing" '"pairing": "random"' s4/metrics.json
grep_out "metrics: fixed pairing by default" '"pairing": "fixed"' s1/metrics.json
check "--pairs snx is fixed's alias" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out s5 --pairs snx
same "snx alias, same weights" s1/model.safetensors s5/model.safetensors
check "bad pairing" 2 $V train --arch siamese-mlp $TAB --epochs 1 --out s6 --pairs paper
grep_out "names the pairings" "expects fixed or random, got 'paper'" err.txt
check "CEM subset by --classes" 2 $V train --arch cem-fashion-shoes $TAB --out c1
grep_out "the paper preset is not an architecture" "unknown architecture 'cem-fashion-shoes'" err.txt

# ---- resume: 1 epoch + 1 more = 2 epochs, bit for bit ----
check "one epoch" 0 $V train --arch siamese-mlp $TAB --epochs 1 --out r1
check "resume to two" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out r1 --resume
same "resumed weights" s1/model.safetensors r1/model.safetensors
tail -n 1 out.txt >r1.last
same "resumed accuracies" s1.last r1.last
if command -v python3 >/dev/null 2>&1; then
    # a checkpoint from before the fixed pairing had its name records "snx": it still resumes
    check "one epoch (for the old name)" 0 $V train --arch siamese-mlp $TAB --epochs 1 --out r2
    if python3 - r2/checkpoint.safetensors <<'PY'
import json, struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
meta = h['__metadata__']
old = meta['state']
new = old.replace('"pairing":"fixed"', '"pairing":"snx"')
assert new != old, 'no pairing in the checkpoint state'
# the checksum is crc32(state) xor the tensors' terms: swap the state's term
crc = int(meta['crc32'], 16) ^ zlib.crc32(old.encode()) ^ zlib.crc32(new.encode())
meta['state'], meta['crc32'] = new, '%08x' % crc
hb = json.dumps(h, separators=(',', ':')).encode()
hb += b' ' * ((8 - len(hb) % 8) % 8)
open(sys.argv[1], 'wb').write(struct.pack('<Q', len(hb)) + hb + b[8 + n:])
PY
    then ok; else bad "could not rename the pairing in r2/checkpoint.safetensors"; fi
    check "resume a checkpoint that says snx" 0 $V train --arch siamese-mlp $TAB --epochs 2 --out r2 --resume
    same "resumed from snx, same weights" s1/model.safetensors r2/model.safetensors
else
    echo "SKIP: resume of an 'snx' checkpoint (no python3)"
fi
check "resume, other batch size" 1 $V train --arch siamese-mlp $TAB --epochs 3 --out r1 --resume --batch-size 32
grep_out "option named" "written with batch_size 64, this run has 32" err.txt

# ---- Ctrl-C: checkpoint, exit 1, resume ends where an uninterrupted run does ----
check "uninterrupted 40 epochs" 0 $V train --arch siamese-mlp $TAB --epochs 40 --out u
$V train --arch siamese-mlp $TAB --epochs 40 --out i --checkpoint-every 1 >out.txt 2>err.txt &
pid=$!
n=0
while [ ! -f i/checkpoint.safetensors ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
kill -INT $pid 2>/dev/null
wait $pid
got=$?
if [ "$got" -eq 1 ]; then
    pass=$((pass + 1))
    grep_out "interrupt message" "^versus: interrupted after [0-9]* steps .*continue with --resume" err.txt
    check "resume after Ctrl-C" 0 $V train --arch siamese-mlp $TAB --epochs 40 --out i --resume
elif [ "$got" -eq 0 ]; then
    echo "note: the run finished before Ctrl-C arrived; resume not exercised"
else
    fails=$((fails + 1)); echo "FAIL: Ctrl-C exit status $got"; cat err.txt
fi
same "interrupted + resumed = uninterrupted" u/model.safetensors i/model.safetensors

# ---- NaN guard ----
check "lr 1e30 diverges" 1 $V train --arch siamese-mlp $TAB --epochs 3 --optimizer sgd --lr 1e30 --out nan
grep_out "epoch and step named" "^versus: training diverged at epoch 1/3, step [0-9]*/[0-9]*: " err.txt

# ---- a classifier, a separate test set, a class subset, predict ----
check "train mlp" 0 $V train --arch mlp $TAB --epochs 3 --out c1 --test-data synthetic-tabular
if tail -n 1 out.txt | grep -q '^accuracy: train 0\.[0-9]* test 0\.[0-9]*$'; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: classifier last line"; cat out.txt; fi
grep_out "metrics: separate test set" '"test_data": "synthetic-tabular"' c1/metrics.json
grep_out "metrics: all rows test" '"test_rows": 200' c1/metrics.json
check "class subset" 0 $V train --arch mlp $TAB --epochs 1 --out c2 --classes 1,0
grep_out "metrics: classes" '"classes": \[1, 0\]' c2/metrics.json
check "export rows" 0 $V data export synthetic-tabular --n 200 --out x
check "export one row" 0 $V data export synthetic-tabular --n 1 --seed 5 --out x1
check "export five rows" 0 $V data export synthetic-tabular --n 5 --out x5
check "predict logits" 0 $V predict --model c1 --input x/X.npy --out y.npy
shape_is "logits [N,C]" y.npy "(200, 2)"
check "predict similarity, N references" 0 $V predict --model s1 --input x/X.npy --reference x/X.npy --out sim.npy
shape_is "similarity [N]" sim.npy "(200,)"
check "predict similarity, one reference" 0 $V predict --model s1 --input x/X.npy --reference x1/X.npy --out sim1.npy
shape_is "similarity [N] from one row" sim1.npy "(200,)"
check "predict needs flags" 2 $V predict --model c1 --out y.npy
check "Siamese without reference" 1 $V predict --model s1 --input x/X.npy --out y.npy
grep_out "asks for --reference" "s1 compares pairs; give --reference" err.txt
check "classifier with reference" 1 $V predict --model c1 --input x/X.npy --reference x/X.npy --out y.npy
check "input of the wrong shape" 1 $V predict --model c1 --input x/y.npy --out y.npy
grep_out "input shape named" "x/y.npy: shape \[200\], expected \[N,[0-9]*\]" err.txt
check "reference of the wrong shape" 1 $V predict --model s1 --input x/X.npy --reference x5/X.npy --out y.npy
grep_out "reference shape named" "x5/X.npy: shape \[5,[0-9]*\], expected \[1,[0-9]*\] or \[200,[0-9]*\]" err.txt
check "missing model" 1 $V predict --model nowhere --input x/X.npy --out y.npy
grep_out "model file named" "nowhere/model.json" err.txt
check "missing input" 1 $V predict --model c1 --input none.npy --out y.npy
grep_out "input file named" "none.npy" err.txt

# ---- --spec: a model.json written by hand ----
P=$(sed -n 's/.*"input": \[\([0-9]*\)\].*/\1/p' c1/model.json)
printf '{"format": "versus-model/1", "siamese": {"encoder": {"sequential": [{"op": "linear", "in": %s, "out": 8}, {"op": "tanh"}]}}}\n' "$P" >spec.json
check "train from a spec" 0 $V train --spec spec.json $TAB --epochs 1 --out sp
grep_out "metrics name the spec" '"spec": "spec.json"' sp/metrics.json
printf '{"format": "versus-model/1", "input": [3], "sequential": [{"op": "linear", "in": 3, "out": 2}]}\n' >bad.json
check "spec of another input" 1 $V train --spec bad.json $TAB --epochs 1 --out sp2
grep_out "input mismatch named" 'bad.json: "input" is \[3\]' err.txt

# ---- generative tasks: VAE, DIP-VAE, GANs; samples, metrics per term, predict ----
SH="--data synthetic-shapes --n 120"
check "train vae" 0 $V train --arch vae $SH --epochs 2 --batch-size 16 --out v --sample-every 5
if tail -n 1 out.txt | grep -q '^test_elbo -[0-9.]*  test_recon [0-9.]*  test_kl [0-9.]*$'; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: vae last line"; cat out.txt; fi
grep_out "metrics: vae task" '"task": "vae"' v/metrics.json
grep_out "metrics: test_elbo" '"test_elbo": -' v/metrics.json
grep_out "metrics: a history per term" '"kl": \[' v/metrics.json
exists "a sample grid every 5 steps" v/samples/step-00000005.png
exists "a sample grid at the end" v/samples/step-00000012.png
check "export shapes" 0 $V data export synthetic-shapes --n 7 --out sx
check "predict reconstructions" 0 $V predict --model v --input sx/X.npy --out rec.npy
shape_is "reconstructions [N,1,16,16]" rec.npy "(7, 1, 16, 16)"
check "vae with --class" 1 $V predict --model v --input sx/X.npy --class 1 --out rec.npy
check "train dip-vae" 0 $V train --arch dip-vae $SH --epochs 1 --batch-size 32 --out dv
grep_out "metrics: DIP options" '"task_opts": "dip=i,lambda_od=10,lambda_d=100"' dv/metrics.json
check "train stargan" 0 $V train --arch stargan-gen $SH --epochs 1 --batch-size 16 --out sg --task-opts n_critic=2 \
    --optimizers 'generator:lr=1e-4,beta1=0.5,beta2=0.999;critic:lr=1e-4,beta1=0.5,beta2=0.999'
grep_out "metrics: gan terms" '"g_rec": \[' sg/metrics.json
grep_out "metrics: cls accuracy" '"cls_accuracy_real"' sg/metrics.json
check "predict class 1" 0 $V predict --model sg --input sx/X.npy --class 1 --out t.npy
shape_is "translated [N,1,16,16]" t.npy "(7, 1, 16, 16)"
check "conditional without --class" 1 $V predict --model sg --input sx/X.npy --out t.npy
grep_out "asks for the class" "needs a target class in \[0, 2)" err.txt
check "train gan-mlp, non-saturating" 0 $V train --arch gan-mlp $SH --epochs 1 --batch-size 16 --out gm --task-opts loss=ns,lambda_gp=0 --sample-every 4
exists "gan samples" gm/samples/step-00000004.png
check "samples of a classifier" 2 $V train --arch mlp $TAB --out m --sample-every 5
grep_out "samples need a generative model" "the classifier task draws no samples" err.txt
check "unknown task option" 1 $V train --arch vae $SH --out m --task-opts gamma=1
grep_out "option named" "the vae task has no option 'gamma'" err.txt
check "bad optimizers" 2 $V train --arch gan-mlp $SH --out m --optimizers 'generator:lr=x'
grep_out "value named" "lr = 'x' is not a number" err.txt
check "bad schedule" 2 $V train --arch mlp $TAB --out m --lr-schedule step:0:2
check "step schedule and clipping" 0 $V train --arch mlp $TAB --epochs 2 --out ls --lr-schedule step:1:0.5 --clip-norm 1 --betas 0.5,0.99
check "resume with another clip" 1 $V train --arch mlp $TAB --epochs 3 --out ls --lr-schedule step:1:0.5 --clip-norm 2 --betas 0.5,0.99 --resume
grep_out "clip named" "optimizers.model.clip" err.txt

cd .. && rm -rf "$W"
echo "cli_train: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
