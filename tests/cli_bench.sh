#!/bin/sh
# cli_bench.sh - `versus bench snx` as a user meets it: a small run on planted tabular data (the
# files written, every method in the tables, numbers that must hold), a run on a trained model
# directory, and the exit status and message of every mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_bench.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
# Table II row of METHOD in FILE (the first table): "| method | FA (std) | p | CF (std) | ..."
row() { grep -m1 "^| $1 |" "$2"; }
# mean of column N (2 = FA, 4 = CF) of METHOD's row, bold marks removed
col() { row "$1" "$3" | awk -F'|' -v c="$2" '{ gsub(/\*/, "", $(c + 1)); split($(c + 1), a, " "); print a[1] }'; }
holds() { # description, awk condition on $1 $2, value1, value2
    if awk -v a="$3" -v b="$4" "BEGIN { exit !($2) }"; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: $1 ($3, $4)"; fi
}

# ---- a small benchmark on planted tabular data -------------------------------------------------------------
check "bench snx synthetic-tabular" 0 $V bench snx --data synthetic-tabular --n 300 --pairs 6 --seed 2 --out b
for f in table.md results.json conformity.svg gda.svg violated.svg sensitivity_local.svg sensitivity_global.svg; do
    exists "bench wrote $f" b/$f
done
for m in pick-all des snx-global sm snx-uc snx-kl snx-des snx-inter snx-union snx; do
    grep_out "Table II lists $m" "^| $m |" b/table.md
    grep_out "results.json has $m" "\"method\": \"$m\"" b/results.json
done
grep_out "the table is printed" "## Table II: local masks" out.txt
grep_out "Table III" "## Table III: global invariant masks" b/table.md
grep_out "the command line is stamped" 'command: `versus bench snx --data synthetic-tabular --n 300 --pairs 6 --seed 2' b/table.md
# the commit stamped is the build's (versus --version), in the page and in results.json
commit=$($V --version | sed -n 's/^versus [0-9.]* (commit \(.*\))$/\1/p')
[ -n "$commit" ] && ok || bad "versus --version names no commit"
grep_out "the commit is stamped" "commit: \`$commit\`" b/table.md
grep_out "results.json has the commit" "\"commit\": \"$commit\"" b/results.json
grep_out "6 pairs, 2 queries" "the first 6 test pairs of the SNX protocol (2 queries" b/table.md
grep_out "wall time reported" "wall time" b/table.md
grep_out "planted truth columns" "precision ↑ | recall ↑" b/table.md
grep_out "the present-feature table" "Table II-b" b/table.md
grep_out "precision has a t-test" "| precision ↑ | p (prec) | recall ↑ |" b/table.md
grep_out "weight decay chosen by validation" "weight decay chosen by validation pair accuracy" b/table.md
grep_out "gamma chosen without the truth" "chosen by stage 1 alone on the global masks of" b/table.md
grep_out "the JSON has the gamma criterion" '"gamma_criterion": \[' b/results.json
grep_out "SNX's p-value column is a footnoted dash" "^| snx | [*0-9.]* ([0-9.]*)[ *]* | –[^ |]* |" b/table.md
grep_out "the dash says why" "SNX is the reference of the t-tests" b/table.md
grep_out "pick-all has no conformity" "^| pick-all | [0-9.]* ([0-9.]*) | [0-9.e-]*[ ◦†]* | [0-9.]* ([0-9.]*) | [0-9.e-]*[ ◦†]* | –[^ |]* |" b/table.md
exists "bench wrote the page" b/index.html
grep_out "the page inlines its figures" "<svg xmlns" b/index.html
grep_out "the page has captions" "<figcaption><b>Figure 1.</b>" b/index.html
grep_out "the page marks directions" "title=\"lower is better\"" b/index.html
if grep -qiw "nan\|inf" b/index.html b/table.md || grep -q ">-1<\| -1 |" b/index.html b/table.md; then
    fails=$((fails + 1)); echo "FAIL: a sentinel value in the page"; else pass=$((pass + 1)); fi
# versus report rebuilds the page from results.json alone
cp b/index.html page1.html && rm b/index.html
check "report rebuilds the page" 0 $V report b
if cmp -s page1.html b/index.html; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: the rebuilt page differs"; fi
check "report without results" 1 $V report nowhere
grep_out "report names the file" "nowhere/results.json" err.txt
check "report without a directory" 2 $V report
printf '{"format": "versus-bench-snx/1", "report": {"format": "versus-report/1", "blocks": [{"table": {"columns": [], "rows": []}}]}}' >bad.json
mkdir -p badrep && cp bad.json badrep/results.json
check "report of a malformed file" 1 $V report badrep
grep_out "the field is named" "badrep/results.json:1:.*table" err.txt
grep_out "per-pair values in the JSON" '"per_pair_faithfulness"' b/results.json
grep_out "the JSON has the GDA trace" '"grad_dual"' b/results.json
grep_out "the sensitivity levels run 1..20" '"sensitivity_levels": \[1, 2, 3' b/results.json
grep_out "SVG is SVG" "<svg" b/gda.svg
# Pick-all keeps every feature, so f is unchanged and its FA is H(p), the least any mask can reach
fa_all=$(col pick-all 2 b/table.md)
for m in des snx-global sm snx-uc snx-kl snx-des snx-inter snx-union snx; do
    holds "pick-all FA <= $m FA" "a <= b + 1e-9" "$fa_all" "$(col $m 2 b/table.md)"
done
# SNX-global used as the local mask conforms to itself
grep_out "snx-global conformity is 1" "^| snx-global |.*| 1.000 (0.000) |" b/table.md
# the same command gives the same numbers (deterministic)
check "bench again" 0 $V bench snx --data synthetic-tabular --n 300 --pairs 6 --seed 2 --out b2
sed '/wall time/d' b/table.md | sed 's/| [0-9.]* |$/|/' >t1.md
sed '/wall time/d' b2/table.md | sed 's/| [0-9.]* |$/|/' | sed 's/--out b2/--out b/' >t2.md
if cmp -s t1.md t2.md; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: two runs differ"; diff t1.md t2.md | head; fi

# ---- graphs: every graph method, short runs -----------------------------------------------------------------
check "bench snx synthetic-graph" 0 $V bench snx --data synthetic-graph --n 40 --pairs 4 --epochs 2 --iters 10 --global-iters 10 \
    --baseline-iters 10 --pg-epochs 2 --out g
for m in pick-all snx-global sm snx-uc snx-kl snx gnnexplainer pgexplainer; do
    grep_out "graph Table II lists $m" "^| $m |" g/table.md
done
for f in table.md results.json index.html conformity.svg gda.svg violated.svg sensitivity_local.svg sensitivity_global.svg example.svg; do
    exists "graph bench wrote $f" g/$f
done
grep_out "the example is a node-link drawing" '<g class="panel">' g/example.svg
grep_out "the planted motif is highlighted" "planted motif" g/example.svg
grep_out "graphs select 75% of the edges" "the top 75% of the edges of each graph selected" g/table.md
grep_out "graph sensitivity levels are fractions" '"sensitivity_levels": \[0.1, 0.2' g/results.json
grep_out "graph settings named" "GNNExplainer 10 iterations, PGExplainer 2 epochs" g/table.md
if grep -q "Table II-b\|^| des |" g/table.md; then fails=$((fails + 1)); echo "FAIL: tabular-only rows on graphs"; else pass=$((pass + 1)); fi
holds "graph pick-all FA is the bound" "a <= b + 1e-9" "$(col pick-all 2 g/table.md)" "$(col snx 2 g/table.md)"

# ---- a model directory and a method subset ----------------------------------------------------------------
check "train siamese-mlp" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 300 --epochs 3 --seed 3 --out sn
check "bench a trained model" 0 $V bench snx --data synthetic-tabular --n 300 --seed 3 --model sn --pairs 8 --methods snx,sm,snx-uc \
    --iters 20 --pre-iters 10 --global-iters 10 --gamma 0.02 --out c
grep_out "gamma from the command line" "gamma from --gamma): gamma 0.02 (stage 1 and 2)" c/table.md
if grep -q "chosen by stage 1 alone\|weight decay chosen" c/table.md; then fails=$((fails + 1)); echo "FAIL: choices made for a given model and gamma"; else pass=$((pass + 1)); fi
grep_out "the model is named" 'model: `sn`' c/table.md
grep_out "three methods" "^| snx-uc |" c/table.md
if sed -n '/Table II: local/,/Table II-b/p' c/table.md | grep -q "^| des |"; then fails=$((fails + 1)); echo "FAIL: des ran without being asked"; else pass=$((pass + 1)); fi
grep_out "iterations reported" "PreIter 10, MaxIter 20" c/table.md
grep_out "reductions noted" "iteration counts differ from Section IV-H" c/table.md
# without --out, in what looks like a source checkout: the committed bench/results/ stay untouched
mkdir -p checkout/bench/results/snx-synthetic-tabular && echo committed >checkout/bench/results/snx-synthetic-tabular/table.md
(cd checkout && $V bench snx --data synthetic-tabular --n 300 --seed 3 --model ../sn --pairs 4 --methods sm --iters 5 \
    --global-iters 5 --gamma 0.02 >../out.txt 2>../err.txt) && ok || bad "bench without --out"
grep_out "the committed results are kept" "^committed$" checkout/bench/results/snx-synthetic-tabular/table.md
exists "the default report directory" checkout/versus-results/snx-synthetic-tabular/table.md
grep_out "bench says where it wrote" "wrote versus-results/snx-synthetic-tabular/" out.txt

# ---- mistakes ----------------------------------------------------------------------------------------------
check "--commit is gone" 2 $V bench snx --data synthetic-tabular --commit abc --out e0
grep_out "--commit says why" "--commit was removed: the commit comes from the build" err.txt
check "--tag is gone" 2 $V bench cem --data synthetic --tag=x
grep_out "--tag says why" "--tag was removed: the commit comes from the build" err.txt
check "no data" 2 $V bench snx --pairs 4
grep_out "data required" "--data SPEC is required" err.txt
check "unknown benchmark" 2 $V bench lime --data synthetic-tabular
grep_out "benchmark named" "unknown benchmark 'lime'" err.txt
check "no benchmark" 2 $V bench --data synthetic-tabular
check "unknown method" 2 $V bench snx --data synthetic-tabular --n 300 --methods snx,magic
grep_out "method named" "unknown method 'magic'" err.txt
check "a misspelt method" 2 $V bench snx --data synthetic-tabular --n 300 --methods snx_kll
grep_out "nearest registry name" "did you mean 'snx_kl'" err.txt
check "registry names on the wrong data kind" 2 $V bench snx --data synthetic-tabular --n 300 --methods snx_kl,gnnexplainer --out e0
grep_out "snx_kl taken, gnnexplainer refused" "'gnnexplainer' is not defined for tabular data" err.txt
check "graph method on tabular data" 2 $V bench snx --data synthetic-tabular --n 300 --methods gnnexplainer --out e1
grep_out "kind named" "not defined for tabular data" err.txt
check "tabular method on graphs" 2 $V bench snx --data synthetic-graph --n 40 --methods snx-inter --epochs 1 --out e2
grep_out "graph kind named" "not defined for graphs" err.txt
check "unknown data" 1 $V bench snx --data nowhere --out e3
grep_out "spec named" "nowhere" err.txt
check "images" 1 $V bench snx --data synthetic-shapes --n 40 --out e4
grep_out "images refused" "not images" err.txt
check "train a classifier" 0 $V train --arch mlp --data synthetic-tabular --n 300 --epochs 1 --out clf
check "a classifier is not Siamese" 1 $V bench snx --data synthetic-tabular --n 300 --model clf --out e5
grep_out "siamese named" "is not a Siamese model" err.txt
check "model and epochs" 2 $V bench snx --data synthetic-tabular --n 300 --model sn --epochs 3
check "pairs out of range" 2 $V bench snx --data synthetic-tabular --n 300 --pairs 1 --out e6
check "a model directory without metrics" 1 $V bench snx --data synthetic-tabular --n 300 --model nowhere --out e7
grep_out "metrics file named" "nowhere/metrics.json" err.txt

# ---- bench perf: the engine's timings (values depend on the machine; only their form is checked) ----
check "perf list" 0 $V bench perf --list
grep_out "perf lists the training steps" "ganmex_mnist_step" out.txt
grep_out "perf lists the sweep" "sweep_64x12_32_k3s1_d2_fwd" out.txt
grep_out "perf lists the sweep's training steps" "sweep_leaky_mlp_step" out.txt
check "perf sweep cases" 0 $V bench perf --filter 'sweep_64x12_32_k3s1_d2_fwd$,sweep_mlp_step' --reps 1 --threads 1
grep_out "perf sweep conv line" '"name":"sweep_64x12_32_k3s1_d2_fwd","suite":"sweep"' out.txt
grep_out "perf sweep conv shape" '"k":3,"stride":1,"pad":0,"backward":0,"dilation":2}' out.txt
if grep -q '"name":"sweep_64x12_32_k3s1_d2_fwdbwd"' out.txt; then bad "perf filter: fwd\$ also ran fwdbwd"; else ok; fi
grep_out "perf sweep step line" '"name":"sweep_mlp_step","suite":"sweep".*"batch":256}' out.txt
check "perf filter anchored at the start" 0 $V bench perf --filter '^vae_mlp_step' --reps 1 --threads 1
grep_out "perf ^ keeps the name it starts" '"name":"vae_mlp_step"' out.txt
if grep -q '"name":"dipvae_mlp_step"' out.txt; then bad "perf filter: ^vae_mlp_step also ran dipvae_mlp_step"; else ok; fi
check "perf one case" 0 $V bench perf --filter sgemm_nn_64 --reps 2 --threads 1 --json perf.jsonl
grep_out "perf prints a JSON line" '"name":"sgemm_nn_64","suite":"sgemm","impl":"versus","threads":1' out.txt
grep_out "perf prints the table" "| sgemm_nn_64 | C = A B, 64 x 64 x 64 | 1 |" out.txt
grep_out "perf writes --json" '"name":"sgemm_nn_64"' perf.jsonl
# the machine line: on AVX-512 how the core runs zmm FMAs, on any other ISA no such field
if grep -q '"name":"machine".*"isa":"avx512"' perf.jsonl; then
    grep_out "perf says how zmm FMAs run" '"isa":"avx512","zmm_fma":"\(full\|split\)"' perf.jsonl
fi
check "perf under VERSUS_ISA=avx2" 0 env VERSUS_ISA=avx2 $V bench perf --filter sgemm_nn_64 --reps 1 --threads 1
if grep -q '"name":"machine".*zmm_fma' out.txt; then bad "perf: zmm_fma named without AVX-512 kernels"; else ok; fi
check "perf pairwise scaling" 0 $V bench perf --filter sgemm_nn_512 --reps 3 --threads 1,2
grep_out "perf prints the pairwise scaling line" '"name":"sgemm_nn_512","suite":"scaling","impl":"versus","threads":2,"pairs":3' out.txt
check "perf unknown flag" 2 $V bench perf --fast
grep_out "perf names the flag" "unknown flag --fast" err.txt
check "perf bad reps" 2 $V bench perf --reps 0
grep_out "perf says what reps takes" "expected an integer 1..1000" err.txt
check "perf bad threads" 2 $V bench perf --threads 1,x
check "perf unwritable json" 1 $V bench perf --filter sgemm_nn_64 --reps 1 --threads 1 --json nowhere/x.jsonl
grep_out "perf names the json file" "nowhere/x.jsonl" err.txt

cd .. && rm -rf "$W"
echo "cli_bench: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
